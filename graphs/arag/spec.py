"""ARAG's registry entries: the full blackboard and its two published ablations."""

from __future__ import annotations

from graphs.evidence_use import EvidenceUse
from graphs.hooks import CallPlan
from graphs.method_spec import Hook, MethodSpec, ServiceGraph
from state.arag.context import AragContext


def _nli_calls(context: AragContext, candidates: int) -> int:
    """NLI: one batched request, or one per recalled item (the candidates, or the recall set)."""
    if context.arag_nli_mode != "per_item":
        return 1
    return candidates or context.arag_recall_k or context.top_k


def arag_calls(context: AragContext, candidates: int) -> CallPlan:
    """User understanding, NLI (`arag_use_nli`), context summary (`arag_use_csa`), item ranker."""
    nli = _nli_calls(context, candidates) if context.arag_use_nli else 0
    return CallPlan(2 + nli + int(context.arag_use_csa))


def arag_no_nli_calls(context: AragContext, candidates: int) -> CallPlan:
    """Without NLI: user understanding, context summary, item ranker."""
    return CallPlan(3)


def arag_no_nli_csa_calls(context: AragContext, candidates: int) -> CallPlan:
    """Without NLI and CSA: user understanding, item ranker."""
    return CallPlan(2)


def _arag(graph: str, summary: str, calls: Hook) -> MethodSpec:
    return MethodSpec(
        f"graphs.arag.graph:{graph}", "llm", summary, AragContext, llm_calls=calls, item_vectors=True,
        evidence=EvidenceUse("C_st: last ≤ {arag_session_items}, C_lt: the rest to {history_items} in all"),
    )  # fmt: skip


METHODS: dict[str, MethodSpec] = {
    "arag": _arag("graph", "ARAG: UUA ∥ NLI → CSA → IRA blackboard agents", arag_calls),
    "arag_no_nli": _arag("arag_no_nli_graph", "ARAG without NLI", arag_no_nli_calls),
    "arag_no_nli_csa": _arag("arag_no_nli_csa_graph", "ARAG without NLI and CSA", arag_no_nli_csa_calls),
}
"""ARAG and its ablations (each its own graph: the ablations remove nodes, not only switches)."""

SERVICE_GRAPHS: dict[str, ServiceGraph] = {}
"""None: ARAG keeps no memory across users."""

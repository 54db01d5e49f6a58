"""Every method by name: where its compiled graph lives and what it is."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from bench.errors import RecgraphError


@dataclass(frozen=True)
class MethodSpec:
    """Where a method's graph is and how to describe it."""

    module: str
    """Python module holding the compiled graph."""
    attribute: str
    """Name of the compiled graph in that module."""
    kind: str
    """"classic" (no LLM) or "llm" (agents with an LLM policy and a fallback)."""
    summary: str
    """One line for help texts and reports."""
    memory: str = ""
    """MemRec memory graph use in the benchmark: "" none, "read" (its own graph, never written) or
    "write" (its own graph; each user's warm-up interaction goes through Stage W before ranking)."""
    overrides: dict[str, Any] = field(default_factory=dict)
    """Context fields this method fixes (applied to its warm-up and ranking)."""


METHODS: dict[str, MethodSpec] = {
    "random": MethodSpec("graphs.baselines", "random_graph", "classic", "seeded random order"),
    "popularity": MethodSpec("graphs.baselines", "popularity_graph", "classic", "training popularity"),
    "itemknn": MethodSpec("graphs.baselines", "itemknn_graph", "classic", "item-item co-occurrence CF"),
    "bpr": MethodSpec("graphs.baselines", "bpr_graph", "classic", "BPR matrix factorisation"),
    "embedding": MethodSpec(
        "graphs.baselines", "embedding_graph", "classic", "MiniLM cosine to recent history"
    ),
    "vanilla_llm": MethodSpec(
        "graphs.llm_baselines", "vanilla_llm_graph", "llm", "zero-shot LLM ranking (LLMRank)"
    ),
    "recency_llm": MethodSpec(
        "graphs.llm_baselines", "recency_llm_graph", "llm", "LLM ranking from recent items (ARAG)"
    ),
    "vanilla_rag": MethodSpec(
        "graphs.llm_baselines", "vanilla_rag_graph", "llm", "LLM ranking with retrieved history"
    ),
    "arag": MethodSpec("graphs.arag", "graph", "llm", "ARAG: UUA ∥ NLI → CSA → IRA blackboard agents"),
    "arag_no_nli": MethodSpec("graphs.arag", "arag_no_nli_graph", "llm", "ARAG without NLI"),
    "arag_no_nli_csa": MethodSpec("graphs.arag", "arag_no_nli_csa_graph", "llm", "ARAG without NLI and CSA"),
    "memrec": MethodSpec(
        "graphs.memrec", "graph", "llm", "MemRec: curate, synthesise facets, rerank; Stage W", "write"
    ),
    "memrec_no_read": MethodSpec(
        "graphs.memrec", "memrec_no_read_graph", "llm", "MemRec without collaborative read", "write"
    ),
    "memrec_no_llm_rules": MethodSpec(
        "graphs.memrec",
        "memrec_no_llm_rules_graph",
        "llm",
        "MemRec with the generic curation rules",
        "write",
        {"memrec_rules": "generic"},
    ),
    "memrec_no_write": MethodSpec(
        "graphs.memrec", "memrec_no_write_graph", "llm", "MemRec without collaborative write", "read"
    ),
}
"""Method name -> spec; `all` means every entry, in this order."""


def parse_methods(text: str) -> list[str]:
    """Expand `a,b,...` or `all` into method names, refusing unknown ones."""
    names = list(METHODS) if text.strip() == "all" else [t.strip() for t in text.split(",")]
    names = [n for n in names if n]
    if not names:
        raise RecgraphError("--methods is empty; name at least one method or 'all'")
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise RecgraphError(f"unknown method {unknown[0]!r}; available: {', '.join(METHODS)} or 'all'")
    return list(dict.fromkeys(names))


def get_graph(name: str) -> CompiledStateGraph:
    """The compiled graph of method `name` (imported on first use)."""
    spec = METHODS[name]
    return getattr(importlib.import_module(spec.module), spec.attribute)

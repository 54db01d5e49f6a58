"""How many LLM requests each method plans per user, before retries: the registry's `llm_calls` hooks.

`recgraph bench` multiplies them by the users still to run and prints the total before a paid backend
starts, so a reader can stop a run that would cost more than meant. A plan counts one request per
agent answer; retries (at most `Context.llm_retries` more per answer) come on top and are printed
as the upper bound. Loops whose length the model decides are counted at their budget ("at most").
"""

from __future__ import annotations

from dataclasses import dataclass

from state.context import Context


@dataclass(frozen=True)
class CallPlan:
    """LLM requests one user costs a method, without retries."""

    per_user: int
    """Requests per user (the budget when `at_most`)."""
    at_most: bool = False
    """True when the graph may stop earlier (a planner's loop, tools that need no model)."""
    note: str = ""
    """What else costs calls and is not counted (e.g. training before ranking)."""


def one_call(context: Context, candidates: int) -> CallPlan:
    """Single-agent LLM baselines: one ranking request."""
    return CallPlan(1)


def _nli_calls(context: Context, candidates: int) -> int:
    """ARAG's NLI: one batched request, or one per recalled item (the candidates, or the recall set)."""
    if context.nli_mode != "per_item":
        return 1
    return candidates or context.recall_k or context.top_k


def arag_calls(context: Context, candidates: int) -> CallPlan:
    """ARAG: user understanding, NLI (`Context.use_nli`), context summary (`Context.use_csa`), ranker."""
    nli = _nli_calls(context, candidates) if context.use_nli else 0
    return CallPlan(2 + nli + int(context.use_csa))


def arag_no_nli_calls(context: Context, candidates: int) -> CallPlan:
    """ARAG without NLI: user understanding, context summary, item ranker."""
    return CallPlan(3)


def arag_no_nli_csa_calls(context: Context, candidates: int) -> CallPlan:
    """ARAG without NLI and CSA: user understanding, item ranker."""
    return CallPlan(2)


def memrec_calls(context: Context, candidates: int) -> CallPlan:
    """MemRec with Stage W: the warm-up write (LM_Mem), facet synthesis and rerank."""
    return CallPlan(3, note="1 of them is the Stage W warm-up write")


def memrec_no_write_calls(context: Context, candidates: int) -> CallPlan:
    """MemRec without Stage W: facet synthesis and rerank."""
    return CallPlan(2)


def amem4rec_calls(context: Context, candidates: int) -> CallPlan:
    """AMEM4Rec: one ranking request; the training windows before it are not counted."""
    return CallPlan(1, note="plus the memory pool's training calls, if not trained yet")


def chainrec_calls(context: Context, candidates: int) -> CallPlan:
    """ChainRec: at most one tool agent per step of the budget, CandidateRank, and with the LLM
    planner one planning request per decision."""
    steps = context.chainrec_max_steps
    planner = steps + 1 if context.chainrec_planner == "llm" else 0
    return CallPlan(steps + 1 + planner, at_most=True)

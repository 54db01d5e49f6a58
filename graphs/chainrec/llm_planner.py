"""`chainrec_llm_planner` (the paper's "Deepseek-R1" planner row) on a backend without an LLM.

Its planner is a model; under the heuristic backend no model answers, so every decision would be
the rule planner's fallback and the row would report the rule planner under the LLM planner's name.
The `prepare` hook marks such a run: metrics.json's entry of the method gets `not_run_reason` (one
line saying why), which a table of published rows (`recgraph reproduce`) shows instead of numbers.
The graph still ranks (its records say which planner decided: `details.planner_used`), so a bench
run's other methods and the run's resumption are unaffected.
"""

from __future__ import annotations

from graphs.hooks import Prepared, PrepareRequest
from state.context import backend_for

NO_LLM_REASON = (
    "not run as published: the LLM planner needs a model (the paper's DeepSeek-R1) and the heuristic "
    "backend has none, so every decision would be the rule planner's fallback"
)
"""metrics.json's `not_run_reason` of `chainrec_llm_planner` under the heuristic backend."""


def mark_backend(request: PrepareRequest) -> Prepared:
    """`prepare` hook: the context unchanged; `not_run_reason` when the planner role's backend is the
    heuristic one (no LLM answers)."""
    context = request.context
    if backend_for(context, "planner") == "heuristic":
        return Prepared(context, {"not_run_reason": NO_LLM_REASON})
    return Prepared(context)

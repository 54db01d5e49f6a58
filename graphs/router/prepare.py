"""The router's `prepare` hook: build what its method tools read before any user is ranked, by
running the prerequisite methods' own `prepare` hooks (MemRec's: its memory graph and Stage W
warm-up; AMEM4Rec's: its trained pool; SASRec's, GRU4Rec's and LightGCN's: their trained models,
read from the baselines' cache when a run of theirs trained them already) on the router's context
and composing the contexts they return (RouterContext inherits those methods' knobs, so
`memrec_memory` and `amem4rec_pool` land on it). Only the method tools of the run's catalog count:
`router_no_method_tools` prepares nothing.

`router_learned` and `router_learned_no_cost` use the same hook: after the prerequisites
(`LEARNED_TRAINING`) they find or train the planner checkpoint over the router's catalog
(graphs/router/learned.py) and rank with it; metrics.json gets `planner_training`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agents.router.catalog import PREREQUISITES, router_catalog
from graphs.hooks import Prepared, PrepareRequest
from graphs.registry import METHODS, resolve
from state.chainrec.context import ChainRecContext

LEARNED_TRAINING = "router_learned: train the planner over the router's catalog after the prerequisites"
"""The step the learned planners add after the prerequisites (graphs/router/learned.py)."""


def prerequisites(context: ChainRecContext) -> list[str]:
    """The registry methods whose `prepare` hooks this run needs, in catalog order, each once."""
    names = [spec.name for spec in router_catalog(context)]
    return list(dict.fromkeys(m for name in names if name in PREREQUISITES for m in PREREQUISITES[name]))


def prepare_for_bench(request: PrepareRequest) -> Prepared:
    """Run each prerequisite's own `prepare` hook on the router's context, as that method (its files
    are the prerequisite method's own: `<out>/memrec_memory/memrec.sqlite`, AMEM4Rec's pool keyed by
    its config), and return the composed context; metrics.json gets each one's figures under
    `prerequisites`.

    Shared on purpose: MemRec's ranking graph never writes its memory (Stage W runs in its prepare)
    and a trained pool is only read, so every router variant and the prerequisite methods of one
    run read the same memory and pool, built once, instead of one Stage W and one pool training per
    variant (minutes each)."""
    context = request.context
    figures: dict[str, Any] = {}
    for method in prerequisites(context):  # type: ignore[arg-type]
        hook = resolve(METHODS[method].prepare)
        done: Prepared = hook(replace(request, method=method, context=context))
        context = done.context
        figures[method] = done.metrics
    metrics: dict[str, Any] = {"prerequisites": figures} if figures else {}
    if context.chainrec_planner == "learned":  # type: ignore[attr-defined]
        from graphs.router.learned import train_for_bench  # torch and the offline stage: on demand

        trained = train_for_bench(request, context)  # type: ignore[arg-type]
        context, metrics = trained.context, {**metrics, **trained.metrics}
    return Prepared(context, metrics)

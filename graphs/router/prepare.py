"""The router's `prepare` hook: build what its method tools read before any user is ranked, by
running the prerequisite methods' own `prepare` hooks (MemRec's: its memory graph and Stage W
warm-up; AMEM4Rec's: its trained pool) on the router's context and composing the contexts they
return (RouterContext inherits both methods' knobs, so `memrec_memory` and `amem4rec_pool` land on
it). Only the method tools of the run's catalog count: `router_no_method_tools` prepares nothing.

`router_learned` uses the same hook; training the learned planner over the router's catalog is the
step to add after the prerequisites (`LEARNED_TRAINING`), once the offline pipeline plans over a
catalog.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agents.chainrec.online.method_tools.catalog_extended import PREREQUISITES, router_catalog
from graphs.hooks import Prepared, PrepareRequest
from graphs.registry import METHODS, resolve
from state.chainrec.context import ChainRecContext

LEARNED_TRAINING = "router_learned: train the planner over the router's catalog after the prerequisites"
"""The hook point `router_learned` still lacks (see the module docstring); until then it refuses
without a checkpoint, as `chainrec_learned` does outside bench."""


def prerequisites(context: ChainRecContext) -> list[str]:
    """The registry methods whose `prepare` hooks this run needs, in catalog order, each once."""
    names = [spec.name for spec in router_catalog(context)]
    return list(dict.fromkeys(PREREQUISITES[name] for name in names if name in PREREQUISITES))


def prepare_for_bench(request: PrepareRequest) -> Prepared:
    """Run each prerequisite's own `prepare` hook on the router's context (files named after this
    router method) and return the composed context; metrics.json gets each one's figures under
    `prerequisites`."""
    context = request.context
    figures: dict[str, Any] = {}
    for method in prerequisites(context):  # type: ignore[arg-type]
        hook = resolve(METHODS[method].prepare)
        done: Prepared = hook(replace(request, context=context))
        context = done.context
        figures[method] = done.metrics
    return Prepared(context, {"prerequisites": figures} if figures else {})

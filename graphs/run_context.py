"""The run's `Context` as a node sees it: what the caller passed (or the defaults), with the
registered method's overrides applied."""

from __future__ import annotations

from dataclasses import replace

from langgraph.config import get_config
from langgraph.runtime import get_runtime

from state.context import Context, context_or_default

OVERRIDES_KEY = "recgraph_overrides"
"""`configurable` key under which a registered graph carries its method's Context overrides."""


def current_context() -> Context:
    """The running graph's `Context` (defaults when the caller passed none), with the registered
    method's overrides applied (an ablation carries them in its config; see `graphs.registry`)."""
    ctx = context_or_default(get_runtime(Context).context)
    overrides = get_config().get("configurable", {}).get(OVERRIDES_KEY)
    return replace(ctx, **overrides) if overrides else ctx

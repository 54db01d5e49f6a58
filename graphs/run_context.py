"""The run's `Context` as a node sees it: what the caller passed (or the defaults), with the
registered method's overrides applied."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from langgraph.config import get_config
from langgraph.runtime import get_runtime

from state.context import Context, context_or_default

OVERRIDES_KEY = "recgraph_overrides"
"""`configurable` key under which a registered graph carries its method's Context overrides."""

MEMO_SIZE = 64
"""Contexts remembered by `current_context` and `context_key` (forgotten all at once past it)."""

_derived: dict[int, tuple[Context, dict[str, Any], dict[str, Any], Context]] = {}
_keys: dict[int, tuple[Context, dict[str, Any], str]] = {}


def current_context() -> Context:
    """The running graph's `Context` (defaults when the caller passed none), with the registered
    method's overrides applied (an ablation carries them in its config; see `graphs.registry`).

    Every node and route asks for it, so the overridden copy is made once per (context, overrides)
    and reused while the caller's context is unchanged (a changed field makes a new copy)."""
    ctx = context_or_default(get_runtime(Context).context)
    overrides = get_config().get("configurable", {}).get(OVERRIDES_KEY)
    if not overrides:
        return ctx
    seen = _derived.get(id(ctx))
    if seen is not None and seen[0] is ctx and seen[1] == ctx.__dict__ and seen[2] == overrides:
        return seen[3]
    derived = replace(ctx, **overrides)
    if len(_derived) >= MEMO_SIZE:
        _derived.clear()
    _derived[id(ctx)] = (ctx, dict(ctx.__dict__), dict(overrides), derived)
    return derived


def context_key(ctx: Context) -> str:
    """`repr(ctx)`: what identifies a Context's settings (e.g. for per-Context warm-up), remembered
    per object while its fields are unchanged (a Context has ~80 fields: its repr costs ~0.2 ms)."""
    seen = _keys.get(id(ctx))
    if seen is not None and seen[0] is ctx and seen[1] == ctx.__dict__:
        return seen[2]
    key = repr(ctx)
    if len(_keys) >= MEMO_SIZE:
        _keys.clear()
    _keys[id(ctx)] = (ctx, dict(ctx.__dict__), key)
    return key

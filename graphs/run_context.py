"""The run's `Context` as a node sees it, and the compiled graph class that puts it there.

There is one way to read settings: `Runtime.context` (or `current_context()`, which returns that
same object). `MethodGraph` makes it complete before the first node runs: the caller's context (an
instance, a dict from Studio's settings form, the common `Context` from the CLI, or nothing) becomes
an instance of the graph's `context_schema` with the registered method's ablation overrides applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.graph.state import CompiledStateGraph, StateGraph
from langgraph.runtime import get_runtime

from graphs.tracing import findable
from state.context import Context, context_as, context_or_default

MEMO_SIZE = 64
"""Contexts remembered by `MethodGraph` and `context_key` (forgotten all at once past it)."""

_derived: dict[tuple[int, type, int], tuple[Any, dict[str, Any], Context]] = {}
_keys: dict[int, tuple[Context, dict[str, Any], str]] = {}


class MethodGraph(CompiledStateGraph):
    """A compiled method graph whose runs see `context_schema` with its `method_overrides` applied.

    Overrides are applied in `stream`/`astream`, which `invoke`, `ainvoke`, `astream_events` and the
    LangGraph server all go through, so `runtime.context` already carries them in every node."""

    def __init__(self, *, method_overrides: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.method_overrides: Mapping[str, Any] = dict(method_overrides or {})
        """Context fields the registered method (an ablation) fixes, whatever the caller passed."""

    def run_context(self, context: Any) -> Context:
        """The context this graph's nodes see for a caller's `context` (see the module docstring)."""
        schema = self.context_schema or Context
        if isinstance(context, dict):
            context = schema(**context)
        key = (id(context), schema, id(self.method_overrides))
        seen = _derived.get(key)
        if seen is not None and seen[0] is context and (context is None or seen[1] == context.__dict__):
            return seen[2]
        derived = context_as(schema, context, self.method_overrides)
        if len(_derived) >= MEMO_SIZE:
            _derived.clear()
        _derived[key] = (context, dict(context.__dict__) if context is not None else {}, derived)
        return derived

    def stream(self, input: Any, config: Any = None, *, context: Any = None, **kwargs: Any) -> Any:
        """`Pregel.stream` with the method's context (see `run_context`) and the run's tags and
        metadata (see `graphs.tracing.findable`)."""
        run_context = self.run_context(context)
        return super().stream(input, findable(config, input, run_context), context=run_context, **kwargs)

    def astream(self, input: Any, config: Any = None, *, context: Any = None, **kwargs: Any) -> Any:
        """`Pregel.astream` with the method's context (see `run_context`) and the run's tags and
        metadata (see `graphs.tracing.findable`)."""
        run_context = self.run_context(context)
        return super().astream(input, findable(config, input, run_context), context=run_context, **kwargs)


def compile_method(builder: StateGraph, name: str, **kwargs: Any) -> MethodGraph:
    """`builder.compile(name=name, ...)` as a `MethodGraph` (no overrides: the registry adds them)."""
    compiled = builder.compile(name=name, **kwargs)
    attrs = {key: value for key, value in compiled.__dict__.items() if key != "__orig_class__"}
    return MethodGraph(**attrs)


def current_context() -> Context:
    """The running graph's context: `Runtime.context` (a `MethodGraph` never leaves it empty; a
    plain compiled graph run without one gets the common defaults)."""
    return context_or_default(get_runtime().context)


def context_key(ctx: Context) -> str:
    """`repr(ctx)`: what identifies a Context's settings (e.g. for per-Context warm-up), remembered
    per object while its fields are unchanged."""
    seen = _keys.get(id(ctx))
    if seen is not None and seen[0] is ctx and seen[1] == ctx.__dict__:
        return seen[2]
    key = repr(ctx)
    if len(_keys) >= MEMO_SIZE:
        _keys.clear()
    _keys[id(ctx)] = (ctx, dict(ctx.__dict__), key)
    return key

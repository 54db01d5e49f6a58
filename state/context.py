"""The common runtime knobs (dataset, LLM backends per role, retries, timeouts, seed, top-k) that
every method's context class extends with its own, one prefix per family (state/<method>/context.py).

A graph declares its method's class as `context_schema`, so Studio's settings form shows the common
knobs and that method's only. Nodes read the run's context via `graphs.run_context.current_context()`,
which is `Runtime.context`: a registered graph has already applied its ablation's overrides there."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal


def from_env(variable: str, fallback: str) -> Callable[[], str]:
    """A default read from the environment variable `variable` (else `fallback`) when a Context is made."""
    return lambda: os.environ.get(variable, fallback)


def shows_default(factory: Callable[[], str]) -> Callable[[dict[str, Any]], None]:
    """JSON-schema hook giving a field with a default factory the value it would have now, so Studio's
    settings form shows it (pydantic leaves factory defaults out of the schema)."""

    def extra(schema: dict[str, Any]) -> None:
        schema["default"] = factory()

    return extra


LLM_DEFAULT = from_env("RECGRAPH_LLM", "heuristic")
BASE_URL_DEFAULT = from_env("RECGRAPH_BASE_URL", "")


@dataclass(kw_only=True)
class Context:
    """The knobs every method shares; each method family subclasses it with its own.

    Every field has a default and a description (Studio shows both)."""

    dataset: str = field(
        default="ml-100k",
        metadata={"description": "Dataset name (e.g. ml-100k) or path whose catalog the graph uses."},
    )
    llm: str = field(
        default_factory=LLM_DEFAULT,
        metadata={
            "json_schema_extra": shows_default(LLM_DEFAULT),
            "description": "LLM backend for every role: heuristic (no LLM), local (bundled SmolLM2), "
            "sim (the loopback simulator), or openai:<model> (any OpenAI-compatible endpoint)."
        },
    )
    rec_model: str = field(
        default="", metadata={"description": "Backend for reasoning/ranking agents (empty: `llm`)."}
    )
    mem_model: str = field(
        default="", metadata={"description": "Backend for memory-manager agents (empty: `llm`)."}
    )
    planner_model: str = field(
        default="", metadata={"description": "Backend for planner agents (empty: `llm`)."}
    )
    base_url: str = field(
        default_factory=BASE_URL_DEFAULT,
        metadata={
            "json_schema_extra": shows_default(BASE_URL_DEFAULT),
            "description": "OpenAI-compatible endpoint for openai:/sim backends (empty: default).",
        },
    )
    llm_timeout: float = field(
        default=60.0, metadata={"description": "Seconds before one LLM request is abandoned."}
    )
    llm_retries: int = field(
        default=2,
        metadata={"description": "Extra attempts after a failed or invalid answer, before the fallback."},
    )
    llm_backoff: float = field(
        default=0.5, metadata={"description": "First retry delay in seconds (doubles per attempt)."}
    )
    max_connection_failures: int = field(
        default=3,
        metadata={
            "description": "Connection failures in a row (refused, reset: the server never answered) after "
            "which the run stops with an error naming the endpoint instead of falling back (0: never)."
        },
    )
    requests_per_second: float = field(
        default=0.0, metadata={"description": "Client-side rate limit for remote providers (0: none)."}
    )
    temperature: float = field(default=0.0, metadata={"description": "Sampling temperature."})
    max_output_tokens: int = field(
        default=512,
        metadata={
            "description": "Output tokens per LLM answer: the least any agent gets (output_budget "
            "per_agent) or every agent's cap (output_budget flat)."
        },
    )
    output_budget: Literal["per_agent", "flat"] = field(
        default="per_agent",
        metadata={
            "description": "per_agent: each agent's budget from agents/output_budget.py (what its "
            "paper's answers take, scaled with the entries it lists), at least max_output_tokens; "
            "flat: max_output_tokens for every agent."
        },
    )
    structured_output: Literal["auto", "json_schema", "json_object", "tools"] = field(
        default="auto",
        metadata={
            "description": "How requests ask for JSON: response_format json_schema, json_object (schema "
            "in the prompt) or a forced tool call; auto: json_schema until an endpoint refuses it with "
            "HTTP 400, then the next for that endpoint (agents/structured_output.py)."
        },
    )
    seed: int = field(
        default=0,
        metadata={"description": "Seed for anything random a method does (random baseline, BPR)."},
    )
    top_k: int = field(
        default=10,
        metadata={"description": "How many items to return when no candidates are given."},
    )
    item_text: Literal["full", "title"] = field(
        default="full",
        metadata={
            "description": "Evidence contract (prompts/evidence.py): what every LLM prompt shows of a "
            "candidate. full: its line, description and training reviews where the dataset has them; "
            "title: its line only (title, year, categories)."
        },
    )
    use_instruction: bool = field(
        default=True,
        metadata={
            "description": "Evidence contract: show the user's instruction (the request's, else the "
            "dataset's) above the candidates in every LLM ranker's prompt."
        },
    )
    history_items: int = field(
        default=50,
        metadata={
            "description": "Evidence contract: most recent visible history items an LLM prompt lists "
            "(0: all); a method that shows another number says so with a knob of its own."
        },
    )


def backend_for(context: Context, role: str) -> str:
    """The backend spec of a role ("rec", "mem" or "planner"), falling back to `llm`."""
    specific = {"rec": context.rec_model, "mem": context.mem_model, "planner": context.planner_model}
    return specific.get(role) or context.llm


def context_or_default(context: Context | None) -> Context:
    """The run's context, or the defaults when the caller passed none."""
    return context if context is not None else Context()


def context_as(schema: type[Context], context: Context | None, overrides: Mapping[str, Any]) -> Context:
    """`context` as an instance of `schema` (a method's context class) with `overrides` applied.

    Fields `schema` shares with `context` keep the caller's values (so the run's common context from
    the CLI becomes a method's context); the rest take their defaults. `context` is returned as it is
    when it already has that class and no override changes it."""
    if context is None:
        return schema(**overrides)
    if type(context) is schema:
        changed = {name: value for name, value in overrides.items() if getattr(context, name) != value}
        return replace(context, **changed) if changed else context
    names = {f.name for f in fields(schema) if f.init}
    shared = {f.name: getattr(context, f.name) for f in fields(context) if f.init and f.name in names}
    return schema(**(shared | dict(overrides)))


def own_settings(context: Context) -> dict[str, Any]:
    """The knobs `context`'s method family adds to the common ones, by name (what metrics.json
    reports as the settings a method ran with: planner, checkpoint, pool, memory, ...)."""
    common = {f.name for f in fields(Context)}
    return {f.name: getattr(context, f.name) for f in fields(context) if f.name not in common}

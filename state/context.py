"""Runtime knobs every graph reads via `Runtime[Context]` (editable per run in Studio)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from state.context_amem4rec import Amem4RecKnobs
from state.context_arag import AragKnobs
from state.context_chainrec import ChainRecKnobs
from state.context_memrec import MemRecKnobs


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
class CommonKnobs:
    """Dataset, LLM backends and the knobs the baselines share."""

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
    max_output_tokens: int = field(default=512, metadata={"description": "Cap on tokens per LLM answer."})
    recency_items: int = field(
        default=5, metadata={"description": "recency_llm: how many recent interactions the prompt shows."}
    )
    prompt_history_items: int = field(
        default=50, metadata={"description": "vanilla_llm: most recent history items shown (0: all)."}
    )
    rag_items: int = field(
        default=10, metadata={"description": "vanilla_rag: history items retrieved into the prompt."}
    )
    seed: int = field(
        default=0,
        metadata={"description": "Seed for anything random a method does (random baseline, BPR)."},
    )
    top_k: int = field(
        default=10,
        metadata={"description": "How many items to return when no candidates are given."},
    )
    recent_items: int = field(
        default=10,
        metadata={"description": "How many of the most recent history items profile the user."},
    )
    itemknn_neighbors: int = field(
        default=50,
        metadata={"description": "ItemKNN: neighbours kept per history item (0 keeps all)."},
    )
    bpr_factors: int = field(default=64, metadata={"description": "BPR: latent factors."})
    bpr_iterations: int = field(default=100, metadata={"description": "BPR: training epochs."})


@dataclass(kw_only=True)
class Context(ChainRecKnobs, Amem4RecKnobs, MemRecKnobs, AragKnobs, CommonKnobs):
    """Per-run configuration shared by all graphs; methods read the fields they need.

    Each method's knobs live in their own class (state/context_<method>.py); a new method adds
    its class to these bases. Every field has a default and a description (Studio shows both).
    """


def backend_for(context: Context, role: str) -> str:
    """The backend spec of a role ("rec", "mem" or "planner"), falling back to `llm`."""
    specific = {"rec": context.rec_model, "mem": context.mem_model, "planner": context.planner_model}
    return specific.get(role) or context.llm


def context_or_default(context: Context | None) -> Context:
    """The run's context, or the defaults when the caller passed none."""
    return context if context is not None else Context()

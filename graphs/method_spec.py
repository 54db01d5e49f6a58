"""What a registry entry is: `MethodSpec` (a recommender and its lifecycle hooks) and `ServiceGraph`
(a served graph that is not a recommender). The entries themselves are in `graphs.registry`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

STUDIO_REQUEST: Mapping[str, Any] = {"user_id": "1", "candidates": ["1", "50", "181", "100", "258"]}
"""A recommendation request on ml-100k (the default dataset): Studio's and the README's example."""


@dataclass(frozen=True)
class MethodSpec:
    """Where a method's graph is, how to describe it, and how it plugs into the harness."""

    graph: str
    """"module:attribute" of the compiled graph (shared by a method and its ablations)."""
    kind: Literal["classic", "llm"]
    """"classic" (no LLM) or "llm" (agents with an LLM policy and a deterministic fallback)."""
    summary: str
    """One line for help texts, reports and the Studio assistant's description."""
    overrides: Mapping[str, Any] = field(default_factory=dict)
    """Context fields this method fixes; applied in bench, perf, recommend, hooks and Studio."""
    prepare: str = ""
    """"module:function" run before ranking (training / warm-up); empty: nothing to prepare."""
    preload: str = ""
    """"module:function" (context) -> None: heavy one-time loading (a model, dataset-wide arrays),
    started by bench in a background thread when the run starts and awaited before `prepare`
    (bench/preload.py); empty: none."""
    perf_prepare: str = ""
    """"module:function" (PrepareRequest) -> Prepared run by `bench perf` before its warm-up pass, with
    a scratch `work_dir` removed after the method: the state its users are ranked on (AMEM4Rec trains
    a small pool there, so the ranking reads memories); `Prepared.metrics` go into perf.json; empty:
    the ranking runs on the context as given."""
    perf_extras: str = ""
    """"module:function" adding method-specific figures to `bench perf`; empty: none."""
    record_extras: str = ""
    """"module:function" (metrics, details, context) -> dict: per-user figures that need the scored
    ranking (e.g. ChainRec's reward), stored in results.jsonl `details`; empty: none."""
    cli: str = ""
    """"module:function" registering the family's CLI subcommands; empty: none."""
    llm_calls: str = ""
    """"module:function" (context, candidates) -> CallPlan: LLM requests per user before retries;
    empty: none for a classic method, not declared for an LLM one."""
    studio_example: Mapping[str, Any] = field(default_factory=lambda: dict(STUDIO_REQUEST))
    """A valid input on ml-100k (README, Studio, and the dev-server test run it)."""
    item_vectors: bool = False
    """True when its nodes read the MiniLM item vectors of a user's history and candidates: bench and
    bench perf embed those rows for every evaluated user in large batches before ranking
    (bench/item_prefetch.py) instead of a few rows per user."""


@dataclass(frozen=True)
class ServiceGraph:
    """A graph served in Studio that is not a recommender (e.g. a memory-write or training graph)."""

    graph: str
    """"module:attribute" of the compiled graph."""
    summary: str
    """The Studio assistant's description."""
    studio_example: Mapping[str, Any]
    """A valid input on ml-100k (README, Studio, and the dev-server test run it)."""

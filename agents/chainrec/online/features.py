"""The learned planner's state features: LLM-free features of S_t = (u, I_cand, M_t).

Two states (`STATES`, the `chainrec_planner_state` knob, keyed into every checkpoint):
- "memory" (Eq. 2 and 7, the default): only what the episode's tools wrote into M_t and the size of
  I_cand — the used-tool mask and the step, the counts each tool reported of its fetch
  (`MEMORY_STATS`: e.g. LongTermPreference's history length, ItemProfile's cold candidates; 0 and
  a "not reported" flag until a tool reported them) and a MiniLM embedding of the memory (the mean
  of each entry's "tool: summary" line, zeros before any tool ran). No scenario tag, no fact of the
  environment that no tool gathered.
- "scenario" (the ablation `chainrec_learned_scenario`): the used-tool mask and the step, task facts
  computed from the environment before any tool ran (`task_facts`: visible history length, days
  since the last interaction, the candidates' popularity and coldness, the dataset's domain flags)
  and the request's scenario tag, plus the same memory embedding.

`state_vector` turns either into the fixed-length input of the policy network; `feature_names`
names the hand-made part (the embedding follows it). `task_facts` stays for the ablation and for
offline expert selection (routing_signal.py), which is training-time hindsight, not the state.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from agents.chainrec.online.catalog import EVIDENCE_TOOLS
from tools.chainrec.episode_tools import EpisodeScope
from world.embeddings import EMBEDDING_DIM, embed_texts
from world.scenarios import SCENARIOS
from world.vector_memo import embed_batch

DOMAIN_FLAGS = ("ratings", "reviews", "categories", "timestamps", "authors", "locations")
"""The dataset fields the domain flags report, in vector order."""
COLD_INTERACTIONS = 2
"""A candidate with at most this many visible interactions counts as cold."""
DAY = 86400.0
TASK_FEATURES: tuple[str, ...] = (
    "step_fraction",
    "log_history",
    "log_days_since_last",
    "no_timestamps",
    "candidates_log_pop_mean",
    "candidates_log_pop_std",
    "candidates_log_pop_max",
    "candidates_cold_fraction",
    *(f"domain:{flag}" for flag in DOMAIN_FLAGS),
    *(f"scenario:{name}" for name in SCENARIOS),
)
"""Names of the hand-made features after the used-tool mask, in vector order."""


STATES = ("memory", "scenario")
"""The planner states: "memory" = (u, I_cand, M_t) as in Eq. 2; "scenario" = the scenario-aware
ablation (task facts and the scenario tag)."""
MEMORY_STATS = ("history_items", "recent_items", "rated_items", "low_rated_items", "cold_candidates")
"""Counts tools write into their memory entries' `stats` that the memory state reads."""
MEMORY_FEATURES: tuple[str, ...] = (
    "step_fraction",
    "log_candidates",
    *(f"{kind}:{stat}" for stat in MEMORY_STATS for kind in ("stat", "unreported")),
)
"""Names of the memory state's hand-made features after the used-tool mask, in vector order."""


def check_state(state: str) -> str:
    """`state` when it is one of `STATES`; else a one-line `RecgraphError`."""
    if state not in STATES:
        from world.errors import RecgraphError

        raise RecgraphError(f"chainrec_planner_state must be one of {', '.join(STATES)}, got {state!r}")
    return state


def feature_names(tools: Sequence[str] = EVIDENCE_TOOLS, state: str = "memory") -> tuple[str, ...]:
    """Names of the hand-made features of `state` over a catalog's evidence `tools` (the embedding
    follows)."""
    hand = MEMORY_FEATURES if check_state(state) == "memory" else TASK_FEATURES
    return (*(f"used:{tool}" for tool in tools), *hand)


def feature_dim(tools: Sequence[str] = EVIDENCE_TOOLS, state: str = "memory") -> int:
    """Length of a `state` vector over `tools`."""
    return len(feature_names(tools, state)) + EMBEDDING_DIM


FEATURE_NAMES = feature_names()
"""Names of the hand-made features over ChainRec's catalog."""
FEATURE_DIM = feature_dim()
"""Length of a state vector over ChainRec's catalog."""

_cache: OrderedDict[str, np.ndarray] = OrderedDict()
_cache_lock = threading.Lock()
CACHE_SIZE = 50_000


def task_facts(scope: EpisodeScope, candidates: Sequence[str]) -> dict[str, Any]:
    """The episode's LLM-free facts (see the module docstring), as a JSON-ready dict."""
    corpus = scope.corpus
    visible = corpus.visible_events(scope.user_id, scope.scenario)
    cutoff = scope.cutoff
    has_time = bool(scope.env.dataset.has_time)
    days = 0.0
    if has_time and visible and cutoff is not None:
        days = max(0.0, (cutoff - visible[-1].timestamp) / DAY)
    counts = np.array(
        [corpus.item_stats(item, scope.user_id, cutoff)[0] for item in candidates], dtype=np.float64
    )
    logs = np.log1p(counts) if len(counts) else np.zeros(1)
    return {
        "history_items": len(visible),
        "days_since_last": round(days, 4),
        "has_timestamps": has_time,
        "candidates_log_pop_mean": round(float(logs.mean()), 6),
        "candidates_log_pop_std": round(float(logs.std()), 6),
        "candidates_log_pop_max": round(float(logs.max()), 6),
        "candidates_cold_fraction": round(
            float((counts <= COLD_INTERACTIONS).mean()) if len(counts) else 0.0, 6
        ),
        "domain": {flag: bool(corpus.domain.get(flag, False)) for flag in DOMAIN_FLAGS},
        "scenario": scope.scenario,
    }


def memory_line(entry: Mapping[str, Any]) -> str:
    """The text of one memory entry that is embedded: "tool: summary"."""
    return f"{entry['tool']}: {entry['summary']}"


def missing_lines(memory: Sequence[Mapping[str, Any]]) -> list[str]:
    """Memory lines whose embedding is not cached yet (embedding them may take a while)."""
    with _cache_lock:
        return [line for line in map(memory_line, memory) if line not in _cache]


def embed_lines(lines: Sequence[str], shared: bool = False) -> dict[str, np.ndarray]:
    """MiniLM embeddings of `lines`, cached for the process (blocking on a miss: run off the loop).
    With `shared`, the lines not cached are one batch looked up in (and added to) the store every
    process shares (world/vector_memo.embed_batch): a fresh process that warms the same rows as an
    earlier one finds their vectors, bit for bit those it would have computed."""
    with _cache_lock:
        found = {line: _cache[line] for line in lines if line in _cache}
    todo = list(dict.fromkeys(line for line in lines if line not in found))
    if todo:
        vectors = embed_batch(todo) if shared else embed_texts(todo)
        found.update(zip(todo, vectors, strict=True))
        with _cache_lock:
            _cache.update(zip(todo, vectors, strict=True))
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return found


def memory_embedding(memory: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """The mean embedding of the memory's lines (zeros for an empty memory)."""
    if not memory:
        return np.zeros(EMBEDDING_DIM, dtype=np.float32)
    lines = [memory_line(entry) for entry in memory]
    vectors = embed_lines(lines)
    return np.mean([vectors[line] for line in lines], axis=0).astype(np.float32)


def latest_stat(memory: Sequence[Mapping[str, Any]], key: str) -> float | None:
    """The latest count a memory entry reported for `key` (None: no tool reported it yet)."""
    for entry in reversed(memory):
        stats = entry.get("stats") or {}
        if key in stats:
            return float(stats[key])
    return None


def memory_state_vector(
    memory: Sequence[Mapping[str, Any]],
    candidates: int,
    max_steps: int,
    memory_vector: np.ndarray,
    tools: Sequence[str] = EVIDENCE_TOOLS,
) -> np.ndarray:
    """The "memory" state's policy input: read from M_t (the tools run, the counts they reported,
    the embedding of their summaries) and |I_cand| only (float32, `feature_dim(tools)` long)."""
    used = [entry["tool"] for entry in memory]
    hand = [
        *(1.0 if tool in used else 0.0 for tool in tools),
        len(used) / max(max_steps, 1),
        math.log1p(candidates) / math.log(1000.0),
    ]
    for stat in MEMORY_STATS:
        value = latest_stat(memory, stat)
        hand += [
            math.log1p(max(value, 0.0)) / math.log(1000.0) if value is not None else 0.0,
            float(value is None),
        ]
    return np.concatenate([np.asarray(hand, dtype=np.float32), np.asarray(memory_vector, dtype=np.float32)])


def state_vector(
    facts: Mapping[str, Any],
    used: Sequence[str],
    max_steps: int,
    memory_vector: np.ndarray,
    tools: Sequence[str] = EVIDENCE_TOOLS,
) -> np.ndarray:
    """The "scenario" state's policy input (the ablation) for a state where `used` tools ran:
    environment facts and the scenario tag (float32, `feature_dim(tools, "scenario")` long;
    `tools`: the catalog's evidence tools, one used-flag each)."""
    domain = facts["domain"]
    hand = [
        *(1.0 if tool in used else 0.0 for tool in tools),
        len(used) / max(max_steps, 1),
        math.log1p(facts["history_items"]) / math.log(1000.0),
        math.log1p(facts["days_since_last"]) / math.log(3650.0),
        0.0 if facts["has_timestamps"] else 1.0,
        facts["candidates_log_pop_mean"] / 7.0,
        facts["candidates_log_pop_std"] / 7.0,
        facts["candidates_log_pop_max"] / 7.0,
        facts["candidates_cold_fraction"],
        *(1.0 if domain.get(flag) else 0.0 for flag in DOMAIN_FLAGS),
        *(1.0 if facts["scenario"] == name else 0.0 for name in SCENARIOS),
    ]
    return np.concatenate([np.asarray(hand, dtype=np.float32), np.asarray(memory_vector, dtype=np.float32)])


def policy_input(
    state: str,
    memory: Sequence[Mapping[str, Any]],
    candidates: int,
    max_steps: int,
    memory_vector: np.ndarray,
    tools: Sequence[str],
    facts: Callable[[], Mapping[str, Any]],
) -> np.ndarray:
    """The policy's input in `state` (`STATES`): the memory state reads `memory` and the candidate
    count only; the scenario-aware ablation also calls `facts` (the episode's task facts)."""
    if check_state(state) == "memory":
        return memory_state_vector(memory, candidates, max_steps, memory_vector, tools)
    return state_vector(facts(), [entry["tool"] for entry in memory], max_steps, memory_vector, tools)

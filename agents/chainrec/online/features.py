"""The learned planner's state features: LLM-free facts of S_t = (u, I_cand, M_t).

A state is described by
- task facts (`task_facts`, computed once per episode from the environment, no model): visible
  history length, days from the last visible interaction to the episode's time (0 plus a flag when
  the dataset has no timestamps), the candidates' popularity and coldness among others' visible
  interactions, the dataset's domain flags and the scenario;
- the used-tool mask and the step (from the memory);
- a MiniLM embedding of the memory so far: the mean of the embeddings of each entry's
  "tool: summary" line (zeros before any tool ran), so it needs no model beyond MiniLM.

`state_vector` turns these into the fixed-length input of the policy network; `FEATURE_NAMES` names
the hand-made part (the embedding follows it).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.chainrec.online.catalog import EVIDENCE_TOOLS
from tools.chainrec.episode_tools import EpisodeScope
from world.embeddings import EMBEDDING_DIM, embed_texts
from world.scenarios import SCENARIOS

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


def feature_names(tools: Sequence[str] = EVIDENCE_TOOLS) -> tuple[str, ...]:
    """Names of the hand-made features over a catalog's evidence `tools` (the embedding follows)."""
    return (*(f"used:{tool}" for tool in tools), *TASK_FEATURES)


def feature_dim(tools: Sequence[str] = EVIDENCE_TOOLS) -> int:
    """Length of a state vector over `tools`."""
    return len(tools) + len(TASK_FEATURES) + EMBEDDING_DIM


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


def embed_lines(lines: Sequence[str]) -> dict[str, np.ndarray]:
    """MiniLM embeddings of `lines`, cached for the process (blocking on a miss: run off the loop)."""
    with _cache_lock:
        found = {line: _cache[line] for line in lines if line in _cache}
    todo = list(dict.fromkeys(line for line in lines if line not in found))
    if todo:
        vectors = embed_texts(todo)
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


def state_vector(
    facts: Mapping[str, Any],
    used: Sequence[str],
    max_steps: int,
    memory_vector: np.ndarray,
    tools: Sequence[str] = EVIDENCE_TOOLS,
) -> np.ndarray:
    """The policy's input for a state where `used` tools ran (float32, `feature_dim(tools)` long;
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

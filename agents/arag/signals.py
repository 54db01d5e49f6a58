"""ARAG's deterministic signals: what the agents fall back on without (or after) an LLM.

The user context is u = (C_lt, C_st) (`tools.user_context`): the current session C_st is the
trailing run of the history with gaps of at most `Context.arag_session_gap_hours`, at most
`Context.arag_session_items` items (by position alone on order-only data), the long-term context
C_lt everything before it. Vectors are the MiniLM embeddings of the items' text T(i)
(`Environment.item_vectors`).

- Intent (NLI's hypothesis): f_Emb(u) = ``normalise(0.7 · mean(C_st) + 0.3 · mean(C_lt))`` — the
  session dominates, the long-term tastes are a prior (`tools.user_context.context_vector`, also
  the query of the retrieval stage).
- NLI score of item i, on the 0–10 scale: ``10 · clip(sim(i), 0, 1)`` with
  ``sim(i) = ½ · cos(v_i, intent) + ½ · era(i)``, where ``era(i)`` is the mean Gaussian
  kernel (σ = 3 years) between i's release year and the session items' years. The year is
  part of T(i), but MiniLM hardly encodes numbers, so it is matched explicitly. Without
  years (the item's or the session's) ``sim(i) = cos(v_i, intent)``.
- Session similarity: ``max(cos(v_i, mean(C_st)), 0)``.
- Ranker fusion (the item ranker's fallback): ``½ · s_NLI(i)/10 + ½ · session similarity``
  when NLI scores are on the blackboard, session similarity alone when they are not, and
  training popularity for users with no history. Ties keep the recall order. It orders only a
  fallback answer; ids an LLM ranking leaves out are placed by `agents.ranking.LEFT_OUT_RULE`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from state.arag.context import AragContext
from state.arag.schemas import NLI_MAX, NLI_MIN
from tools.similarity import profile_vector
from tools.user_context import context_vector, history_times, session_length, split_context
from world.data import Dataset
from world.environment import Environment

ERA_WEIGHT = 0.5
"""Share of the era affinity in the NLI similarity (the semantic cosine gets the rest)."""
ERA_SIGMA = 3.0
"""Width, in years, of the Gaussian kernel that compares release years."""
NLI_NEEDS = {"release_era_fit": "years"}
"""The NLI fallback's era kernel needs item years; without them its similarity is the cosine alone."""
UUA_NEEDS = {"category_weights": "categories"}
"""The user summary's category weights need item categories; without them it lists titles only."""
FUSION_NLI_WEIGHT = 0.5
"""Share of the (0–1 scaled) NLI score in the ranker's fallback fusion."""
NEUTRAL_SCORE = (NLI_MIN + NLI_MAX) / 2
"""The NLI score given when there is no intent to test against (no history)."""


def category_weights(dataset: Dataset, items: Sequence[str], top: int = 5) -> list[tuple[str, float]]:
    """The `top` categories of `items` with their share of all category mentions."""
    counts = Counter(c for item in items for c in dataset.items[item].categories)
    total = sum(counts.values())
    return [(c, n / total) for c, n in counts.most_common(top)] if total else []


def format_weights(weights: Sequence[tuple[str, float]]) -> str:
    """`Drama 0.31, Comedy 0.22` (or `no categories`)."""
    return ", ".join(f"{c} {w:.2f}" for c, w in weights) or "no categories"


def item_year(dataset: Dataset, item: str) -> float | None:
    """The item's release year, when its attributes carry a numeric one."""
    year = str(dataset.items[item].attributes.get("year", "")).strip()
    return float(year) if year.isdigit() else None


def year_span(dataset: Dataset, items: Sequence[str]) -> str:
    """`1994–1997`, `1997`, or empty when no item has a year."""
    years = sorted({int(y) for i in items if (y := item_year(dataset, i)) is not None})
    if not years:
        return ""
    return str(years[0]) if years[0] == years[-1] else f"{years[0]}–{years[-1]}"


def titled(dataset: Dataset, item: str) -> str:
    """`Title (year)`."""
    year = item_year(dataset, item)
    return dataset.items[item].title + (f" ({int(year)})" if year is not None else "")


def era_affinity(dataset: Dataset, items: Sequence[str], session: Sequence[str]) -> list[float | None]:
    """Mean Gaussian kernel between each item's year and the session's years (None: unknown)."""
    years = [y for i in session if (y := item_year(dataset, i)) is not None]
    out: list[float | None] = []
    for item in items:
        year = item_year(dataset, item)
        if year is None or not years:
            out.append(None)
        else:
            out.append(sum(math.exp(-((year - y) ** 2) / (2 * ERA_SIGMA**2)) for y in years) / len(years))
    return out


def vectors_of(env: Environment, items: Sequence[str]) -> np.ndarray:
    """MiniLM rows of `items`, in order."""
    return env.item_vectors()[[env.item_index[i] for i in items]]


def heuristic_nli(
    env: Environment, history: Sequence[str], items: Sequence[str], session_items: int
) -> dict[str, tuple[float, str]]:
    """item -> (s_NLI on 0–10, justification): cosine to the intent plus era affinity, rescaled."""
    long_term, session = split_context(history, session_items)
    intent = context_vector(env, long_term, session)
    if intent is None:
        return {item: (NEUTRAL_SCORE, "no history: no intent to test against") for item in items}
    cosines = vectors_of(env, items) @ intent
    eras = era_affinity(env.dataset, items, session)
    span = year_span(env.dataset, session)
    judged: dict[str, tuple[float, str]] = {}
    for item, cosine, era in zip(items, cosines.tolist(), eras, strict=True):
        similarity = cosine if era is None else (1 - ERA_WEIGHT) * cosine + ERA_WEIGHT * era
        score = round(NLI_MAX * min(max(similarity, 0.0), 1.0), 2)
        reason = f"text similarity {cosine:.2f} to the intent"
        if era is not None:
            reason += f"; era fit {era:.2f} (session years {span})"
        judged[item] = (score, reason)
    return judged


def session_similarity(
    env: Environment, history: Sequence[str], items: Sequence[str], session_items: int
) -> np.ndarray | None:
    """`max(cos(v_i, mean(C_st)), 0)` per item (None when there is no history)."""
    _, session = split_context(history, session_items)
    centroid = profile_vector(env, session)
    if centroid is None:
        return None
    return np.clip(vectors_of(env, items) @ centroid, 0.0, None)


def fused_scores(
    env: Environment,
    history: Sequence[str],
    items: Sequence[str],
    session_items: int,
    nli: Mapping[str, float] | None,
) -> tuple[np.ndarray, str]:
    """The ranker fallback's score per item and a description of what it fused."""
    session = session_similarity(env, history, items, session_items)
    if session is None:
        top = max(env.popularity.values(), default=1) or 1
        return np.array([env.popularity.get(i, 0) / top for i in items]), "training popularity (no history)"
    if not nli:
        return session, "similarity to the session"
    scaled = np.array([nli.get(i, NEUTRAL_SCORE) / NLI_MAX for i in items])
    fused = FUSION_NLI_WEIGHT * scaled + (1 - FUSION_NLI_WEIGHT) * session
    return fused, f"{FUSION_NLI_WEIGHT:g}·NLI/10 + {1 - FUSION_NLI_WEIGHT:g}·similarity to the session"


def session_context(ctx: AragContext, env: Environment, user_id: str, history: Sequence[str]) -> AragContext:
    """`ctx` with `arag_session_items` narrowed to this user's current session C_st, split by time
    where the dataset has timestamps (`tools.user_context.session_length`), so every agent and
    fallback that splits the history by position afterwards splits it as u = (C_lt, C_st)."""
    times = history_times(env, user_id, history)
    size = session_length(history, ctx.arag_session_items, times, ctx.arag_session_gap_hours)
    same = size == min(max(ctx.arag_session_items, 0), len(history))  # what the position split gives
    return ctx if same else replace(ctx, arag_session_items=size)

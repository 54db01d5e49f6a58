"""MemRec Stage R, step 1: candidate-aware curation of the 1- and 2-hop neighbourhood with a rule set.

Deterministic (no LLM): features from `agents.memrec.features`, scores from the domain rule set
(`agents.memrec.rule_scoring.score_neighbours`), then the top k with a floor of users and of items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agents.memrec.feature_index import FeatureIndex
from agents.memrec.features import NeighbourFeatures, neighbour_features
from agents.memrec.rule_files import load_rule_set
from agents.memrec.rule_scoring import score_neighbours
from agents.memrec.rules import FEATURES, RuleSet
from agents.memrec.similarity_reads import READS_PER_KEPT, SIMILARITY, read_needed
from state.memrec.context import MemRecContext
from state.memrec.state import CuratedRecord
from world.environment import Environment

AUTO_RULES = {"book": "books", "goodreads": "goodreads", "movie": "movietv", "ml-": "movietv", "yelp": "yelp"}
"""`memrec_rules="auto"`: the first key found in the dataset name picks the shipped rule set
(goodreads is checked before books); anything else uses `generic`."""


def rule_set_name(ctx: MemRecContext, env: Environment) -> str:
    """The rule-set name or path a run uses (resolving "auto" from the dataset name)."""
    if ctx.memrec_rules != "auto":
        return ctx.memrec_rules
    name = env.dataset.name.lower()
    for key in ("goodreads", "book", "movie", "ml-", "yelp"):
        if key in name:
            return AUTO_RULES[key]
    return "generic"


def resolve_rule_set(ctx: MemRecContext, env: Environment, override: str | None = None) -> RuleSet:
    """The validated rule set (cached per process); `override` wins over the context."""
    name = override or rule_set_name(ctx, env)
    return env.resource(f"memrec_rules:{name}", lambda: load_rule_set(name))


@dataclass(frozen=True)
class Curated:
    """The curated neighbours N'_k(u), best first."""

    node_ids: list[str]
    """Memory-graph node ids ("i:<id>", "u:<id>")."""
    is_item: np.ndarray
    """True for item neighbours."""
    index: np.ndarray
    """Environment index of each node (item or user index)."""
    scores: np.ndarray
    """Rule-set score of each node."""
    features: np.ndarray
    """k x 5 features (`FEATURES` order)."""
    pool: int
    """How many neighbours were scored."""

    def as_records(self) -> list[CuratedRecord]:
        """JSON-ready rows for the state: id, kind, score and named features."""
        return [
            {
                "id": node,
                "kind": "item" if item else "user",
                "score": round(float(score), 6),
                "features": {f: round(float(v), 6) for f, v in zip(FEATURES, row, strict=True)},
            }
            for node, item, score, row in zip(
                self.node_ids, self.is_item, self.scores, self.features, strict=True
            )
        ]


def select_top(scores: np.ndarray, is_item: np.ndarray, k: int, min_users: int, min_items: int) -> np.ndarray:
    """Row indices of the top k by score (stable on ties), guaranteeing up to `min_users` users
    and `min_items` items when the neighbourhood has them; best first."""
    order = np.argsort(-scores, kind="stable")
    if k <= 0 or not len(order):
        return np.zeros(0, dtype=np.int64)
    floor_items = order[is_item[order]][: min(min_items, k)]
    floor_users = order[~is_item[order]][: max(0, min(min_users, k - len(floor_items)))]
    chosen = np.zeros(len(order), dtype=bool)
    chosen[floor_items] = True
    chosen[floor_users] = True
    rest = order[~chosen[order]][: max(0, k - int(chosen.sum()))]
    chosen[rest] = True
    return order[chosen[order]]


def curate(
    index: FeatureIndex,
    rule_set: RuleSet,
    user_id: str,
    candidates: Sequence[str],
    k: int,
    min_users: int,
    min_items: int,
    visible: Sequence[str] | None = None,
    reads_per_kept: int | None = READS_PER_KEPT,
    candidate_aware: bool = False,
) -> Curated:
    """Score the neighbourhood of `user_id` for these candidates and keep N'_k(u) (see
    `neighbour_features` for `visible`). Only the user neighbours that may be among the best k
    users have their memory read (agents/memrec/similarity_reads.py), at most `reads_per_kept` x k
    of them (None: no limit). The users `select_top` can keep are among them, so within the limit
    the result is the same as with every memory read. The features read the candidates only when
    `candidate_aware` (`memrec_curation = "candidates"`; Eq. 2 takes none)."""
    found: NeighbourFeatures = neighbour_features(
        index, user_id, candidates, visible=visible, user_similarity=False, candidate_aware=candidate_aware
    )
    unread = read_needed(index, rule_set, found, k, None if reads_per_kept is None else reads_per_kept * k)
    found.matrix[unread, SIMILARITY] = 0.0  # ranked last below: never kept
    scores = score_neighbours(rule_set, found.matrix, found.is_item) if len(found.node_ids) else np.zeros(0)
    scores[unread] = -np.inf
    keep = select_top(scores, found.is_item, k, min_users, min_items)
    return Curated(
        node_ids=found.node_ids[keep].tolist(),
        is_item=found.is_item[keep],
        index=found.index[keep],
        scores=scores[keep],
        features=found.matrix[keep],
        pool=len(found.node_ids),
    )


def empty_curation() -> Curated:
    """No neighbours (the w/o Collab. Read ablation)."""
    return Curated([], np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros((0, 5)), 0)

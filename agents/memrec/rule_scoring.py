"""MemRec's curation rule interpreter: a rule set (rules.py) scores one neighbour (user or item) of
the target user from five features, fast and deterministically:

    score = (base + sum_t w_t * m_t * T_t(x_t)) * F + B

`w_t` / `T_t` are the rule set's `base_terms` (a weight and an identity/log1p transform per
feature), `m_t` the product of every firing effect that targets term t, `F` the product of every
firing effect that targets the whole score (multipliers, penalties, exponential decays) and `B`
the sum of firing additive boosts. An effect fires when all of its own and its rule's conditions
hold; products and sums commute, so rule order never matters.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from agents.memrec.rules import FEATURE_COLUMN, FEATURES, RuleSet


def _kind_ok(kind: str, wanted: str) -> bool:
    return wanted == "any" or kind == wanted


def score_neighbour(rule_set: RuleSet, features: Mapping[str, float], kind: str, base: float = 1.0) -> float:
    """Score one neighbour (`kind` 'user' or 'item') from its five features (plain Python)."""
    term_mult = {t.feature: 1.0 for t in rule_set.base_terms}
    factor, boost = 1.0, 0.0
    for rule in rule_set.rules:
        if not _kind_ok(kind, rule.kind) or not all(c.holds(features) for c in rule.when):
            continue
        for effect in rule.effects:
            if not _kind_ok(kind, effect.kind) or not all(c.holds(features) for c in effect.when):
                continue
            value = effect.factor(features)
            if effect.type == "boost":
                boost += value
            elif effect.target == "score":
                factor *= value
            else:
                term_mult[effect.target] *= value
    total = base
    for term in rule_set.base_terms:
        x = float(features[term.feature])
        total += term.weight * term_mult[term.feature] * (math.log1p(x) if term.transform == "log1p" else x)
    return total * factor + boost


def score_neighbours(
    rule_set: RuleSet, feature_matrix: np.ndarray, kinds: Sequence[str] | np.ndarray, base: float = 1.0
) -> np.ndarray:
    """Vectorised `score_neighbour`: rows of `feature_matrix` are neighbours, columns `FEATURES`.

    `kinds` holds 'user'/'item' per row (or a boolean array, True = item).
    """
    x = np.asarray(feature_matrix, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != len(FEATURES):
        raise ValueError(f"feature_matrix must be n x {len(FEATURES)} (columns {FEATURES}), got {x.shape}")
    cols = np.ascontiguousarray(x.T)  # one contiguous row per feature
    k = np.asarray(kinds)
    is_item = k if k.dtype == bool else k == "item"
    n = x.shape[0]
    masks = {"item": is_item, "user": ~is_item, "any": True}
    term_mult = np.ones((len(rule_set.base_terms), n))
    factor, boost = np.ones(n), np.zeros(n)
    for conds, kind, effect, rate, dest in rule_set.program:
        mask = masks[kind]
        for op, col, threshold in conds:
            mask = mask & op(cols[col], threshold)
        if effect.type == "decay":
            value = np.exp(-rate * cols[FEATURE_COLUMN[effect.feature]])
        elif effect.feature is not None:
            value = effect.value + effect.coef * cols[FEATURE_COLUMN[effect.feature]]
            value = value if dest == -2 else np.maximum(value, 0.0)
        else:
            value = effect.value if dest == -2 else max(effect.value, 0.0)
        out = boost if dest == -2 else factor if dest == -1 else term_mult[dest]
        (np.add if dest == -2 else np.multiply)(out, value, out=out, where=mask)
    total = np.full(n, float(base))
    for j, term in enumerate(rule_set.base_terms):
        col = cols[FEATURE_COLUMN[term.feature]]
        total += term.weight * term_mult[j] * (np.log1p(col) if term.transform == "log1p" else col)
    return total * factor + boost

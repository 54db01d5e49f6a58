"""MemRec's curation rule language: a rule set's validated JSON form (conditions, base terms,
effects, rules), compiled once into the flat program the interpreter runs.

The interpreter is rule_scoring.py (what a rule set computes, in its docstring); reading rule sets
from files, shipped names or dicts is rule_files.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from world.errors import RecgraphError

Feature = Literal[
    "edge_weight", "recency_days", "co_interaction_count", "metadata_overlap_score", "memory_similarity_score"
]
FEATURES: tuple[str, ...] = Feature.__args__
"""The five curation features, in the column order `score_neighbours` expects."""
Operator = Literal["<", "<=", ">", ">=", "==", "!="]
_UFUNCS = (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)
_OPS = dict(zip(Operator.__args__, _UFUNCS, strict=True))
FEATURE_COLUMN = {name: i for i, name in enumerate(FEATURES)}
"""Feature -> its column in a feature matrix."""
_CONFIG = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class RuleSetError(RecgraphError):
    """A rule set that does not validate; the message names the rule (id and index) and the problem."""


class Condition(BaseModel):
    """A threshold test on one feature, e.g. co_interaction_count > 3."""

    model_config = _CONFIG
    feature: Feature
    """The feature compared."""
    op: Operator
    """Comparison operator."""
    value: float
    """Threshold."""

    def holds(self, features: Mapping[str, float]) -> bool:
        """Whether the condition is true for one neighbour's features."""
        return bool(_OPS[self.op](float(features[self.feature]), self.value))


class BaseTerm(BaseModel):
    """One weighted feature of the score before any rule fires."""

    model_config = _CONFIG
    feature: Feature
    """The feature."""
    weight: float
    """Its weight in the base score."""
    transform: Literal["identity", "log1p"] = "identity"
    """log1p tames counts (co_interaction_count)."""


class Effect(BaseModel):
    """What a rule does when it fires."""

    model_config = _CONFIG
    type: Literal["multiplier", "boost", "decay", "penalty"]
    """multiplier: x (value + coef*feature); boost: + (value + coef*feature);
    decay: x exp(-ln2 * feature / half_life); penalty: x value, 0 <= value < 1."""
    target: Literal["score"] | Feature = "score"
    """'score' (the whole score) or a base-term feature whose weight is scaled (not for boosts)."""
    value: float | None = None
    """Constant factor (multiplier, penalty) or addend (boost)."""
    feature: Feature | None = None
    """Feature the factor/addend is linear in (multiplier, boost) or that decays (decay)."""
    coef: float = 0.0
    """Slope on `feature` for multipliers and boosts."""
    half_life: float | None = Field(default=None, gt=0)
    """Decay: the feature value at which the factor halves."""
    rate: float | None = Field(default=None, gt=0)
    """Decay alternative to half_life: factor = exp(-rate * feature)."""
    when: list[Condition] = []
    """Extra conditions for this effect alone (ANDed with the rule's)."""
    kind: Literal["user", "item", "any"] = "any"
    """Neighbour kind this effect applies to."""

    @model_validator(mode="after")
    def _check(self) -> Effect:
        t = self.type
        if t in ("multiplier", "boost", "penalty") and self.value is None:
            raise ValueError(f"a {t} effect needs a 'value'")
        if t == "penalty" and not 0 <= self.value < 1:  # type: ignore[operator]
            raise ValueError(f"a penalty value must be in [0, 1), got {self.value}")
        if t == "decay" and (self.feature is None or (self.half_life is None) == (self.rate is None)):
            raise ValueError("a decay effect needs a 'feature' and exactly one of 'half_life' or 'rate'")
        if t != "decay" and (self.half_life is not None or self.rate is not None):
            raise ValueError(f"'half_life'/'rate' only apply to decay effects, not {t}")
        if self.coef and self.feature is None:
            raise ValueError("'coef' needs a 'feature'")
        if t == "boost" and self.target != "score":
            raise ValueError("a boost adds to the whole score; its target must be 'score'")
        return self

    def decay_rate(self) -> float:
        """Decay rate per unit of `feature` (ln 2 / half_life); 0 for other effect types."""
        if self.type != "decay":
            return 0.0
        return self.rate if self.rate is not None else math.log(2) / self.half_life  # type: ignore[operator]

    def factor(self, features: Mapping[str, float]) -> float:
        """This effect's multiplicative factor (or addend, for a boost) for one neighbour."""
        if self.type == "decay":
            return math.exp(-self.decay_rate() * float(features[self.feature]))  # type: ignore[index]
        slope = self.coef * float(features[self.feature]) if self.feature else 0.0
        value = float(self.value) + slope  # type: ignore[arg-type]
        return value if self.type == "boost" else max(value, 0.0)


class Rule(BaseModel):
    """One named curation rule: shared conditions and 1+ effects."""

    model_config = _CONFIG
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    """Short unique id (used in error messages and traces)."""
    name: str
    """Human-readable name."""
    description: str = ""
    """Why the rule exists (its rationale)."""
    when: list[Condition] = []
    """Conditions shared by all effects (ANDed)."""
    kind: Literal["user", "item", "any"] = "any"
    """Neighbour kind the whole rule applies to."""
    effects: list[Effect] = Field(min_length=1)
    """What happens when the rule fires."""


class RuleSet(BaseModel):
    """A domain's 1–5 curation rules plus the base score they modify."""

    model_config = _CONFIG
    name: str
    """Rule-set name (e.g. 'books')."""
    domain: str
    """Domain it was written for."""
    description: str = ""
    """Provenance: who/what wrote it and from which statistics or figure."""
    base_terms: list[BaseTerm] = []
    """Weighted features forming the score before rules (empty: the score starts at `base`)."""
    rules: list[Rule]
    """The rules (1 to 5)."""
    _program: Any = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check(self) -> RuleSet:
        if not 1 <= len(self.rules) <= 5:
            raise ValueError(f"a rule set has 1 to 5 rules, got {len(self.rules)}")
        seen: set[str] = set()
        terms = {t.feature for t in self.base_terms}
        for i, rule in enumerate(self.rules):
            if rule.id in seen:
                raise ValueError(f"rule {rule.id!r} (index {i}): duplicate rule id")
            seen.add(rule.id)
            for j, effect in enumerate(rule.effects):
                if effect.target != "score" and effect.target not in terms:
                    raise ValueError(
                        f"rule {rule.id!r} (index {i}): effects[{j}] targets "
                        f"{effect.target!r}, which is not one of the base_terms {sorted(terms)}"
                    )
        self._program = _compile(self)
        return self

    @property
    def program(self) -> list[tuple[Any, ...]]:
        """The effects compiled for `rule_scoring.score_neighbours`: (conditions, kind, effect, decay
        rate, destination: a base term's index, -1 the score, -2 the boost)."""
        return self._program

    def to_json(self) -> str:
        """The rule set as indented JSON (round-trips through `load_rule_set`)."""
        return self.model_dump_json(indent=2, exclude_defaults=True)


def _compile(rule_set: RuleSet) -> list[tuple[Any, ...]]:
    """Flatten effects into (conditions, kind, effect, rate, destination: term index, -1 score, -2 boost)."""
    terms = [t.feature for t in rule_set.base_terms]
    program = []
    for rule in rule_set.rules:
        for effect in rule.effects:
            kinds = {rule.kind, effect.kind} - {"any"}
            if len(kinds) > 1:
                continue  # a user-only rule with an item-only effect never fires
            conds = tuple(
                (_OPS[c.op], FEATURE_COLUMN[c.feature], c.value) for c in (*rule.when, *effect.when)
            )
            dest = -1 if effect.target == "score" else terms.index(effect.target)
            dest = -2 if effect.type == "boost" else dest
            program.append((conds, kinds.pop() if kinds else "any", effect, effect.decay_rate(), dest))
    return program

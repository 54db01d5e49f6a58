"""MemRec's curation rule language: validated JSON rule sets and a fast, deterministic interpreter.

A rule set scores one neighbour (user or item) of the target user from five features:

    score = (base + sum_t w_t * m_t * T_t(x_t)) * F + B

`w_t` / `T_t` are the rule set's `base_terms` (a weight and an identity/log1p transform per
feature), `m_t` the product of every firing effect that targets term t, `F` the product of every
firing effect that targets the whole score (multipliers, penalties, exponential decays) and `B`
the sum of firing additive boosts. An effect fires when all of its own and its rule's conditions
hold; products and sums commute, so rule order never matters.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from world.errors import RecgraphError

if TYPE_CHECKING:
    pass

Feature = Literal[
    "edge_weight", "recency_days", "co_interaction_count", "metadata_overlap_score", "memory_similarity_score"
]
FEATURES: tuple[str, ...] = Feature.__args__
"""The five curation features, in the column order `score_neighbours` expects."""
Operator = Literal["<", "<=", ">", ">=", "==", "!="]
_UFUNCS = (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)
_OPS = dict(zip(Operator.__args__, _UFUNCS, strict=True))
_COL = {name: i for i, name in enumerate(FEATURES)}
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

    def to_json(self) -> str:
        """The rule set as indented JSON (round-trips through `load_rule_set`)."""
        return self.model_dump_json(indent=2, exclude_defaults=True)


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


def _compile(rule_set: RuleSet) -> list[tuple[Any, ...]]:
    """Flatten effects into (conditions, kind, effect, rate, destination: term index, -1 score, -2 boost)."""
    terms = [t.feature for t in rule_set.base_terms]
    program = []
    for rule in rule_set.rules:
        for effect in rule.effects:
            kinds = {rule.kind, effect.kind} - {"any"}
            if len(kinds) > 1:
                continue  # a user-only rule with an item-only effect never fires
            conds = tuple((_OPS[c.op], _COL[c.feature], c.value) for c in (*rule.when, *effect.when))
            dest = -1 if effect.target == "score" else terms.index(effect.target)
            dest = -2 if effect.type == "boost" else dest
            program.append((conds, kinds.pop() if kinds else "any", effect, effect.decay_rate(), dest))
    return program


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
    for conds, kind, effect, rate, dest in rule_set._program:
        mask = masks[kind]
        for op, col, threshold in conds:
            mask = mask & op(cols[col], threshold)
        if effect.type == "decay":
            value = np.exp(-rate * cols[_COL[effect.feature]])
        elif effect.feature is not None:
            value = effect.value + effect.coef * cols[_COL[effect.feature]]
            value = value if dest == -2 else np.maximum(value, 0.0)
        else:
            value = effect.value if dest == -2 else max(effect.value, 0.0)
        out = boost if dest == -2 else factor if dest == -1 else term_mult[dest]
        (np.add if dest == -2 else np.multiply)(out, value, out=out, where=mask)
    total = np.full(n, float(base))
    for j, term in enumerate(rule_set.base_terms):
        col = cols[_COL[term.feature]]
        total += term.weight * term_mult[j] * (np.log1p(col) if term.transform == "log1p" else col)
    return total * factor + boost


def _problem(error: ValidationError, raw: Mapping[str, Any]) -> str:
    """Turn pydantic's first error into 'rule 'id' (index i): where: what'."""
    first = error.errors()[0]
    loc, msg = list(first["loc"]), first["msg"].removeprefix("Value error, ")
    rules = raw.get("rules") if isinstance(raw.get("rules"), list) else []
    if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int):
        index = loc[1]
        rule = rules[index] if index < len(rules) else None
        rid = rule.get("id") if isinstance(rule, Mapping) else None
        where = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in loc[2:]).replace(".[", "[")
        return f"rule {rid!r} (index {index}): {where or 'rule'}: {msg}"
    return f"{'.'.join(map(str, loc)) or 'rule set'}: {msg}"


RULESET_DIR = "rulesets"


def shipped_rule_sets() -> list[str]:
    """Names of the rule sets shipped with recgraph (books, generic, goodreads, movietv, yelp)."""
    folder = resources.files(__package__ or "agents.memrec") / RULESET_DIR
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def load_rule_set(source: str | Path | Mapping[str, Any]) -> RuleSet:
    """Validate a rule set from a dict, a JSON file path, or a shipped name; raises `RuleSetError`."""
    where = ""
    if not isinstance(source, Mapping):
        path = Path(source)
        if not path.is_file() and str(source) in shipped_rule_sets():
            path = Path(str(resources.files(__package__ or "agents.memrec") / RULESET_DIR / f"{source}.json"))
        if not path.is_file():
            raise RuleSetError(f"no rule set {str(source)!r}: not a file nor one of {shipped_rule_sets()}")
        where = f"{path}: "
        try:
            source = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise RuleSetError(f"{where}not valid JSON ({error})") from error
        if not isinstance(source, Mapping):
            raise RuleSetError(f"{where}a rule set is a JSON object, got {type(source).__name__}")
    try:
        return RuleSet.model_validate(dict(source))
    except ValidationError as error:
        raise RuleSetError(where + _problem(error, source)) from error


def rule_set_schema() -> dict[str, Any]:
    """The JSON Schema of a rule set (what LM_Mem is asked to produce)."""
    return RuleSet.model_json_schema()

"""Which curation rules read a feature the dataset cannot feed, said once in `recgraph bench`'s header.

A rule reads a feature when one of its conditions tests it, or one of its effects scales it, decays
with it, is linear in it or targets its base term. Two features depend on an optional field
(`agents.memrec.features.CURATION_NEEDS`):

- metadata_overlap_score needs item categories: without them it is 0 for every neighbour, so a
  rule reading it decides nothing on it (a condition on it is always true or always false, a
  factor on its term multiplies 0);
- recency_days needs timestamps: without them it reads interaction order in days at the dataset's
  median pace (agents/memrec/order_clock.py), so a rule reading it fires on positions, not days.

edge_weight's strength is the rating over the maximum rating, 1 without ratings; its recency part
still varies, so no rule is named for ratings. The per-user `degraded` list (state/degraded.py)
still names the two features for every ranked user; this is the run-level line naming the rules.
"""

from __future__ import annotations

from collections.abc import Mapping

from agents.memrec.curation import resolve_rule_set, rule_set_name
from agents.memrec.features import CURATION_NEEDS
from agents.memrec.order_clock import ORDER_HORIZON_DAYS, environment_pace, position_words
from agents.memrec.rules import FEATURES, Rule, RuleSet
from state.context import Context
from state.memrec.context import MemRecContext
from world.environment import Environment
from world.shape import FIELDS, environment_fields


def rule_features(rule: Rule) -> set[str]:
    """The features `rule` reads (conditions, and each effect's feature, conditions and target)."""
    found = {c.feature for c in rule.when}
    for effect in rule.effects:
        found |= {c.feature for c in effect.when}
        found |= {f for f in (effect.feature, effect.target) if f in FEATURES}
    return found


def rules_reading(rule_set: RuleSet, feature: str) -> list[str]:
    """Ids of the rules of `rule_set` that read `feature`, in rule-set order."""
    return [rule.id for rule in rule_set.rules if feature in rule_features(rule)]


def missing_field_rules(rule_sets: Mapping[str, RuleSet], present: frozenset[str]) -> dict[str, list[str]]:
    """Per curation feature whose field is not in `present`: "name: rule, rule" for each rule set
    (by name, in the given order) that has rules reading it; features no rule reads are left out."""
    found: dict[str, list[str]] = {}
    for feature, field in CURATION_NEEDS.items():
        if field in present:
            continue
        groups = [
            f"{name}: {', '.join(ids)}"
            for name, rs in rule_sets.items()
            if (ids := rules_reading(rs, feature))
        ]
        if groups:
            found[feature] = groups
    return found


def pace_words(env: Environment) -> str:
    """How order-only recency reads positions on `env`'s dataset, e.g. "the median pace, 12
    interactions per 365 days: one position = 30.4 days"."""
    pace = environment_pace(env)
    return (
        f"the median pace, {pace * ORDER_HORIZON_DAYS:g} interactions per {ORDER_HORIZON_DAYS:g} days: "
        f"{position_words(pace)}"
    )


def curation_notes(env: Environment, contexts: Mapping[str, Context]) -> list[str]:
    """The header line (or none) naming, once for the run, the curation rules of the MemRec methods
    in `contexts` (method -> its context) that read a feature `env`'s dataset cannot feed. Methods
    that read no neighbours (w/o Collab. Read) use no rules and are skipped."""
    readers = [c for c in contexts.values() if isinstance(c, MemRecContext) and c.memrec_use_read]
    rule_sets: dict[str, RuleSet] = {}
    for ctx in readers:
        name = rule_set_name(ctx, env)
        if name not in rule_sets:
            rule_sets[name] = resolve_rule_set(ctx, env, name)
    missing = missing_field_rules(rule_sets, environment_fields(env))
    if not missing:
        return []
    parts = []
    if "recency_days" in missing:
        parts.append(
            f"{FIELDS['timestamps']}: recency_days reads positions in days at {pace_words(env)}; "
            f"rules reading it: {'; '.join(missing['recency_days'])}"
        )
    if "metadata_overlap_score" in missing:
        parts.append(
            f"{FIELDS['categories']}: metadata_overlap_score is 0 for every neighbour, so these rules "
            f"decide nothing on it: {'; '.join(missing['metadata_overlap_score'])}"
        )
    sentences = [part[0].upper() + part[1:] for part in parts]
    return [f"MemRec curation rules on {env.dataset.name}. " + ". ".join(sentences) + "."]

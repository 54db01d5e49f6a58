"""Which users a benchmark may evaluate and how their candidates are made, step by step.

Users with a held-out target, then the scenario's rule (world.scenarios), then, when the dataset
ships pre-generated candidate pools, only the users whose pool holds enough negatives: a run never
silently mixes pooled and sampled users unless asked to (`mix`, `--mix-candidates`). Pools of
impressions (MIND: `Dataset.pool_source`) are drawn from only under `--candidate-source impressions`;
otherwise that dataset's negatives are sampled from the catalog like any other's. Each step is
counted so the run header, metrics.json (`candidates`) and report.md can say why N users were
eligible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from bench.protocol.retrieval_candidates import RETRIEVAL_SOURCES
from world.data import natural_key
from world.dataset_environment import Environment, scenario_cases
from world.errors import ProtocolError
from world.scenarios import (
    BENCH_SCENARIOS,
    COLD_START_SIZES,
    WINDOW_DAYS,
    eligible_users,
    is_cold_start,
    scenario_rule,
)

if TYPE_CHECKING:
    from bench.protocol.spec import EvalCase, Protocol
    from world.split import UserCase

CASES_BY_RULE = "recgraph's scenario rules (world/scenarios.py)"
"""metrics.json's `candidates.cases` when no task folder fixes the scenario's cases."""
Source = Literal["pools", "impressions", "uniform", "mixed", "retrieval", "retrieval_negatives"]
"""How negatives are drawn: the dataset's pools only, the user's impression only (MIND,
`--candidate-source impressions`), uniformly from unseen items, both, or ARAG's retrieval stage
(`--candidate-source retrieval`, which ignores the pools)."""
IMPRESSIONS = "impressions"
"""The `--candidate-source` drawing negatives from the news shown beside the user's last click."""


@dataclass(frozen=True)
class Step:
    """One eligibility rule and how many users are left after it."""

    rule: str
    """The rule in words."""
    users: int
    """Users left once it is applied."""


@dataclass(frozen=True)
class Eligibility:
    """The users a protocol may evaluate and the steps that chose them."""

    users: list[str]
    """Eligible users, in natural id order."""
    steps: list[Step]
    """Each rule applied, in order, with the users it left."""
    pooled: frozenset[str]
    """Users the dataset ships a candidate pool for (whether or not it is usable)."""
    source: Source
    """How candidates are made for the eligible users."""


def pool_source(candidate_source: str) -> str:
    """The `Dataset.pool_source` a run's `--candidate-source` draws pools of: `impressions` for
    impressions, else `auto` (the dataset's own candidate sets)."""
    return IMPRESSIONS if candidate_source == IMPRESSIONS else "auto"


def check_pool_source(env: Environment, candidate_source: str) -> None:
    """Refuse `--candidate-source impressions` on a dataset that ships no impressions."""
    if candidate_source == IMPRESSIONS and env.dataset.pool_source != IMPRESSIONS:
        raise ProtocolError(
            f"--candidate-source impressions: {env.dataset.name!r} ships no impressions "
            "(only MIND's behaviors.tsv does); use auto"
        )


def pool_users(env: Environment, candidate_source: str = "auto") -> frozenset[str]:
    """Users the dataset ships a pre-generated candidate pool for that `candidate_source` draws from
    (none when its pools are of another kind: MIND's impressions under `auto`)."""
    if env.dataset.pool_source != pool_source(candidate_source):
        return frozenset()
    presplit = env.dataset.presplit or {}
    return frozenset(u for u, fixed in presplit.items() if fixed.candidates is not None)


def split_of(env: Environment, scenario: str) -> Mapping[str, UserCase]:
    """`scenario_cases(env, scenario)`, but a dataset that fixes its own split (`Dataset.presplit`)
    answers cold_start with the default split itself, which is the same split (`world.split.leave_one_out`
    keeps a fixed split whatever the interaction floor), instead of building it a second time."""
    if scenario == "cold_start" and env.dataset.presplit is not None:
        return env.cases
    return scenario_cases(env, scenario)


def usable_negatives(env: Environment, user_id: str, scenario: str = "classic") -> int:
    """Negatives `bench.protocol.candidates.sample_candidates` can draw from the user's pool (pool items
    that are neither the target nor anything the user interacted with)."""
    fixed = (env.dataset.presplit or {})[user_id]
    target = split_of(env, scenario)[user_id].target.item_id
    seen = env.interacted(user_id)
    return sum(1 for item in dict.fromkeys(fixed.candidates or ()) if item != target and item not in seen)


def eligibility(
    env: Environment,
    scenario: str,
    candidates: int,
    mix: bool = False,
    retrieval: bool | str = False,
    source_name: str = "auto",
) -> Eligibility:
    """The users `scenario` may evaluate with `candidates` per user, and why (see module doc);
    `retrieval` (True or the source's name): candidates come from the retrieval stage, so the pools
    do not restrict anyone; `source_name`: the run's `--candidate-source` (impressions: MIND's
    impression pools, refused on other data)."""
    check_pool_source(env, source_name)
    cases = split_of(env, scenario)  # cold_start: the users the default split drops too
    if env.dataset.cases_from:  # a scenario's own task folder: its tasks are the cases
        users = list(env.cases)
        rule = f"cases: {env.dataset.cases_from}"
    else:
        users = eligible_users(cases, scenario, env.popularity, len(env.item_ids))
        rule = scenario_rule(scenario, env.popularity, len(env.item_ids))
    steps = [Step("users with a held-out target", len(env.cases)), Step(rule, len(users))]
    pooled = pool_users(env, source_name)
    source: Source = "uniform"
    if retrieval:
        source = retrieval if retrieval == "retrieval_negatives" else "retrieval"
    elif pooled and mix:
        source = "mixed"
    elif pooled:
        source = "impressions" if source_name == IMPRESSIONS else "pools"
        users = [u for u in users if u in pooled and usable_negatives(env, u, scenario) >= candidates - 1]
        rule = (
            f"has a pre-generated pool with at least {candidates - 1} usable negatives (the dataset ships "
            f"pools for {len(pooled):,} users; --mix-candidates also evaluates the others)"
        )
        if source == "impressions":
            rule = (
                f"was shown at least {candidates - 1} news beside their last click that they never "
                f"clicked ({len(pooled):,} users have an impression; --candidate-source impressions)"
            )
        steps.append(Step(rule, len(users)))
    return Eligibility(sorted(users, key=natural_key), steps, pooled, source)


def cold_start_count(env: Environment) -> int:
    """How many users `cold_start` may evaluate on a dataset without its own split or candidate pools,
    counted from the default split and the other users' sequence lengths instead of splitting the
    dataset again down to 2 interactions (`world.scenarios.cold_start_cases`): a user qualifies when
    all its interactions number one of `COLD_START_SIZES`, which the default split's cases tell, and
    the users it drops (too few interactions) tell by their whole history's length."""
    in_split = sum(1 for case in env.cases.values() if is_cold_start(case))
    dropped = (user for user in env.user_ids if user not in env.cases)
    return in_split + sum(1 for user in dropped if len(env.history(user)) in COLD_START_SIZES)


def eligible_count(
    env: Environment,
    scenario: str,
    candidates: int,
    mix: bool,
    retrieval: bool | str,
    source_name: str = "auto",
) -> int:
    """`len(eligibility(...).users)`; for cold_start on a dataset that fixes no split of its own (so
    has no pools) and whose cold_start split is not built yet, `cold_start_count` (the same number;
    a fixed split is never built twice: `split_of`)."""
    if scenario == "cold_start" and env.dataset.presplit is None and env.peek("cold_start_cases") is None:
        return cold_start_count(env)
    return len(eligibility(env, scenario, candidates, mix, retrieval, source_name).users)


def how_candidates(source: Source, candidates: int) -> str:
    """How each user's candidates are made, in words."""
    negatives = f"the target + {candidates - 1} negatives"
    return {
        "pools": f"{negatives} drawn from the user's pre-generated pool in the dataset",
        "impressions": f"{negatives} drawn from the news shown beside the user's last click and never "
        "clicked (--candidate-source impressions)",
        "uniform": f"{negatives} sampled uniformly from the items the user never interacted with",
        "mixed": f"{negatives} from the user's pre-generated pool where the dataset has one, else sampled "
        "uniformly from unseen items (--mix-candidates)",
        "retrieval": f"the top {candidates} items of ARAG's embedding retrieval for the user context over "
        "the unseen catalog, as retrieved: a user whose target it missed scores 0 "
        "(--candidate-source retrieval)",
        "retrieval_negatives": f"the target and {candidates - 1} negatives drawn from the top of ARAG's "
        "embedding retrieval for the user context over the unseen catalog "
        "(--candidate-source retrieval_negatives)",
    }[source]


def candidates_block(env: Environment, protocol: Protocol, cases: Sequence[EvalCase]) -> dict[str, Any]:
    """metrics.json's `candidates`: how candidates were made, the eligibility steps of the run's
    scenario, eligible users under every scenario the dataset supports, and who was evaluated (the
    users of `cases`; with the retrieval source, the retrieval's recall@N from the cases' `recalled`)."""
    scenario, candidates, mix = protocol.scenario, protocol.candidates, protocol.mix_candidates
    retrieval = protocol.candidate_source if protocol.candidate_source in RETRIEVAL_SOURCES else False
    named = protocol.candidate_source
    chosen = eligibility(env, scenario, candidates, mix, retrieval, named)
    evaluated = [case.user_id for case in cases]
    by_scenario = {  # cold_start counted without a second split of the dataset (`eligible_count`)
        name: len(chosen.users)
        if name == scenario
        else eligible_count(env, name, candidates, mix, retrieval, named)
        for name in BENCH_SCENARIOS
        if (env.dataset.has_time or name not in WINDOW_DAYS)
        and (name == scenario or not env.dataset.cases_from)  # a task folder serves its scenario only
    }
    how = how_candidates(chosen.source, candidates)
    if env.dataset.pool_source == IMPRESSIONS and chosen.source == "uniform":
        how += " (the dataset's impressions are not used: --candidate-source impressions draws from them)"
    block: dict[str, Any] = {
        "cases": env.dataset.cases_from or CASES_BY_RULE,
        "source": chosen.source,
        "how": how,
        "pools": len(chosen.pooled),
        "steps": [{"rule": step.rule, "users": step.users} for step in chosen.steps],
        "eligible": len(chosen.users),
        "eligible_by_scenario": by_scenario,
        "evaluated": len(evaluated),
        "evaluated_with_pool": sum(1 for user in evaluated if user in chosen.pooled),
    }
    if retrieval:  # the retrieval stage's own recall@N: how often its top N held the target
        found = [case.recalled for case in cases if case.recalled is not None]
        block[f"recall@{candidates}"] = sum(found) / len(found) if found else None
    return block


def describe_candidates(block: dict[str, Any]) -> str:
    """The candidates block in one paragraph (run header and report.md)."""
    steps = " → ".join(f"{step['rule']}: {step['users']:,}" for step in block["steps"])
    pooled = f", {block['evaluated_with_pool']:,} of them with the dataset's pool" if block["pools"] else ""
    recall = "".join(
        f"; the retrieval found the target for {v:.1%} ({k})"
        for k, v in block.items()
        if k.startswith("recall@") and v is not None
    )
    evaluated = f"{block['evaluated']:,}{pooled}{recall}"
    return f"candidates: {block['how']}. Eligible users: {steps}. Evaluated: {evaluated}."


def describe_cases(block: dict[str, Any]) -> str:
    """Where the run's cases come from, one line (run header and report.md): an AgentRecBench task
    folder, or recgraph's scenario rules."""
    return f"cases: {block.get('cases', CASES_BY_RULE)}"

"""The evaluation plan: which users, with which candidates, under which scenario."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from bench.candidates import sample_candidates
from bench.eligibility import check_pool_source, eligibility, pool_source
from bench.retrieval_candidates import RETRIEVAL_SOURCES, retrieval_candidates
from state.context import Context
from world.data import natural_key
from world.environment import Environment
from world.errors import ProtocolError
from world.evaluation_world import scenario_cases, world_spec
from world.scenarios import check_scenario

ALL_USERS = "all"
"""`--users all`: every eligible user (`Protocol.users` None)."""


@dataclass(frozen=True)
class Protocol:
    """Everything that fixes a benchmark's inputs (and so must match on resume)."""

    dataset: str
    """Dataset name or path."""
    candidates: int = 10
    """N: target + N-1 negatives."""
    seed: int = 0
    """Seeds user selection and candidate sampling."""
    scenario: str = "classic"
    """One of world.scenarios' `BENCH_SCENARIOS`."""
    users: int | None = 200
    """How many users to evaluate (all eligible ones if fewer); None (`--users all`): every eligible
    user, in user-id order, as a paper's "full test set" is evaluated."""
    llm: str = "heuristic"
    """The LLM backend label (heuristic = no LLM; agents use their fallbacks)."""
    mix_candidates: bool = False
    """When the dataset ships candidate pools: also evaluate users without one (uniform negatives)."""
    candidate_source: str = "auto"
    """auto: the dataset's pools where it ships them (not MIND's impressions), else uniform negatives;
    impressions: MIND's news shown beside the user's last click; retrieval: ARAG's recall stage's top
    N as retrieved; retrieval_negatives: the target and N−1 negatives drawn from the
    retrieval's top `retrieval_pool` (bench/retrieval_candidates.py)."""
    retrieval_pool: int = 0
    """retrieval_negatives: K, the top of the retrieval the negatives are drawn from (0: 5N; at
    least 5N)."""
    knobs: tuple[tuple[str, Any], ...] = ()
    """The run's `--set NAME=VALUE` knobs, parsed (bench/knob_settings.py), in the order given."""

    def as_dict(self) -> dict[str, object]:
        """The protocol as written to metrics.json and results.jsonl (`mix_candidates` only when
        set, `candidate_source` only when not auto, and the knobs as `set` only when given, so logs
        written before the options existed still resume, and a resumed run with other --set values
        is refused; a `retrieval` run says `missed_target: scores 0`, so a log written when a missed
        target was swapped in is refused too)."""
        fields = asdict(self)
        del fields["knobs"]
        if not self.mix_candidates:
            del fields["mix_candidates"]
        if self.candidate_source == "auto":
            del fields["candidate_source"]
        if not self.retrieval_pool:
            del fields["retrieval_pool"]
        if self.candidate_source == "retrieval":  # a log of the old swap-in rule is another protocol
            fields["missed_target"] = "scores 0"
        if self.knobs:
            fields["set"] = dict(self.knobs)
        return fields


@dataclass(frozen=True)
class EvalCase:
    """One user's test query."""

    user_id: str
    """The user."""
    target: str
    """The held-out item."""
    candidates: list[str]
    """Shuffled target + negatives."""
    recalled: bool | None = None
    """With a retrieval source: whether the retrieval's top N held the target (its recall@N is the
    share of such cases; with `retrieval` a missed target is not among the candidates); None for the
    other sources."""

    def request(self, scenario: str) -> dict[str, object]:
        """The `RecInput` a graph receives for this case."""
        return {"user_id": self.user_id, "candidates": self.candidates, "scenario": scenario}


def user_count(text: str) -> int | None:
    """`--users`: a positive count, or "all" (None: every eligible user); ProtocolError otherwise."""
    if text.strip().lower() == ALL_USERS:
        return None
    try:
        count = int(text)
    except ValueError:
        raise ProtocolError(f"--users must be a number of users or {ALL_USERS}, got {text!r}") from None
    if count < 1:
        raise ProtocolError(f"--users must be at least 1 (or {ALL_USERS}), got {count}")
    return count


def check_protocol(protocol: Protocol) -> None:
    """Refuse impossible numbers before any work starts."""
    if protocol.users is not None and protocol.users < 1:
        raise ProtocolError(f"--users must be at least 1 (or all), got {protocol.users}")
    if protocol.candidates < 2:
        raise ProtocolError(
            f"--candidates must be at least 2 (the target and a negative), got {protocol.candidates}"
        )
    if protocol.retrieval_pool < 0:
        raise ProtocolError(f"--retrieval-pool must be 0 (5N) or more, got {protocol.retrieval_pool}")
    if protocol.retrieval_pool and protocol.candidate_source != "retrieval_negatives":
        raise ProtocolError("--retrieval-pool applies to --candidate-source retrieval_negatives only")


def plan_cases(env: Environment, protocol: Protocol) -> list[EvalCase]:
    """The users under test (a seeded sample of eligible users, or all of them when
    `protocol.users` is None) with their candidates."""
    check_protocol(protocol)
    check_scenario(protocol.scenario, env.dataset.has_time)
    retrieval = protocol.candidate_source in RETRIEVAL_SOURCES
    chosen = eligibility(
        env,
        protocol.scenario,
        protocol.candidates,
        protocol.mix_candidates,
        retrieval,
        protocol.candidate_source,
    )
    eligible = chosen.users
    if not eligible:
        why = "; ".join(f"{step.rule}: {step.users}" for step in chosen.steps)
        raise ProtocolError(f"no user of {env.dataset.name!r} qualifies for {protocol.scenario!r} ({why})")
    order = np.random.default_rng(protocol.seed).permutation(len(eligible))
    chosen = sorted((eligible[i] for i in order[: protocol.users]), key=natural_key)  # None: all
    return plan_cases_for(env, protocol, chosen)


def plan_cases_for(env: Environment, protocol: Protocol, users: list[str]) -> list[EvalCase]:
    """Test cases (target and seeded candidates) for the given users."""
    check_pool_source(env, protocol.candidate_source)
    # pools only of the kind the source draws (MIND's impressions only under `impressions`)
    drawn = env.dataset.pool_source == pool_source(protocol.candidate_source)
    presplit = (env.dataset.presplit or {}) if drawn else {}
    split = scenario_cases(env, protocol.scenario)
    cases = []
    for user_id in users:
        env.require_user(user_id)
        if user_id not in split:
            raise ProtocolError(f"user {user_id!r} has too few interactions to hold one out")
        target = split[user_id].target.item_id
        fixed = presplit.get(user_id)
        if protocol.candidate_source in RETRIEVAL_SOURCES:  # bench/retrieval_candidates.py
            shown, others = env.history(user_id, protocol.scenario), env.interacted(user_id) - {target}
            retrieved = retrieval_candidates(
                env, user_id=user_id, target=target, n=protocol.candidates, history=shown, interacted=others,
                seed=protocol.seed, source=protocol.candidate_source, retrieval_pool=protocol.retrieval_pool,
            )  # fmt: skip
            cases.append(EvalCase(user_id, target, retrieved.candidates, retrieved.recalled))
            continue
        candidates = sample_candidates(
            user_id=user_id,
            target=target,
            n=protocol.candidates,
            catalog=env.item_ids,
            interacted=env.interacted(user_id) - {target},
            seed=protocol.seed,
            pool=fixed.candidates if fixed else None,
        )
        cases.append(EvalCase(user_id, target, candidates))
    return cases


def evaluation_context(context: Context, protocol: Protocol, cases: Sequence[EvalCase]) -> Context:
    """`context` pointed at the scenario's evaluation world for the users of `cases`
    (`world.evaluation_world`): every method's training, memories and models then see only what the
    scenario lets those users see. Unchanged (the same object) for scenarios without a world."""
    spec = world_spec(context.dataset, protocol.scenario, [case.user_id for case in cases])
    return context if spec == context.dataset else replace(context, dataset=spec)

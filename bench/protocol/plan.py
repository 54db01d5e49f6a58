"""The evaluation plan: which users, with which candidates, under which scenario."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from bench.protocol.candidates import sample_candidates
from bench.protocol.eligibility import check_pool_source, eligibility, pool_source
from bench.protocol.retrieval_candidates import RETRIEVAL_SOURCES, retrieval_candidates
from bench.protocol.spec import EvalCase, Protocol, check_protocol
from state.context import Context
from world.data import natural_key
from world.dataset_environment import Environment, scenario_cases
from world.errors import ProtocolError
from world.evaluation_world import world_spec
from world.scenarios import check_scenario


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
        if protocol.candidate_source in RETRIEVAL_SOURCES:  # bench/protocol/retrieval_candidates.py
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

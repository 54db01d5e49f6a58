"""ChainRec offline stage 1, its inputs: what fixes a trajectory file (`TrajectoryConfig`) and the
training tasks it covers.

A *training task* is one user's validation interaction with its own candidates (target + N−1
negatives the user never interacted with, seeded by (seed, user)), posed in the training world of
training_env.py, where the test interaction does not exist. Tasks are a seeded sample of the users
eligible for the scenario there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from agents.chainrec.online.library_file import library_key, library_of
from state.chainrec.context import ChainRecContext
from state.context import backend_for
from world.data import natural_key
from world.environment import Environment
from world.errors import ProtocolError
from world.scenarios import check_scenario, eligible_users
from world.seeding import user_rng


@dataclass(frozen=True)
class TrajectoryConfig:
    """What fixes a trajectory file (every row carries it; a resume must match it)."""

    dataset: str
    """Dataset name or path."""
    scenario: str = "classic"
    """Which interactions the tools may see (world.scenarios), relative to the validation target."""
    tasks: int = 300
    """Training tasks (users, a seeded sample; all eligible ones if fewer)."""
    candidates: int = 20
    """N: the validation target + N−1 negatives."""
    seed: int = 0
    """Seeds the task sample, the negatives and the chain sample."""
    chain_cap: int = 2000
    """Enumerate every feasible chain up to this many; above it, sample this many."""
    max_steps: int = ChainRecContext.chainrec_max_steps
    """T_max: tools per chain at most (`chainrec_max_steps`'s default)."""
    lam: float = ChainRecContext.chainrec_reward_lambda
    """λ of R(τ): the cost of one tool call (`chainrec_reward_lambda`'s default)."""
    cost_lam: float = 0.0
    """λ_cost of R(τ): the cost of one model token the chain's tools spent (0: ChainRec's Eq. 5)."""
    llm: str = "heuristic"
    """The backend the tools and CandidateRank ran with."""
    library: str = ""
    """The tool library's key (`library_file.library_key`; "" for the shipped library)."""

    def as_dict(self) -> dict[str, Any]:
        """The header stored with every row (`library` only when it is not the shipped one, so the
        shipped library's files keep their keys)."""
        data = asdict(self)
        if not self.library:
            del data["library"]
        return data


@dataclass(frozen=True)
class Task:
    """One training task."""

    user_id: str
    """The user."""
    target: str
    """The validation item (the training world's held-out target)."""
    candidates: tuple[str, ...]
    """Shuffled target + negatives."""


def config_from(
    ctx: ChainRecContext, scenario: str, tasks: int, candidates: int, seed: int, chain_cap: int
) -> TrajectoryConfig:
    """The trajectory config of a run context (step budget, λ and backend from `ctx`)."""
    return TrajectoryConfig(
        dataset=ctx.dataset,
        scenario=scenario,
        tasks=tasks,
        candidates=candidates,
        seed=seed,
        chain_cap=chain_cap,
        max_steps=ctx.chainrec_max_steps,
        lam=ctx.chainrec_reward_lambda,
        llm=backend_for(ctx, "rec"),
        library=library_key(library_of(ctx)),
    )


def training_tasks(train: Environment, full: Environment, config: TrajectoryConfig) -> list[Task]:
    """A seeded sample of training tasks: users eligible for the scenario in the training world,
    their last training item as target (`training_env`: no validation interaction is trained
    on), negatives among items they never touched (test item included
    in what they touched, so it is never a negative)."""
    check_scenario(config.scenario, train.dataset.has_time)
    eligible = sorted(
        eligible_users(train.cases, config.scenario, train.popularity, len(train.item_ids)), key=natural_key
    )
    if not eligible:
        raise ProtocolError(f"no training task of {config.dataset!r} qualifies for {config.scenario!r}")
    order = np.random.default_rng(config.seed).permutation(len(eligible))
    users = sorted((eligible[i] for i in order[: config.tasks]), key=natural_key)
    tasks = []
    for user in users:
        target = train.cases[user].target.item_id
        touched = full.interacted(user)
        rng = user_rng(config.seed, user, "chainrec_training_task")
        negatives: dict[str, None] = {}
        unseen = len(full.item_ids) - len(touched | {target})
        if unseen < config.candidates - 1:
            continue
        while len(negatives) < config.candidates - 1:
            item = full.item_ids[int(rng.integers(len(full.item_ids)))]
            if item not in touched and item != target:
                negatives[item] = None
        items = [target, *negatives]
        tasks.append(Task(user, target, tuple(items[i] for i in rng.permutation(len(items)))))
    return tasks

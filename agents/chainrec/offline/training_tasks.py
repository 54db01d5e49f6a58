"""ChainRec offline stage 1, its inputs: what fixes a trajectory file (`TrajectoryConfig`) and the
training tasks it covers.

A *training task* is one user's last training interaction with candidates made like the
benchmark's (the paper's Sec. 5.1: the positive and N−1 negatives "sampled from the user's unobserved
(non-interacted) items within the same domain": uniform over the items the user never touched, of the
positive's `source` domain when the catalog names domains; seeded by (seed, user)), posed in the
training world of training_env.py, where neither the test nor the validation interaction exists.
Tasks are a seeded sample of the users eligible for the scenario there; for one planner over every
scenario (`RUN_SCOPE`, the paper's single planner over all cells) an equal share of distinct users
per scenario the data supports, each task posed under its own scenario. On AgentRecBench's release
layout the dataset is the release's training corpus and no user of any task folder is drawn
(`excluded_users`): the paper builds its training corpus apart from the test tasks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from agents.chainrec.online.library_file import library_key, library_of
from agents.chainrec.online.policy import RUN_SCOPE
from state.chainrec.context import ChainRecContext
from state.context import backend_for
from world.data import natural_key
from world.environment import Environment
from world.errors import ProtocolError
from world.scenarios import SCENARIOS, WINDOW_DAYS, check_scenario, eligible_users
from world.seeding import user_rng


@dataclass(frozen=True)
class TrajectoryConfig:
    """What fixes a trajectory file (every row carries it; a resume must match it)."""

    dataset: str
    """Dataset name or path."""
    scenario: str = "classic"
    """Which interactions the tools may see (world.scenarios), relative to the validation target;
    `RUN_SCOPE` ("all"): tasks of every scenario the data supports, each under its own."""
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
    scenario: str = "classic"
    """The scenario the task is posed under (what its tools may see)."""


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


def excluded_users(dataset_spec: str) -> frozenset[str]:
    """Users no training task may be drawn from: on AgentRecBench's training corpus every user a task
    folder evaluates (world/loaders/agentrecbench.py); elsewhere none."""
    from world.loaders.agentrecbench import CORPUS, TASK_MARK, parse_view, task_users

    if f"{TASK_MARK}{CORPUS}" not in dataset_spec:
        return frozenset()
    root = parse_view(dataset_spec.partition("#kcore:")[0].partition("#min-user:")[0])[0]
    return task_users(root)


def task_scenarios(config: TrajectoryConfig, has_time: bool) -> tuple[str, ...]:
    """The scenarios `config`'s tasks are posed under: every one the data supports for `RUN_SCOPE`
    (the day windows need timestamps), else its own (checked)."""
    if config.scenario == RUN_SCOPE:
        return tuple(s for s in SCENARIOS if has_time or s not in WINDOW_DAYS)
    check_scenario(config.scenario, has_time)
    return (config.scenario,)


def training_tasks(train: Environment, full: Environment, config: TrajectoryConfig) -> list[Task]:
    """A seeded sample of training tasks: users eligible for each scenario in the training world
    (outside `excluded_users`, one task per user), their last training item as target
    (`training_env`: no validation interaction is trained on), negatives like the benchmark's
    (`negatives`)."""
    scenarios = task_scenarios(config, train.dataset.has_time)
    taken = set(excluded_users(config.dataset))
    tasks: list[Task] = []
    for index, scenario in enumerate(scenarios):  # `tasks` split as evenly as it goes, in order
        share = config.tasks // len(scenarios) + (index < config.tasks % len(scenarios))
        eligible = [
            u
            for u in eligible_users(train.cases, scenario, train.popularity, len(train.item_ids))
            if u not in taken
        ]
        order = np.random.default_rng(config.seed).permutation(len(eligible))
        chosen = sorted((eligible[i] for i in order[:share]), key=natural_key)
        taken.update(chosen)
        tasks += [t for u in chosen if (t := _task(train, full, config, u, scenario)) is not None]
    if not tasks:
        raise ProtocolError(f"no training task of {config.dataset!r} qualifies for {config.scenario!r}")
    return sorted(tasks, key=lambda task: natural_key(task.user_id))


def _task(
    train: Environment, full: Environment, config: TrajectoryConfig, user: str, scenario: str
) -> Task | None:
    """`user`'s task (None when too few items are left to draw the negatives from)."""
    target = train.cases[user].target.item_id
    pool, members = negatives_pool(full, target)
    touched = full.interacted(user)  # the test item included, so it is never a negative
    if len(pool) - len((touched | {target}) & members) < config.candidates - 1:
        return None
    rng = user_rng(config.seed, user, "chainrec_training_task")
    negatives: dict[str, None] = {}
    while len(negatives) < config.candidates - 1:
        item = pool[int(rng.integers(len(pool)))]
        if item not in touched and item != target:
            negatives[item] = None
    items = [target, *negatives]
    return Task(user, target, tuple(items[i] for i in rng.permutation(len(items))), scenario)


def negatives_pool(full: Environment, target: str) -> tuple[list[str], frozenset[str]]:
    """The items negatives are drawn from (as a list and a set): the catalog's items of the target's
    `source` domain when the catalog names domains (AgentRecBench's environment mixes Amazon,
    Goodreads and Yelp), else the whole catalog (computed once per domain)."""
    items = full.dataset.items
    domain = items[target].attributes.get("source", "") if target in items else ""

    def build() -> tuple[list[str], frozenset[str]]:
        pool = [i for i in full.item_ids if not domain or items[i].attributes.get("source") == domain]
        return pool, frozenset(pool)

    return full.resource(f"chainrec_negatives_pool:{domain}", build)

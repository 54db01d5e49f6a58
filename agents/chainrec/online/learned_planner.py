"""The learned planner in the online interface (`ChainRecContext.chainrec_planner` = "learned").

It scores the feasible actions with the checkpoint's policy (policy.py) over the state features of
features.py and picks the most likely one. The state is the one the checkpoint was trained on and the
run asks for (`chainrec_planner_state`): "memory", S_t = (u, I_cand, M_t) of Eq. 2 (what the tools
wrote, the candidate count), or the scenario-aware ablation (task facts and the scenario tag); a
checkpoint of the other state is refused in one line, never reused. The checkpoint is the one planner
of the run's scenarios (`chainrec_planner_scope` = "run", the paper's: Eq. 2's state has no scenario,
so one policy serves all five) or, in the per-scenario ablation, the scenario's own
(`policy.planner_key`). Without one (e.g. a fresh Studio server: nothing trains at serving time) it
refuses in one line that says how to train one: a method means one thing, whatever the cache holds.

Blocking work — finding and reading the checkpoint, embedding new memory lines with MiniLM — happens
once per process / per line; `needs_blocking` tells the graph when the next decision would do any
of it, so the planner node runs it in a worker thread under `ainvoke`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from agents.chainrec.online.features import (
    check_state,
    memory_embedding,
    missing_lines,
    policy_input,
    task_facts,
)
from agents.chainrec.online.planning import PlanView, choose
from agents.chainrec.online.policy import (
    ACTIONS,
    Checkpoint,
    checkpoint_state,
    find_checkpoint,
    is_loaded,
    is_resolved,
    load_checkpoint,
    masked_log_probs,
    planner_dataset,
    planner_key,
)
from state.chainrec.context import ChainRecContext
from state.chainrec.schemas import PlannerChoice
from tools.chainrec.episode_tools import EpisodeScope
from world.environment import get_environment
from world.errors import RecgraphError

_facts: OrderedDict[tuple[str, str, str, tuple[str, ...]], dict[str, Any]] = OrderedDict()
FACTS_CACHE = 4096


def episode_facts(dataset: str, view: PlanView) -> dict[str, Any]:
    """The episode's task facts (computed once per episode; pure CPU on a loaded environment); only
    the scenario-aware ablation's state reads them."""
    key = (dataset, view.user_id, view.scenario, view.candidates)
    if key not in _facts:
        scope = EpisodeScope(get_environment(dataset), view.user_id, view.scenario)
        _facts[key] = task_facts(scope, view.candidates)
        while len(_facts) > FACTS_CACHE:
            _facts.popitem(last=False)
    return _facts[key]


def needs_blocking(ctx: ChainRecContext, scenario: str, memory: Sequence[Mapping[str, Any]]) -> bool:
    """True when the learned planner's next decision would read the disk or run MiniLM."""
    if ctx.chainrec_planner != "learned":
        return False
    state, scope = ctx.chainrec_planner_state, ctx.chainrec_planner_scope
    dataset, key = planner_dataset(ctx.dataset, scope), planner_key(scenario, scope)
    if not is_resolved(dataset, key, ctx.chainrec_checkpoint, state):
        return True
    folder = find_checkpoint(dataset, key, ctx.chainrec_checkpoint, state)
    if folder is None:  # none of ChainRec's: another catalog's planner (learned_catalog.py) found its own
        return bool(missing_lines(memory))  # on the first, blocking decision; new lines still embed
    return not is_loaded(folder, ctx.chainrec_policy_stage) or bool(missing_lines(memory))


class MissingCheckpoint(RecgraphError):
    """The learned planner has no checkpoint to plan with."""

    @classmethod
    def of(cls, ctx: ChainRecContext, scenario: str) -> MissingCheckpoint:
        """The one-line refusal for `ctx`'s dataset and `scenario`, saying how to get a checkpoint."""
        if ctx.chainrec_checkpoint:
            return cls(
                f"chainrec_checkpoint {ctx.chainrec_checkpoint!r} holds no trained planner (config.json)"
            )
        scope = ctx.chainrec_planner_scope
        key = planner_key(scenario, scope)
        train = f"recgraph chainrec train --dataset {ctx.dataset} --scope {scope} --scenario {scenario}"
        if ctx.chainrec_planner_state != "memory":
            train += f" --state {ctx.chainrec_planner_state}"
        return cls(
            f"no learned planner checkpoint for {ctx.dataset} ({key}): train one with `{train}` "
            "(`recgraph bench --methods chainrec_learned` trains it too), or set chainrec_checkpoint"
        )


def checked_state(checkpoint: Checkpoint, state: str) -> Checkpoint:
    """`checkpoint` when it was trained on `state`; else a one-line `MissingCheckpoint`."""
    trained = checkpoint_state(checkpoint.config)
    if trained != state:
        raise MissingCheckpoint(
            f"planner checkpoint {checkpoint.folder} was trained on the {trained} state, the run asks for "
            f"the {state} state (chainrec_planner_state): train one on it"
        )
    return checkpoint


class LearnedPlanner:
    """π_θ(a | s) from a checkpoint; refuses when there is none (`MissingCheckpoint`)."""

    def __init__(self, ctx: ChainRecContext) -> None:
        """`ctx`: dataset, checkpoint, stage and step budget."""
        self.ctx = ctx
        self.name = "learned"

    def bind(self, scenario: str) -> None:
        """Name the planner that will decide in `scenario` ("learned-<stage>"), also for decisions
        the mask forces without asking it."""
        self.name = f"learned-{self.checkpoint(scenario).stage}"

    def checkpoint(self, scenario: str) -> Checkpoint:
        """The checkpoint this decision uses; `MissingCheckpoint` when there is none."""
        state, scope = check_state(self.ctx.chainrec_planner_state), self.ctx.chainrec_planner_scope
        dataset, key = planner_dataset(self.ctx.dataset, scope), planner_key(scenario, scope)
        folder = find_checkpoint(dataset, key, self.ctx.chainrec_checkpoint, state)
        if folder is None:
            raise MissingCheckpoint.of(self.ctx, scenario)
        return checked_state(load_checkpoint(folder, self.ctx.chainrec_policy_stage), state)

    def probabilities(self, checkpoint: Checkpoint, view: PlanView) -> dict[str, float]:
        """π(a | s) over the feasible actions of the checkpoint's action space (config.json's
        `actions`, CandidateRank last; the evidence tools before it are the used-tool features)."""
        actions = tuple(checkpoint.config.get("actions", ACTIONS))
        vector = policy_input(
            checkpoint_state(checkpoint.config),
            view.memory,
            len(view.candidates),
            view.max_steps,
            memory_embedding(view.memory),
            actions[:-1],
            lambda: episode_facts(self.ctx.dataset, view),
        )
        log_probs = masked_log_probs(
            checkpoint.weights.logits(vector), [view.mask.get(a, False) for a in actions]
        )
        return {
            a: float(np.exp(lp)) for a, lp in zip(actions, log_probs, strict=True) if view.mask.get(a, False)
        }

    def decide(self, view: PlanView) -> PlannerChoice:
        """The policy's most likely feasible action, leaving out the tools the checkpoint's
        trajectories masked (config.json `masked_tools`: never learned) unless nothing else is
        feasible."""
        checkpoint = self.checkpoint(view.scenario)
        self.name = f"learned-{checkpoint.stage}"
        masked = checkpoint.config.get("masked_tools", {})
        if masked:
            mask = {a: ok and a not in masked for a, ok in view.mask.items()}
            view = replace(view, mask=mask) if any(mask.values()) else view
        scores = self.probabilities(checkpoint, view)
        choice = choose(scores, view, f"learned[{checkpoint.label}]: most likely action {{action}}")
        return choice.model_copy(update={"reason": choice.reason + f" (p={scores[choice.action]:.2f})"})

"""ChainRec offline stage 1: tool-chain trajectories on training tasks, scored with R(τ).

For each training task (training_tasks.py) every feasible chain (chains.py: no repeated tool, at
most `max_steps` tools, domain tools only when the data exists, then CandidateRank) is enumerated
when there are at most `chain_cap` of them, else `chain_cap` distinct chains are sampled with a
seeded generator. Each chain is scored R(τ) = AvgHR@{1,3,5} − λ|τ| (reward.py).

Reuse: a tool's deterministic answer (heuristic backend) reads only the episode's user, scenario and
candidates — never the memory — so it is computed once per (task, tool) and reused by every chain.
With an LLM, user-side tools still see no memory, but item-side tools and CandidateRank show the
memory in their prompt, so their answers are cached per ordered prefix instead. Likewise the
heuristic ranking (the evidence fusion) depends only on which tools ran, so it is computed once per
tool set (entries fused in catalog order); with an LLM, once per chain.

Row layout (one per task): `task` (user, validation target, candidates, scenario), `facts` (the
planner's LLM-free task facts, features.py), `tools` (the feasible evidence tools; a chain is written
as the dot-joined indices of its tools in this list, e.g. "0.4.5" = tools[0], tools[4], tools[5],
then CandidateRank), `tool_outputs` (memory entries by tool, or by "prefix>tool" with an LLM),
`tool_tokens` (model tokens per `tool_outputs` key), `rankings` (code -> the ranking and its
AvgHR@{1,3,5}; a tool set's code lists indices ascending),
`chains` ([code, ranking code, reward] each) and `enumerated` (all chains, or a sample). The tools
are ChainRec's unless a `RowLibrary` (row_library.py) names another catalog; such rows also carry
`cost_lam` (R(τ)'s token weight, read back by rollout.reward_of) and `masked_tools` (left out, why).

Rows go to a durable JSONL (world.results_log: a protocol header on every row, fsynced appends, a
half-written last line dropped), so an interrupted run resumes at the next task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from agents.backends import model_label
from agents.base import AgentResult, run_agent
from agents.chainrec.offline.chains import chain_code, chains_for
from agents.chainrec.offline.reward import avg_hr, reward
from agents.chainrec.offline.row_library import CHAINREC_ROWS, RowLibrary
from agents.chainrec.offline.training_env import training_environment
from agents.chainrec.offline.training_tasks import Task, TrajectoryConfig, training_tasks
from agents.chainrec.online.candidate_rank import rank_call
from agents.chainrec.online.features import task_facts
from agents.chainrec.online.fusion import fuse
from agents.chainrec.online.item_tools import fetch_items
from agents.chainrec.online.tool_agent import Episode, memory_entry, tool_task
from agents.usage import AgentUsage
from state.chainrec.context import ChainRecContext
from state.chainrec.state import MemoryEntry
from state.context import backend_for
from tools.chainrec.episode_corpus import corpus_of
from tools.chainrec.episode_tools import EpisodeScope
from world.data import natural_key
from world.environment import Environment
from world.errors import ProtocolError
from world.results_log import ResultsLog

ROW_METHOD = "chainrec_trajectories"
"""The `method` field of every trajectory row (one row per task, keyed by user)."""
FILE_NAME = "trajectories.jsonl"


def _answer(task: Any, needed: bool, ctx: ChainRecContext, agent: str) -> AgentResult:
    if needed:
        return run_agent(task, ctx)
    return AgentResult(task.fallback(), AgentUsage(agent, model_label(backend_for(ctx, task.role))))


class TaskRunner:
    """Runs the tools and CandidateRank of one task, each answer computed once and reused."""

    def __init__(
        self,
        scope: EpisodeScope,
        task: Task,
        ctx: ChainRecContext,
        tools: Sequence[str],
        library: RowLibrary = CHAINREC_ROWS,
    ) -> None:
        """`ctx`: the run's knobs (backend, budgets, fusion weights); `tools`: the feasible ones;
        `library`: their specs, fetch functions and recorded tokens (default ChainRec's)."""
        self.scope, self.task, self.ctx, self.tools = scope, task, ctx, list(tools)
        self.library = library
        self.by_prefix = backend_for(ctx, "rec") != "heuristic"
        self.outputs: dict[str, MemoryEntry] = {}
        self.tokens: dict[str, int] = {}
        self.rankings: dict[str, dict[str, Any]] = {}
        self.records: list[dict[str, Any]] | None = None
        self.signals: dict[str, Any] = {}
        """Each tool's fusion signal over `records` (heuristic: one entry per tool, fused in every
        subset of the tools)."""

    def episode(self, memory: Sequence[MemoryEntry]) -> Episode:
        """The episode after `memory`."""
        return Episode(self.scope, self.task.candidates, tuple(memory), self.ctx)

    def tool_key(self, prefix: Sequence[str], tool: str) -> str:
        """Cache key of a tool's answer: the tool, or with an LLM for item tools the prefix too."""
        if self.by_prefix and self.library.spec(tool).side == "item":
            return ">".join([*prefix, tool])
        return tool

    def entry(self, prefix: Sequence[str], tool: str) -> MemoryEntry:
        """The memory entry `tool` writes after `prefix` ran (computed once per key)."""
        key = self.tool_key(prefix, tool)
        if key not in self.outputs:
            memory = self.memory(prefix)
            spec = self.library.spec(tool)
            episode = self.episode(memory)
            fetched = self.library.library[tool](episode)
            result = _answer(tool_task(spec, fetched, episode), fetched.needed, self.ctx, spec.node)
            self.outputs[key] = memory_entry(spec, result, fetched, 0)
            planned = self.library.planned_tokens
            spent = result.usage.input_tokens + result.usage.output_tokens
            self.tokens[key] = planned[tool] if planned is not None else spent
        return self.outputs[key]

    def chain_tokens(self, chain: Sequence[str]) -> int:
        """Model tokens the chain's tool calls spent (0 with the heuristic backend)."""
        return sum(self.tokens[self.tool_key(chain[:i], tool)] for i, tool in enumerate(chain))

    def memory(self, chain: Sequence[str]) -> list[MemoryEntry]:
        """M_t after `chain` ran (entries with their step numbers)."""
        return [{**self.entry(chain[:i], tool), "step": i + 1} for i, tool in enumerate(chain)]

    def ranking_key(self, chain: Sequence[str]) -> str:
        """Cache key of a chain's ranking: its tool set in catalog order (heuristic) or the chain."""
        return chain_code(self.tools, chain if self.by_prefix else [t for t in self.tools if t in chain])

    def rank(self, chain: Sequence[str]) -> str:
        """Rank after `chain` (computed once per key); returns the key."""
        key = self.ranking_key(chain)
        if key not in self.rankings:
            if self.by_prefix:
                call = rank_call(self.episode(self.memory(chain)))
                answer = _answer(call.task, True, call.context or self.ctx, "candidate_rank").output
                ranking = [entry.item_id for entry in answer.ranked]
            else:  # CandidateRank's answer without a model is the fusion's order (candidate_rank.py)
                if self.records is None:
                    self.records = fetch_items(self.episode([]), list(self.task.candidates))
                memory = self.memory([t for t in self.tools if t in chain])
                ranking = fuse(self.scope.env, self.ctx, self.records, memory, signals=self.signals).order
            self.rankings[key] = {"ranking": ranking, "avg_hr": avg_hr(ranking, self.task.target)}
        return key


def run_task(
    train: Environment,
    task: Task,
    ctx: ChainRecContext,
    config: TrajectoryConfig,
    library: RowLibrary = CHAINREC_ROWS,
) -> dict[str, Any]:
    """One task's row: the task, its facts, every tool output, the rankings and the scored chains
    (`library`: the tools run; another library's rows also carry `cost_lam` and `masked_tools`)."""
    scope = EpisodeScope(train, task.user_id, task.scenario)
    domain = dict(corpus_of(train).domain)
    tools = library.tools(domain)
    chains, complete = chains_for(task, tools, config)
    runner = TaskRunner(scope, task, replace(ctx, chainrec_max_steps=config.max_steps), tools, library)
    if library.rank_all:
        runner.rank(tools)
    scored = []
    for chain in chains:
        key = runner.rank(chain)
        quality = runner.rankings[key]["avg_hr"]
        value = reward(quality, len(chain), config.lam, runner.chain_tokens(chain), config.cost_lam)
        scored.append([chain_code(tools, chain), key, round(value, 6)])
    extras = {} if library.default else {"cost_lam": config.cost_lam, "masked_tools": dict(library.masked)}
    return {
        **extras,
        "method": ROW_METHOD,
        "user_id": task.user_id,
        "task": {
            "user_id": task.user_id,
            "target": task.target,
            "candidates": list(task.candidates),
            "scenario": task.scenario,
        },
        "facts": task_facts(scope, task.candidates),
        "tools": tools,
        "tool_outputs": runner.outputs,
        "tool_tokens": runner.tokens,
        "rankings": runner.rankings,
        "chains": scored,
        "enumerated": complete,
    }


@dataclass
class TrajectoryRun:
    """What `generate` did."""

    path: Path
    """The JSONL file."""
    tasks: int
    """Tasks in the file."""
    new: int
    """Tasks computed by this call (0: everything was already there)."""
    chains: int
    """Chains scored in the file."""


def generate(
    full: Environment,
    ctx: ChainRecContext,
    config: TrajectoryConfig,
    folder: Path,
    on_progress: Callable[[int, int], None] | None = None,
    library: RowLibrary = CHAINREC_ROWS,
) -> TrajectoryRun:
    """Write (or complete) `folder/trajectories.jsonl` for `config`'s training tasks with
    `library`'s tools (default ChainRec's)."""
    folder.mkdir(parents=True, exist_ok=True)
    train = training_environment(full)
    tasks = training_tasks(train, full, config)
    # Rows are written, not kept: training reads them back from the file, and a process holding
    # every row while the tools' caches grow keeps their memory pages long after.
    log = ResultsLog(folder / FILE_NAME, config.as_dict(), remember=False, compact=chain_count)
    done = log.done(ROW_METHOD)
    chains = sum(r["chains"] for r in done.values())
    prefetch_item_vectors(full, [task for task in tasks if task.user_id not in done])
    new = 0
    for index, task in enumerate(tasks):
        if task.user_id not in done:
            row = run_task(train, task, ctx, config, library)
            log.append(row)
            chains += len(row["chains"])
            new += 1
        if on_progress:
            on_progress(index + 1, len(tasks))
    return TrajectoryRun(log.path, len(done) + new, new, chains)


def prefetch_item_vectors(full: Environment, tasks: Sequence[Task]) -> None:
    """Embed, in a few large batches, the item vectors `tasks` will read (their candidates and
    everything their users touched): the tools would otherwise embed them a handful at a time."""
    items = {item for task in tasks for item in (*task.candidates, *full.interacted(task.user_id))}
    rows = sorted(full.item_index[item] for item in items if item in full.item_index)
    full.item_vectors().ensure(np.array(rows, dtype=np.int64))


def chain_count(row: dict[str, Any]) -> dict[str, Any]:
    """A row as `generate` and `existing_run` keep it: its method, user and number of chains."""
    return {"method": row["method"], "user_id": row["user_id"], "chains": len(row["chains"])}


def existing_run(folder: Path, config: TrajectoryConfig) -> TrajectoryRun:
    """`folder`'s trajectory file as it stands (nothing generated, no environment built)."""
    rows = ResultsLog(folder / FILE_NAME, config.as_dict(), compact=chain_count).done(ROW_METHOD)
    return TrajectoryRun(folder / FILE_NAME, len(rows), 0, sum(r["chains"] for r in rows.values()))


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a trajectory file, in user order (its header checked for consistency)."""
    if not path.is_file():
        raise ProtocolError(f"no trajectory file at {path}; run `recgraph chainrec trajectories` first")
    import json

    with path.open(encoding="utf-8") as handle:
        first = handle.readline()
    protocol = json.loads(first)["protocol"] if first.strip() else {}
    strings: dict[str, str] = {}
    rows = ResultsLog(path, protocol, compact=lambda row: shared_strings(row, strings)).done(ROW_METHOD)
    return [rows[user] for user in sorted(rows, key=natural_key)]


def shared_strings(row: dict[str, Any], strings: dict[str, str]) -> dict[str, Any]:
    """`row` with each string of its rankings and chains (tool-set keys, item ids, action codes)
    replaced by the one equal string in `strings`: a row repeats its ten candidates in each of
    hundreds of rankings, and ML-1M's 300 router rows took 431 MB as read, 213 MB shared."""

    def one(text: Any) -> Any:
        return strings.setdefault(text, text) if isinstance(text, str) else text

    if "rankings" in row:
        row["rankings"] = {
            one(key): {**ranking, "ranking": [one(item) for item in ranking["ranking"]]}
            for key, ranking in row["rankings"].items()
        }
    if "chains" in row:
        row["chains"] = [[one(part) for part in chain] for chain in row["chains"]]
    return row

"""ChainRec's tool chains on training tasks: which evidence tools a dataset allows, every feasible
chain (no repeated tool, at most `max_steps` tools, then CandidateRank) — enumerated up to
`chain_cap`, else a seeded sample — and how a chain is written in a trajectory row (the dot-joined
indices of its tools in the row's `tools` list, e.g. "0.4.5").
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from agents.chainrec.offline.training_tasks import Task, TrajectoryConfig
from agents.chainrec.online.catalog import CANDIDATE_RANK, EVIDENCE_TOOLS
from agents.chainrec.online.mask import feasibility
from world.seeding import user_rng


def feasible_tools(domain: dict[str, bool]) -> list[str]:
    """Evidence tools the dataset's data allows, in catalog order."""
    mask, _ = feasibility([], len(EVIDENCE_TOOLS), domain)
    return [tool for tool in EVIDENCE_TOOLS if mask.get(tool, False)]


def count_chains(n_tools: int, max_steps: int) -> int:
    """How many feasible chains there are: ordered selections of 1..max_steps distinct tools."""
    total, ways = 0, 1
    for k in range(1, min(n_tools, max_steps) + 1):
        ways *= n_tools - k + 1
        total += ways
    return total


def all_chains(tools: Sequence[str], max_steps: int) -> Iterator[tuple[str, ...]]:
    """Every feasible chain (tools only; CandidateRank follows each), shortest first."""
    for k in range(1, min(len(tools), max_steps) + 1):
        yield from itertools.permutations(tools, k)


def chains_for(
    task: Task, tools: Sequence[str], config: TrajectoryConfig
) -> tuple[list[tuple[str, ...]], bool]:
    """(the task's chains, whether they are all of them): enumerated up to the cap, else a seeded
    sample of `chain_cap` distinct chains (length uniform, then tools uniform)."""
    total = count_chains(len(tools), config.max_steps)
    if total <= config.chain_cap:
        return list(all_chains(tools, config.max_steps)), True
    rng = user_rng(config.seed, task.user_id, "chainrec_chains")
    longest = min(len(tools), config.max_steps)
    picked: dict[tuple[str, ...], None] = {}
    while len(picked) < config.chain_cap:
        k = int(rng.integers(1, longest + 1))
        picked[tuple(tools[i] for i in rng.permutation(len(tools))[:k])] = None
    return list(picked), False


def chain_code(tools: Sequence[str], chain: Sequence[str]) -> str:
    """A chain written as the dot-joined indices of its tools in `tools`."""
    return ".".join(str(tools.index(tool)) for tool in chain)


def chain_actions(tools: Sequence[str], code: str) -> list[str]:
    """The actions of a chain code: its tools, then CandidateRank."""
    return [*(tools[int(i)] for i in code.split(".")), CANDIDATE_RANK]

"""The router's catalog: ChainRec's Tool Agent Library plus the eight method tools, their fetch
functions, what each needs before it can run, and every action's planned cost.

Catalog order (the `fixed` planner's chain and the tie order of every planner): the run's ChainRec
library (`chainrec_library`, default the shipped eight tools), then MemoryNeighbourhood,
PatternMemories, IntentEvidence, CollaborativeSignal, SequentialSignal, GraphSignal,
AgentMemories, RecencyRanking, then CandidateRank. With
`router_method_tools=False` the router plans over the ChainRec library alone. The method tools'
cards (with their fusion-weight fields) are registered at import through ChainRec's one extension
point, agents/chainrec/online/extensions.py, so CandidateRank's fusion weighs them.

Planned cost (`router_costs`): LLM requests per call and tokens per request. ChainRec's tools and
CandidateRank (`CHAINREC_COSTS`): the prompt's tokens (`agents.usage.estimate_tokens`, medians over
20 ml-100k users with an empty memory, measured at 10 and 20 candidates and split into a base and a
per-candidate part) plus the answer's output-token cap (tool_agent.py `ITEM_ANSWER_TOKENS` for item
tools, 160 for user tools, candidate_rank.py `ANSWER_TOKENS`). The method tools plan their own from
the run's knobs (each module's `cost(ctx)`). A memory grows item tools' and CandidateRank's prompts
by its digest; the plan leaves that out. CollaborativeSignal, SequentialSignal and GraphSignal ask no
model: 0 calls, 0 tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents.chainrec.online.catalog import (
    AUTHOR,
    CANDIDATE_RANK,
    GEO,
    ITEM_PROFILE,
    ITEM_SEMANTIC,
    LONG_TERM,
    NEGATIVE,
    POSITIVE,
    SHORT_TERM,
    TOOLS,
    Catalog,
    ToolCost,
)
from agents.chainrec.online.extensions import register_tools
from agents.chainrec.online.library import LIBRARY
from agents.chainrec.online.library_file import library_of
from agents.chainrec.online.tool_agent import FetchFn
from agents.router.method_tools import (
    agent_memories,
    collaborative,
    graph_signal,
    intent_evidence,
    memory_neighbourhood,
    pattern_memories,
    recency_ranking,
    sequential_signal,
)
from state.chainrec.context import ChainRecContext
from world.environment import Environment

METHOD_MODULES = (
    memory_neighbourhood,
    pattern_memories,
    intent_evidence,
    collaborative,
    sequential_signal,
    graph_signal,
    agent_memories,
    recency_ranking,
)
"""The method tools' modules, in catalog order."""
METHOD_FETCH: dict[str, FetchFn] = {
    memory_neighbourhood.SPEC.name: memory_neighbourhood.memory_neighbourhood,
    pattern_memories.SPEC.name: pattern_memories.pattern_memories,
    intent_evidence.SPEC.name: intent_evidence.intent_evidence,
    collaborative.SPEC.name: collaborative.collaborative_signal,
    sequential_signal.SPEC.name: sequential_signal.sequential_signal,
    graph_signal.SPEC.name: graph_signal.graph_signal,
    agent_memories.SPEC.name: agent_memories.agent_memories,
    recency_ranking.SPEC.name: recency_ranking.recency_ranking,
}
"""Method tool name -> its fetch function."""
METHOD_TOOLS: Catalog = tuple(module.SPEC for module in METHOD_MODULES)
"""The method tools' specs (all item-side)."""
register_tools(METHOD_TOOLS)
ROUTER_TOOLS: Catalog = (*TOOLS[:-1], *METHOD_TOOLS, TOOLS[-1])
"""The router's actions: ChainRec's tools, the method tools, CandidateRank last."""
ROUTER_LIBRARY: dict[str, FetchFn] = {**LIBRARY, **METHOD_FETCH}
"""Every evidence tool of the router by name -> its fetch function."""
PREREQUISITES: dict[str, tuple[str, ...]] = {
    module.SPEC.name: (module.PREREQUISITE,) if isinstance(module.PREREQUISITE, str) else module.PREREQUISITE
    for module in METHOD_MODULES
    if module.PREREQUISITE
}
"""Method tool -> the registry methods whose `prepare` hooks build what it needs."""
BLOCKING_TOOLS: frozenset[str] = frozenset(module.SPEC.name for module in METHOD_MODULES if module.BLOCKING)
"""Method tools whose fetch touches disk (a memory graph, a pool, a similarity matrix): their nodes
prepare off the event loop."""

USER_ANSWER = 160
"""Output tokens planned for a user tool's answer (facets, confidence, summary)."""
CHAINREC_COSTS: dict[str, ToolCost] = {
    LONG_TERM: ToolCost(1, 1443 + USER_ANSWER),
    SHORT_TERM: ToolCost(1, 407 + USER_ANSWER),
    POSITIVE: ToolCost(1, 630 + USER_ANSWER),
    NEGATIVE: ToolCost(1, 435 + USER_ANSWER),
    ITEM_SEMANTIC: ToolCost(1, 783 + 160, 16 + 32),
    ITEM_PROFILE: ToolCost(1, 271 + 160, 26 + 32),
    AUTHOR: ToolCost(1, 1639 + 160, 19 + 32),
    GEO: ToolCost(1, 1639 + 160, 19 + 32),  # ml-100k has no locations: planned as AuthorPreference
    CANDIDATE_RANK: ToolCost(1, 192 + 60, 16 + 30),
}
"""ChainRec's actions' planned cost per call (see the module docstring for how it was measured)."""


def router_costs(ctx: ChainRecContext) -> dict[str, ToolCost]:
    """Every action of the router's catalog -> its planned cost per call under `ctx`'s knobs."""
    return {**CHAINREC_COSTS, **{module.SPEC.name: module.cost(ctx) for module in METHOD_MODULES}}


def with_method_tools(base: Catalog) -> Catalog:
    """`base` (a ChainRec library's cards, CandidateRank last) with the method tools before CandidateRank."""
    return (*base[:-1], *METHOD_TOOLS, base[-1])


def fetch_for(catalog: Catalog) -> dict[str, FetchFn]:
    """Evidence card name -> the fetch function of the node it runs on (a mined card: its node's agent)."""
    by_node = {spec.node: ROUTER_LIBRARY[spec.name] for spec in ROUTER_TOOLS if spec.name in ROUTER_LIBRARY}
    return {spec.name: by_node[spec.node] for spec in catalog if spec.node in by_node}


def router_catalog(ctx: ChainRecContext) -> Catalog:
    """The catalog a run plans over: the run's ChainRec library with the method tools when
    `router_method_tools`, else that library alone."""
    base = library_of(ctx).catalog
    return with_method_tools(base) if getattr(ctx, "router_method_tools", False) else base


def unavailable_tools(
    env: Environment, ctx: ChainRecContext, catalog: Catalog, episode: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """Method tool -> why it cannot run now (what is missing and how to build it), for the tools of
    `catalog` that cannot; with `episode` (its state: visible history, candidates) also the tools
    that cannot serve this episode (a trained model's cold user or cold candidates)."""
    names = {spec.name for spec in catalog}
    found: dict[str, str] = {}
    for module in METHOD_MODULES:
        if module.SPEC.name not in names:
            continue
        reason = module.unavailable(env, ctx)
        if reason is None and episode is not None and hasattr(module, "episode_unavailable"):
            reason = module.episode_unavailable(env, ctx, episode)
        if reason is not None:
            found[module.SPEC.name] = reason
    return found


def chain_tokens(tools: Sequence[str], candidates: int, costs: Mapping[str, ToolCost]) -> int:
    """Planned tokens of a chain of tools over `candidates` candidates (`costs`: `router_costs(ctx)`;
    CandidateRank is not counted unless the chain names it)."""
    return sum(costs[tool].tokens(candidates) for tool in tools)

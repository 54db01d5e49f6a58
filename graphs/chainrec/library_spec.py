"""What a planner graph is built over (graphs/chainrec/builder.py): one frozen description per method
family. ChainRec's plans over the library file its run names (`chainrec_library`, default the shipped
one); another family plugs in here (more tool nodes, its own catalog, costs and rule planner)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.chainrec.online.catalog import (
    CANDIDATE_RANK,
    Catalog,
    ToolCost,
    evidence_tools,
    normalise_action,
)
from agents.chainrec.online.library_file import library_of
from agents.chainrec.online.planners import RulePlanner
from agents.chainrec.online.planning import Planner
from agents.chainrec.online.tool_agent import FetchFn
from state.chainrec.context import ChainRecContext
from state.chainrec.state import ChainRecState
from world.environment import Environment
from world.errors import RecgraphError


def without_tools(catalog: Catalog, names: str) -> Catalog:
    """`catalog` without the comma-separated evidence tools `names` (`chainrec_drop_tools`); an
    unknown name, or CandidateRank, is refused in one line."""
    dropped = set()
    for name in filter(None, (part.strip() for part in names.split(","))):
        action = normalise_action(name, catalog)
        if action is None or action == CANDIDATE_RANK:
            tools = ", ".join(evidence_tools(catalog))
            raise RecgraphError(f"chainrec_drop_tools: {name!r} is not a tool of the library; use {tools}")
        dropped.add(action)
    return tuple(spec for spec in catalog if spec.name not in dropped)


def _chainrec_catalog(ctx: ChainRecContext) -> Catalog:
    return without_tools(library_of(ctx).catalog, ctx.chainrec_drop_tools)


def _none_unavailable(
    env: Environment, ctx: ChainRecContext, catalog: Catalog, episode: Mapping[str, Any] | None = None
) -> dict[str, str]:
    return {}


def _no_costs(ctx: ChainRecContext) -> Mapping[str, ToolCost]:
    return {}


def _chainrec_rule(catalog: Catalog) -> Planner:
    return RulePlanner()


def _no_extras(state: Any, ctx: ChainRecContext) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class PlannerLibrary:
    """A planner graph's library: its tool nodes, and per run the catalog the planner plans over."""

    method: str
    """The method family's graph name (compile_method's, LangSmith's root run name)."""
    tools: Catalog
    """Every action the graph has a node for, in catalog order, CandidateRank last (the shipped
    library's; a run's library may rename or leave out cards, never add a node)."""
    fetch: Mapping[str, FetchFn]
    """Evidence tool name -> its fetch function (one node each)."""
    context_schema: type[ChainRecContext]
    """The graph's context class."""
    state_schema: type[Any] = ChainRecState
    """The graph's state class (ChainRecState or a subclass)."""
    catalog_of: Callable[[ChainRecContext], Catalog] = _chainrec_catalog
    """(run context) -> the actions this run plans over: its library file's cards (on `tools`' nodes)."""
    unavailable: Callable[..., dict[str, str]] = _none_unavailable
    """(env, ctx, catalog, episode state) -> tool -> why it cannot run this episode (computed on the
    first visit, after any retrieval, off the event loop; empty for ChainRec)."""
    costs: Callable[[ChainRecContext], Mapping[str, ToolCost]] = _no_costs
    """(run context) -> each action's planned cost, shown to the planners (empty: not shown)."""
    rule_for: Callable[[Catalog], Planner] = _chainrec_rule
    """(catalog) -> the rule planner that decides for "rule" and backs up the other planners."""
    details_extras: Callable[[Any, ChainRecContext], dict[str, Any]] = _no_extras
    """(final state, ctx) -> figures added to CandidateRank's `details` (the router's planned cost)."""
    catalog_note: str = ""
    """A paragraph the LLM planner's prompt adds after the catalog (the router's cost note)."""
    blocking_tools: frozenset[str] = field(default_factory=frozenset)
    """Tools whose fetch may touch disk (a memory graph, a pool, a similarity matrix): their node
    prepares in a worker thread under `ainvoke`."""

    @property
    def tracks_unavailable(self) -> bool:
        """True when the state keeps the episode's unavailable tools (the router's)."""
        return "unavailable" in getattr(self.state_schema, "__annotations__", {})

"""What the tools of a trajectory row are: a catalog, the fetch function of each evidence tool, the
tokens recorded per call and the tools the trajectories leave out (with why).

ChainRec's rows (`CHAINREC_ROWS`) use the shipped eight-tool library and record the tokens the model
spent (0 with the heuristic backend); a run naming another library file (`chainrec_library`, e.g. a
mined one) runs that file's cards (`rows_of`), each card on its node's agent. Another family (the
router's: graphs/router/learned.py) names its own catalog and fetch functions, may record each
tool's *planned* tokens instead (so R(τ)'s cost term charges a heuristic trajectory as an LLM run
of the same chain would be charged) and may mask tools it cannot run in the training world (each
with its reason, written into every row).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agents.chainrec.online.catalog import TOOLS, Catalog, ToolSpec, evidence_tools
from agents.chainrec.online.library import LIBRARY
from agents.chainrec.online.library_file import library_of
from agents.chainrec.online.mask import feasibility
from agents.chainrec.online.tool_agent import FetchFn


@dataclass(frozen=True)
class RowLibrary:
    """The tools one trajectory file runs."""

    catalog: Catalog = TOOLS
    """The catalog planned over (CandidateRank last)."""
    library: Mapping[str, FetchFn] = field(default_factory=lambda: dict(LIBRARY))
    """Evidence tool -> its fetch function."""
    planned_tokens: Mapping[str, int] | None = None
    """Evidence tool -> tokens recorded per call (its planned cost); None: the model's own count."""
    masked: Mapping[str, str] = field(default_factory=dict)
    """Evidence tool -> why the trajectories leave it out (never in a row's `tools`)."""
    rank_all: bool = False
    """Also rank the set of every feasible tool (so a fixed chain of them all is scorable when it
    exceeds `max_steps`)."""

    @property
    def default(self) -> bool:
        """True for ChainRec's own library (its rows keep their original layout)."""
        return self.catalog == TOOLS and self.planned_tokens is None and not self.masked

    def spec(self, tool: str) -> ToolSpec:
        """The spec of `tool` in the catalog."""
        return next(spec for spec in self.catalog if spec.name == tool)

    def tools(self, domain: dict[str, bool]) -> list[str]:
        """Evidence tools the dataset's data allows, not masked, in catalog order."""
        names = evidence_tools(self.catalog)
        mask, _ = feasibility([], len(names), domain, self.catalog)
        return [tool for tool in names if mask.get(tool, False) and tool not in self.masked]


CHAINREC_ROWS = RowLibrary()
"""ChainRec's rows: its library, the model's token counts, nothing masked."""


def rows_of(ctx: object) -> RowLibrary:
    """The rows a run's context trains on: `CHAINREC_ROWS` for the shipped library, else the named
    library file's cards, each running its node's agent."""
    catalog = library_of(ctx).catalog
    if catalog == TOOLS:
        return CHAINREC_ROWS
    by_node = {spec.node: LIBRARY[spec.name] for spec in TOOLS if spec.name in LIBRARY}
    fetch = {spec.name: by_node[spec.node] for spec in catalog if spec.node in by_node}
    return RowLibrary(catalog, fetch)

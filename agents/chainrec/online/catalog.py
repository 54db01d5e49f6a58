"""The Tool Agent Library's catalog: what the planner sees of each action (name, description, inputs,
outputs, stage), which graph node runs it, and which dataset fields it needs.

The cards live in the shipped library file (`default_library.json`, library_file.py); `TOOLS` is that
file's catalog, the names below are the tools ChainRec's agents and rule planner are written for. A run
may load another library (`chainrec_library`, e.g. one `recgraph chainrec mine-tools` wrote)."""

from __future__ import annotations

from agents.chainrec.online.extensions import registered_tools
from agents.chainrec.online.library_file import TERMINAL, load_library
from agents.chainrec.online.tool_spec import Catalog
from agents.chainrec.online.tool_spec import ToolCost as ToolCost
from agents.chainrec.online.tool_spec import ToolSpec as ToolSpec

LONG_TERM = "LongTermPreference"
SHORT_TERM = "ShortTermPreference"
POSITIVE = "PositivePreference"
NEGATIVE = "NegativePreference"
ITEM_SEMANTIC = "ItemSemantic"
ITEM_PROFILE = "ItemProfile"
AUTHOR = "AuthorPreference"
GEO = "GeoContext"
CANDIDATE_RANK = TERMINAL
TOOLS: Catalog = load_library().catalog
"""Every action, in catalog order (CandidateRank last)."""

BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}
EVIDENCE_TOOLS: tuple[str, ...] = tuple(spec.name for spec in TOOLS if spec.side != "terminal")
"""The tools that gather evidence (every action but CandidateRank), in catalog order."""
ACTIONS: tuple[str, ...] = tuple(spec.name for spec in TOOLS)


def is_user_tool(name: str, catalog: Catalog = TOOLS) -> bool:
    """True for a user-stage card of `catalog` (default the shipped library); every other evidence
    tool (item cards, and the tools registered through extensions.py) writes per-candidate entries."""
    spec = next((spec for spec in catalog if spec.name == name), None)
    return spec is not None and spec.side == "user"


def known_tools(catalog: Catalog = TOOLS) -> dict[str, ToolSpec]:
    """Tool name -> card: `catalog`'s cards, then the registered extensions' (extensions.py)."""
    found = {spec.name: spec for spec in catalog}
    for spec in registered_tools():
        found.setdefault(spec.name, spec)
    return found


def action_names(catalog: Catalog) -> tuple[str, ...]:
    """The catalog's action names, in order."""
    return tuple(spec.name for spec in catalog)


def evidence_tools(catalog: Catalog = TOOLS) -> tuple[str, ...]:
    """The catalog's evidence tools (every action but CandidateRank), in catalog order."""
    return tuple(spec.name for spec in catalog if spec.side != "terminal")


def normalise_action(text: str, catalog: Catalog = TOOLS) -> str | None:
    """The action a model's text names (case, spaces, underscores and hyphens ignored; the node name
    is accepted too), or None when it names none."""
    key = "".join(ch for ch in text.lower() if ch.isalnum())
    for spec in catalog:
        if key in (spec.name.lower(), spec.node.replace("_", "")):
            return spec.name
    return None


def parse_chain(text: str, catalog: Catalog = TOOLS) -> list[str]:
    """A comma-separated chain of tool names (empty: every evidence tool in catalog order);
    raises ValueError naming an unknown tool."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    tools = evidence_tools(catalog)
    if not names:
        return list(tools)
    chain = []
    for name in names:
        action = normalise_action(name, catalog)
        if action is None or action == CANDIDATE_RANK:
            raise ValueError(
                f"unknown ChainRec tool {name!r} in chainrec_fixed_chain; use {', '.join(tools)}"
            )
        chain.append(action)
    return list(dict.fromkeys(chain))

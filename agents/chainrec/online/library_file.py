"""The Tool Agent Library as a file: the tool cards the planner plans over, and which mined cluster maps
to which tool.

ChainRec ships one library file, `default_library.json` (the hand-written library: eight tools and
CandidateRank); `recgraph chainrec mine-tools` writes another from mined clusters
(agents/chainrec/mining/library.py), and `ChainRecContext.chainrec_library` (`--set
chainrec_library=PATH`) names the one a run, its Studio graph and its trajectories load. Format
(JSON, `format` = `FORMAT`):

    {"format": ..., "source": "...",
     "tools": [{"name", "node", "stage", "description", "inputs", "outputs", "requires",
                "fusion_weight", "clusters"}, ..., CandidateRank's card last],
     "clusters": {"<cluster id>": ["<tool name>", ...]},   # one cluster may map to several tools
     "mining": {...}}                                       # provenance (mined libraries)

A card's `node` is the graph node (the tool agent) that runs it; a file other than the default may
only name the default library's nodes, each with that node's stage, so every card has an agent to
run it. `stage` is what the planners and the fusion read: user (a profile), item (per-candidate
entries) or terminal (CandidateRank). `fusion_weight` names the context field weighing the card's
evidence in CandidateRank's fusion.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.chainrec.online.tool_spec import SIDES, Catalog, ToolSpec
from world.errors import RecgraphError

FORMAT = "recgraph-chainrec-tool-library/1"
"""The `format` every library file carries."""
DEFAULT_LIBRARY_FILE = Path(__file__).with_name("default_library.json")
"""The shipped library: the hand-written Tool Agent Library (paper appendix B)."""
TERMINAL = "CandidateRank"
"""The terminal action every library ends with."""
CARD_KEYS = ("name", "node", "stage", "description", "inputs", "outputs")
"""Text keys every card must have."""


class LibraryFileError(RecgraphError):
    """A tool library file that cannot be read or used; the message names the file and the problem."""


class MissingTool(LibraryFileError):
    """A tool library lacks a tool the graph or the run's planner needs."""


@dataclass(frozen=True)
class ToolLibrary:
    """A library file's content."""

    catalog: Catalog
    """Every card in catalog order, CandidateRank last."""
    clusters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Mined cluster id -> the tools it maps to (empty for the hand-written library)."""
    source: str = ""
    """Where the cards came from (hand-written, or the traces mining read)."""
    path: str = ""
    """The file it was read from ("" for one built in memory)."""
    mining: Mapping[str, Any] = field(default_factory=dict)
    """The mining run that wrote it (traces, k, silhouette); empty for the hand-written library."""

    @property
    def names(self) -> tuple[str, ...]:
        """Every action's name, in catalog order."""
        return tuple(spec.name for spec in self.catalog)

    def clusters_of(self, tool: str) -> list[int]:
        """The clusters that map to `tool`, ascending."""
        return sorted(int(c) for c, tools in self.clusters.items() if tool in tools)

    def require(self, tools: Iterable[str], who: str) -> None:
        """`MissingTool` (one line) naming the first of `tools` the library has no card for."""
        names = set(self.names)
        for tool in tools:
            if tool not in names:
                raise MissingTool(
                    f"tool library {self.path or '(in memory)'} has no {tool} card, which {who} needs: "
                    f"map a cluster to {tool} or use the default library"
                )


def card_json(spec: ToolSpec, clusters: list[int]) -> dict[str, Any]:
    """One card as the file stores it."""
    return {
        "name": spec.name,
        "node": spec.node,
        "stage": spec.side,
        "description": spec.description,
        "inputs": spec.inputs,
        "outputs": spec.outputs,
        "requires": list(spec.requires),
        "fusion_weight": spec.weight_field,
        "clusters": clusters,
    }


def library_json(library: ToolLibrary) -> dict[str, Any]:
    """The file's JSON object."""
    payload: dict[str, Any] = {
        "format": FORMAT,
        "source": library.source,
        "tools": [card_json(spec, library.clusters_of(spec.name)) for spec in library.catalog],
        "clusters": {
            str(c): list(tools) for c, tools in sorted(library.clusters.items(), key=lambda x: int(x[0]))
        },
    }
    if library.mining:
        payload["mining"] = dict(library.mining)
    return payload


def write_library(path: Path, library: ToolLibrary) -> Path:
    """Write `library` to `path` (folders created) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(library_json(library), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _card(raw: Any, where: str, index: int) -> ToolSpec:
    if not isinstance(raw, dict):
        raise LibraryFileError(f"{where}: tools[{index}] is not an object")
    for key in CARD_KEYS:
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise LibraryFileError(f"{where}: tools[{index}] has no {key!r} text")
    if raw["stage"] not in SIDES:
        raise LibraryFileError(
            f"{where}: tool {raw['name']} has stage {raw['stage']!r}; use one of {', '.join(SIDES)}"
        )
    requires = raw.get("requires", [])
    if not isinstance(requires, list) or not all(isinstance(flag, str) for flag in requires):
        raise LibraryFileError(f"{where}: tool {raw['name']}'s 'requires' is not a list of domain flags")
    weight = raw.get("fusion_weight", "")
    if not isinstance(weight, str):
        raise LibraryFileError(f"{where}: tool {raw['name']}'s 'fusion_weight' is not a field name")
    return ToolSpec(
        raw["name"],
        raw["node"],
        raw["stage"],
        raw["description"],
        raw["inputs"],
        raw["outputs"],
        tuple(requires),
        weight,
    )


def parse_library(data: Any, where: str) -> ToolLibrary:
    """The library in a file's JSON object; `LibraryFileError` (one line) for anything malformed."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise LibraryFileError(f"{where}: not a ChainRec tool library (format {FORMAT!r} expected)")
    tools = data.get("tools")
    if not isinstance(tools, list) or not tools:
        raise LibraryFileError(f"{where}: 'tools' is not a non-empty list of tool cards")
    catalog = tuple(_card(raw, where, i) for i, raw in enumerate(tools))
    names = [spec.name for spec in catalog]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        raise LibraryFileError(f"{where}: tool {twice} has two cards")
    library = ToolLibrary(
        catalog,
        _clusters(data.get("clusters", {}), set(names), where),
        str(data.get("source", "")),
        where,
        data.get("mining") or {},
    )
    library.require([TERMINAL], "every planner (it ends the episode)")
    terminal = [spec.name for spec in catalog if spec.side == "terminal"]
    if terminal != [TERMINAL] or names[-1] != TERMINAL:
        raise LibraryFileError(f"{where}: {TERMINAL} must be the one terminal card, and the last")
    return library


def _clusters(raw: Any, names: set[str], where: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(raw, dict):
        raise LibraryFileError(f"{where}: 'clusters' is not an object of cluster id -> tool names")
    clusters: dict[str, tuple[str, ...]] = {}
    for cluster, tools in raw.items():
        if not str(cluster).isdigit() or not isinstance(tools, list) or not tools:
            raise LibraryFileError(f"{where}: cluster {cluster!r} does not map to a list of tools")
        unknown = next((tool for tool in tools if tool not in names), None)
        if unknown is not None:
            raise LibraryFileError(f"{where}: cluster {cluster} maps to {unknown!r}, which has no card")
        clusters[str(cluster)] = tuple(tools)
    return clusters


def check_nodes(library: ToolLibrary, reference: ToolLibrary) -> None:
    """`LibraryFileError` for a card whose node `reference` (the default library) has no agent for,
    or whose stage differs from that node's."""
    stages = {spec.node: spec.side for spec in reference.catalog}
    for spec in library.catalog:
        if spec.node not in stages:
            raise LibraryFileError(
                f"{library.path}: tool {spec.name} runs on node {spec.node!r}, which no tool agent has; "
                f"use one of {', '.join(stages)}"
            )
        if stages[spec.node] != spec.side:
            raise LibraryFileError(
                f"{library.path}: tool {spec.name} is a {spec.side} card on node {spec.node}, whose agent "
                f"writes {stages[spec.node]} evidence"
            )


def read_library(path: Path) -> ToolLibrary:
    """Read and check one library file (a file other than the default is checked against it)."""
    where = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LibraryFileError(f"tool library {where} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise LibraryFileError(f"tool library {where} cannot be read: {error}") from None
    library = parse_library(data, where)
    if path != DEFAULT_LIBRARY_FILE:
        check_nodes(library, load_library())
    return library


_loaded: dict[str, ToolLibrary] = {}
"""Path as given ("" for the default) -> its library, read once per process."""


def load_library(path: str = "") -> ToolLibrary:
    """The library in `path` ("": the shipped default), read once per process."""
    if path not in _loaded:
        _loaded[path] = read_library(Path(path) if path else DEFAULT_LIBRARY_FILE)
    return _loaded[path]


def is_loaded(path: str) -> bool:
    """True when `load_library(path)` would not touch the disk."""
    return path in _loaded


def library_key(library: ToolLibrary) -> str:
    """What keys trajectories and checkpoints to a library: "" for the shipped library's cards, else
    a digest of the cards and the cluster map."""
    if library.catalog == load_library().catalog:
        return ""
    payload = {k: v for k, v in library_json(library).items() if k in ("tools", "clusters")}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:10]


def library_loaded(ctx: Any) -> bool:
    """True when the library `ctx` names is read already (`library_of` will not touch the disk)."""
    return is_loaded(getattr(ctx, "chainrec_library", "") or "")


def library_of(ctx: Any) -> ToolLibrary:
    """The library a run's context names (`chainrec_library`; a context without it: the default)."""
    return load_library(getattr(ctx, "chainrec_library", "") or "")

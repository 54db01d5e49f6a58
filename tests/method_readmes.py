"""The generated parts of each method room's README (graphs/<room>/README.md): its graphs as Mermaid
blocks drawn from the compiled graphs, the table of its context class's own knobs and the table of its
registry entries, each between `<!-- BEGIN GENERATED <key> -->` and `<!-- END GENERATED -->`; what a
README holds now, what is stale, and the text regenerated (tests/test_method_readmes.py)."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import Any

from graphs.method_spec import MethodSpec
from graphs.registry import METHODS, get_graph, service_graph
from state.context import Context

REPO = Path(__file__).resolve().parent.parent
"""The repository's root."""
REGENERATE = "regenerate with: .venv/bin/python -m tests.test_method_readmes"

DRAWN: Mapping[str, tuple[str, ...]] = {
    "baselines": ("popularity", "vanilla_llm"),
    "arag": ("arag", "arag_no_nli", "arag_no_nli_csa"),
    "memrec": ("memrec", "memrec_write", "memrec_apply"),
    "amem4rec": ("amem4rec", "amem4rec_train", "amem4rec_commit"),
    "chainrec": ("chainrec",),
}
"""The graphs each room's README draws: a method's graph (by registry name) or a service graph.
MemRec's and AMEM4Rec's ablations share their method's graph; ARAG's ablations are graphs of their
own; one classic and one LLM baseline stand for the baselines (each is validate -> ranker)."""

BLOCK = re.compile(r"<!-- BEGIN GENERATED (\S+) -->\n(.*?)\n?<!-- END GENERATED -->", re.DOTALL)


def room_readme(room: str) -> Path:
    """Where a method room's README lives."""
    return REPO / "graphs" / room / "README.md"


def room_spec(room: str) -> Any:
    """The room's `graphs/<room>/spec.py` module."""
    return importlib.import_module(f"graphs.{room}.spec")


def room_context(room: str) -> type[Context]:
    """The one context class every entry of the room declares."""
    classes = {spec.context for spec in room_spec(room).METHODS.values()}
    assert len(classes) == 1, f"graphs/{room}/spec.py: entries use several context classes {classes}"
    return classes.pop()


def drawn(room: str) -> tuple[str, ...]:
    """The graphs a room's README draws (a new room: its first method and its service graphs)."""
    spec = room_spec(room)
    return DRAWN.get(room) or (next(iter(spec.METHODS)), *spec.SERVICE_GRAPHS)


def own_fields(cls: type[Context]) -> list[Field[Any]]:
    """The fields a method's context class adds to the common `Context`, in declaration order."""
    common = {f.name for f in fields(Context)}
    return [f for f in fields(cls) if f.name not in common]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _value(value: Any) -> str:
    return '`""`' if value == "" else f"`{value!r}`".replace("'", '"')


def _default(f: Field[Any]) -> str:
    if f.default is not MISSING:
        return _value(f.default)
    if f.default_factory is not MISSING:
        return _value(f.default_factory())
    return "(required)"


def mermaid(name: str) -> str:
    """The Mermaid block of a method graph or a service graph, as the code draws it."""
    graph = get_graph(name) if name in METHODS else service_graph(name)
    return "```mermaid\n" + graph.get_graph().draw_mermaid().rstrip("\n") + "\n```"


def knob_table(cls: type[Context]) -> str:
    """The table of a context class's own knobs: name, default, description."""
    rows = ["| knob | default | what it sets |", "|---|---|---|"]
    for f in own_fields(cls):
        rows.append(f"| `{f.name}` | {_default(f)} | {_cell(f.metadata.get('description', ''))} |")
    return "\n".join(rows)


def _hook(value: Callable[..., Any] | str) -> str:
    if not value:
        return ""
    name = value if isinstance(value, str) else f"{value.__module__}:{value.__qualname__}"
    return f"`{name}`"


def entry_table(methods: Mapping[str, MethodSpec]) -> str:
    """The table of a room's registry entries: name, overrides, prepare hook, summary."""
    rows = ["| method | overrides | `prepare` hook | summary |", "|---|---|---|---|"]
    for name, spec in methods.items():
        overrides = ", ".join(f"`{key}={value!r}`" for key, value in spec.overrides.items())
        prepare = _hook(spec.prepare) or "–"
        rows.append(f"| `{name}` | {overrides or '–'} | {prepare} | {_cell(spec.summary)} |")
    return "\n".join(rows)


def expected_blocks(room: str) -> dict[str, str]:
    """Every generated block a room's README must hold, by key."""
    cls = room_context(room)
    blocks = {f"mermaid:{name}": mermaid(name) for name in drawn(room)}
    blocks[f"knobs:{cls.__name__}"] = knob_table(cls)
    blocks[f"entries:{room}"] = entry_table(room_spec(room).METHODS)
    return blocks


def found_blocks(text: str) -> dict[str, str]:
    """The generated blocks a README holds, by key."""
    return {key: body for key, body in BLOCK.findall(text)}


def stale_blocks(text: str, expected: Mapping[str, str]) -> list[str]:
    """What differs between a README's generated blocks and the expected ones."""
    found = found_blocks(text)
    problems = [f"missing block {key!r}" for key in expected if key not in found]
    problems += [f"unknown block {key!r}" for key in found if key not in expected]
    problems += [f"stale block {key!r}" for key in expected if key in found and found[key] != expected[key]]
    return problems


def regenerate(text: str, expected: Mapping[str, str]) -> str:
    """`text` with each generated block replaced by its expected content."""

    def replace(match: re.Match[str]) -> str:
        key = match.group(1)
        body = expected.get(key, match.group(2))
        return f"<!-- BEGIN GENERATED {key} -->\n{body}\n<!-- END GENERATED -->"

    return BLOCK.sub(replace, text)


def table_knobs(block: str) -> list[str]:
    """The knob names a knob table lists, in order."""
    return re.findall(r"^\| `([^`]+)` \|", block, re.MULTILINE)

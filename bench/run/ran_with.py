"""What each method ran with, said beside its results: the planner, checkpoint, pool or memory a
reader needs to know to read the row (each method's `MethodSpec.reported` fields, from the settings
metrics.json records) and the knobs `--set` changed, so two runs that differ in them never look
alike."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from graphs.registry import METHODS


def _shown(value: Any) -> str:
    """A setting as the line shows it: a path by its last part, anything else as is."""
    text = str(value)
    return PurePath(text).name if "/" in text else text


def ran_with(methods: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """`<method>: <field> <value>, ..., --set <knob>=<value>, ...` for every method that reports
    settings or ran with `--set` knobs (metrics.json `set`), in run order."""
    lines = []
    for name, row in methods.items():
        spec, settings = METHODS.get(name), row.get("settings") or {}
        fields = spec.reported if spec is not None else ()
        shown = [
            f"{field} {_shown(settings[field])}" for field in fields if settings.get(field) not in (None, "")
        ]
        shown += [f"--set {knob}={_shown(value)}" for knob, value in (row.get("set") or {}).items()]
        if shown:
            lines.append(f"{name}: {', '.join(shown)}")
    return lines

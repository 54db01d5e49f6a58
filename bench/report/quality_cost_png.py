"""report.png's quality–cost panels: ndcg@5 against calls (and tokens) per user, one point per method,
the Pareto frontier as red points joined by a step line (bench/report/quality_cost.py computes them)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

from bench.report.quality_cost import PLANNED, QUALITY, frontier

FRONT_COLOR = "tab:red"
"""Colour of the frontier's points and line."""
FRONT_NOTE = (
    f"red, *: Pareto frontier (no other method has ≥ {QUALITY} at ≤ cost, one strictly); grey: dominated; "
    "names of methods at about the same cost share one list, best first"
)
"""The second line of each panel's title."""
PLANNED_LABEL = "planned LLM calls per user (≤: a budget the graph may stop short of; not measured)"
"""The calls axis's label with the heuristic backend."""
LINE_POINTS = 7.5
"""Height of a 7-pt label line, in points."""
AXES_POINTS = 220.0
"""About the height of a cost panel's axes, in points (a 4.2-inch row less its titles and ticks)."""


def draw_quality_cost(calls: Any, tokens: Any | None, block: Mapping[str, Any], wrap: int) -> None:
    """Draw the calls panel on axes `calls` and, for a measured run, the tokens panel on `tokens`;
    titles wrapped at `wrap` characters (what fits the panel's width)."""
    _panel(calls, block, "llm_calls_per_user", "pareto")
    planned = block["cost_source"] == PLANNED
    calls.set_xlabel(PLANNED_LABEL if planned else "LLM requests answered per user")
    calls.set_title(_wrapped(f"{QUALITY} vs {block['calls_axis']}", wrap), fontsize=9)
    if tokens is not None:
        _panel(tokens, block, "tokens_per_user", "pareto_tokens")
        tokens.set_xlabel("prompt + completion tokens per user")
        if tokens.get_ylim() == calls.get_ylim():  # the same methods: read ndcg@5 off the left panel
            tokens.tick_params(labelleft=False)
            tokens.set_ylabel("")
        estimated = " (some estimated from characters)" if block["tokens_estimated"] else ""
        tokens.set_title(_wrapped(f"{QUALITY} vs {block['tokens_axis']}{estimated}", wrap), fontsize=9)


def _wrapped(head: str, wrap: int) -> str:
    """A panel's title: `head`, then `FRONT_NOTE`, each wrapped to `wrap` characters."""
    return "\n".join(textwrap.fill(line, wrap) for line in (head, FRONT_NOTE))


def _panel(axes: Any, block: Mapping[str, Any], axis: str, flag: str) -> None:
    """One scatter: every method with a known cost, the frontier's points red and joined cheapest first
    by a step line (each next frontier point costs more and ranks better), the names in `_labels`."""
    rows = {n: r for n, r in block["methods"].items() if r[flag] is not None}
    axes.set_ylabel(QUALITY)
    if not rows:
        axes.text(0.5, 0.5, "no cost figures for these methods", ha="center", va="center",
                  transform=axes.transAxes, fontsize=9)  # fmt: skip
        return
    front = frontier(block, flag)
    others = [n for n in rows if n not in front]
    axes.scatter([rows[n][axis] for n in others], [rows[n][QUALITY] for n in others], s=18,
                 facecolors="none", edgecolors="tab:gray")  # fmt: skip
    xs, ys = [rows[n][axis] for n in front], [rows[n][QUALITY] for n in front]
    axes.step(xs, ys, where="post", color=FRONT_COLOR, linewidth=1.0)
    axes.scatter(xs, ys, s=24, color=FRONT_COLOR, zorder=3)
    low, high = min(r[QUALITY] for r in rows.values()), max(r[QUALITY] for r in rows.values())
    pad = max(0.02, 0.15 * (high - low))
    bottom, top = max(0.0, low - 3 * pad), min(1.05, high + pad)  # room under the lowest for labels
    axes.set_ylim(bottom, top)
    axes.use_sticky_edges = False
    axes.margins(x=0.08)
    _labels(axes, rows, axis, set(front), (top - bottom) * LINE_POINTS / AXES_POINTS)


def _labels(
    axes: Any, rows: Mapping[str, Mapping[str, Any]], axis: str, front: set[str], line: float
) -> None:
    """Method names beside their points. Methods within 3% of the axis's range in cost whose names
    would overlap (`line`: a line's height in ndcg@5) share one list, best first from the best one's
    height, so the many methods at one planned cost do not write over each other; names of points in
    the right fifth go to their left. `*`: on the frontier; `≤`: a budget."""
    costs = [r[axis] for r in rows.values()]
    span = max(costs) - min(costs)
    step = 0.03 * span or 1.0
    columns: dict[int, list[str]] = {}
    for name, row in rows.items():
        columns.setdefault(round(row[axis] / step), []).append(name)
    for names in columns.values():
        names.sort(key=lambda n: -rows[n][QUALITY])
        blocks: list[list[str]] = []
        for name in names:  # a new list where the last one's text ends above this point
            if blocks and rows[blocks[-1][0]][QUALITY] - len(blocks[-1]) * line <= rows[name][QUALITY]:
                blocks[-1].append(name)
            else:
                blocks.append([name])
        for members in blocks:
            x = min(rows[n][axis] for n in members)
            left = span > 0 and x > min(costs) + 0.8 * span
            text = "\n".join(_name(n, rows[n], axis, n in front) for n in members)
            label = axes.annotate(text, (x, rows[members[0]][QUALITY]), xytext=(-4 if left else 4, 2),
                                  textcoords="offset points", va="top", ha="right" if left else "left",
                                  fontsize=7, linespacing=1.0)  # fmt: skip
            label.set_in_layout(False)  # inside the axes: the layout need not measure the labels


def _name(name: str, row: Mapping[str, Any], axis: str, on_front: bool) -> str:
    """A method's label: `≤` before a budget's, `*` after a frontier method's."""
    bound = "≤" if axis == "llm_calls_per_user" and row["calls_at_most"] else ""
    return f"{bound}{name}{' *' if on_front else ''}"

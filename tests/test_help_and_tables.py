"""Every `recgraph` option documented with its values, a console table readable at 100 columns, and
paired intervals that never seem to disagree with their markers."""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator

import numpy as np
import pytest
from rich.console import Console

from bench.report import console as report_console
from bench.report import outputs as report
from bench.stats import significance as stats
from bench.stats.fallbacks import check_fallbacks
from bench.stats.holm import holm_levels
from graphs.registry import METHODS
from llmsim.faults import FAULT_KINDS
from recgraph.cli import build_parser
from recgraph.options import LLM_BACKENDS

FIXED_VALUES: dict[str, tuple[str, ...]] = {
    "--fault-kinds": ("all", *FAULT_KINDS),
    "--llm": LLM_BACKENDS,
    "--methods": ("all", *METHODS),
    "--method": tuple(METHODS),
}
"""Options taking names from a fixed set without argparse `choices` (comma lists, open forms)."""


def parsers(
    parser: argparse.ArgumentParser, path: str = "recgraph"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every (sub)parser of the CLI with its command path, methods' own subcommands included."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, f"{path} {name}")


def options() -> Iterator[tuple[str, argparse.ArgumentParser, argparse.Action]]:
    """Every argument of every command (help actions and subcommand selectors left out)."""
    for path, parser in parsers(build_parser()):
        for action in parser._actions:
            if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                yield path, parser, action


def test_the_walk_reaches_every_command() -> None:
    paths = {path for path, _ in parsers(build_parser())}
    expected = {
        "recgraph bench",
        "recgraph recommend",
        "recgraph compare",
        "recgraph datasets",
        "recgraph memrec",
        "recgraph amem4rec train",
        "recgraph amem4rec pool",
        "recgraph chainrec train",
        "recgraph chainrec mine-tools",
    }
    assert expected <= paths


def test_every_option_of_every_command_has_help_text() -> None:
    missing = [f"{path} {a.option_strings or a.dest}" for path, _, a in options() if not a.help]
    assert missing == []


def test_options_with_a_fixed_set_of_values_list_them() -> None:
    unlisted = []
    for path, parser, action in options():
        text = " ".join(parser.format_help().split())
        for value in action.choices or ():
            if str(value) not in text or not action.help:
                unlisted.append(f"{path} {action.dest}: {value}")
        for flag in action.option_strings:
            shown = text if flag in ("--methods", "--method") else " ".join((action.help or "").split())
            unlisted += [f"{path} {flag}: {v}" for v in FIXED_VALUES.get(flag, ()) if v not in shown]
    assert unlisted == []


def test_fault_kinds_help_names_the_opt_in_injection() -> None:
    action = next(a for _, _, a in options() if "--fault-kinds" in a.option_strings)
    assert "injection" in action.help and "all (every kind but the opt-in injection" in action.help


def row(name: str, llm: bool) -> dict:
    """A metrics.json row as large as real runs make them (N=20: hit@10 and ndcg@10 too)."""
    names = ("hit@1", "hit@3", "hit@5", "hit@10", "ndcg@3", "ndcg@5", "ndcg@10", "mrr", "avg_hr")
    values = dict.fromkeys(names, 0.4771)
    usage = {
        "users": 2000,
        "llm_attempts": 24000 if llm else 0,
        "llm_calls": 23999 if llm else 0,
        "fallbacks": 3,
        "fallback_share": 1.0 if llm else None,
        "seconds_per_user": 123.45,
    }
    if llm:
        origin = {"model": 100, "repair": 0, "fallback": 0}
        usage |= {
            "model_share": {"top1": 1.0, "top5": 1.0, "all": 1.0},
            "ranking_origin": {
                "top1": origin,
                "top5": origin,
                "all": origin,
                "rankings": 2000,
                "asked_llm": 2000,
            },
        }
    return {**values, **usage}


def paired_cell(difference: float) -> dict:
    return {
        "difference": difference,
        "ci": [-0.4781, -0.3701],
        "ci_level": 0.9833,
        "p_value": 0.0001,
        "p_holm": 0.0003,
        "verdict": stats.WORSE,
        "marker": "▼",
        "users": 2000,
    }


def test_the_console_table_fits_100_columns_without_cutting_a_header() -> None:
    names = ["amem4rec_no_similarity", "chainrec_llm_planner", "amem4rec_no_evolution", "itemknn"]
    methods = {name: row(name, name != "itemknn") for name in names}
    comparisons = {
        "reference": "itemknn",
        "reference_chosen": "chosen with --reference",
        "methods": {n: {m: paired_cell(-0.4244) for m in stats.COMPARED} for n in names if n != "itemknn"},
    }
    console = Console(width=100, record=True)
    protocol = {"scenario": "evolving_short", "llm": "openai:gpt-4o-mini"}
    console.print(
        report_console.rich_report("ml-100k", protocol, methods, comparisons, check_fallbacks(methods))
    )
    shown = console.export_text()
    assert "…" not in shown
    assert max(len(line) for line in shown.splitlines()) <= 100
    header = next(line for line in shown.splitlines() if line.split()[:1] == ["method"])
    assert header.split() == [
        "method",
        "hit@1",
        "ndcg@5",
        "mrr",
        "avg_hr",
        "users",
        "req",
        "ans",
        "fb%",
        "model@5",
        "s/u",
    ]
    assert "amem4rec_no_similarity 0.477 ▼" in shown and "itemknn (ref)" in shown
    legend = " ".join(shown.split())
    assert "req: LLM requests sent · ans: requests the model answered · fb%: agent answers from" in legend
    assert "model@5: top-5 positions the model chose itself" in legend and "s/u: seconds per user" in legend


def test_no_reference_says_so_once() -> None:
    _, how = stats.choose_reference({"arag": {"ndcg@5": 0.9}}, {"arag": "llm"})
    note = report.comparison_note({"reference": None, "reference_chosen": how, "methods": {}})
    assert note == "No paired comparisons: no classic baseline in the run and no --reference."


def hits(count: int, users: int = 7) -> dict[str, dict[str, float]]:
    return {f"u{i}": {"hit@1": 1.0 if i < count else 0.0} for i in range(users)}


def test_an_interval_excluding_0_before_holm_includes_it_when_the_verdict_is_same() -> None:
    # Against a reference that never hits: m1 hits all 7 users (p = 1/64), m2 six of 7 (p = 1/32),
    # m3 one. Holm: m1 3/64 < 0.05 -> ▲ (held to 0.05/3); m2 2/32 = 0.0625 -> ≈ (held to 0.05/2).
    reference = hits(0)
    table = stats.compare_all(
        {"m1": (hits(7), reference), "m2": (hits(6), reference), "m3": (hits(1), reference)}, ["hit@1"]
    )
    m1, m2, m3 = (table[name]["hit@1"] for name in ("m1", "m2", "m3"))
    unadjusted = stats.bootstrap_ci([1.0] * 6 + [0.0])
    assert unadjusted is not None and unadjusted[0] > 0.0  # the 95% bootstrap interval excludes 0 ...
    assert m2.p_value == pytest.approx(1 / 32) and m2.p_holm == pytest.approx(0.0625)
    assert m2.verdict == stats.SAME  # ... but Holm's verdict is ≈
    assert m2.ci is not None and m2.ci[0] <= 0.0 <= m2.ci[1] and m2.ci_level == pytest.approx(0.975)
    assert m1.verdict == stats.BETTER and m1.ci is not None and m1.ci[0] > 0.0
    assert m1.ci_level == pytest.approx(1 - 0.05 / 3) and m3.ci_level == pytest.approx(0.975)
    assert m2.as_dict()["ci_level"] == pytest.approx(0.975)

    comparisons = {
        "reference": "ref",
        "reference_chosen": "chosen with --reference",
        "methods": {n: {"hit@1": table[n]["hit@1"].as_dict()} for n in table},
    }
    markdown = report.differences_markdown(comparisons)
    low, high = m2.ci
    assert f"+0.8571 [{low:+.4f}, {high:+.4f}] (97.5%) ≈" in markdown
    assert "97.5%–98.3% here" in report.comparison_note(comparisons)


def test_holm_levels_follow_the_step_down() -> None:
    # sorted 0.01 (0.05/3: rejected), 0.02 (0.05/2: rejected), 0.04 (0.05/1: rejected)
    assert holm_levels([0.04, 0.01, 0.02]) == pytest.approx([0.05, 0.05 / 3, 0.05 / 2])
    # sorted 0.02 (0.05/3: not rejected): every later one is held to that first step's level
    assert holm_levels([0.02, 0.03, 0.9]) == pytest.approx([0.05 / 3] * 3)
    assert holm_levels([]) == []


@pytest.mark.parametrize("seed", range(12))
def test_markers_and_intervals_agree_on_random_comparisons(seed: int) -> None:
    rng = np.random.default_rng(seed)
    users = int(rng.integers(5, 40))
    reference = {f"u{i}": {"m": float(v)} for i, v in enumerate(rng.random(users))}
    pairs = {}
    for name in ("a", "b", "c", "d"):
        shift = float(rng.normal(0.0, 0.25))
        noisy = {u: {"m": r["m"] + shift + float(rng.normal(0, 0.3))} for u, r in reference.items()}
        pairs[name] = (noisy, reference)
    for name, cells in stats.compare_all(pairs, ["m"]).items():
        cell = cells["m"]
        if cell.ci is None:  # too few users to reject any shift: nothing is rejected either
            assert cell.verdict == stats.SAME, name
            continue
        low, high = cell.ci
        assert low <= cell.difference <= high or math.isclose(low, high)
        excludes = not low <= 0.0 <= high
        assert excludes == (cell.verdict != stats.SAME), (seed, name, cell)
        if excludes:
            assert (low > 0.0) == (cell.verdict == stats.BETTER)

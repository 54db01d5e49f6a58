"""bench.stats.compare and `recgraph compare`: two runs user by user; the bench's reference comparisons."""

import argparse
import json
from pathlib import Path

import pytest

from bench.protocol.metrics import mean_metrics, user_metrics
from bench.report import console as report_console
from bench.report import outputs as report
from bench.stats import significance as stats
from bench.stats.compare import (
    RunFolderError,
    RunMismatchError,
    UnknownReferenceError,
    add_statistics,
    check_reference,
    compare_runs,
    load_run,
)
from recgraph.compare_command import compare
from world.errors import ProtocolError, RecgraphError

PROTOCOL = {
    "dataset": "ml-100k",
    "candidates": 10,
    "seed": 0,
    "scenario": "classic",
    "users": 20,
    "llm": "heuristic",
}
RANKS = {  # method -> rank of the target for users u00..u19
    "popularity": [1, 3, 2, 6, 1, 9, 4, 2, 1, 5, 7, 3, 2, 1, 8, 2, 3, 1, 4, 6],
    "itemknn": [1, 2, 1, 4, 1, 7, 3, 1, 1, 4, 5, 2, 1, 1, 6, 1, 2, 1, 3, 4],
}


def write_run(
    folder: Path,
    protocol: dict | None = None,
    ranks: dict[str, list[int]] | None = None,
    users: range = range(20),
    header: bool = False,
    partial: bool = False,
) -> Path:
    """A results.jsonl as `recgraph bench` writes it (optionally with a header line / a cut last line)."""
    protocol = protocol or PROTOCOL
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"protocol": protocol})] if header else []
    for method, method_ranks in (ranks or RANKS).items():
        for index in users:
            rank = method_ranks[index % len(method_ranks)]
            record = {"method": method, "user_id": f"u{index:02d}", "rank": rank, "protocol": protocol}
            lines.append(json.dumps({**record, "metrics": user_metrics(rank, protocol["candidates"])}))
    text = "\n".join(lines) + "\n" + ('{"method": "itemknn", "user' if partial else "")
    (folder / "results.jsonl").write_text(text)
    return folder


def test_identical_runs_differ_by_exactly_zero(tmp_path: Path) -> None:
    a, b = load_run(write_run(tmp_path / "a")), load_run(write_run(tmp_path / "b"))
    result = compare_runs(a, b, ["hit@1", "hit@3", "ndcg@5", "mrr", "avg_hr"])
    assert result.warnings == []
    assert list(result.methods) == ["popularity", "itemknn"]
    for row in result.methods.values():
        assert row.paired == 20 and row.mean_a == row.mean_b
        for cell in row.metrics.values():
            assert cell.difference == 0.0 and cell.ci == [0.0, 0.0]
            assert cell.p_value == 1.0 and cell.verdict == "no detectable difference"


def test_runs_differing_only_in_seed_pair_over_common_users(tmp_path: Path) -> None:
    a = load_run(write_run(tmp_path / "a", users=range(0, 20)))
    b = load_run(write_run(tmp_path / "b", {**PROTOCOL, "seed": 1}, users=range(12, 32)))
    result = compare_runs(a, b)
    assert all(row.paired == 8 and row.users_a == row.users_b == 20 for row in result.methods.values())
    assert any("seeds differ (0 vs 1)" in line for line in result.warnings)
    assert "pairing 8 users common to both runs for every method (A has 20, B has 20)" in result.warnings
    assert list(result.methods["itemknn"].metrics) == list(stats.COMPARED)


def test_a_better_run_is_detected(tmp_path: Path) -> None:
    a = load_run(write_run(tmp_path / "a", ranks={"itemknn": [5, 6, 4, 7]}))
    b = load_run(write_run(tmp_path / "b", ranks={"itemknn": [1]}))
    cell = compare_runs(a, b).methods["itemknn"].metrics["hit@1"]
    assert cell.difference == 1.0 and cell.verdict == stats.BETTER and cell.p_holm < 0.001


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"candidates": 20}, "candidates: 10 vs 20"),
        (
            {"llm": "sim", "scenario": "cold_user"},
            "scenario: 'classic' vs 'cold_user'; llm: 'heuristic' vs 'sim'",
        ),
        ({"dataset": "other", "seed": 3}, "dataset: 'ml-100k' vs 'other'"),
        ({"users": 30}, "users: 20 vs 30"),
    ],
)
def test_other_protocol_differences_are_refused(tmp_path: Path, changes: dict, named: str) -> None:
    a = load_run(write_run(tmp_path / "a"))
    b = load_run(write_run(tmp_path / "b", {**PROTOCOL, **changes}))
    with pytest.raises(RunMismatchError, match="only --seed may differ") as error:
        compare_runs(a, b)
    assert named in str(error.value) and "seed" not in str(error.value).split("differ in")[1].split("(")[0]
    assert isinstance(error.value, ProtocolError) and isinstance(error.value, RecgraphError)


def test_a_folder_without_results_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RunFolderError, match=r"no results\.jsonl"):
        load_run(tmp_path)
    (tmp_path / "results.jsonl").write_text('{"method": "x"}\nnot json\n')
    with pytest.raises(RunFolderError, match="line 2: not valid JSON"):
        load_run(tmp_path)


def test_header_line_and_half_written_last_line(tmp_path: Path) -> None:
    run = load_run(write_run(tmp_path / "a", header=True, partial=True))
    assert run.protocol == PROTOCOL and run.partial_line
    assert len(run.rows["itemknn"]) == 20
    result = compare_runs(run, load_run(write_run(tmp_path / "b")))
    assert any("half-written last line is ignored" in line for line in result.warnings)


def test_methods_in_one_run_only_are_named(tmp_path: Path) -> None:
    a = load_run(write_run(tmp_path / "a"))
    b = load_run(write_run(tmp_path / "b", ranks={"itemknn": RANKS["itemknn"], "bpr": [2]}))
    result = compare_runs(a, b)
    assert list(result.methods) == ["itemknn"]
    assert "not compared (in one run only): A ['popularity']; B ['bpr']" in result.warnings
    with pytest.raises(RunMismatchError, match="nothing to compare"):
        compare_runs(a, load_run(write_run(tmp_path / "c", ranks={"bpr": [2]})))


def test_compare_command_prints_the_paired_table(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    a, b = write_run(tmp_path / "a"), write_run(tmp_path / "b", {**PROTOCOL, "seed": 1}, users=range(5, 25))
    assert compare(argparse.Namespace(run_a=str(a), run_b=str(b), metrics="ndcg@5,hit@1")) == 0
    captured = capsys.readouterr()
    assert "pairing 15 users" in captured.err
    assert "ndcg@5" in captured.out and "hit@1" in captured.out and "mrr" not in captured.out
    assert "heuristic (no LLM" in captured.out
    with pytest.raises(RecgraphError, match="unknown metric 'ndcg@50'"):
        compare(argparse.Namespace(run_a=str(a), run_b=str(b), metrics="ndcg@50"))


class FakeLog:
    """What add_statistics needs of a ResultsLog: finished records per method by user id."""

    def __init__(self, ranks: dict[str, list[int]], users: int = 20) -> None:
        self.records = {
            m: {f"u{i:02d}": {"metrics": user_metrics(r[i % len(r)], 10)} for i in range(users)}
            for m, r in ranks.items()
        }

    def done(self, method: str) -> dict:
        return self.records.get(method, {})


def bench_results(log: FakeLog, users: list[str]) -> dict:
    """metrics.json's `methods` rows as the runner makes them (means, users, usage fields)."""
    return {
        m: {**mean_metrics(log.done(m)[u]["metrics"] for u in users), "users": len(users), "llm_calls": 0}
        for m in log.records
    }


class Case:
    def __init__(self, user_id: str) -> None:
        self.user_id = user_id


def test_add_statistics_puts_intervals_beside_values_and_compares_to_the_reference() -> None:
    log = FakeLog(
        {
            "random": [5, 9, 2, 7],
            "itemknn": RANKS["itemknn"],
            "popularity": RANKS["popularity"],
            "vanilla_llm": RANKS["itemknn"],
        }
    )
    cases = [Case(f"u{i:02d}") for i in range(15)]  # u15..u19 are not wanted
    results = bench_results(log, [c.user_id for c in cases])
    comparisons = add_statistics(results, log, cases)
    row = results["itemknn"]
    assert list(row)[:4] == ["hit@1", "hit@1_ci", "hit@3", "hit@3_ci"] and row["users"] == 15
    assert row["ndcg@5_ci"][0] <= row["ndcg@5"] <= row["ndcg@5_ci"][1]
    assert report.metric_columns(results) == ["hit@1", "hit@3", "hit@5", "ndcg@3", "ndcg@5", "mrr", "avg_hr"]
    assert comparisons["reference"] == "itemknn"  # best classic by ndcg@5 (vanilla_llm ties but is an LLM)
    assert "strongest classic baseline" in comparisons["reference_chosen"]
    assert set(comparisons["methods"]) == {"random", "popularity", "vanilla_llm"}
    same = comparisons["methods"]["vanilla_llm"]["ndcg@5"]
    assert same["difference"] == 0.0 and same["marker"] == "≈" and same["users"] == 15
    assert comparisons["methods"]["random"]["hit@1"]["verdict"] == "worse"
    assert set(comparisons["methods"]["random"]) == set(stats.COMPARED)
    chosen = add_statistics(bench_results(log, [c.user_id for c in cases]), log, cases, "popularity")
    assert chosen["reference"] == "popularity" and "itemknn" in chosen["methods"]
    with pytest.raises(UnknownReferenceError, match="'bpr' is not among the methods run"):
        add_statistics(bench_results(log, ["u00"]), log, cases, "bpr")
    with pytest.raises(UnknownReferenceError, match="--reference 'bpr'"):
        check_reference("bpr", ["itemknn", "random"])
    check_reference(None, ["itemknn"])


def test_reports_show_intervals_markers_and_differences(tmp_path: Path) -> None:
    from rich.console import Console

    log = FakeLog({"random": [5, 9, 2, 7], "itemknn": RANKS["itemknn"], "popularity": RANKS["popularity"]})
    cases = [Case(f"u{i:02d}") for i in range(20)]
    results = bench_results(log, [c.user_id for c in cases])
    comparisons = add_statistics(results, log, cases)
    protocol = {**PROTOCOL, "users": 20}
    report.write_metrics(tmp_path, "ml-100k", protocol, results, None, comparisons)
    document = json.loads((tmp_path / "metrics.json").read_text())
    assert document["methods"]["random"]["ndcg@5_ci"] == results["random"]["ndcg@5_ci"]
    assert document["statistics"]["bootstrap_resamples"] == stats.BOOTSTRAP_RESAMPLES
    assert document["comparisons"]["methods"]["random"]["avg_hr"]["marker"] == "▼"
    text = report.write_report_md(tmp_path, "ml-100k", protocol, results, comparisons).read_text()
    assert "itemknn (reference)" in text and "▼" in text and "Holm" in text
    assert "Paired differences (method − itemknn)" in text
    assert (
        report.write_report_png(tmp_path, "ml-100k", protocol, results, comparisons).read_bytes()[:4]
        == b"\x89PNG"
    )
    console = Console(record=True, width=200)
    console.print(report_console.rich_report("ml-100k", protocol, results, comparisons))
    shown = console.export_text()
    assert "paired difference vs itemknn" in shown and "▼" in shown and "≈" in shown
    assert report.write_report_md(tmp_path, "ml-100k", protocol, results).read_text().count("▼") == 0


def tiny_bench(dataset: Path, out: Path, *extra: str) -> list[str]:
    """`recgraph bench` arguments for a fast run on the tiny atomic dataset."""
    return ["bench", "--methods", "popularity,random", "--dataset", str(dataset), "--users", "3",
            "--candidates", "2", "--out", str(out), *extra]  # fmt: skip


def test_bench_and_compare_end_to_end(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from recgraph.cli import main

    assert main(tiny_bench(tiny_dataset_dir, tmp_path / "s0")) == 0
    assert main(tiny_bench(tiny_dataset_dir, tmp_path / "again")) == 0
    assert main(tiny_bench(tiny_dataset_dir, tmp_path / "s1", "--seed", "1")) == 0
    document = json.loads((tmp_path / "s0" / "metrics.json").read_text())
    assert document["comparisons"]["reference"] == "popularity"
    assert set(document["comparisons"]["methods"]) == {"random"}
    assert "ndcg@5_ci" in document["methods"]["random"] and document["statistics"]["seed"] == stats.SEED
    assert "(reference)" in (tmp_path / "s0" / "report.md").read_text()
    capsys.readouterr()

    assert main(["compare", str(tmp_path / "s0"), str(tmp_path / "again"), "--metrics", "all"]) == 0
    out = capsys.readouterr().out
    assert "better" not in out and "worse" not in out  # 2 methods x 7 metrics, all "≈ ..."
    assert out.count("≈ no detectable difference") >= 14 and out.count("(−∞, +∞)") == 14  # 3 users: unbounded
    assert main(["compare", str(tmp_path / "s0"), str(tmp_path / "s1")]) == 0
    assert "seeds differ (0 vs 1)" in capsys.readouterr().err

    assert main(tiny_bench(tiny_dataset_dir, tmp_path / "n3", "--candidates", "3")) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "s0"), str(tmp_path / "n3")]) == 2
    assert "differ in candidates: 2 vs 3 (only --seed may differ)" in capsys.readouterr().err


def test_unknown_reference_is_refused_before_the_run(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    from recgraph.cli import main

    assert main(tiny_bench(tiny_dataset_dir, tmp_path / "out", "--reference", "itemknn")) == 2
    assert not (tmp_path / "out").exists()

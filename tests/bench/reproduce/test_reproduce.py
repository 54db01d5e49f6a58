"""`recgraph reproduce PAPER`: the published numbers' files, a bad paper or dataset name, a heuristic
run's table with the published numbers beside ours, each column from its own dataset's run, and the
missing rows marked."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench.reproduce.papers import PAPERS, load_paper
from graphs.registry import METHODS
from recgraph.cli import main

PAPERS_TEXT = Path(__file__).resolve().parents[4] / "shared" / "papers"
"""The papers' text beside the repository (`../shared/papers`): the value test skips where it is absent."""
ADDED_LATER = {"agentcf"}
"""Methods a row may name before they are registered (another change adds them): shown as missing."""


@pytest.mark.parametrize("name", PAPERS)
def test_published_file_parses_and_maps_every_row(name: str) -> None:
    paper = load_paper(name)
    assert paper.tables
    for table in paper.tables:
        assert table.rows and table.columns
        for row in table.rows:
            assert len(row.values) == len(table.columns)
            if row.method is None:
                assert row.missing  # said why, not dropped
            else:
                assert row.method in METHODS or row.method in ADDED_LATER, row


@pytest.mark.parametrize("name", PAPERS)
def test_published_values_are_the_papers_own(name: str) -> None:
    """Every transcribed value is a number printed on the table's lines of the paper's text."""
    text = PAPERS_TEXT / f"{name}.txt"
    if not text.is_file():
        pytest.skip(f"needs the papers' text files at {PAPERS_TEXT}, which are absent")
    lines = text.read_text(encoding="utf-8").splitlines()
    for table in load_paper(name).tables:
        first, last = (int(n) for n in table.lines.split("-"))
        printed = "\n".join(lines[first - 1 : last])
        for row in table.rows:
            label = re.escape(row.row.split(" (")[0][:6])
            found = [ln for ln in printed.splitlines() if re.search(label, ln)] or printed.splitlines()
            numbers = {float(n) for ln in found for n in re.findall(r"\d+\.\d+", ln)}
            missing = [v for v in row.values if v not in numbers]
            assert not missing, (table.id, row.row, missing)


def test_known_values_by_hand() -> None:
    memrec = {t.id: t for t in load_paper("memrec").tables}
    row = next(r for r in memrec["Table 2"].rows if r.row == "MemRec")
    assert row.values[0] == 0.5117 and row.values[-1] == 0.6112
    chain = load_paper("chainrec").tables[0]
    ours = next(r for r in chain.rows if r.method == "chainrec_learned")
    yelp_classic = [i for i, c in enumerate(chain.columns) if (c.dataset, c.scenario) == ("Yelp", "classic")]
    assert ours.values[yelp_classic[0]] == 28.3 and chain.scale == 100
    amem = load_paper("amem4rec")
    assert amem.tables[2].scenarios == ["cold_start"]
    assert amem.tables[0].columns[0].ours == "hit@1"  # NDCG@1 = Hit@1 with one relevant item


def test_every_column_names_one_of_the_papers_datasets() -> None:
    for name in PAPERS:
        paper = load_paper(name)
        assert {c.dataset for t in paper.tables for c in t.columns} == {d.column for d in paper.datasets}
    amem = load_paper("amem4rec")
    assert amem.dataset("cds").column == amem.dataset("CDs and Vinyl").column == "CDs and Vinyl"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("ml-100k", "give NAME=PATH, NAME one of memrec's datasets (Books, Goodreads, MovieTV, Yelp)"),
        ("Book=ml-100k", "memrec has no dataset 'Book'; choose one of Books, Goodreads, MovieTV, Yelp"),
        ("Yelp town=ml-100k", "memrec has no dataset 'Yelp town'"),  # no word matching
    ],
)
def test_bad_dataset_name_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str, message: str
) -> None:
    out = tmp_path / "out"
    assert main(["reproduce", "memrec", "--dataset", value, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert not out.exists()


def test_a_dataset_given_twice_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["reproduce", "arag", "--dataset", "Home=ml-100k", "--dataset", "home=ml-100k"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert "--dataset Home is given twice" in capsys.readouterr().err


def test_bad_paper_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["reproduce", "memrecc", "--dataset", "Books=ml-100k", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "unknown paper 'memrecc'" in err
    assert not out.exists()


def test_bad_data_is_one_line_exit_2_before_any_header(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A folder with no recognised files and a truncated gzip: one stderr line, no header, no output."""
    import gzip

    empty, cut = tmp_path / "empty", tmp_path / "cut"
    empty.mkdir()
    cut.mkdir()
    lines = "".join(
        f'{{"reviewerID": "u{i}", "asin": "i{i % 7}", "overall": 5.0, "unixReviewTime": {i}}}\n'
        for i in range(3000)
    )
    whole = gzip.compress(lines.encode())
    (cut / "CDs.json.gz").write_bytes(whole[: len(whole) // 2])
    for folder, message in ((empty, "no dataset at"), (cut, "truncated gzip stream")):
        out = tmp_path / f"out-{folder.name}"
        argv = ["reproduce", "memrec", "--dataset", f"Books={folder}", "--users", "3", "--out", str(out)]
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and len(captured.err.strip().splitlines()) == 1 and message in captured.err
        assert not out.exists()


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "datasets"


def test_heuristic_run_writes_table_beside_published(shared_data: Path, tmp_path: Path) -> None:
    dataset = str(shared_data / "CDs-100-user-dense")
    out = tmp_path / "arag"
    code = main(["reproduce", "arag", "--dataset", f"Clothing={dataset}", "--users", "6", "--out", str(out)])
    assert code == 0
    document = json.loads((out / "reproduce.json").read_text())
    table = document["tables"][0]
    arag = next(r for r in table["rows"] if r["method"] == "arag")
    first = arag["cells"][0]
    assert first["published"] == 0.43937 and first["dataset"] == "Clothing"
    assert first["ours"] is not None and first["ci95"] is not None
    metrics = json.loads((out / "Clothing" / "classic" / "metrics.json").read_text())
    assert first["ours"] == metrics["methods"]["arag"]["ndcg@5"]
    assert metrics["protocol"]["candidates"] == 20  # the paper's protocol, not bench's default 10
    assert document["datasets"]["Clothing"]["ours"] == {"path": dataset, "dataset": "CDs-100-user-dense"}
    assert document["datasets"]["Home"]["ours"] is None
    text = (out / "reproduce.md").read_text()
    assert "| Agentic RAG | arag | 0.43937 |" in text
    assert f"**Clothing** (paper: Amazon reviews (He & McAuley 2016), Clothing, Shoes & Jewelry) · ours: " \
        f"`CDs-100-user-dense` from `{dataset}`" in text  # fmt: skip
    assert "**Home** (paper: Amazon reviews (He & McAuley 2016), Home & Kitchen) · ours: not run" in text
    assert "heuristic (no LLM" in text  # heuristic numbers are labelled as such
    assert "ndcg@5 classic ours: fallback answers, not the method [95% CI]" in text  # in every heading
    assert document["ours_label"] == "ours: fallback answers, not the method"


def _cells(out: Path, method: str) -> dict[str, list]:
    """Per paper dataset, `method`'s ours values in reproduce.json's first table."""
    document = json.loads((out / "reproduce.json").read_text())
    row = next(r for r in document["tables"][0]["rows"] if r["method"] == method)
    found: dict[str, list] = {}
    for cell in row["cells"]:
        found.setdefault(cell["dataset"], []).append(cell["ours"])
    return found


def test_each_column_comes_from_its_own_dataset_and_a_later_command_adds_one(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two differently shaped folders fill two datasets' columns with their own values, the third
    says "not run"; a second command into the same OUT adds the third and keeps the first two; the
    same NAME from other data is refused in one line, OUT untouched."""
    cds, games = str(shared_data / "CDs-100-user-dense"), str(FIXTURES / "amazon2023")
    out = tmp_path / "out"
    base = ["reproduce", "arag", "--users", "6", "--out", str(out)]
    assert main([*base, "--dataset", f"Clothing={cds}", "--dataset", f"Electronics={games}"]) == 0
    first = _cells(out, "recency_llm")
    assert None not in first["Clothing"] + first["Electronics"] and first["Home"] == [None, None]
    clothing, electronics = (
        json.loads((out / name / "classic" / "metrics.json").read_text())["methods"]["recency_llm"]
        for name in ("Clothing", "Electronics")
    )
    assert first["Clothing"] == [clothing["ndcg@5"], clothing["hit@5"]]
    assert first["Electronics"] == [electronics["ndcg@5"], electronics["hit@5"]]
    assert first["Clothing"] != first["Electronics"]
    assert main([*base, "--dataset", f"Home={FIXTURES / 'amazon2018'}"]) == 0
    second = _cells(out, "recency_llm")
    assert second["Clothing"] == first["Clothing"] and second["Electronics"] == first["Electronics"]
    assert None not in second["Home"]
    capsys.readouterr()
    before = (out / "reproduce.md").read_text()
    assert main([*base, "--dataset", f"Clothing={games}"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"holds Clothing from {cds}, not {games}" in err
    assert (out / "reproduce.md").read_text() == before


def test_set_reaches_the_runs_with_the_knob_and_a_typo_is_refused(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = f"Clothing={shared_data / 'CDs-100-user-dense'}"
    out = tmp_path / "out"
    argv = ["reproduce", "arag", "--dataset", dataset, "--users", "4", "--out", str(out)]
    assert main([*argv, "--set", "arag_recall_k=7"]) == 0
    methods = json.loads((out / "Clothing" / "classic" / "metrics.json").read_text())["methods"]
    assert methods["arag"]["set"] == {"arag_recall_k": 7}
    assert "set" not in methods["recency_llm"]  # only the methods with the knob
    assert main([*argv, "--set", "arag_recall_kk=7"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--set arag_recall_kk: no selected method has a knob 'arag_recall_kk'" in err
    assert "did you mean arag_recall_k" in err


def test_dry_run_whose_probe_cannot_reach_the_simulator_is_one_line(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loopback interface down: the probe's requests are refused; one line, exit 2, nothing written."""
    from llmsim.process import SimServer

    started = SimServer.start

    def unreachable(self: SimServer, ready_timeout: float = 30.0) -> SimServer:
        started(self, ready_timeout)
        self.base_url = "http://127.0.0.1:9/v1"  # the discard port: every request is refused
        return self

    monkeypatch.setattr(SimServer, "start", unreachable)
    out = tmp_path / "out"
    argv = ["reproduce", "arag", "--dataset", f"Clothing={shared_data / 'CDs-100-user-dense'}"]
    argv += ["--users", "3", "--llm", "sim", "--llm-retries", "0", "--dry-run", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "the cost probe stopped at" in err
    assert not out.exists()


def test_missing_rows_are_marked_not_dropped(shared_data: Path, tmp_path: Path) -> None:
    dataset = str(shared_data / "CDs-100-user-dense")
    out = tmp_path / "memrec"
    argv = ["reproduce", "memrec", "--dataset", f"Goodreads={dataset}", "--users", "5", "--out", str(out)]
    code = main(argv)
    assert code == 0
    document = json.loads((out / "reproduce.json").read_text())
    rows = {r["row"]: r for r in document["tables"][0]["rows"]}
    goodreads = [i for i, c in enumerate(rows["MemRec"]["cells"]) if c["dataset"] == "Goodreads"]
    assert len(rows) == 9  # every published row of Table 2
    assert rows["P5"]["status"] == "not in recgraph" and rows["P5"]["cells"][0]["ours"] is None
    if "agentcf" not in METHODS:
        assert rows["AgentCF"]["status"].startswith("not in recgraph")
    assert rows["MemRec"]["status"] == "" and rows["MemRec"]["cells"][goodreads[0]]["ours"] is not None
    assert rows["MemRec"]["cells"][0]["ours"] is None and rows["MemRec"]["cells"][0]["status"] == "not run"
    assert "| P5 | — | 0.2192 | not in recgraph |" in (out / "reproduce.md").read_text()


def test_an_out_of_another_papers_reproduction_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "datasets.json").write_text(json.dumps({"paper": "amem4rec", "datasets": {"CDs": {"path": "x"}}}))
    assert main(["reproduce", "memrec", "--dataset", "Books=ml-100k", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "holds a reproduction of 'amem4rec', not memrec" in err
    assert sorted(p.name for p in out.iterdir()) == ["datasets.json"]

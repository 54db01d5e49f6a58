"""`recgraph reproduce` on the papers' public formats (our fixtures, tests/fixtures/datasets and the
AgentSociety town): each paper on a fixture in the format its authors used, heuristic backend, a few
users; the paper's table is written with the published numbers beside ours, each of that dataset's
cells read from its own run's metrics.json and every other dataset's cell "not run"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.reproduce.papers import METRIC_ALIASES, load_paper
from recgraph.cli import main
from tests.fixtures.agentsociety_town import yelp_town

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "datasets"
CASES = [
    # paper, fixture, a row we check, that row's method, the paper dataset our data stands for
    ("arag", "amazon2023", "Agentic RAG", "arag", "Electronics"),
    ("memrec", "amazon2018", "MemRec", "memrec", "Goodreads"),
    ("amem4rec", "mind", "AMEM4Rec", "amem4rec", "MIND"),
    ("chainrec", "agentsociety", "w/o GEO-CONTEXT", "chainrec_no_geo", "Yelp"),
]


def dataset_path(fixture: str, tmp_path: Path) -> Path:
    """The fixture's folder (the AgentSociety town is written, seeded, under tmp_path)."""
    if fixture == "agentsociety":
        return yelp_town(tmp_path / "yelp_town", users=24, per_city=30)
    return FIXTURES / fixture


@pytest.mark.parametrize(("paper", "fixture", "row", "method", "name"), CASES)
def test_reproduce_on_format_fixture(
    tmp_path: Path, paper: str, fixture: str, row: str, method: str, name: str
) -> None:
    out = tmp_path / "out"
    column = load_paper(paper).dataset(name).column
    argv = ["reproduce", paper, "--dataset", f"{name}={dataset_path(fixture, tmp_path)}", "--users", "4"]
    assert main([*argv, "--llm", "heuristic", "--concurrency", "2", "--out", str(out)]) == 0
    document = json.loads((out / "reproduce.json").read_text())
    text = (out / "reproduce.md").read_text()
    found = [(t, r) for t in document["tables"] for r in t["rows"] if r["row"] == row]
    assert found, row
    for _, entry in found:
        assert entry["method"] == method and entry["status"] == ""
        for cell in entry["cells"]:
            if cell["dataset"] != column:  # another paper dataset: no run fills it
                assert cell["ours"] is None and cell["status"] == "not run"
                continue
            path = out / name / cell["scenario"] / "metrics.json"
            if not path.exists():  # no user of the fixture qualifies: said in the header, no value
                assert cell["ours"] is None and f"{name}, scenario {cell['scenario']} not run" in text
                continue
            metrics = json.loads(path.read_text())
            ours = metrics["methods"][method][METRIC_ALIASES.get(cell["metric"], cell["metric"])]
            scale = 100 if cell["metric"] == "avg_hr" else 1
            assert cell["ours"] == pytest.approx(ours * scale) and cell["published"] > 0
    assert "heuristic (no LLM" in text and f"| {row} | {method} |" in text
    assert f"**{column}** (paper: " in text and f"from `{dataset_path(fixture, tmp_path)}`" in text

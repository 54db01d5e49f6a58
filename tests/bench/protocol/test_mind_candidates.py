"""MIND's candidates: by default the N−1 negatives are sampled from the catalog's news the user never
clicked, as for every dataset and as AMEM4Rec's paper does (Sec. 4.1.1), and no user is dropped for
a short impression; `--candidate-source impressions` draws them from the news shown beside the
user's last click and never clicked, and drops (and counts) the users shown too few. Neither draws
a news the user clicked, the held-out history included. Hand-built `behaviors.tsv` / `news.tsv`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.protocol.eligibility import candidates_block, eligibility
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from recgraph.cli import main
from recgraph.datasets_command import fields_of
from world.environment import get_environment
from world.errors import ProtocolError

NEWS = [f"N{k}\tnews\tnewsus\tHeadline {k}\tAbstract {k}." for k in range(1, 41)]
BEHAVIORS = [
    # U1's last click was shown beside 2 skipped news: too few for N = 5 under `impressions`
    "1\tU1\t11/11/2019 9:00:00 AM\tN1 N2\tN3-1 N20-0 N21-0",
    # U2 was shown its own history (N4, N5) again: 4 usable news, N22-N25
    "2\tU2\t11/11/2019 9:00:00 AM\tN4 N5\tN6-1 N22-0 N23-0 N4-0 N24-0 N5-0 N25-0",
    "3\tU3\t11/11/2019 9:00:00 AM\tN7 N8 N9\tN26-0 N10-1 N27-0 N28-0 N29-0 N30-0",
    # U4: an earlier impression's skipped news (N31-N34) are not its pool; the last click's are
    "4\tU4\t11/11/2019 9:00:00 AM\tN11 N12\tN13-1 N31-0 N32-0 N33-0 N34-0",
    "5\tU4\t11/12/2019 9:00:00 AM\tN11 N12\tN14-1 N35-0 N36-0 N37-0 N38-0 N39-0",
    "6\tU5\t11/11/2019 9:00:00 AM\tN15 N16 N17 N18 N19\tN40-1",
]
POOL_NEGATIVES = {  # usable impression news per user (shown with the last click, never clicked)
    "U1": {"N20", "N21"},
    "U2": {"N22", "N23", "N24", "N25"},
    "U3": {"N26", "N27", "N28", "N29", "N30"},
    "U4": {"N35", "N36", "N37", "N38", "N39"},
    "U5": set(),
}


@pytest.fixture
def mind(tmp_path: Path) -> str:
    """The hand-built MIND folder."""
    folder = tmp_path / "MINDtiny"
    folder.mkdir()
    (folder / "behaviors.tsv").write_text("\n".join(BEHAVIORS) + "\n", encoding="utf-8")
    (folder / "news.tsv").write_text("\n".join(NEWS) + "\n", encoding="utf-8")
    return str(folder)


def negatives(case: object) -> set[str]:
    """A case's candidates other than its target."""
    return set(case.candidates) - {case.target}  # type: ignore[attr-defined]


def test_default_samples_from_the_catalog_and_drops_nobody(mind: str) -> None:
    env = get_environment(mind)
    protocol = Protocol(mind, candidates=5, users=10)
    cases = plan_cases(env, protocol)
    assert [c.user_id for c in cases] == ["U1", "U2", "U3", "U4", "U5"]  # U1 and U5 too
    for case in cases:
        assert len(negatives(case)) == 4 and case.target in case.candidates
        assert not negatives(case) & env.interacted(case.user_id)  # history and validation included
        assert negatives(case) <= set(env.item_ids)
    # drawn from the catalog: users whose impression holds too few skipped news get negatives anyway,
    # and the draws reach news outside every user's impression
    outside = set().union(*(negatives(c) - POOL_NEGATIVES[c.user_id] for c in cases))
    assert negatives(cases[0]) - POOL_NEGATIVES["U1"] and len(outside) > 5
    block = candidates_block(env, protocol, cases)
    assert block["source"] == "uniform" and block["pools"] == 0
    assert "impressions are not used" in block["how"]
    assert fields_of(env.dataset).endswith("impressions (--candidate-source impressions)")  # not pools


def test_impressions_draw_from_the_last_clicked_impression(mind: str) -> None:
    env = get_environment(mind)
    protocol = Protocol(mind, candidates=5, users=10, candidate_source="impressions")
    cases = plan_cases(env, protocol)
    assert [c.user_id for c in cases] == ["U2", "U3", "U4"]  # U1: 2 usable news; U5: none
    for case in cases:
        assert negatives(case) <= POOL_NEGATIVES[case.user_id]
        assert not negatives(case) & env.interacted(case.user_id)
    assert negatives(cases[0]) == POOL_NEGATIVES["U2"]  # N4 and N5 were shown but clicked before
    chosen = eligibility(env, "classic", 5, source_name="impressions")
    assert chosen.source == "impressions" and chosen.steps[-1].users == 3
    assert "at least 4 news beside their last click" in chosen.steps[-1].rule
    assert candidates_block(env, protocol, cases)["how"].endswith("(--candidate-source impressions)")


def test_impressions_on_other_data_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    amazon = str(Path(__file__).resolve().parents[2] / "fixtures" / "datasets" / "amazon2023")
    with pytest.raises(ProtocolError, match="ships no impressions"):
        plan_cases(get_environment(amazon), Protocol(amazon, candidate_source="impressions"))
    out = tmp_path / "run"
    argv = ["bench", "--dataset", amazon, "--methods", "popularity", "--candidate-source", "impressions"]
    assert main([*argv, "--users", "3", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--candidate-source impressions" in err and "ships no impressions" in err


def test_bench_records_the_source_it_used(mind: str, tmp_path: Path) -> None:
    base = ["bench", "--dataset", mind, "--methods", "popularity", "--users", "10", "--candidates", "5"]
    assert main([*base, "--out", str(tmp_path / "auto")]) == 0
    assert main([*base, "--candidate-source", "impressions", "--out", str(tmp_path / "shown")]) == 0
    auto = json.loads((tmp_path / "auto" / "metrics.json").read_text())
    shown = json.loads((tmp_path / "shown" / "metrics.json").read_text())
    assert (auto["candidates"]["source"], auto["candidates"]["evaluated"]) == ("uniform", 5)
    assert (shown["candidates"]["source"], shown["candidates"]["evaluated"]) == ("impressions", 3)
    assert "never clicked (--candidate-source impressions)" in (tmp_path / "shown" / "report.md").read_text()

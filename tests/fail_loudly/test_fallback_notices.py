"""`recgraph recommend` names its fallbacks: which agents fell back, and whether the ranking itself is a
fallback's."""

from __future__ import annotations

from recgraph.cli import main
from tests.fail_loudly.scripted import ENDPOINT, CandidateEcho
from tests.fakes import install


def recommend_args(*extra: str) -> list[str]:
    """`recgraph recommend` of vanilla_llm for user 1 over 5 candidates."""
    return ["recommend", "--method", "vanilla_llm", "--user", "1", "--candidates", "5", *extra]


def test_recommend_says_when_its_ranking_is_a_fallback(monkeypatch, capsys) -> None:
    llm = ["--llm", "openai:gpt-4o-mini", "--base-url", ENDPOINT, "--llm-retries", "1"]
    install(monkeypatch, CandidateEcho(plan=["bad", "bad"]))
    assert main(recommend_args(*llm)) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert (
        "FALLBACK: 1 of 1 agent answers did not come from the LLM but from the agents' deterministic "
        "fallbacks after every attempt failed: vanilla_llm_ranker (malformed_json ×2)." in printed
    )
    assert "The ranking itself is vanilla_llm_ranker's fallback ordering, not the LLM's." in printed

    install(monkeypatch, CandidateEcho(plan=["bad", "ok"]))
    assert main(recommend_args(*llm)) == 0
    assert "FALLBACK" not in capsys.readouterr().out

    assert main(recommend_args()) == 0  # heuristic: the title says no LLM; nothing failed
    assert "FALLBACK" not in capsys.readouterr().out


def test_fallback_notice_names_only_the_agents_that_fell_back() -> None:
    from recgraph.recommend_notes import fallback_notice

    usage = [
        {"agent": "user_understanding", "source": "fallback", "errors": {"timeout": 3}},
        {"agent": "nli", "source": "llm", "errors": {}},
        {"agent": "item_ranker", "source": "llm", "errors": {"http_429": 1}},
    ]
    notice = fallback_notice(usage)
    assert notice is not None and notice.startswith("FALLBACK: 1 of 3 agent answers")
    assert "user_understanding (timeout ×3)" in notice and "ranking itself" not in notice
    assert fallback_notice([{**row, "source": "heuristic"} for row in usage]) is None

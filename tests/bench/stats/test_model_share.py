"""How much of a ranking the model decided: per position, model / repair / fallback; per user in the
ranker's usage record, its blackboard post and results.jsonl; per method in metrics.json and the
tables; the warning after the table and the --fallback-fail exit. Scripted models only: no network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

from agents.base import run_agent
from agents.ranking import ranking_origin, with_ranking_origin
from agents.validation import own_ids
from bench.stats.fallbacks import EXIT_TOO_MANY_FALLBACKS, check_fallbacks, format_model_share, not_chosen
from bench.stats.method_summary import method_metrics
from graphs.baselines.llm import vanilla_llm_graph
from prompts.common import CANDIDATES_HEADER
from recgraph.cli import main
from state.context import Context
from tests.fakes import SchemaRoutedModel, ScriptedChatModel, install
from tests.test_agent_loop import answer, task

CONTEXT = Context(llm="openai:gpt-4o-mini", llm_backoff=0.0, llm_retries=0)
TEN = ["1", "50", "181", "100", "258", "7", "98", "127", "174", "172"]
"""Ten ml-100k items a scripted model ranks."""
ENDPOINT = "http://llm.test/v1"
WARNING = (
    "WARNING: more than 20.0% of the top-5 positions did not come from the model in vanilla_llm 60.0% "
    "(repair 60.0%, fallback 0.0%): validation appended them in the seeded left-out order or a fallback "
    "answered, so these rows are largely heuristic rankings, not LLM results."
)
FAILURE = (
    "recgraph: error: top-5 positions not chosen by the model above 50.0% for vanilla_llm 60.0% (the run "
    "fails); the outputs are written; see ranking_origin in metrics.json, or pass --allow-fallbacks to "
    "accept them"
)


def test_origin_counts_each_head_of_the_ranking() -> None:
    ranking = ["b", "a", "c", "d", "e", "f"]
    assert ranking_origin(ranking, ["b", "a"], "llm") == {
        "source": "llm",
        "top1": {"model": 1, "repair": 0, "fallback": 0},
        "top5": {"model": 2, "repair": 3, "fallback": 0},
        "all": {"model": 2, "repair": 4, "fallback": 0},
    }
    for source in ("fallback", "heuristic"):  # the deterministic answer decided every position
        origin = ranking_origin(ranking, [], source)
        assert origin["top5"] == {"model": 0, "repair": 0, "fallback": 5} and origin["source"] == source


def test_own_ids_are_the_models_ids_that_validation_kept() -> None:
    assert own_ids([" b", "ghost", "b", "a"], ["b", "a", "d", "c"]) == ["b", "a"]
    assert own_ids([], ["a"]) == []


def test_the_agent_records_the_ids_its_model_placed(monkeypatch) -> None:
    ranker = task()
    ranker.ranked_ids = lambda ranked: ranked.ranking
    install(monkeypatch, ScriptedChatModel(script=[answer(["c", "ghost", "c"])]))
    usage = run_agent(ranker, CONTEXT).usage
    assert usage.source == "llm" and usage.model_ids == ["c"]
    assert usage.repair_kinds == {"unknown_id": 1, "duplicate_id": 1, "missing_id": 3}
    assert usage.as_dict()["model_ids"] == ["c"]

    install(monkeypatch, ScriptedChatModel(script=["not json"]))
    assert run_agent(ranker, CONTEXT).usage.model_ids == []  # the fallback answered
    assert run_agent(ranker, Context(llm="heuristic")).usage.model_ids == []
    assert run_agent(task(), Context(llm="heuristic")).usage.model_ids is None  # not a ranker


def test_a_model_naming_two_of_ten_ids_decides_two_of_the_top_five(monkeypatch) -> None:
    install(monkeypatch, ScriptedChatModel(script=[answer(["181", "7"])]))
    output = vanilla_llm_graph.invoke({"user_id": "1", "candidates": TEN}, context=CONTEXT)
    assert output["ranking"][:2] == ["181", "7"] and sorted(output["ranking"]) == sorted(TEN)
    record = output["usage"][0]
    assert record["model_ids"] == ["181", "7"] and record["repair_kinds"] == {"missing_id": 8}
    assert record["ranking_origin"] == {
        "source": "llm",
        "top1": {"model": 1, "repair": 0, "fallback": 0},
        "top5": {"model": 2, "repair": 3, "fallback": 0},
        "all": {"model": 2, "repair": 8, "fallback": 0},
    }
    post = output["trace"][-1]
    assert post["role"] == "vanilla_llm_ranker" and post["content"].startswith("[llm]")
    assert post["content"].endswith(
        " · the model placed 2 of the top 5 (2 of 10 in all); validation appended the other 8 in the "
        "seeded left-out order"
    )


def test_a_heuristic_ranking_is_all_fallback_and_its_post_is_unchanged() -> None:
    output = vanilla_llm_graph.invoke({"user_id": "1", "candidates": TEN}, context=Context(llm="heuristic"))
    assert output["usage"][0]["ranking_origin"]["all"] == {"model": 0, "repair": 0, "fallback": 10}
    assert "the model placed" not in output["trace"][-1]["content"]


def test_the_origin_goes_to_the_rankers_record_and_post_only() -> None:
    update = {
        "ranking": ["a", "b", "c"],
        "usage": [{"agent": "other", "source": "llm"}, {"agent": "rank", "source": "llm"}],
        "trace": [{"role": "rank", "content": "[llm] done"}, {"role": "other", "content": "x"}],
    }
    changed = with_ranking_origin(update, ["b", "a", "c"], "rank")
    assert "ranking_origin" not in changed["usage"][0] and "ranking_origin" not in update["usage"][1]
    assert changed["usage"][1]["ranking_origin"]["all"] == {"model": 3, "repair": 0, "fallback": 0}
    assert changed["trace"][0]["content"] == "[llm] done · the model placed all 3"
    assert changed["trace"][1] == update["trace"][1]
    assert with_ranking_origin(update, None, "rank") is update  # not a ranker: untouched


def user_record(origin: dict[str, Any] | None, user: str = "u") -> dict[str, Any]:
    """A results.jsonl record with only what `method_metrics` reads."""
    counts = (
        "llm_attempts",
        "llm_calls",
        "llm_answers",
        "input_tokens",
        "output_tokens",
        "fallbacks",
        "repairs",
    )
    usage = {**dict.fromkeys(counts, 0), "est_cost_usd": 0.0, "tokens_estimated": False, "errors": {}}
    usage["repair_kinds"] = {}
    record = {"user_id": user, "metrics": {"hit@1": 1.0}, "usage": usage, "agents": {}, "seconds": 1.0}
    return {**record, "ranking_origin": origin} if origin is not None else record


def test_method_share_is_over_positions_of_all_users() -> None:
    two = ranking_origin([str(i) for i in range(10)], ["0", "1"], "llm")
    five = ranking_origin([str(i) for i in range(10)], ["0", "1", "2", "3", "4"], "llm")
    row = method_metrics([user_record(two, "a"), user_record(five, "b")])
    assert row["model_share"] == {"top1": 1.0, "top5": 0.7, "all": 0.35}
    assert row["ranking_origin"]["top5"] == {"model": 7, "repair": 3, "fallback": 0}
    assert (row["ranking_origin"]["rankings"], row["ranking_origin"]["asked_llm"]) == (2, 2)
    assert not_chosen(row) == {"share": 0.3, "repair": 0.3, "fallback": 0.0}
    assert format_model_share(row) == "70.0%"
    assert "model_share" not in method_metrics([user_record(None)])  # classic: no LLM ranker


def test_heuristic_rankings_show_a_dash_and_never_warn() -> None:
    heuristic = ranking_origin([str(i) for i in range(10)], [], "heuristic")
    row = method_metrics([user_record(heuristic)])
    assert row["model_share"] == {"top1": 0.0, "top5": 0.0, "all": 0.0}
    assert not_chosen(row) is None and format_model_share(row) == "–"
    check = check_fallbacks({"vanilla_llm": row}, repair_warn_above=0.0, fail_above=0.0)
    assert check.not_chosen_warned == {} and not check.fails


def test_not_chosen_thresholds_are_strict() -> None:
    rows = {
        name: method_metrics([user_record(ranking_origin([str(i) for i in range(10)], ids, "llm"))])
        for name, ids in {"at": ["0", "1", "2", "3"], "above": ["0", "1"]}.items()
    }  # at: 1 of the top 5 not chosen (20%); above: 3 of 5 (60%)
    check = check_fallbacks(rows, repair_warn_above=0.2, fail_above=0.6)
    assert list(check.not_chosen_warned) == ["above"] and check.not_chosen_failed == {} and not check.fails
    assert check_fallbacks(rows, fail_above=0.5).fails
    assert not check_fallbacks(rows, fail_above=0.5, allowed=True).fails


def two_of_the_candidates(messages: list[BaseMessage]) -> str:
    """A weak model's answer: the first two ids of the prompt's candidate list, nothing else."""
    lines = str(messages[-1].content).split(CANDIDATES_HEADER, 1)[1].splitlines()
    ids = [line[1 : line.index("]")] for line in lines if line.startswith("[")]
    return json.dumps({"ranking": ids[:2], "reason": "these two"})


def bench_args(out: Path, *extra: str) -> list[str]:
    """vanilla_llm on four ml-100k users, N=10, one attempt per answer."""
    return ["bench", "--methods", "vanilla_llm", "--llm", "openai:gpt-4o-mini", "--base-url", ENDPOINT,
            "--users", "4", "--candidates", "10", "--concurrency", "1", "--llm-retries", "0",
            "--out", str(out), *extra]  # fmt: skip


def test_bench_warns_and_fails_on_a_model_naming_two_of_ten(tmp_path: Path, monkeypatch, capsys) -> None:
    model = install(monkeypatch, SchemaRoutedModel(answers={"RankedList": two_of_the_candidates}))
    assert main(bench_args(tmp_path / "fails")) == EXIT_TOO_MANY_FALLBACKS
    # 4 for the run, 4 for the cost probe before it (a hosted run of <= 10 users is probed on all of
    # them under the loopback simulator, which this fake answers too: it stands in for every backend)
    assert len(model.calls) == 8
    captured = capsys.readouterr()
    assert FAILURE in captured.err
    printed = " ".join(captured.out.split())
    assert WARNING in printed
    table, after = printed.split("req: LLM requests sent", 1)
    assert WARNING not in table and WARNING in after  # said after the table
    assert "vanilla_llm" in table and "40.0%" in table  # the model@5 column

    document = json.loads((tmp_path / "fails" / "metrics.json").read_text())
    row = document["methods"]["vanilla_llm"]
    assert row["model_share"] == {"top1": 1.0, "top5": 0.4, "all": 0.2}
    assert row["fallback_share"] == 0.0 and row["repair_kinds"] == {"missing_id": 32}
    assert row["ranking_origin"]["top5"] == {"model": 8, "repair": 12, "fallback": 0}
    failed = {"vanilla_llm": {"share": 0.6, "repair": 0.6, "fallback": 0.0}}
    assert document["fallbacks"]["not_chosen_failed"] == failed
    records = [json.loads(line) for line in (tmp_path / "fails" / "results.jsonl").read_text().splitlines()]
    users = [r for r in records if "ranking_origin" in r]
    assert len(users) == 4 and all(r["ranking_origin"]["top5"]["model"] == 2 for r in users)
    report = (tmp_path / "fails" / "report.md").read_text()
    assert f"> **{WARNING}**" in report and "| model@5 |" in report and "| 40.0% |" in report

    install(monkeypatch, SchemaRoutedModel(answers={"RankedList": two_of_the_candidates}))
    assert main(bench_args(tmp_path / "raised", "--fallback-fail", "0.6")) == 0  # 60% is not above 60%
    install(monkeypatch, SchemaRoutedModel(answers={"RankedList": two_of_the_candidates}))
    assert main(bench_args(tmp_path / "allowed", "--allow-fallbacks")) == 0
    assert "allowed by --allow-fallbacks" in " ".join(capsys.readouterr().out.split())
    install(monkeypatch, SchemaRoutedModel(answers={"RankedList": two_of_the_candidates}))
    assert main(bench_args(tmp_path / "quiet", "--repair-warn", "0.6", "--fallback-fail", "0.6")) == 0
    assert "WARNING" not in capsys.readouterr().out


def test_heuristic_bench_labels_the_share_and_does_not_warn(tmp_path: Path, capsys) -> None:
    args = ["bench", "--methods", "vanilla_llm,popularity", "--users", "3", "--out", str(tmp_path)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "WARNING" not in printed
    document = json.loads((tmp_path / "metrics.json").read_text())
    assert document["methods"]["vanilla_llm"]["model_share"] == {"top1": 0.0, "top5": 0.0, "all": 0.0}
    assert document["methods"]["vanilla_llm"]["ranking_origin"]["asked_llm"] == 0
    assert "model_share" not in document["methods"]["popularity"]
    assert document["fallbacks"]["not_chosen_warned"] == {}
    lines = printed.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["method", "hit@1"])
    row = next(line.split() for line in lines[header:] if line.lstrip().startswith("vanilla_llm"))
    assert lines[header].split()[-2:] == ["model@5", "s/u"] and row[-2] == "–"


def test_recommend_says_when_validation_appended_most_of_the_ranking(monkeypatch, capsys) -> None:
    install(monkeypatch, SchemaRoutedModel(answers={"RankedList": two_of_the_candidates}))
    llm = ["--llm", "openai:gpt-4o-mini", "--base-url", ENDPOINT, "--llm-retries", "0"]
    assert main(["recommend", "--method", "vanilla_llm", "--user", "1", "--candidates", "10", *llm]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert (
        "REPAIR: the model placed 2 of the 10 ranked items (2 of the top 5); validation appended the "
        "other 8 in vanilla_llm_ranker's fallback order." in printed
    )

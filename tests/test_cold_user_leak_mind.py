"""No leakage under cold_user on MIND-style data, whose loader fixes the split itself (the presplit
branch of `world/evaluation_world.py:without_hidden`): three news occur ONLY in the hidden part of
the two evaluated users' click histories (everything before their last 3 visible clicks); the
classic baselines' training matrix and popularity, and AMEM4Rec's pool (its windows and every
version of its memories), never hold them, and neither do the candidates."""

from __future__ import annotations

from pathlib import Path

from bench.protocol.plan import evaluation_context, plan_cases_for
from bench.protocol.spec import Protocol
from bench.run.runner import run_benchmark
from state.context import Context
from tests.test_cold_user_leak import PLANTED, assert_pool_never_holds_planted
from world.environment import get_environment
from world.results_log import ResultsLog

TITLES = {f"N{k}": f"Headline number {k}" for k in range(1, 31)}
EVALUATED = {  # history column, then the impression holding the last click (the target)
    "a": (["N1", "p1", "N2", "p2", "N3", "p3", "N4", "N5", "N6"], "N7"),
    "b": (["N8", "p2", "p1", "N12", "N13", "p3", "N9", "N10", "N11"], "N14"),
}
OTHERS = {f"u{n}": [f"N{(n * 5 + k * 3) % 18 + 1}" for k in range(8)] for n in range(1, 9)}
SHOWN = " ".join(f"N{k}-0" for k in range(20, 31))  # never clicked by anyone


def write_mind(folder: Path) -> str:
    """The planted MIND folder (`behaviors.tsv`, `news.tsv`); returns its path."""
    folder.mkdir(parents=True)
    news = [f"{i}\tnews\tnewsus\t{t}\tAbstract." for i, t in {**TITLES, **PLANTED}.items()]
    (folder / "news.tsv").write_text("\n".join(news) + "\n", encoding="utf-8")
    lines = [
        f"{n}\t{user}\t11/11/2019 9:00:00 AM\t{' '.join(history)}\t{target}-1 {SHOWN}"
        for n, (user, (history, target)) in enumerate(EVALUATED.items(), 1)
    ]
    lines += [
        f"{n}\t{user}\t11/12/2019 9:00:00 AM\t{' '.join(items[:-1])}\t{items[-1]}-1 {SHOWN}"
        for n, (user, items) in enumerate(OTHERS.items(), 10)
    ]
    (folder / "behaviors.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(folder)


def test_cold_user_on_mind_trains_nothing_on_the_hidden_clicks(tmp_path: Path) -> None:
    data = write_mind(tmp_path / "MINDplanted")
    env = get_environment(data)
    assert env.dataset.presplit is not None and set(EVALUATED) <= set(env.dataset.presplit)
    for user in EVALUATED:  # the planted news are hidden (before the last 3), never visible
        hidden = {e.item_id for e in env.cases[user].before_target()[:-3]}
        assert set(PLANTED) <= hidden and not set(PLANTED) & set(env.history(user, "cold_user"))
    protocol = Protocol(dataset=data, candidates=5, seed=0, scenario="cold_user", users=2)
    cases = plan_cases_for(env, protocol, sorted(EVALUATED))
    assert not any(set(PLANTED) & set(case.candidates) for case in cases)  # the users clicked them
    methods = ["itemknn", "popularity", "amem4rec"]
    (tmp_path / "out").mkdir()
    log = ResultsLog(tmp_path / "out" / "results.jsonl", protocol.as_dict())
    results = run_benchmark(methods, cases, protocol, log, 2, Context(dataset=data))
    assert all(results[m]["users"] == 2 for m in methods)

    world = get_environment(evaluation_context(Context(dataset=data), protocol, cases).dataset)
    assert world.dataset.name != env.dataset.name  # the scenario's own world
    rows = world.item_rows(PLANTED)
    assert world.train_matrix[:, rows].nnz == 0
    assert all(world.popularity.get(item, 0) == 0 for item in PLANTED)
    for user in EVALUATED:
        fixed = world.dataset.presplit[user]  # type: ignore[index]
        assert not set(PLANTED) & {*fixed.history, fixed.valid, fixed.target}

    assert_pool_never_holds_planted(results["amem4rec"]["training"]["pool"], world, 3)

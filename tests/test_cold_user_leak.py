"""No leakage under cold_user: nothing a run trains (AMEM4Rec's pool, MemRec's memory graph, the
classic baselines' models) reads an interaction the scenario hides from a user it evaluates
(world/evaluation_world.py).

The test plants three items that occur ONLY in the hidden part (everything before the last 3
items) of the two evaluated users' histories, runs the bench under cold_user, and looks for them in
everything the run built and every prompt it wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agents.base
import bench.run.runner
from agents.amem4rec.windows import window_items
from agents.baselines.classic import bpr_cache_path
from bench.protocol.plan import plan_cases_for
from bench.protocol.spec import Protocol
from bench.run.runner import run_benchmark
from state.context import Context
from tools.amem4rec.folder import open_pool
from tools.memrec.graph import MemoryGraph, item_node
from world.environment import get_environment
from world.results_log import ResultsLog

PLANTED = {"p1": "Quuxolith Meridian", "p2": "Vorpalune Cascade", "p3": "Zibbertown Requiem"}
"""Items only the evaluated users' hidden histories hold: id -> title."""
GENRES = ["Drama", "Comedy", "Action", "Sci-Fi", "Romance", "Thriller"]
TITLES = [
    "Harbor Lights", "Iron Comet", "Laughing Gas", "Quiet Orchard", "Starfall", "Paper Hearts",
    "Dust Storm", "Night Shift", "Galaxy Drift", "Holiday Mixup", "Silent River", "Robot Revolt",
    "Blue Canyon", "Last Train", "Winter Tale", "Copper Sky", "Glass Garden", "Red Lantern",
]  # fmt: skip
EVALUATED = {
    # cold_user shows the last 3 before the target (here 4, 5, 6 / 9, 10, 11); p3 sits where
    # MemRec's initial user memory quotes the three most recent training titles.
    "a": ["1", "p1", "2", "p2", "3", "p3", "4", "5", "6", "7"],
    "b": ["8", "p2", "p1", "12", "13", "p3", "9", "10", "11", "14"],
}
OTHERS = {
    f"u{n}": [str((n * 5 + k * 3) % 18 + 1) for k in range(8)] for n in range(1, 9)
}  # eight users with eight catalog items each, none planted


def write_planted(folder: Path) -> str:
    """The planted catalog as RecBole atomic files; returns its path."""
    folder.mkdir(parents=True)
    items = ["item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq"]
    items += [
        f"{n + 1}\t{t}\t199{n % 10}\t{GENRES[n % 6]} {GENRES[(n + 2) % 6]}" for n, t in enumerate(TITLES)
    ]
    items += [f"{item}\t{title}\t1990\tDrama" for item, title in PLANTED.items()]
    (folder / "planted.item").write_text("\n".join(items) + "\n")
    rows = ["user_id:token\titem_id:token\trating:float\ttimestamp:float"]
    for user, history in {**EVALUATED, **OTHERS}.items():
        rows += [f"{user}\t{item}\t4\t{100 * (n + 1)}" for n, item in enumerate(history)]
    (folder / "planted.inter").write_text("\n".join(rows) + "\n")
    return str(folder)


def assert_pool_never_holds_planted(pool_path: str, world: Any, window: int) -> None:
    """No AMEM4Rec memory (any version) names a planted item and no trained window holds one."""
    pool = open_pool(pool_path, world.dataset)
    memories = pool.memories()
    assert memories, "the pool trained on the other users' windows"
    for memory in memories.values():
        versions = [
            memory.text(),
            *(f"{h['behavior_explanation']} {h['pattern_description']}" for h in pool.history(memory.id)),
        ]
        assert not any(mentions_planted(text) for text in versions), memory.id
    for entry in pool.ledger():
        user, start = entry["window_key"].rsplit(":", 1)
        assert not set(window_items(world, user, int(start), window)) & set(PLANTED), entry


def mentions_planted(text: str) -> list[str]:
    """The planted titles `text` mentions."""
    return [title for title in PLANTED.values() if title.lower() in text.lower()]


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Every prompt an agent is asked (with the dataset its context names) and the context each
    method is ranked with."""
    seen: dict[str, Any] = {"prompts": [], "contexts": {}}
    loop, run_method = agents.base.agent_loop, bench.run.invoke.run_method

    def recording_loop(task: Any, context: Context, step: int) -> Any:
        text = "\n".join(str(message.content) for message in task.messages)
        seen["prompts"].append((task.agent, context.dataset, text))
        return loop(task, context, step)

    async def recording_run(
        method: str,
        cases: Any,
        protocol: Any,
        log: Any,
        concurrency: int,
        context: Context,
        *rest: Any,
        **kw: Any,
    ) -> None:
        seen["contexts"][method] = context
        await run_method(method, cases, protocol, log, concurrency, context, *rest, **kw)

    monkeypatch.setattr(agents.base, "agent_loop", recording_loop)
    monkeypatch.setattr(bench.run.runner, "run_method", recording_run)
    return seen


def test_cold_user_trains_nothing_on_the_hidden_history(tmp_path: Path, recorded: dict[str, Any]) -> None:
    data = write_planted(tmp_path / "planted")
    env = get_environment(data)
    for user in EVALUATED:  # the planted items are hidden (before the last 3), never visible
        hidden = {e.item_id for e in env.cases[user].before_target()[:-3]}
        assert set(PLANTED) <= hidden and not set(PLANTED) & set(env.history(user, "cold_user"))
    protocol = Protocol(dataset=data, candidates=5, seed=0, scenario="cold_user", users=2)
    cases = plan_cases_for(env, protocol, sorted(EVALUATED))
    methods = ["itemknn", "bpr", "popularity", "memrec", "amem4rec"]
    (tmp_path / "out").mkdir()
    log = ResultsLog(tmp_path / "out" / "results.jsonl", protocol.as_dict())
    results = run_benchmark(methods, cases, protocol, log, 2, Context(dataset=data))
    assert all(results[m]["users"] == 2 for m in methods)
    contexts = recorded["contexts"]

    for method in ("itemknn", "bpr", "popularity"):
        world = get_environment(contexts[method].dataset)
        rows = world.item_rows(PLANTED)
        assert world.train_matrix[:, rows].nnz == 0, method
        assert all(world.popularity.get(item, 0) == 0 for item in PLANTED), method
    knn = get_environment(contexts["itemknn"].dataset).peek("itemknn:50")
    assert knn is not None and knn[rows].nnz == 0 and knn[:, rows].nnz == 0  # co-occurrence rows empty
    bpr_world = get_environment(contexts["bpr"].dataset)
    assert bpr_cache_path(bpr_world, contexts["bpr"]).is_file()  # the factors fitted on that matrix

    memrec = contexts["memrec"]
    world = get_environment(memrec.dataset)
    graph = MemoryGraph.open(world, memrec.memrec_memory)
    planted_rows = set(world.item_rows(PLANTED).tolist())
    assert not planted_rows & set(graph.user_items.tolist())  # no user -> planted edge
    assert all(graph.item_ptr[r] == graph.item_ptr[r + 1] for r in planted_rows)  # no planted -> user edge
    nodes = [f"u:{u}" for u in world.user_ids] + [f"i:{i}" for i in world.item_ids if i not in PLANTED]
    texts = graph.memories(nodes)
    assert {node: mentions_planted(text) for node, (text, _) in texts.items() if mentions_planted(text)} == {}
    assert all(version == 0 for _, version in graph.memories([item_node(i) for i in PLANTED]).values())

    amem = contexts["amem4rec"]
    world = get_environment(amem.dataset)
    assert_pool_never_holds_planted(amem.amem4rec_pool, world, amem.amem4rec_window)

    assert recorded["prompts"], "the run asked its agents"
    leaked = [(agent, text[:80]) for agent, _, text in recorded["prompts"] if mentions_planted(text)]
    assert leaked == []

"""`recgraph bench --workers N` runs the prepare steps ahead, in processes of their own: the plan
waits where steps share files, and the run ranks exactly as with every step in order."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from bench.run import prepare_ahead
from bench.run.prepare_ahead import PrepareAhead
from bench.run.prepare_plan import (
    ITEM_VECTORS,
    ITEM_VECTORS_COST,
    chain_costs,
    dependencies,
    plan_steps,
    start_order,
)
from bench.run.prepare_step import StepResult
from bench.run.runner import run_benchmark
from graphs.hooks import Prepared
from graphs.registry import METHODS
from graphs.router.ahead_parts import WORLD_MEMORIES, WORLD_MEMORIES_COST, WORLD_MODEL_COSTS
from state.context import Context
from state.router.context import RouterContext
from tests.baselines.test_trained import SMALL
from world.environment import get_environment
from world.results_log import ResultsLog
from world.synth import SynthSpec, generate
from world.synth_write import write_synth

RUN = ["popularity", "memrec", "memrec_no_write", "sasrec", "router_fixed", "gru4rec", "agentcf"]
"""A run with steps of one family, independent models, and a router whose prerequisites come
before and after it."""


def test_steps_wait_for_their_family_and_a_routers_prerequisites() -> None:
    after = dependencies(RUN, lambda method: Context(dataset="ml-100k"))
    assert "popularity" not in after  # no prepare hook: prepared in order by the parent
    assert after["memrec"] == () and after["sasrec"] == () and after["gru4rec"] == ()
    assert after["memrec_no_write"] == ("memrec",)  # one family: one after another
    # the router's prerequisites that the run benches, agentcf's although it comes later;
    # not memrec_no_write (the router reads memrec's memory), nor amem4rec/lightgcn (not in the run)
    assert after["router_fixed"] == ("memrec", "sasrec", "gru4rec", "agentcf")
    assert after["agentcf"] == ()


def test_learned_planners_train_ahead_beside_the_prerequisites() -> None:
    run = ["memrec", "router_learned", "router_learned_scenario", "router_learned_no_cost"]
    after = dependencies(run, lambda method: Context(dataset="ml-100k"))
    # the planner training waits for no prerequisite, only for the training world's three models
    # and memory vectors, each made in a step of its own that waits for nothing; the first one
    # writes the shared trajectories, then the other two train side by side
    parts = tuple(f"router_learned (training-world {m})" for m in ("sasrec", "gru4rec", "lightgcn"))
    parts += (f"router_learned ({WORLD_MEMORIES})",)
    assert all(after[part] == () for part in parts)
    assert after["router_learned (ahead)"] == parts
    assert after["router_learned_scenario (ahead)"] == ("router_learned (ahead)",)
    assert after["router_learned_no_cost (ahead)"] == ("router_learned (ahead)",)
    # each method's own step: its family, its prerequisites, then its planner
    assert after["router_learned"] == ("memrec", "router_learned (ahead)")
    no_cost = ("router_learned_scenario", "memrec", "router_learned_no_cost (ahead)")
    assert after["router_learned_no_cost"] == no_cost
    steps = plan_steps(run, [], Protocol(dataset="ml-100k"), Path("results.jsonl"),
                       lambda m: frozenset(), 2, lambda m: Context(dataset="ml-100k"))  # fmt: skip
    ahead = steps["router_learned (ahead)"]
    assert ahead.method == "router_learned" and ahead.name == "router_learned (ahead)" and ahead.hook
    assert ahead.after == (*parts, ITEM_VECTORS) and not steps["router_learned"].hook
    sasrec = steps[parts[0]]
    assert sasrec.method == "router_learned" and sasrec.part is not None and not sasrec.hook
    # the memory part reads item vectors: it waits for their one writer; the models read ids only
    assert steps[parts[3]].after == (ITEM_VECTORS,) and all(steps[p].after == () for p in parts[:3])
    assert sasrec.after == () and sasrec.row_prefix == parts[0]  # its rows are its own, beside the others'
    assert ahead.row_prefix == "router_learned"
    # the trainings of their own start in fresh processes; the methods' own steps in any
    assert ahead.fresh_process and all(steps[part].fresh_process for part in parts)
    assert not steps["router_learned"].fresh_process and not steps["memrec"].fresh_process
    # the parts head the longest chains of work: each its own estimate plus the planner training's
    # chain; the item vectors' runs through the memory part
    for name in parts:
        assert steps[name].chain_cost == steps[name].part.cost + ahead.chain_cost  # type: ignore[union-attr]
    assert steps[ITEM_VECTORS].chain_cost == ITEM_VECTORS_COST + steps[parts[3]].chain_cost
    assert ahead.chain_cost == max(s.chain_cost for n, s in steps.items() if n not in (*parts, ITEM_VECTORS))


def test_steps_reading_item_vectors_wait_for_them_to_be_embedded_once() -> None:
    cases: list = []
    steps = plan_steps(RUN, cases, Protocol(dataset="ml-100k"), Path("results.jsonl"),
                       lambda m: frozenset(), 2, lambda m: Context(dataset="ml-100k"))  # fmt: skip
    assert next(iter(steps)) == ITEM_VECTORS and steps[ITEM_VECTORS].after == ()
    assert ITEM_VECTORS in steps["memrec"].after and ITEM_VECTORS in steps["router_fixed"].after
    assert ITEM_VECTORS not in steps["sasrec"].after  # SASRec reads ids only: it starts at once
    # memrec, memrec_no_write, router_fixed wait for it; its longest chain is memrec's family
    # (router_fixed, the other step waiting for memrec, is estimated at the default 1 s)
    chain = ITEM_VECTORS_COST + METHODS["memrec"].prepare_cost + METHODS["memrec_no_write"].prepare_cost
    assert METHODS["memrec_no_write"].prepare_cost > METHODS["router_fixed"].prepare_cost
    assert steps[ITEM_VECTORS].chain_cost == chain


def test_a_methods_steps_add_up_to_its_one_time_work() -> None:
    ctx = Context(dataset="ml-100k")
    part = StepResult(
        Prepared(ctx, {"part": 1}), {"user-memory vectors": 19.5, "read ahead": 18.0}, 40.0, 38.0, 900.0
    )
    planner = StepResult(
        Prepared(ctx, {"planner_training": "trained"}),
        {"user-memory vectors": 0.5, "dpo": 16.0},
        200.0,
        180.0,
        1400.0,
    )
    merged = planner.after(part)
    # a phase both steps report is summed (19.5 + 0.5), the others kept; seconds summed, peak the larger
    assert merged.one_time_work == {"user-memory vectors": 20.0, "read ahead": 18.0, "dpo": 16.0}
    assert (merged.wall_seconds, merged.cpu_seconds, merged.process_peak_rss_mb) == (240.0, 218.0, 1400.0)
    assert merged.prepared.metrics == {"planner_training": "trained", "part": 1}


def test_chain_costs_follow_the_longest_chain_of_waiting_steps() -> None:
    after = {"a": (), "b": ("a",), "c": ("b",), "d": ("a", "c"), "e": ()}
    costs = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0, "e": 20.0}
    # d: 4; c: 3 + d; b: 2 + c; a: 1 + the larger of b's 9 and d's 4; e: alone
    assert chain_costs(after, costs.__getitem__) == {"a": 10.0, "b": 9.0, "c": 7.0, "d": 4.0, "e": 20.0}


def test_a_long_step_nothing_waits_for_starts_before_shorter_chains_earlier_in_the_run() -> None:
    run = ["memrec", "memrec_no_write", "chainrec_learned", "amem4rec", "amem4rec_no_similarity"]
    run += ["router_learned"]
    steps = plan_steps(run, [], Protocol(dataset="ml-100k"), Path("results.jsonl"),
                       lambda m: frozenset(), 2, lambda m: Context(dataset="ml-100k"))  # fmt: skip
    order = [step.name for step in start_order(steps.values())]
    # the training world's largest model heads the longest chain (it, then the planner training);
    # every part starts before the planner's step, the larger estimate first; the pool ablation that
    # trains apart from the others comes before the shorter memrec and chainrec chains that come
    # first in the run
    costs = {f"training-world {m}": cost for m, cost in WORLD_MODEL_COSTS.items()}
    costs[WORLD_MEMORIES] = WORLD_MEMORIES_COST
    parts = [f"router_learned ({name})" for name in sorted(costs, key=costs.__getitem__)]
    assert len(set(costs.values())) == len(costs)  # no tie: the order below is the estimates' alone
    assert order[0] == parts[-1]
    assert [order.index(p) for p in reversed(parts)] == sorted(order.index(p) for p in parts)
    assert max(order.index(p) for p in parts) < order.index("router_learned (ahead)")
    assert order.index("amem4rec_no_similarity") < order.index("chainrec_learned") < order.index("memrec")


def _ranked(path: Path) -> dict[tuple[str, str], list[str]]:
    """(method, user) -> the ranking, from a results log."""
    rows = map(json.loads, path.read_text().splitlines())
    return {(r["method"], r["user_id"]): r["ranking"] for r in rows if "ranking" in r}


def _untimed(row: dict, keys: set[str], run: str) -> object:
    """`row`'s `keys` without the figures that are measurements (seconds, rates, resident MB, MemRec's
    in-process clock and what its curation happened to read first), its run's folders named alike."""

    def strip(value: object) -> object:
        if isinstance(value, dict):
            timed = ("seconds", "_per_s", "_mb", "whole_run", "stage_w_user_memories_read", "read_ahead")
            return {k: strip(v) for k, v in value.items() if not any(t in k for t in timed)}
        return value

    text = json.dumps(strip({k: row[k] for k in keys}))
    return json.loads(text.replace(f"out{run}", "out").replace(f"home{run}", "home"))


SMALL_RUN = RouterContext(chainrec_train_tasks=3, chainrec_chain_cap=30, **SMALL)
"""The run's knobs: every trained model small (seconds to train), the planner on three tasks."""


@pytest.fixture(scope="module")
def synth_spec(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small title-only, order-only catalog."""
    data = generate(SynthSpec(users=50, items=60, interactions=600, timestamps=False, seed=3))
    return str(write_synth(data, tmp_path_factory.mktemp("ahead"))[0].parent)


def test_steps_ahead_rank_as_the_steps_in_order(
    synth_spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    protocol = Protocol(dataset=synth_spec, candidates=5, users=6)
    cases = plan_cases(get_environment(synth_spec), protocol)
    runs = {}
    run = ["popularity", "memrec", "memrec_no_write", "sasrec", "agentcf"]
    run += ["router_learned", "router_learned_no_cost"]
    # Every step process is retired after its step (as one holding too much memory would be), so
    # each step runs in a fresh process: the rankings do not change
    monkeypatch.setattr(prepare_ahead, "RETIRE_RSS_MB", -1.0)
    started: list[int] = []
    new_process = PrepareAhead._new_process
    monkeypatch.setattr(PrepareAhead, "_new_process", lambda self: started.append(1) or new_process(self))
    for workers in (1, 2):
        monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / f"home{workers}"))  # nothing shared
        out = tmp_path / f"out{workers}"
        out.mkdir()
        log = ResultsLog(out / "results.jsonl", protocol.as_dict())
        rows: list[tuple[str, int, int]] = []  # (label, done, total) of every progress row
        results = run_benchmark(
            run, cases, protocol, log, 2, replace(SMALL_RUN, dataset=synth_spec), None,
            lambda *row, rows=rows: rows.append(row), workers=workers,
        )  # fmt: skip
        runs[workers] = (results, _ranked(log.path), rows)
    (serial, serial_ranked, _), (ahead, ahead_ranked, rows) = runs[1], runs[2]
    assert ahead_ranked == serial_ranked and len(serial_ranked) == len(run) * len(cases)
    for method in run:  # every quality figure (timings and MemRec's in-process clock aside)
        same = {k for k in serial[method] if k not in ("setup_seconds", "seconds_per_user", "whole_run")}
        same -= {k for k in same if k.startswith("stage_w_user_memories_read")}
        assert _untimed(ahead[method], same, "2") == _untimed(serial[method], same, "1"), method
    memrec = ahead["memrec"]["setup_seconds"]
    assert memrec["prepared"] == "ahead" and memrec["prepare_cpu"] > 0.0 and memrec["process_peak_rss_mb"] > 0
    assert all(ahead[m]["setup_seconds"]["waited"] >= 0.0 for m in run if m != "popularity")
    assert "Stage W" in memrec["one_time_work"]  # the step's own phases, named without the prefix
    assert ahead["popularity"]["setup_seconds"]["prepared"] == "in order"
    assert serial["memrec"]["setup_seconds"]["prepared"] == "in order"
    assert any(label == "memrec · Stage W" for label, _, _ in rows)  # the step's rows reached the parent
    # 13 steps (the item vectors, 6 methods', 2 planners ahead, the training world's 3 models and its
    # memory vectors): 2 processes, then one more after each step (the last one's may come after the
    # run closed)
    assert len(started) >= 2 + 12
    # the learned routers' planners trained ahead, and their methods' steps found the checkpoints
    # (one per cost weight, as in order) instead of training another
    learned = ahead["router_learned"]["setup_seconds"]["one_time_work"]
    assert "trajectories" in learned and "dpo" in learned
    # the training world's models trained in steps of their own, counted in router_learned's
    # one-time work as in order (where the planner's step trains them itself)
    serial_work = serial["router_learned"]["setup_seconds"]["one_time_work"]
    assert {"sasrec training", "gru4rec training", "lightgcn training"} <= learned.keys() & serial_work.keys()
    assert any(
        label == "router_learned (training-world lightgcn) · lightgcn training" for label, _, _ in rows
    )
    assert any(label == f"router_learned ({WORLD_MEMORIES}) · read ahead" for label, _, _ in rows)
    assert "read ahead" in learned and "read ahead" not in serial_work  # the part's, counted
    checkpoints = {
        workers: sorted(
            p.parent.name
            for p in Path(results["router_learned"]["planner_training"]["checkpoint"]).parent.glob(
                "*/config.json"
            )
        )
        for workers, (results, _, _) in runs.items()
    }
    assert checkpoints[2] == checkpoints[1] and len(checkpoints[1]) == 2

"""`bench perf`: the client floor (a method's requests replayed by a bare ChatOpenAI), the default
latency, and the generic extras table."""

import json
import operator
from pathlib import Path
from typing import Annotated, TypedDict

import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, StateGraph

from bench.run.client_floor import RequestRecorder, plan_depth
from bench.run.perf import details_means
from recgraph.cli import build_parser, main
from recgraph.perf_command import extras_table
from tests.fakes import ScriptedChatModel

FORMAT = {"response_format": {"type": "json_schema", "json_schema": {"name": "Answer", "schema": {}}}}


class Trail(TypedDict):
    seen: Annotated[list[str], operator.add]


def test_recorder_keeps_the_dependency_shape_and_exact_requests() -> None:
    first, second, third = (ScriptedChatModel(script=["x"] * 2) for _ in range(3))

    def retrying(state: Trail, config) -> dict:  # two attempts of one agent: a chain
        first.invoke([HumanMessage("a1")], config=config)
        first.invoke([HumanMessage("a2")], config=config)
        return {"seen": ["a"]}

    def parallel(state: Trail, config) -> dict:
        second.invoke([HumanMessage("b")], config=config)
        return {"seen": ["b"]}

    def after(state: Trail, config) -> dict:
        third.bind(extra_body=FORMAT).invoke([HumanMessage("c")], config=config)
        return {"seen": ["c"]}

    builder = StateGraph(Trail)
    builder.add_node("retrying", retrying)
    builder.add_node("parallel", parallel)
    builder.add_node("after", after)
    builder.add_edge(START, "retrying")
    builder.add_edge(START, "parallel")
    builder.add_edge(["retrying", "parallel"], "after")
    builder.add_edge("after", END)
    recorder = RequestRecorder()
    builder.compile().invoke({"seen": []}, config={"callbacks": [recorder]})

    plan = recorder.plan()
    assert len(plan) == 2
    first_step = sorted(plan[0], key=len)
    assert [[r.messages[0].content for r in chain] for chain in first_step] == [["b"], ["a1", "a2"]]
    assert all(r.extra_body is None for chain in first_step for r in chain)
    [[only]] = plan[1]
    assert only.messages[0].content == "c" and only.extra_body == FORMAT
    assert plan_depth(plan) == 3


def test_details_means_average_numeric_fields_over_every_user() -> None:
    outputs = [{"details": {"steps": 3, "budget_stops": True, "tools": ["a"]}}, {"details": {"steps": 1}}, {}]
    assert details_means(outputs) == {"steps": pytest.approx(4 / 3), "budget_stops": pytest.approx(1 / 3)}


def test_extras_table_lists_whatever_a_method_adds_flattened() -> None:
    report = {
        "methods": {
            "m": {
                "efficiency": 0.9,
                "users": 4,
                "training": {"windows_per_s": 2.5, "actions": {"add": 3}},
                "details_mean_per_user": {"steps": 2.0},
                "tools": ["x"],
            },
        }
    }
    table = extras_table(report)
    figures = list(table.columns[1]._cells)
    values = list(table.columns[2]._cells)
    assert figures == ["training.windows_per_s", "training.actions.add", "details_mean_per_user.steps"]
    assert values == ["2.500", "3", "2.000"]


def test_perf_defaults_to_hosted_latency() -> None:
    assert build_parser().parse_args(["bench", "perf"]).latency == 1.0


def test_perf_replays_the_methods_requests_as_the_client_floor(tmp_path: Path) -> None:
    args = [
        "bench",
        "perf",
        "--methods",
        "arag",
        "--users",
        "4",
        "--latency",
        "0.05",
        "--concurrency",
        "2",
        "--out",
        str(tmp_path),
    ]
    assert main(args) == 0
    report = json.loads((tmp_path / "perf.json").read_text())
    assert report["machine"]["cpus"] >= 1  # the load the figures were measured under
    assert len(report["machine"]["load_avg_start"]) == len(report["machine"]["load_avg_end"]) == 3
    row = report["methods"]["arag"]
    # ARAG: four agents, two of them in one superstep -> the floor keeps depth 3 with 4 calls
    assert row["client_floor_depth"] == row["critical_path_depth"] == 3
    assert row["client_floor_llm_calls_per_user"] == row["llm_calls_per_user"] == 4
    assert row["client_floor_sampled_users"] == 2
    assert row["llm_errors_per_user"] == 0  # no faults in perf: a retry would lengthen the path
    assert row["client_floor_input_tokens_per_user"] == pytest.approx(row["input_tokens_per_user"], rel=0.2)
    assert row["efficiency_vs_client"] == pytest.approx(
        row["throughput_users_per_s"] / row["client_floor_users_per_s"]
    )
    assert 0 < row["client_floor_efficiency"] <= 1.05


def test_item_lines_are_memoised_on_the_fields_they_show() -> None:
    from prompts.common import described_item, item_line
    from world.data import Dataset, Item

    first = Dataset("d", {"7": Item("7", "A <b> title", ("Drama",), attributes={"year": "1999"})}, [])
    second = Dataset("d", {"7": Item("7", "Other", ["Comedy", "Drama"], attributes={"year": "2001"})}, [])
    assert item_line(first, "7") == described_item("7", "A <b> title", "1999", ("Drama",), 100)
    assert item_line(first, "7") == '[7] "A \\u003cb\\u003e title" (1999) | categories: "Drama"'
    # same id in another dataset (and a list of categories, as a loader may give): its own line
    assert item_line(second, "7") == '[7] "Other" (2001) | categories: "Comedy", "Drama"'


def test_perf_timeout_leaves_room_beyond_the_simulated_latency() -> None:
    from bench.run.perf import PERF_TIMEOUT_SLACK_S, perf_context
    from state.context import Context

    context = perf_context(Context(llm_timeout=2.0), "http://127.0.0.1:1/v1", latency=1.0)
    assert context.llm == "sim" and context.base_url == "http://127.0.0.1:1/v1"
    assert context.llm_timeout == 1.0 + PERF_TIMEOUT_SLACK_S
    assert perf_context(Context(llm_timeout=60.0), "u", latency=1.0).llm_timeout == 60.0


def test_perf_ranks_amem4rec_on_a_pool_its_perf_prepare_hook_trained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # where the hook's scratch folder goes (and must go)
    monkeypatch.setattr("tempfile.tempdir", None)
    args = [
        "bench",
        "perf",
        "--methods",
        "amem4rec",
        "--users",
        "4",
        "--latency",
        "0.05",
        "--concurrency",
        "4",
        "--out",
        str(tmp_path / "out"),
    ]
    assert main(args) == 0
    row = json.loads((tmp_path / "out" / "perf.json").read_text())["methods"]["amem4rec"]
    assert row["training_windows"] == 8  # 4 users x 2 latest windows, trained before the ranking
    assert row["training_llm_calls_per_window"] >= 1
    assert row["ranking_pool_size"] > 0  # the timed ranking read the trained pool, not an empty one
    assert row["details_mean_per_user"]["memories_used"] > 0
    assert list(scratch.glob("recgraph-perf-*")) == []  # the scratch pool is removed after the method

"""`recgraph bench --set NAME=VALUE`: accepted (the value reaches the method's context, its rankings
and metrics.json; resume keyed by it; compare across it; --server's wire context) and refused in one
line, exit 2 (unknown knob, wrong type, a knob an ablation fixes, a knob with its own option)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.protocol.knob_settings import (
    ROLE_MODELS,
    KnobError,
    check_prepared,
    knob_settings,
    knob_types,
    parse_value,
)
from bench.protocol.spec import Protocol
from graphs.registry import METHODS
from recgraph.cli import main
from state.arag.context import AragContext
from state.baselines.context import BaselinesContext
from state.context import Context
from state.memrec.context import MemRecContext

RUN = [sys.executable, "-m", "recgraph.cli"]


def bench(out: Path, *extra: str, methods: str = "itemknn") -> list[str]:
    return ["bench", "--methods", methods, "--users", "8", "--candidates", "10", "--out", str(out), *extra]


def lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_set_reaches_the_context_rankings_metrics_and_protocol(tmp_path: Path, capsys) -> None:
    knob, default = tmp_path / "knob", tmp_path / "default"
    assert main(bench(knob, "--set", "itemknn_neighbors=1")) == 0
    assert main(bench(default)) == 0
    row = json.loads((knob / "metrics.json").read_text())["methods"]["itemknn"]
    assert row["set"] == {"itemknn_neighbors": 1}
    assert row["settings"]["itemknn_neighbors"] == 1  # the context the method prepared and ranked with
    assert "set" not in json.loads((default / "metrics.json").read_text())["methods"]["itemknn"]
    assert all(r["protocol"]["set"] == {"itemknn_neighbors": 1} for r in lines(knob))
    assert all("set" not in r["protocol"] for r in lines(default))
    one = {r["user_id"]: r["ranking"] for r in lines(knob)}
    usual = {r["user_id"]: r["ranking"] for r in lines(default)}
    assert one.keys() == usual.keys()
    assert any(one[user] != usual[user] for user in one)  # with 1 neighbour itemknn ranks otherwise
    assert "ran with itemknn: --set itemknn_neighbors=1" in capsys.readouterr().out

    assert main(bench(knob, "--set", "itemknn_neighbors=1")) == 0  # the same --set resumes: nothing redone
    assert len(lines(knob)) == 8
    assert main(bench(knob, "--set", "itemknn_neighbors=2")) == 2  # another --set: refused
    assert main(bench(knob)) == 2  # no --set on a run made with one: refused
    assert "holds a run with another protocol" in capsys.readouterr().err

    assert main(["compare", str(default), str(knob)]) == 0  # a sweep compares runs across --set
    assert "warning: --set differs: A -; B {'itemknn_neighbors': 1}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "methods", "message"),
    [
        (
            ["--set", "itemknn_neighbours=3"],
            "itemknn",
            "--set itemknn_neighbours: no selected method has a knob",
        ),
        (["--set", "itemknn_neighbors=many"], "itemknn", "itemknn's itemknn_neighbors is an int"),
        (["--set", "itemknn_neighbors=1.5"], "itemknn", "itemknn's itemknn_neighbors is an int"),
        (["--set", "arag_nli_threshold=high"], "arag", "arag's arag_nli_threshold is a number"),
        (["--set", "arag_nli_threshold=nan"], "arag", "arag's arag_nli_threshold is a finite number"),
        (["--set", "arag_use_nli=maybe"], "arag", "arag's arag_use_nli is a bool"),
        (["--set", "memrec_k=-3"], "memrec", "memrec's memrec_k is at least 1"),
        (["--set", "memrec_k=0"], "memrec", "memrec's memrec_k is at least 1"),
        (["--set", "arag_nli_threshold=11"], "arag", "arag's arag_nli_threshold is between 0 and 10"),
        (["--set", "itemknn_neighbors=-1"], "itemknn", "itemknn's itemknn_neighbors is at least 0"),
        (["--set", "arag_nli_mode=pairwise"], "arag", "arag's arag_nli_mode is one of batched, per_item"),
        (
            ["--set", "memrec_use_read=true"],
            "memrec,memrec_no_read",
            "memrec_no_read fixes memrec_use_read=False",
        ),
        (["--set", "seed=3"], "itemknn", "--set seed: use bench's --seed option"),
        (["--set", "rec_model=gpt-9"], "itemknn", "itemknn's rec_model is a backend: heuristic, local"),
        (["--set", "rec_model=sim"], "vanilla_llm", "the sim backend needs a running simulator"),
        (["--set", "memrec_k"], "memrec", "is not NAME=VALUE"),
        (["--set", "memrec_k=4", "--set", "memrec_k=5"], "memrec", "--set memrec_k is given twice"),
        (["perf", "--set", "memrec_k=4"], "memrec", "--set applies to `recgraph bench` runs"),
    ],
)
def test_refused_in_one_line_exit_2(tmp_path: Path, capsys, extra: list, methods: str, message: str) -> None:
    args = bench(tmp_path, methods=methods)
    if extra[0] == "perf":
        args.insert(1, extra.pop(0))
    assert main([*args, *extra]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(errors) == 1 and message in errors[0]
    assert not (tmp_path / "results.jsonl").exists()  # refused before any work


def test_refusal_from_the_console_script(tmp_path: Path) -> None:
    result = subprocess.run(
        [*RUN, *bench(tmp_path, "--set", "memrec_kk=4", methods="itemknn,memrec")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1
    assert errors[0].startswith(
        "recgraph: error: --set memrec_kk: no selected method has a knob 'memrec_kk' (itemknn, memrec); "
        "did you mean memrec_k, "
    )


def test_a_knob_applies_where_it_exists_and_an_ablation_s_own_value_is_accepted() -> None:
    knobs = knob_settings(
        ["memrec_k=8", "memrec_use_read=false", "temperature=0.5"], ["itemknn", "memrec_no_read"]
    )
    assert knobs.for_method("memrec_no_read") == {"memrec_k": 8, "memrec_use_read": False, "temperature": 0.5}
    assert knobs.for_method("itemknn") == {"temperature": 0.5}  # BaselinesContext has no memrec_* knob
    assert knobs.given == {"memrec_k": 8, "memrec_use_read": False, "temperature": 0.5}
    assert Protocol("ml-100k", knobs=tuple(knobs.given.items())).as_dict()["set"] == knobs.given
    assert "set" not in Protocol("ml-100k").as_dict()  # logs written before --set existed resume
    context = knobs.apply("memrec_no_read", MemRecContext())
    assert (context.memrec_k, context.memrec_use_read, context.temperature) == (8, False, 0.5)
    assert knobs.describe() == (
        "--set memrec_k=8 (memrec_no_read); memrec_use_read=False (memrec_no_read); "
        "temperature=0.5 (itemknn, memrec_no_read)"
    )


def test_values_parse_by_the_field_type() -> None:
    assert parse_value(MemRecContext, "memrec_k", "3", "memrec") == 3
    assert parse_value(AragContext, "arag_nli_threshold", "6.5", "arag") == 6.5
    assert parse_value(AragContext, "arag_use_nli", "OFF", "arag") is False
    assert parse_value(AragContext, "arag_use_nli", "yes", "arag") is True
    assert parse_value(AragContext, "arag_nli_mode", "per_item", "arag") == "per_item"
    assert parse_value(MemRecContext, "memrec_rules", "books", "memrec") == "books"
    assert parse_value(Context, "output_budget", "flat", "itemknn") == "flat"
    with pytest.raises(KnobError, match="is a bool"):
        parse_value(AragContext, "arag_use_nli", "2", "arag")


def test_every_knob_of_every_method_can_be_set() -> None:
    """The general path: each field of each registered method's context class has a type --set parses."""
    samples = {int: "1", float: "0.5", bool: "true", str: "x"}
    for name, spec in METHODS.items():
        for knob, kind in knob_types(spec.context).items():
            text = samples.get(kind) or str(getattr(kind, "__args__", ("",))[0])
            text = "heuristic" if knob in ROLE_MODELS else text  # a role's model names a backend
            parse_value(spec.context, knob, text, name)


def test_a_knob_the_prepare_step_replaces_is_refused() -> None:
    knobs = knob_settings(["itemknn_neighbors=3"], ["itemknn"])
    check_prepared("itemknn", knobs, BaselinesContext(itemknn_neighbors=3))
    with pytest.raises(KnobError, match="itemknn's prepare step sets itemknn_neighbors itself"):
        check_prepared("itemknn", knobs, replace(BaselinesContext(), itemknn_neighbors=7))


def test_set_reaches_a_deployment_s_run_context(tmp_path: Path) -> None:
    """Under --server every user's run carries the method's context as JSON (bench/run/remote_replicas.py
    `wire_context`): with --set its knob is there. The deployment is stood in for by running the graph
    here on the context rebuilt from that JSON, as the server does."""
    from bench.run.remote import RemotePool
    from bench.run.remote_replicas import wire_context
    from bench.run.runner import run_benchmark
    from graphs.registry import get_graph
    from world.results_log import ResultsLog

    sent: list[dict[str, Any]] = []

    class Deployment:
        on_run_created = None

        def summary(self) -> dict[str, Any]:
            return {"servers": {}, "retried": {}, "lost": {}}

        def run_timed(self, calls, done, concurrency) -> None:
            for call in calls:
                wire = wire_context(call)
                sent.append(wire)
                context = METHODS[call.assistant].context(**wire)
                done(call, get_graph(call.assistant).invoke(call.payload, context=context), 0.0)

    from bench.protocol.plan import plan_cases
    from world.environment import get_environment

    knobs = knob_settings(["itemknn_neighbors=1"], ["itemknn"])
    protocol = Protocol("ml-100k", users=3, knobs=tuple(knobs.given.items()))
    cases = plan_cases(get_environment("ml-100k"), protocol)
    log = ResultsLog(tmp_path / "results.jsonl", protocol.as_dict())
    pool = RemotePool(Deployment())  # type: ignore[arg-type]
    results = run_benchmark(["itemknn"], cases, protocol, log, 2, Context(), remote=pool, knobs=knobs)
    assert [wire["itemknn_neighbors"] for wire in sent] == [1, 1, 1]
    assert results["itemknn"]["set"] == {"itemknn_neighbors": 1}

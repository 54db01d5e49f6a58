"""MemRec Stage W: the write graph (fallback edit, scripted LM_Mem, modes, no lost updates) and the
benchmark's warm-up (applied before ranking, independent of concurrency, resumable)."""

import json
from pathlib import Path

import pytest

from agents.memrec.feature_index import feature_index
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from bench.run.runner import prepare_method
from graphs.memrec.warmup import MEMORY_DIR
from graphs.memrec.write import graph
from state.contract import InvalidRecInput
from state.memrec.context import MemRecContext
from tests.fakes import ScriptedChatModel, install
from tools.memrec.writer import MemoryWriter, PropagationJob, shared_writer
from world.environment import get_environment
from world.errors import RecgraphError
from world.results_log import ResultsLog

CHOSE_3 = 'Recently chose "Gamma Quest" (Action, Adventure).'
CHOSE_6 = 'Recently chose "Zeta Space" (Sci-Fi).'
"""What u1's memory says after the warm-up writes its latest training interaction, item 6 (tiny:
u1's training history is 1, 6; item 3 is its validation interaction, which no warm-up writes)."""


def context(tiny: Path, tmp_path: Path, **fields) -> MemRecContext:
    return MemRecContext(dataset=str(tiny), memrec_memory=str(tmp_path / "memory.sqlite"), **fields)


def memories(ctx: MemRecContext) -> dict[str, tuple[str, int]]:
    graph_ = feature_index(get_environment(ctx.dataset), ctx.memrec_memory).graph
    rows = graph_.connection().execute("SELECT node_id, memory, version FROM nodes ORDER BY node_id")
    return {node: (text, version) for node, text, version in rows}


def test_fallback_write_updates_user_item_and_curated_neighbours_once(
    tiny_dataset_dir: Path, tmp_path: Path
) -> None:
    ctx = context(tiny_dataset_dir, tmp_path, memrec_write_mode="sync")
    # u1 trains on items 1 and 6; u2 shares item 1: the interaction's neighbourhood is {i:1, i:6, u:u2}.
    out = graph.invoke({"user_id": "u1", "item_id": "3", "timestamp": 300}, context=ctx)
    assert out["status"] == "applied" and sorted(out["neighbours"]) == ["i:1", "i:6", "u:u2"]
    assert [m["role"] for m in out["trace"]] == [
        "validate_write",
        "curate",
        "synthesise",
        "select_neighbours",
        "propagate",
        "commit",
    ]
    assert [u["agent"] for u in out["usage"]] == ["synthesise", "propagate"]
    assert out["usage"][-1]["calls"] == 0 and out["usage"][-1]["source"] == "heuristic"
    after = memories(ctx)
    assert after["u:u1"][0].endswith(CHOSE_3) and after["u:u1"][1] == 1
    assert "Chosen by a fan of" in after["i:3"][0] and after["i:3"][1] == 1
    assert after["u:u2"][0].endswith('A like-minded user recently chose "Gamma Quest".')
    assert after["i:1"][0].endswith('Often chosen alongside "Gamma Quest".')
    untouched = {"i:2", "i:4", "i:5", "u:u3", "u:u4"}
    assert all(after[node][1] == 0 for node in untouched)
    # Replaying the same interaction (same job id) applies nothing.
    again = graph.invoke({"user_id": "u1", "item_id": "3", "timestamp": 300}, context=ctx)
    assert again["job_id"] == out["job_id"] and memories(ctx) == after


def test_fanout_cap_limits_the_neighbours_updated(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    ctx = context(tiny_dataset_dir, tmp_path, memrec_write_mode="sync", memrec_fanout_cap=1)
    out = graph.invoke({"user_id": "u1", "item_id": "3"}, context=ctx)
    assert len(out["neighbours"]) == 1
    changed = {node for node, (_, version) in memories(ctx).items() if version > 0}
    assert changed == {"u:u1", "i:3", out["neighbours"][0]}


def test_scripted_lm_mem_is_one_call_and_its_answer_is_repaired(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = {
        "user_memory": "Likes space adventures; just picked Gamma Quest.",
        "item_memory": "Gamma Quest (1981): picked by sci-fi fans.",
        "neighbor_updates": [
            {"neighbor_id": "u:zzz", "memory_update": "Not a neighbour.", "rationale": "x"},
            {"neighbor_id": "i:1", "memory_update": "Shares fans with Gamma Quest.", "rationale": "co-fans"},
            {"neighbor_id": "i:1", "memory_update": "Second entry.", "rationale": "dup"},
            {"neighbor_id": "u:u2", "memory_update": "Might enjoy Gamma Quest.", "rationale": "same taste"},
        ],
    }
    facets = {"facets": [{"facet": "Space adventures", "confidence": 0.9}], "support_edges": []}
    model = install(monkeypatch, ScriptedChatModel(script=[json.dumps(facets), json.dumps(answer)]))
    ctx = context(
        tiny_dataset_dir, tmp_path, llm="openai:gpt-4o-mini", llm_retries=0, memrec_write_mode="sync"
    )
    out = graph.invoke({"user_id": "u1", "item_id": "3"}, context=ctx)
    assert len(model.received) == 2  # O(1) LLM calls per interaction: Stage R's synthesis, the write
    prompt = model.received[1][-1].content
    assert all(node in prompt for node in ("i:1", "i:6", "u:u2"))
    usage = out["usage"][-1]
    assert usage["calls"] == 1 and not usage["fallback"]
    assert usage["repair_kinds"] == {"unknown_neighbour": 1, "duplicate_neighbour": 1}
    assert out["neighbours"] == ["i:1", "u:u2"]
    after = memories(ctx)
    assert after["u:u1"] == ("Likes space adventures; just picked Gamma Quest.", 1)
    assert after["i:3"] == ("Gamma Quest (1981): picked by sci-fi fans.", 1)
    assert after["i:1"] == ("Shares fans with Gamma Quest.", 1)  # rewritten by the model
    assert after["i:6"][1] == 0


def test_concurrent_proposals_from_the_same_version_lose_nothing(
    tiny_dataset_dir: Path, tmp_path: Path
) -> None:
    ctx = context(tiny_dataset_dir, tmp_path, memrec_write_mode="propose")
    first = graph.invoke({"user_id": "u1", "item_id": "3"}, context=ctx)
    second = graph.invoke({"user_id": "u1", "item_id": "5"}, context=ctx)
    assert first["status"] == second["status"] == "proposed"
    assert all(version == 0 for _, version in memories(ctx).values())  # propose applies nothing
    writer = MemoryWriter(
        feature_index(get_environment(ctx.dataset), ctx.memrec_memory).graph, synchronous=True
    )
    for out in (first, second):
        writer.submit(PropagationJob.from_json(json.dumps(out["job"])))
    user_text, version = memories(ctx)["u:u1"]
    # Both replaced u1 as of version 0; the second was stale and got merged instead of overwriting.
    assert version == 2 and CHOSE_3 in user_text and 'Recently chose "Epsilon Drama" (Drama).' in user_text


def test_background_mode_returns_before_applying_and_the_writer_drains(
    tiny_dataset_dir: Path, tmp_path: Path
) -> None:
    ctx = context(tiny_dataset_dir, tmp_path)
    out = graph.invoke({"user_id": "u2", "item_id": "3"}, context=ctx)
    assert out["status"] == "queued"
    writer = shared_writer(feature_index(get_environment(ctx.dataset), ctx.memrec_memory).graph)
    assert writer.drain(timeout=30)
    assert memories(ctx)["u:u2"][0].endswith(CHOSE_3)


def test_bad_write_requests_name_the_problem(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    ctx = context(tiny_dataset_dir, tmp_path, memrec_write_mode="sync")
    with pytest.raises(InvalidRecInput, match="'nope'"):
        graph.invoke({"user_id": "u1", "item_id": "nope"}, context=ctx)
    with pytest.raises(InvalidRecInput, match="'ghost'"):
        graph.invoke({"user_id": "ghost", "item_id": "3"}, context=ctx)
    with pytest.raises(RecgraphError, match="memrec_write_mode"):
        graph.invoke(
            {"user_id": "u1", "item_id": "3"},
            context=context(tiny_dataset_dir, tmp_path, memrec_write_mode="later"),
        )


def warm(tiny: Path, out: Path, concurrency: int, method: str = "memrec") -> MemRecContext:
    protocol = Protocol(dataset=str(tiny), candidates=3, users=10)
    cases = plan_cases(get_environment(str(tiny)), protocol)
    out.mkdir(parents=True, exist_ok=True)
    log = ResultsLog(out / "results.jsonl", protocol.as_dict())
    return prepare_method(method, cases, protocol, log, concurrency, MemRecContext(dataset=str(tiny))).context


def test_warmup_writes_before_ranking_reproducibly_and_resumes(
    tiny_dataset_dir: Path, tmp_path: Path
) -> None:
    serial = warm(tiny_dataset_dir, tmp_path / "a", concurrency=1)
    parallel = warm(tiny_dataset_dir, tmp_path / "b", concurrency=3)
    assert serial.memrec_memory.endswith(f"{MEMORY_DIR}/memrec.sqlite")
    state = memories(serial)
    assert CHOSE_6 in state["u:u1"][0]  # u1's warm-up interaction is item 6, never the validation item 3
    assert CHOSE_3 not in state["u:u1"][0]
    assert state == memories(parallel)
    log = tmp_path / "a" / MEMORY_DIR / "memrec.warmup.jsonl"
    lines = log.read_text().splitlines()
    assert sorted(json.loads(line)["user_id"] for line in lines) == ["u1", "u2", "u3"]
    # A rerun (as after a crash) asks nothing again and applies nothing twice.
    warm(tiny_dataset_dir, tmp_path / "a", concurrency=2)
    assert log.read_text().splitlines() == lines and memories(serial) == state
    # The w/o Collab. Write ablation gets its own graph, where the warm-up rewrites each user's own
    # memory and its item's (Eq. 5) and no neighbour's (Eq. 6): u1 wrote item 6, u2 item 1, u3 item 4.
    own = warm(tiny_dataset_dir, tmp_path / "a", concurrency=2, method="memrec_no_write")
    assert own.memrec_memory.endswith(f"{MEMORY_DIR}/memrec_no_write.sqlite")
    changed = {node for node, (_, version) in memories(own).items() if version > 0}
    assert changed == {"u:u1", "u:u2", "u:u3", "i:6", "i:1", "i:4"}
    assert CHOSE_6 in memories(own)["u:u1"][0]
    assert changed < {node for node, (_, version) in state.items() if version > 0}


def test_perf_reports_memrec_depth_curation_latency_and_stage_tokens(tmp_path: Path) -> None:
    from recgraph.cli import main

    args = ["bench", "perf", "--methods", "memrec", "--dataset", "ml-100k", "--users", "6",
            "--latency", "0.02", "--concurrency", "3", "--out", str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    row = json.loads((tmp_path / "perf.json").read_text())["methods"]["memrec"]
    # Stage W is off the recommendation path: synthesise -> rerank only.
    assert row["critical_path_depth"] == 2 and row["llm_calls_per_user"] == 2
    assert 0 < row["curation_ms_p50"] <= row["curation_ms_p95"]
    # the perf users' reads were read ahead before the warm-up pass, as bench's prepare step does
    assert row["read_ahead"]["users"] == 6 and row["read_ahead"]["seconds"] >= 0
    stages = row["tokens_per_user_by_stage"]
    assert set(stages) == {"synthesise", "rerank", "stage_w_synthesise", "propagate"}
    assert all(stage["input"] > 0 and stage["output"] > 0 for stage in stages.values())
    expected = stages["synthesise"]["input"] + stages["rerank"]["input"]
    assert row["input_tokens_per_user"] == pytest.approx(expected, abs=0.1)


def test_lm_mem_initialisation_pass_is_validated_and_resumable(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphs.memrec.init_pass import initialise_memories

    long_text = "Enjoys " + "space operas and heists, " * 40
    script = [
        json.dumps({"memory": "Loves sci-fi."}),
        json.dumps({"memory": "   "}),
        json.dumps({"memory": long_text}),
    ]
    install(monkeypatch, ScriptedChatModel(script=script))
    ctx = context(tiny_dataset_dir, tmp_path, llm="openai:gpt-4o-mini", llm_retries=0, llm_backoff=0.0)
    env = get_environment(ctx.dataset)
    before = memories(ctx)
    summary = initialise_memories(env, ctx, ["u1", "u2", "u3"], concurrency=1)
    assert summary["written"] == 2 and summary["kept"] == 1 and summary["errors"] == {"empty_answer": 1}
    after = memories(ctx)
    assert after["u:u1"] == ("Loves sci-fi.", 1)
    assert after["u:u2"] == before["u:u2"]  # fallback: the deterministic memory stays, version 0
    assert 590 <= len(after["u:u3"][0]) <= 600 and after["u:u3"][0].endswith("…") and summary["repairs"] == 1
    # A rerun asks only for the user still without a model-written memory.
    model = install(monkeypatch, ScriptedChatModel(script=[json.dumps({"memory": "Likes romance."})]))
    again = initialise_memories(env, ctx, ["u1", "u2", "u3"], concurrency=1)
    assert again["skipped_done"] == 2 and len(model.received) == 1
    prompt = model.received[0][-1].content  # u2 trains on item 1; item 3 is its warm-up, 6 its test
    assert "Alpha Wars" in prompt and "Gamma Quest" not in prompt and "Zeta Space" not in prompt
    assert memories(ctx)["u:u2"] == ("Likes romance.", 1)


def test_faulty_simulator_counts_include_stage_w_calls(tmp_path: Path) -> None:
    from bench.stats.fault_report import observed_faults
    from recgraph.cli import main

    args = ["bench", "--methods", "memrec", "--llm", "sim", "--faults", "0.3", "--users", "16",
            "--out", str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    document = json.loads((tmp_path / "metrics.json").read_text())
    row, server = document["methods"]["memrec"], document["sim_server"]
    assert row["stage_w"]["jobs"] == 16 and row["stage_w"]["llm_calls"] >= 16
    assert server["requests"] == row["llm_attempts"] + row["stage_w"]["llm_attempts"]
    assert row["llm_calls"] + row["stage_w"]["llm_calls"] < server["requests"]  # faults answered nothing
    assert sum(server["faults"].values()) > 3
    for kind, count in observed_faults(document["methods"]).items():
        assert count == server["faults"][kind], kind

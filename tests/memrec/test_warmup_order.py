"""MemRec's Stage W as Sec. 2.1.3 describes it: without propagation (the w/o Collab. Write
ablation keeps the user's and the item's own update, Eq. 5) and in interaction order (the
sequential warm-up: each write reads the memories the previous one left)."""

import json
from pathlib import Path

import pytest

from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from bench.run.invoke import prepare_method
from graphs.memrec.warmup import MEMORY_DIR, warmup_order
from graphs.memrec.write import graph
from state.memrec.context import MemRecContext
from tests.fakes import ScriptedChatModel, install
from tests.memrec.test_write import context, memories
from world.environment import get_environment
from world.results_log import ResultsLog

LIKE_MINDED = 'A like-minded user recently chose "Alpha Wars".'
"""What the fallback write of u2's warm-up (item 1, "Alpha Wars") adds to its neighbour u1."""


def warm(tiny: Path, out: Path, concurrency: int, **fields) -> tuple[MemRecContext, list[dict]]:
    """The memrec warm-up of the tiny dataset's users with `fields` set; (context, logged records)."""
    protocol = Protocol(dataset=str(tiny), candidates=3, users=10)
    cases = plan_cases(get_environment(str(tiny)), protocol)
    out.mkdir(parents=True, exist_ok=True)
    log = ResultsLog(out / "results.jsonl", protocol.as_dict())
    ctx = MemRecContext(dataset=str(tiny), **fields)
    prepared = prepare_method("memrec", cases, protocol, log, concurrency, ctx).context
    lines = (out / MEMORY_DIR / "memrec.warmup.jsonl").read_text().splitlines()
    return prepared, [json.loads(line) for line in lines]


def user_update(record: dict, user: str) -> dict:
    """The logged job's update of `user`'s own memory."""
    return next(u for u in record["job"]["updates"] if u["node_id"] == f"u:{user}")


def test_without_propagation_the_write_updates_the_user_and_the_item_only(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = {
        "user_memory": "Picked Gamma Quest.",
        "item_memory": "Gamma Quest: sci-fi fans.",
        "neighbor_updates": [],
    }
    facets = {"facets": [{"facet": "Space adventures", "confidence": 0.9}], "support_edges": []}
    model = install(monkeypatch, ScriptedChatModel(script=[json.dumps(facets), json.dumps(answer)]))
    ctx = context(
        tiny_dataset_dir,
        tmp_path,
        llm="openai:gpt-4o-mini",
        llm_retries=0,
        memrec_write_mode="sync",
        memrec_propagate=False,
    )
    out = graph.invoke({"user_id": "u1", "item_id": "3"}, context=ctx)
    # Stage R still runs (the write reads its facets); the write is offered no neighbour.
    assert [u["agent"] for u in out["usage"]] == ["synthesise", "propagate"]
    prompt = model.received[1][-1].content
    assert "Space adventures" in prompt and "u:u2" not in prompt and "i:1" not in prompt
    assert out["neighbours"] == []
    changed = {node: text for node, (text, version) in memories(ctx).items() if version > 0}
    assert changed == {"u:u1": "Picked Gamma Quest.", "i:3": "Gamma Quest: sci-fi fans."}


def test_interaction_order_is_by_time_then_user(tiny_dataset_dir: Path) -> None:
    env = get_environment(str(tiny_dataset_dir))
    # Warm-up interactions: u1 item 6 at 200, u2 item 1 at 100, u3 item 4 at 200.
    order = warmup_order(env, ["u3", "u1", "u2"], "classic")
    assert [(user, request["item_id"]) for user, request in order] == [("u2", "1"), ("u1", "6"), ("u3", "4")]


def test_sequential_warmup_reads_the_memory_the_previous_write_left(
    tiny_dataset_dir: Path, tmp_path: Path
) -> None:
    ctx, records = warm(tiny_dataset_dir, tmp_path / "seq", concurrency=3, memrec_warmup="sequential")
    assert [r["user_id"] for r in records] == ["u2", "u1", "u3"]  # logged as written, in order
    # u2's write propagated to its neighbour u1 first; u1's own write was then proposed from that.
    first = user_update(records[1], "u1")
    assert first["based_on_version"] == 1 and LIKE_MINDED in first["text"]
    state = memories(ctx)
    assert LIKE_MINDED in state["u:u1"][0]
    # The concurrent schedule proposed u1's write from the initial memory (version 0) instead.
    _, concurrent = warm(tiny_dataset_dir, tmp_path / "con", concurrency=3)
    early = user_update(next(r for r in concurrent if r["user_id"] == "u1"), "u1")
    assert early["based_on_version"] == 0 and LIKE_MINDED not in early["text"]
    # A rerun asks nothing again and applies nothing twice.
    again, rerun = warm(tiny_dataset_dir, tmp_path / "seq", concurrency=1, memrec_warmup="sequential")
    assert rerun == records and memories(again) == state

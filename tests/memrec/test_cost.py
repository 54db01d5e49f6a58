"""MemRec's per-user and whole-run costs: caches that must not change what is computed."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.memrec.feature_index import feature_index
from agents.memrec.rerank import scores_json_schema
from agents.validation import constrained_schema
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from bench.run.invoke import prepare_method
from graphs.memrec.whole_run import ranked, ranking_depth
from state.memrec.context import MemRecContext
from state.memrec.schemas import CandidateScores
from tests.fakes import SchemaRoutedModel, install
from world.embeddings import embed_texts
from world.environment import get_environment
from world.results_log import ResultsLog


def test_constrained_schema_is_a_fresh_copy_per_call() -> None:
    """The model's schema is generated once, but each caller may constrain its copy freely."""
    first = scores_json_schema(["a", "b"])
    first["properties"]["scores"]["items"]["properties"]["item_id"]["enum"].append("zzz")
    first["properties"]["scores"]["maxItems"] = 99
    second = scores_json_schema(["c"])
    assert second["properties"]["scores"]["items"]["properties"]["item_id"]["enum"] == ["c"]
    assert second["properties"]["scores"]["maxItems"] == 1
    plain = constrained_schema(CandidateScores)
    assert "enum" not in plain["properties"]["scores"]["items"]["properties"]["item_id"]
    assert plain["additionalProperties"] is False


def _warm(tiny: Path, out: Path, concurrency: int, **fields: object) -> tuple[MemRecContext, dict[str, Any]]:
    protocol = Protocol(dataset=str(tiny), candidates=3, users=10)
    cases = plan_cases(get_environment(str(tiny)), protocol)
    out.mkdir(parents=True, exist_ok=True)
    log = ResultsLog(out / "results.jsonl", protocol.as_dict())
    ctx = MemRecContext(dataset=str(tiny), **fields)  # type: ignore[arg-type]
    prepared = prepare_method("memrec", cases, protocol, log, concurrency, ctx)
    return prepared.context, prepared.metrics


FACETS = json.dumps(
    {
        "facets": [{"facet": "Space adventures", "confidence": 0.8, "supporting_neighbors": []}],
        "support_edges": [],
    }
)
"""Stage R's answer inside each write (the write graph synthesises facets before it writes)."""


def _lm_mem(messages: list[Any]) -> str:
    """A Stage W answer naming the user of the prompt (so answers do not depend on call order)."""
    user = re.search(r"u:u\d", str(messages[-1].content)).group(0)  # type: ignore[union-attr]
    return json.dumps(
        {"user_memory": f"Memory of {user}.", "item_memory": f"Chosen by {user}.", "neighbor_updates": []}
    )


def test_warmup_embeds_ahead_and_its_vectors_are_reproducible(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With an LM_Mem to wait for, Stage W's new memories are embedded while proposals are asked;
    what ranking reads is the final text's embedding, bit for bit the same whatever the concurrency."""
    install(monkeypatch, SchemaRoutedModel(answers={"MemoryWrite": _lm_mem, "FacetSet": FACETS}))
    llm = {"llm": "openai:gpt-4o-mini", "llm_retries": 0, "llm_backoff": 0.0}
    serial, metrics = _warm(tiny_dataset_dir, tmp_path / "a", 1, **llm)
    parallel, _ = _warm(tiny_dataset_dir, tmp_path / "b", 3, **llm)
    env = get_environment(str(tiny_dataset_dir))
    first, second = feature_index(env, serial.memrec_memory), feature_index(env, parallel.memrec_memory)
    vectors, again = first.updated_vectors(), second.updated_vectors()
    assert set(vectors) == set(again) and vectors
    assert all(np.array_equal(vectors[node], again[node]) for node in vectors)
    finals = dict(first.graph.connection().execute("SELECT node_id, memory FROM nodes WHERE version > 0"))
    assert finals["u:u1"] == "Memory of u:u1."
    fresh = embed_texts(list(finals.values()))  # another batch: equal up to float rounding
    assert np.allclose(np.stack([vectors[node] for node in finals]), fresh, atol=1e-5)
    whole = metrics["whole_run"]
    # Three user memories and at least one item memory were predicted before the jobs were applied.
    assert whole["warmup_users"] == 3 and 4 <= whole["embedded_during_warmup"] <= len(finals)
    assert whole["warmup_seconds"] > 0
    _, plain = _warm(tiny_dataset_dir, tmp_path / "c", 2)
    assert plain["whole_run"]["embedded_during_warmup"] == 0  # nothing to overlap without an LLM


def test_whole_run_figures_follow_the_ranked_users(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    """The `record_extras` hook advances the clock the warm-up started; no LLM, no ideal."""
    ctx, metrics = _warm(tiny_dataset_dir, tmp_path / "a", concurrency=2)
    whole = metrics["whole_run"]
    assert "users" not in whole
    assert ranked({}, {}, ctx) == {} and ranked({}, {}, ctx) == {}
    assert whole["users"] == 2 and whole["seconds"] >= whole["warmup_seconds"]
    rounding = 0.0005 / whole["seconds"]  # seconds are rounded to the millisecond
    assert whole["users_per_s"] == pytest.approx(2 / whole["seconds"], rel=0.01 + rounding)
    assert whole["ideal_users_per_s"] is None and whole["efficiency"] is None  # heuristic: 0 LLM rounds
    assert ranking_depth(ctx) == 0
    assert ranking_depth(replace(ctx, llm="sim")) == 2
    assert ranking_depth(replace(ctx, llm="sim", memrec_ranker="vector")) == 1

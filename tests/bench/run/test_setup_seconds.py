"""`recgraph bench` says how long each method took to set up: seconds until its first user was
ranked, its prepare hook's seconds, and the one-time dataset work it started (shown as progress)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import world.item_vectors as item_vectors
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from bench.run.runner import run_benchmark
from state.context import Context
from world.embeddings import EMBEDDING_DIM
from world.environment import get_environment
from world.results_log import ResultsLog
from world.synth import SynthSpec, generate
from world.synth_write import write_synth


def fake_embed(texts: Sequence[str]) -> np.ndarray:
    """Unit vectors from the texts' lengths (the caching under test does not depend on MiniLM)."""
    vectors = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
    vectors[:, 0], vectors[:, 1] = [len(t) for t in texts], 1.0
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_setup_seconds_and_one_time_work_per_method(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(item_vectors, "embed_texts", fake_embed)
    data = generate(SynthSpec(users=40, items=60, interactions=400, timestamps=False, seed=5))
    spec = str(write_synth(data, tmp_path / "setup")[0].parent)
    env = get_environment(spec)
    protocol = Protocol(dataset=spec, candidates=5, users=8)
    cases = plan_cases(env, protocol)
    (tmp_path / "out").mkdir()
    log = ResultsLog(tmp_path / "out" / "results.jsonl", protocol.as_dict())
    phases: list[tuple[str, int, int]] = []
    results = run_benchmark(
        ["popularity", "embedding"], cases, protocol, log, 2, Context(dataset=spec), None,
        lambda *phase: phases.append(phase),
    )  # fmt: skip
    popularity, embedding = results["popularity"]["setup_seconds"], results["embedding"]["setup_seconds"]
    assert popularity["one_time_work"] == {}  # popularity embeds nothing
    assert list(embedding["one_time_work"]) == [item_vectors.PROGRESS_LABEL]
    assert 0 <= embedding["prepare"] <= embedding["to_first_user"]
    rows = [p for p in phases if p[0] == item_vectors.PROGRESS_LABEL]
    assert rows[0][:2] == (item_vectors.PROGRESS_LABEL, 0)
    touched = {i for c in cases for i in [*c.candidates, *env.history(c.user_id)]}
    assert rows[-1][1] == rows[-1][2] <= len(touched) < 60  # only what the users touched, its total


def test_a_prepare_hooks_own_phases_are_named_in_one_time_work(tmp_path: Path) -> None:
    data = generate(SynthSpec(users=30, items=40, interactions=300, timestamps=False, seed=7))
    spec = str(write_synth(data, tmp_path / "memory")[0].parent)
    protocol = Protocol(dataset=spec, candidates=5, users=6)
    cases = plan_cases(get_environment(spec), protocol)
    (tmp_path / "out").mkdir()
    log = ResultsLog(tmp_path / "out" / "results.jsonl", protocol.as_dict())
    results = run_benchmark(["memrec"], cases, protocol, log, 2, Context(dataset=spec))  # nobody watching
    work = results["memrec"]["setup_seconds"]["one_time_work"]
    assert "Stage W" in work  # the hook's phase, named without the method's prefix
    assert all(seconds >= 0.0 for seconds in work.values())
    assert not any(label.startswith("memrec · ") for label in work)

"""Methods' `preload` hooks (bench/run/preload.py) and MemRec's (graphs/memrec/preload.py)."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from agents.memrec.dataset_features import dataset_features
from agents.memrec.feature_index import feature_index
from bench.run import preload as preloads
from graphs.memrec.preload import preload as memrec_preload
from graphs.registry import METHODS
from state.memrec.context import MemRecContext
from tools.memrec.adjacency import shared_adjacency
from world.environment import get_environment

CALLS: list[tuple[str, str]] = []
GATE = threading.Event()


def counting_preload(context: MemRecContext) -> None:
    """A preload that records its thread and waits for the test's gate."""
    CALLS.append((threading.current_thread().name, context.dataset))
    GATE.wait(10)


def failing_preload(context: MemRecContext) -> None:
    """A preload that fails."""
    raise ValueError(f"planted preload failure for {context.dataset}")


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preloads, "_STARTED", {})
    CALLS.clear()
    GATE.clear()


def _register(monkeypatch: pytest.MonkeyPatch, name: str, function: str) -> None:
    monkeypatch.setitem(METHODS, name, replace(METHODS["popularity"], preload=f"{__name__}:{function}"))


@pytest.mark.usefixtures("fresh")
def test_a_preload_runs_once_per_function_and_dataset_in_the_background(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _register(monkeypatch, "pre_a", "counting_preload")
    _register(monkeypatch, "pre_b", "counting_preload")  # an ablation sharing the function
    ctx = MemRecContext(dataset="ds-1")
    preloads.start_preloads(["pre_a", "pre_b", "popularity"], ctx)
    preloads.start_preloads(["pre_a"], ctx)  # started again (the CLI, then the runner): no new thread
    waiter = threading.Thread(target=preloads.wait_preload, args=("pre_b", ctx))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive()  # waits for the running preload
    GATE.set()
    waiter.join(10)
    assert not waiter.is_alive()
    assert CALLS == [("preload:pre_a", "ds-1")]
    preloads.wait_preload("popularity", ctx)  # declares none: returns at once
    preloads.wait_preload("pre_a", MemRecContext(dataset="ds-2"))  # another dataset: its own run
    assert CALLS[1][1] == "ds-2"


@pytest.mark.usefixtures("fresh")
def test_a_failed_preload_is_raised_where_it_is_awaited_and_retried_next_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _register(monkeypatch, "pre_fail", "failing_preload")
    ctx = MemRecContext(dataset="ds-x")
    preloads.start_preloads(["pre_fail"], ctx)
    with pytest.raises(ValueError, match="planted preload failure for ds-x"):
        preloads.wait_preload("pre_fail", ctx)
    with pytest.raises(ValueError, match="planted preload failure"):  # run again, not remembered
        preloads.wait_preload("pre_fail", ctx)


def test_memrec_preload_builds_what_every_memory_file_shares(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    ctx = MemRecContext(dataset=str(tiny_dataset_dir))
    memrec_preload(ctx)
    env = get_environment(ctx.dataset)
    adjacency, shared = shared_adjacency(env), dataset_features(env)
    first = feature_index(env, str(tmp_path / "a.sqlite"))
    second = feature_index(env, str(tmp_path / "b.sqlite"))
    assert first.graph.user_ptr is adjacency.user_ptr and second.graph.item_users is adjacency.item_users
    assert first.edge_weight is shared.edge_weight and second.item_dist is shared.item_dist
    assert first.graph.path != second.graph.path
    assert np.all(first.edge_weight > 0) and first.edge_weight.shape == adjacency.user_items.shape


@pytest.mark.parametrize(("encoder", "torch_in_main_thread"), [("torch", True), ("onnx", False)])
def test_memrec_preload_imports_its_heavy_packages_before_its_thread_starts(
    encoder: str, torch_in_main_thread: bool
) -> None:
    """A package imported in a preload thread while the main thread imports part of it can fail with
    `_DeadlockError`; so when the preload would need sentence-transformers (the torch encoder, or the
    ONNX model's first export) the hook's module imports it in the calling thread. With the ONNX
    model exported, nothing imports torch at all."""
    import os
    import subprocess
    import sys

    from world.minilm_export import exported_model
    from world.minilm_onnx import bundled_model_dir

    exported_model(bundled_model_dir())  # the ONNX model on disk, as after any first use
    probe = (
        "import sys, types\n"
        "import bench.run.preload as preloads\n"
        "idle = types.SimpleNamespace(start=lambda: None)  # no preload thread runs\n"
        "preloads.threading = types.SimpleNamespace(Thread=lambda **kwargs: idle)\n"
        "from state.memrec.context import MemRecContext\n"
        "assert 'sentence_transformers' not in sys.modules\n"
        "preloads.start_preloads(['memrec'], MemRecContext())\n"
        "wanted = ('sentence_transformers', 'torch', 'graphs.memrec.graph')\n"
        "print(*(m in sys.modules for m in wanted))\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "RECGRAPH_ENCODER": encoder}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    expected = [str(torch_in_main_thread), str(torch_in_main_thread), "True"]
    assert done.stdout.split() == expected


@pytest.mark.usefixtures("fresh")
def test_a_command_stopped_by_bad_input_waits_for_its_running_preloads(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`recgraph bench` on a malformed dataset exits with its one-line error only once the preloads it
    started have finished: a daemon thread cut off inside native code at interpreter shutdown aborts
    the process ("terminate called without an active exception") instead."""
    from recgraph.cli import main

    _register(monkeypatch, "pre_a", "counting_preload")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "bad.inter").write_text("user_id:token\titem_id:token\ttimestamp:float\n1\n", encoding="utf-8")
    opener = threading.Timer(1.5, GATE.set)  # the preload is still running when the error is raised
    opener.start()
    args = [
        "bench",
        "--methods",
        "pre_a",
        "--dataset",
        str(bad),
        "--users",
        "2",
        "--out",
        str(tmp_path / "o"),
    ]
    assert main(args) == 2
    assert [("preload:pre_a", str(bad))] == CALLS
    assert not any(preload.thread.is_alive() for preload in preloads._STARTED.values())
    opener.cancel()

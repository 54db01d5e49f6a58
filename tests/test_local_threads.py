"""The local backend's llama.cpp threads fit the machine: the cores this process may use that other
work leaves idle (at least one), `RECGRAPH_LLM_THREADS` overriding; the model is loaded once, with
them. No model is loaded here: llama_cpp is replaced by a recorder."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from agents import local_llm
from agents.local_llm import THREADS_ENV, Threads, llm_threads, usable_cores
from world.errors import RecgraphError


@pytest.mark.parametrize(
    ("cores", "busy", "expected"),
    [
        (2, 0.0, 2),  # an idle 2-core machine: both cores
        (2, 0.4, 2),
        (2, 0.6, 1),  # most of a core is taken by other work
        (2, 4.5, 1),  # the load the issue measured (4-5): one thread, never zero
        (8, 3.0, 5),
        (8, 0.0, 8),
        (1, 0.0, 1),
    ],
)
def test_threads_are_the_idle_cores(cores: int, busy: float, expected: int) -> None:
    assert llm_threads(cores, busy) == Threads(expected, expected)


def test_the_environment_overrides_the_rule() -> None:
    assert llm_threads(2, 5.0, "2") == Threads(2, 2)
    assert llm_threads(2, 0.0, "1,2") == Threads(1, 2)
    assert llm_threads(2, 5.0, " ") == Threads(1, 1)  # blank: the rule
    for bad in ("0", "two", "1,2,3", "-1", "1,"):
        with pytest.raises(RecgraphError, match=THREADS_ENV):
            llm_threads(2, 0.0, bad)


def test_usable_cores_follow_affinity_and_quota(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_llm.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    quota = tmp_path / "cpu.max"
    assert usable_cores(quota) == 4  # no quota file
    quota.write_text("max 100000\n")
    assert usable_cores(quota) == 4
    quota.write_text("150000 100000\n")  # --cpus 1.5
    assert usable_cores(quota) == 2
    quota.write_text("20000 100000\n")
    assert usable_cores(quota) == 1
    monkeypatch.setattr(local_llm.os, "sched_getaffinity", lambda pid: {3}, raising=False)
    quota.write_text("max 100000\n")
    assert usable_cores(quota) == 1


def test_the_model_is_loaded_once_with_the_threads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    made: list[dict[str, Any]] = []

    closers: list[Any] = []

    class Llama:
        def __init__(self, **kwargs: Any) -> None:
            made.append(kwargs)

        def close(self) -> None:
            """llama-cpp-python's model frees itself here (registered to run at exit)."""

    monkeypatch.setattr(local_llm.atexit, "register", closers.append)
    monkeypatch.setitem(sys.modules, "llama_cpp", types.SimpleNamespace(Llama=Llama))
    monkeypatch.setattr(local_llm, "smollm2_path", lambda: tmp_path / "model.gguf")
    monkeypatch.setenv(THREADS_ENV, "1,2")
    local_llm.load_llama.cache_clear()
    try:
        first, second = local_llm.load_llama(), local_llm.load_llama()
    finally:
        local_llm.load_llama.cache_clear()
    assert first is second and len(made) == 1
    assert closers == [first.close]  # closed at exit while the interpreter still works, once
    assert made[0]["n_threads"] == 1 and made[0]["n_threads_batch"] == 2
    assert made[0]["n_ctx"] == local_llm.N_CTX

"""Progress for logs: under `nohup`, CI or a log file (stdout not a terminal) `recgraph bench` prints
plain start / progress / end lines per method and per piece of one-time work, its header lines
whole; and every progress row of a run ends (finished, or removed when the run stopped), so no
bar is left with a stale ETA, traced or not."""

from __future__ import annotations

import io
import queue
import re
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from rich.progress import Progress

import world.item_vectors as item_vectors
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from bench.run.worker_process import PhaseRelay
from graphs.hooks import Prepared, PrepareRequest
from graphs.registry import METHODS, MethodSpec
from recgraph import bench_command
from recgraph.cli import main
from recgraph.progress_log import ProgressLog
from recgraph.run_header import line_spans, print_header
from tests import crashy_method
from tests.langsmith_stub import LangSmithStub
from world.embeddings import EMBEDDING_DIM
from world.environment import get_environment
from world.progress import OpenPhases
from world.synth import SynthSpec, generate
from world.synth_write import write_synth

CLOCK = r"\d+:\d\d:\d\d"
RATE = r"[\d.,]+ users/s"
HEADER = (
    "candidates: the target + 9 negatives sampled uniformly from the items the user never interacted "
    "with. Eligible users: users with a held-out target: 943 → classic keeps every split user: 943. "
    "Evaluated: 20."
)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def prepare_in_phases(request: PrepareRequest) -> Prepared:
    """A prepare hook whose phases stop short of their totals, like ChainRec's SFT then DPO (SFT's
    epochs are counted against SFT + DPO epochs; a DPO run can stop early)."""
    if request.on_progress:
        request.on_progress(f"{request.method} · sft", 1, 4)
        request.on_progress(f"{request.method} · sft", 2, 4)
        request.on_progress(f"{request.method} · dpo", 3, 5)
    return Prepared(request.context)


def fake_embed(texts: Sequence[str]) -> np.ndarray:
    """Unit vectors from the texts' lengths (no MiniLM needed)."""
    vectors = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
    vectors[:, 0], vectors[:, 1] = [len(t) for t in texts], 1.0
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture
def bars(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Progress]]:
    """The bench's progress bars (their tasks are the rows), with `phased` and `crashy` registered."""
    kept: list[Progress] = []
    build = bench_command.progress_bar

    def keep() -> Progress:
        kept.append(build())
        return kept[-1]

    monkeypatch.setattr(bench_command, "progress_bar", keep)
    graph = "tests.crashy_method:graph"
    prepare = "tests.bench.run.test_progress_logs:prepare_in_phases"
    phased = MethodSpec(graph, "classic", "phases stop short", prepare=prepare, item_vectors=True)
    monkeypatch.setitem(METHODS, "phased", phased)
    monkeypatch.setitem(METHODS, "crashy", MethodSpec(graph, "classic", "planted failures"))
    crashy_method.CRASH_ON.clear()
    yield kept


@pytest.fixture
def synth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A small synthetic catalog with its own cache, its item vectors faked."""
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(item_vectors, "embed_texts", fake_embed)
    data = generate(SynthSpec(users=40, items=60, interactions=400, timestamps=False, seed=5))
    return str(write_synth(data, tmp_path / "synth")[0].parent)


def lines_of(label: str, out: str) -> list[str]:
    """The progress lines of one row."""
    return [line for line in out.splitlines() if line.startswith(f"{label}: ")]


def test_a_logged_run_prints_start_progress_and_end_lines(tmp_path: Path, capsys) -> None:
    args = ["bench", "--methods", "itemknn,popularity", "--users", "20", "--out", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    for method in ("itemknn", "popularity"):
        lines = lines_of(method, out)
        assert lines[0] == f"{method}: started, 0/20 users"
        progress = lines[1:-1]
        assert progress, lines
        for line in progress:
            assert re.fullmatch(
                rf"{method}: \d+/20 users \(\d+%\), {CLOCK} elapsed, {RATE}, ETA {CLOCK}", line
            )
        done = [int(re.match(rf"{method}: (\d+)/", line).group(1)) for line in progress]
        assert done == sorted(done) and len(done) == len(set(done))
        assert re.fullmatch(rf"{method}: finished, 20/20 users in {CLOCK} \({RATE}\)", lines[-1])
    # the header is written whole: no line is a piece of it
    assert [line for line in out.splitlines() if "Eligible users" in line] == [HEADER]
    assert not [line for line in out.splitlines() if line.startswith(("classic keeps", "Evaluated"))]
    assert out.splitlines()[0].startswith("ml-100k: 20 users, N=10, scenario classic, backend: heuristic")


@pytest.mark.parametrize("trace", [False, True], ids=["untraced", "traced"])
def test_every_row_ends_with_its_work(
    trace: bool, synth: str, bars: list[Progress], tmp_path: Path, monkeypatch, capsys
) -> None:
    args = ["bench", "--methods", "phased,embedding", "--dataset", synth, "--users", "8", "--candidates", "5"]
    args += ["--out", str(tmp_path / "out")]
    with ExitStack() as stack:
        if trace:  # traced to a LangSmith-compatible server on loopback
            stub = stack.enter_context(LangSmithStub())
            monkeypatch.setenv("LANGSMITH_ENDPOINT", stub.url)
            monkeypatch.setenv("LANGSMITH_API_KEY", "dummy")
            args.append("--trace")
        assert main(args) == 0
        assert not trace or stub.roots()
    tasks = bars[0].tasks
    labels = [task.description for task in tasks]
    assert labels == ["item vectors", "phased · sft", "phased · dpo", "phased", "embedding"]
    vectors = tasks[0]
    assert vectors.completed < 60  # only the rows the users read were embedded: short of the catalog
    assert all(task.finished for task in tasks), [(t.description, t.completed, t.total) for t in tasks]
    assert [(t.completed, t.total) for t in tasks[1:3]] == [(2, 2), (3, 3)]
    out = capsys.readouterr().out
    for label in labels:
        lines = lines_of(label, out)
        assert lines[0].startswith(f"{label}: started, ") and lines[-1].startswith(f"{label}: finished, ")
    done = int(vectors.completed)  # the row's total is what it embedded, never the catalog's 60
    assert lines_of("item vectors", out)[-1].startswith(f"item vectors: finished, {done}/{done} in ")
    # each ends when its work does: the vectors before the warm-up, SFT when DPO starts
    order = [line.split(",")[0] for line in out.splitlines() if line.startswith(("phased", "item vectors"))]
    assert order.index("item vectors: finished") < order.index("phased · sft: started")
    assert order.index("phased · sft: finished") < order.index("phased · dpo: started")
    assert order.index("phased · dpo: finished") < order.index("phased: started")


def test_a_stopped_run_leaves_no_open_row(tmp_path: Path, bars: list[Progress], capsys) -> None:
    cases = plan_cases(get_environment("ml-100k"), Protocol("ml-100k", users=10))
    crashy_method.CRASH_ON.add(cases[4].user_id)
    args = ["bench", "--methods", "crashy", "--users", "10", "--concurrency", "1", "--out", str(tmp_path)]
    assert main(args) == 4
    assert all(task.finished for task in bars[0].tasks)  # the crashed method's row is removed
    out = capsys.readouterr().out
    assert re.search(rf"^crashy: stopped at \d+/10 users after {CLOCK}$", out, re.MULTILINE)


def test_lines_come_every_step_or_interval_whichever_first() -> None:
    clock, written = FakeClock(), []
    log = ProgressLog(written.append, clock, interval=30.0, steps=10)
    log.start("arag", 0, 200, "users")
    for done in range(1, 20):  # 19 users in 19 s: under 10% and under 30 s, nothing written
        clock.now += 1
        log.update("arag", done, 200)
    assert written == ["arag: started, 0/200 users"]
    clock.now += 1
    log.update("arag", 20, 200)  # 10% of the users
    assert written[-1] == "arag: 20/200 users (10%), 0:00:20 elapsed, 1.0 users/s, ETA 0:03:00"
    clock.now += 30
    log.update("arag", 21, 200)  # 30 s since the last line, still short of 20%
    assert written[-1] == "arag: 21/200 users (10%), 0:00:50 elapsed, 0.42 users/s, ETA 0:07:06"
    clock.now += 29
    log.tick()  # quiet for 29 s: nothing yet
    assert len(written) == 3
    clock.now += 1
    log.tick()  # quiet for 30 s: a heartbeat line
    assert written[-1].startswith("arag: 21/200 users (10%), 0:01:20 elapsed, 0.26 users/s, ETA ")
    log.update("arag", 200, 200)
    log.end("arag")
    assert written[-1] == "arag: finished, 200/200 users in 0:01:20 (2.5 users/s)"
    assert log.open_rows() == []


def test_the_rate_counts_only_this_runs_work() -> None:
    clock, written = FakeClock(), []
    log = ProgressLog(written.append, clock)
    log.start("memrec · Stage W", 40, 100)
    clock.now += 30
    log.tick()
    assert (
        written[-1] == "memrec · Stage W: 40/100 (40%), 0:00:30 elapsed, ETA unknown (nothing finished yet)"
    )
    clock.now += 10
    log.update("memrec · Stage W", 60, 100)
    assert written[-1] == "memrec · Stage W: 60/100 (60%), 0:00:40 elapsed, 0.5/s, ETA 0:01:20"
    log.stop("memrec · Stage W")
    assert written[-1] == "memrec · Stage W: stopped at 60/100 after 0:00:40"


def test_a_hooks_phases_end_one_after_another_and_with_their_stage() -> None:
    seen: list[tuple[str, int, int]] = []
    ended: list[str] = []
    phases = OpenPhases(lambda *report: seen.append(report), ended.append)
    hook = phases.one_at_a_time()
    hook("m · sft", 2, 5)
    phases("item vectors", 10, 60)  # the world's work, reported meanwhile, is not the hook's
    hook("m · dpo", 3, 5)
    assert ended == ["m · sft"]
    phases("catalog index", 60, 60)  # at its total: complete without an end
    phases.end("item vectors")
    phases.end("item vectors")  # once only
    phases.end_all()
    assert ended == ["m · sft", "item vectors", "m · dpo"]
    assert len(seen) == 4


def test_a_worker_relays_its_one_time_work() -> None:
    out: queue.Queue = queue.Queue()
    relay = PhaseRelay(out, 1)  # type: ignore[arg-type]
    relay("interaction index", 3, 9)
    relay.end("interaction index")
    assert [out.get_nowait(), out.get_nowait()] == [
        ("phase", 1, ("interaction index", 3, 9)),
        ("phase_end", 1, "interaction index"),
    ]


def test_a_terminal_header_breaks_between_sentences_never_beside_an_arrow() -> None:
    for width in (40, 60, 80, 100, 120):
        spans = line_spans(HEADER, width)
        lines = [HEADER[start:end] for start, end in spans]
        assert all(len(line) <= width for line in lines)
        assert " ".join(lines) == HEADER
        assert not any(line.endswith("→") or line.startswith("→") for line in lines)
        assert any("943 → classic" in line for line in lines)
    first, second = HEADER.split(" Eligible")
    assert [HEADER[a:b] for a, b in line_spans(HEADER, 120)] == [first, "Eligible" + second]


def test_a_header_is_written_whole_when_not_a_terminal_and_wrapped_on_one() -> None:
    piped = Console(file=io.StringIO(), width=60, force_terminal=False)
    print_header(piped, HEADER)
    assert piped.file.getvalue() == HEADER + "\n"  # type: ignore[attr-defined]
    terminal = Console(file=io.StringIO(), width=60, force_terminal=True, color_system=None)
    print_header(terminal, HEADER)
    lines = terminal.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert len(lines) > 2 and all(len(line) <= 60 for line in lines)
    assert lines[1].startswith("  ") and any("943 → classic" in line for line in lines)

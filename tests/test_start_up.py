"""Start-up: help texts and one-line bad-input errors import none of the heavy packages (LangGraph,
torch, sentence-transformers, transformers, scikit-learn, scipy, matplotlib, Chroma), checked with
`python -X importtime` on the real command; a classic baseline's `graph.invoke()` never imports torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HEAVY = {
    "langgraph",
    "torch",
    "sentence_transformers",
    "transformers",
    "sklearn",
    "scipy",
    "matplotlib",
    "chromadb",
}
"""Top-level packages whose import costs seconds on a 2-core machine."""


def heavy_imports(*argv: str) -> tuple[set[str], int, str]:
    """The heavy top-level packages `recgraph <argv>` imports, its exit code and its stderr."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "recgraph.cli", *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    messages = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    return imported & HEAVY, done.returncode, "\n".join(messages)


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("bench", "--help"),
        ("bench", "perf", "--help"),
        ("recommend", "--help"),
        ("compare", "--help"),
        ("datasets", "--help"),
        ("memrec", "--help"),
        ("amem4rec", "--help"),
        ("chainrec", "train", "--help"),
    ],
)
def test_help_imports_nothing_heavy(argv: tuple[str, ...]) -> None:
    heavy, code, _ = heavy_imports(*argv)
    assert code == 0 and heavy == set()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("bench", "--methods", "nosuch"), "recgraph: error: unknown method 'nosuch'"),
        (("bench", "--dataset", "/no/such/data"), "recgraph: error: unknown dataset '/no/such/data'"),
        (("recommend", "--method", "nosuch", "--user", "1"), "recgraph: error: unknown method 'nosuch'"),
        (
            ("recommend", "--method", "arag", "--user", "1", "--dataset", "/no/such/data"),
            "recgraph: error: unknown dataset '/no/such/data'",
        ),
        (
            ("bench", "--methods", "memrec", "--database-url", "postgresql://rec@127.0.0.1:9/rec"),
            "recgraph: error: cannot reach the database postgresql://rec@127.0.0.1:9/rec: connection failed",
        ),
        (
            ("recommend", "--method", "memrec", "--user", "1", "--database-url", "postgresql://a:pw@[db"),
            "recgraph: error: database URL 'postgresql://a:***@[db' is malformed",
        ),
    ],
)
def test_a_bad_name_is_one_line_before_anything_heavy(argv: tuple[str, ...], message: str) -> None:
    heavy, code, stderr = heavy_imports(*argv)
    assert code == 2 and stderr.startswith(message) and len(stderr.splitlines()) == 1
    assert heavy == set()


def test_a_classic_baseline_invokes_without_torch() -> None:
    code = (
        "import sys\n"
        "from graphs.registry import get_graph\n"
        "out = get_graph('popularity').invoke({'user_id': '1', 'candidates': ['1', '50', '181']})\n"
        "print(out['ranking'], 'torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("]")[-1].strip() == "False"


def test_the_fast_exit_still_runs_exit_handlers_and_keeps_the_status(tmp_path: Path) -> None:
    marker = tmp_path / "handler-ran"
    code = (
        "import atexit, sys, threading, time\n"
        f"atexit.register(lambda: open({str(marker)!r}, 'w').write('ran'))\n"
        "threading.Thread(target=lambda: time.sleep(0.5) or open("
        f"{str(marker) + '.thread'!r}, 'w').write('done')).start()  # non-daemon: joined\n"
        "sys.argv = ['recgraph', 'bench', '--methods', 'nosuch']\n"
        "from recgraph.cli import run\n"
        "run()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith("recgraph: error: unknown method 'nosuch'")
    assert marker.read_text() == "ran" and Path(str(marker) + ".thread").read_text() == "done"

"""LangSmith tracing for `recgraph bench --trace [--langsmith-project P]`.

Off by default: a benchmark is thousands of graph runs, so `recgraph bench` traces only when
asked with `--trace`, and then ignores nothing else of LangChain's setup (`LANGSMITH_ENDPOINT`,
`LANGSMITH_API_KEY`, `LANGSMITH_PROJECT` unless `--langsmith-project`). Without `--trace` it
switches tracing off for the run even when `LANGSMITH_TRACING=true` is set in the environment
(and says so once). `recgraph recommend`, `graph.invoke` and `langgraph dev` follow the
environment as LangChain does.

Each user's ranking is one root run (graphs/tracing.py gives it its name, tags and metadata and a
run id fixed up front); once scored, hit@1, ndcg@5 and the target's rank are attached to that run
as feedback. A tracing endpoint that cannot be reached costs one warning, never the run: it is
probed once before the run (tracing is then left off), failures while running are counted, not
logged one by one, the final upload is bounded by `FLUSH_SECONDS`, and the exit never waits for a
stalled endpoint (`UPLOAD_SETTINGS`).
"""

from __future__ import annotations

import logging
import os
import threading
import urllib.request
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.runnables import RunnableConfig

from bench.protocol.spec import EvalCase, Protocol
from graphs.tracing import run_config

PROBE_SECONDS = 3.0
"""How long the endpoint probe (`GET /info`) may take before tracing is given up for the run."""
FLUSH_SECONDS = 15.0
"""How long the run may wait at its end for queued runs and feedback to upload."""
FEEDBACK_KEYS = ("hit@1", "ndcg@5")
"""Per-user metrics attached to each root run as feedback (besides `target_rank`)."""
DEFAULT_ENDPOINT = "https://api.smith.langchain.com"

Warn = Callable[[str], None]


def endpoint() -> str:
    """The LangSmith endpoint LangChain would use (`LANGSMITH_ENDPOINT` / `LANGCHAIN_ENDPOINT`)."""
    return (
        os.environ.get("LANGSMITH_ENDPOINT") or os.environ.get("LANGCHAIN_ENDPOINT") or DEFAULT_ENDPOINT
    ).rstrip("/")


def env_tracing_on() -> bool:
    """Whether the environment asks LangChain to trace (`LANGSMITH_TRACING` and its old names)."""
    names = ("LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING")
    return any(os.environ.get(name, "").strip().lower() == "true" for name in names)


def probe(url: str, timeout: float = PROBE_SECONDS) -> str | None:
    """None when `url/info` answers; otherwise why not, in a few words."""
    try:
        with urllib.request.urlopen(f"{url}/info", timeout=timeout) as answer:
            answer.read()
    except OSError as error:  # URLError, HTTPError, timeouts, refused connections
        return str(getattr(error, "reason", None) or error)
    return None


def feedback_values(record: Mapping[str, Any]) -> dict[str, float]:
    """The feedback of one scored user: hit@1, ndcg@5 (when N >= 5) and the target's rank."""
    metrics = record["metrics"]
    values = {key: float(metrics[key]) for key in FEEDBACK_KEYS if key in metrics}
    if record["rank"] is not None:  # None: the target was not among the candidates (`retrieval`)
        values["target_rank"] = float(record["rank"])
    return values


@dataclass
class BenchTracing:
    """Per-user run configs and, when tracing, the feedback of each scored user."""

    protocol: Protocol
    """The run's protocol (dataset, N, seed, scenario, backend) for tags and metadata."""
    client: Any = None
    """The langsmith `Client` runs and feedback go to; None when not tracing."""
    run_ids: dict[tuple[str, str], UUID] = field(default_factory=dict)
    """(method, user) -> the root run id of a ranking not yet scored."""
    feedback_sent: int = 0
    """Feedback entries queued so far."""
    failures: list[str] = field(default_factory=list)
    """Feedback that could not be queued (reported in the run's one tracing warning)."""

    def config(self, method: str, case: EvalCase) -> RunnableConfig:
        """The invoke config of `method` ranking `case`: root run name, tags, metadata, run id."""
        from langsmith import uuid7

        run_id = uuid7()
        self.run_ids[(method, case.user_id)] = run_id
        p = self.protocol
        return run_config(
            method,
            case.user_id,
            dataset=p.dataset,
            backend=p.llm,
            scenario=p.scenario,
            seed=p.seed,
            candidates=len(case.candidates),
            run_id=run_id,
        )

    def scored(self, record: Mapping[str, Any]) -> None:
        """Attach a scored user's metrics to its root run as feedback (nothing when not tracing)."""
        run_id = self.run_ids.pop((record["method"], record["user_id"]), None)
        if self.client is None or run_id is None:
            return
        for key, score in feedback_values(record).items():
            # trace_id = the root's own id: the client queues the feedback beside the runs
            # (background upload) instead of posting it synchronously with retries.
            try:
                with warnings.catch_warnings():
                    # The client also asks for the project's id (`session_id`), unknown without a
                    # lookup; the run id locates the trace on every current deployment.
                    warnings.filterwarnings("ignore", message="Creating feedback for a run without")
                    self.client.create_feedback(run_id=run_id, trace_id=run_id, key=key, score=score)
            except Exception as error:  # tracing must never cost the run: counted, reported once
                self.failures.append(f"feedback {key} of {record['method']}/{record['user_id']}: {error}")
            else:
                self.feedback_sent += 1


UPLOAD_SETTINGS = {"LANGSMITH_USE_DAEMON": "true", "LANGSMITH_DISABLE_RUN_COMPRESSION": "true"}
"""How the bench's langsmith client uploads: from daemon threads, so the process never waits at exit
for an endpoint that stalls (the end of the run already waited `FLUSH_SECONDS` for it), and
uncompressed, since compressed sends run in langsmith's shared thread pool, which exit joins (a
stalled endpoint then holds the exit for minutes: each send retries with a 10 s read timeout)."""


@contextmanager
def upload_settings() -> Iterator[None]:
    """`UPLOAD_SETTINGS` in the environment while the client exists (restored after)."""
    import langsmith.utils

    before = {key: os.environ.get(key) for key in UPLOAD_SETTINGS}
    os.environ.update(UPLOAD_SETTINGS)
    langsmith.utils.get_env_var.cache_clear()  # langsmith caches what it read of the environment
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        langsmith.utils.get_env_var.cache_clear()


class _Counted(logging.Filter):
    """Holds back the langsmith client's per-batch upload warnings (one per failed batch, each
    after retries) and counts them: the run ends with one line instead."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def filter(self, record: logging.LogRecord) -> bool:
        self.seen += record.levelno >= logging.WARNING
        return record.levelno < logging.WARNING


@contextmanager
def bench_tracing(protocol: Protocol, trace: bool, project: str | None, warn: Warn) -> Iterator[BenchTracing]:
    """The run's tracing: on (with `trace`) when the endpoint answers, else off; `warn` gets the
    single line saying why tracing is off or that uploads failed."""
    from langsmith.run_helpers import tracing_context

    if not trace:
        if env_tracing_on():
            warn("LANGSMITH_TRACING is set, but recgraph bench traces only with --trace")
        with tracing_context(enabled=False):
            yield BenchTracing(protocol)
        return
    url = endpoint()
    problem = probe(url)
    if problem is not None:
        warn(f"tracing endpoint {url} cannot be reached ({problem}); running without tracing")
        with tracing_context(enabled=False):
            yield BenchTracing(protocol)
        return
    from langsmith import Client

    failures: list[Exception] = []
    name = project or os.environ.get("LANGSMITH_PROJECT") or os.environ.get("LANGCHAIN_PROJECT") or "recgraph"
    quiet = _Counted()
    logger = logging.getLogger("langsmith.client")
    logger.addFilter(quiet)
    try:
        with upload_settings():
            client = Client(api_url=url, tracing_error_callback=failures.append)
            tracing = BenchTracing(protocol, client)
            try:
                with tracing_context(enabled=True, client=client, project_name=name):
                    yield tracing
            finally:
                bounded = {"timeout": FLUSH_SECONDS}
                finished = threading.Thread(target=client.close, kwargs=bounded, daemon=True)
                finished.start()
                finished.join(FLUSH_SECONDS + 1.0)
                queue = getattr(client, "tracing_queue", None)
                stalled = finished.is_alive() or bool(queue is not None and queue.unfinished_tasks)
    finally:
        logger.removeFilter(quiet)
    if failures or tracing.failures or quiet.seen or stalled:
        state = "stalled" if stalled and not failures else "failed"
        warn(
            f"tracing: uploads to {url} {state} ({len(failures)} batch(es) failed, "
            f"{len(tracing.failures)} feedback); some runs or feedback of this benchmark may be "
            "missing from LangSmith"
        )

"""What a registry entry is: `MethodSpec` (a recommender, its context class and its lifecycle hooks)
and `ServiceGraph` (a served graph that is not a recommender). Each method's room declares its
entries in `graphs/<method>/spec.py`; `graphs.registry` collects them.

A hook is either a callable or a "module:attribute" reference. References keep the registry cheap
to load (a hook's module may import training code, torch or the CLI, which reading the registry
must not), and each one is checked when the spec is made: its module's file must exist and define
the attribute at top level (read with `ast`, not imported), so a misspelt hook fails at import.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol

from graphs.evidence_use import EvidenceUse
from state.context import Context
from world.errors import RecgraphError

STUDIO_REQUEST: Mapping[str, Any] = {"user_id": "1", "candidates": ["1", "50", "181", "100", "258"]}
"""A recommendation request on ml-100k (the default dataset): Studio's and the README's example."""

Hook = Callable[..., Any] | str
"""A lifecycle hook: the callable itself, or "module:attribute" imported on first use."""

HOOK_FIELDS = (
    "prepare",
    "prepare_ahead",
    "ahead_parts",
    "remote_prepare",
    "preload",
    "perf_prepare",
    "perf_extras",
    "record_extras",
    "cli",
    "llm_calls",
    "training_calls",
)
"""The `MethodSpec` fields that hold hooks."""


@dataclass(frozen=True)
class RemoteCall:
    """One run a client asks a LangGraph deployment for (a `remote_prepare` hook's unit of work)."""

    assistant: str
    """The graph id (= registry name) of the assistant to run, e.g. "memrec_write"."""
    payload: Mapping[str, Any]
    """The run's input."""
    context: Context
    """The run's context, sent as the run's `context`."""
    config: Mapping[str, Any] | None = None
    """Run name, tags and metadata for tracing (a `graphs.tracing.run_config` without `run_id`)."""
    user: str | None = None
    """The user the run is about, for error messages."""


REMOTE_ROOT = "runs/remote"
"""Where a deployment keeps what a client's run prepared (relative to each server's working directory;
with a database URL, only the memories' and pools' names in the database)."""


def remote_name(work_dir: Path, *parts: str) -> str:
    """The name of state a `remote_prepare` hook has the deployment build for the run whose output
    folder is `work_dir`: the same on every replica and for every rerun of the same command, distinct
    for another output folder, and never a path of the client's own machine."""
    digest = hashlib.sha256(str(work_dir.absolute()).encode()).hexdigest()[:12]
    return "/".join((REMOTE_ROOT, digest, *parts))


class RemoteRunner(Protocol):
    """The deployment a `remote_prepare` hook drives (bench/run/remote_replicas.py implements it)."""

    servers: tuple[str, ...]
    """The deployment's URLs (replicas sharing one database)."""

    def run_all(
        self,
        calls: Sequence[RemoteCall],
        done: Callable[[RemoteCall, dict[str, Any]], None],
        concurrency: int,
    ) -> None:
        """Run every call on the deployment (at most `concurrency` in flight, retried on another
        replica when one is lost) and hand each output to `done` as it finishes; raises on the first
        run the deployment failed."""
        ...


def run_one(remote: RemoteRunner, call: RemoteCall) -> dict[str, Any]:
    """One run on one replica of the deployment (a training step's commit); its output."""
    answers: list[dict[str, Any]] = []
    remote.run_all([call], lambda _, output: answers.append(output), 1)
    return answers[0]


class HookReferenceError(RecgraphError):
    """A spec names a hook or graph that does not exist."""


@cache
def _top_level_names(module: str) -> frozenset[str]:
    """Names a module's file defines at top level (functions, classes, assignments, imports)."""
    top, _, rest = module.partition(".")
    loaded = sys.modules.get(top)
    spec = importlib.util.find_spec(top) if loaded is None else loaded.__spec__
    if spec is None:
        raise HookReferenceError(f"no package {top!r} (from module {module!r})")
    # an imported package's __path__ may have been extended (a method room outside the checkout)
    roots = list(getattr(loaded, "__path__", None) or spec.submodule_search_locations or [])
    if rest:
        bases = [Path(root).joinpath(*rest.split(".")) for root in roots]
        candidates = [c for b in bases for c in (b.with_suffix(".py"), b / "__init__.py")]
    else:
        candidates = [Path(spec.origin or "")]
    path = next((c for c in candidates if c.is_file()), None)
    if path is None:
        raise HookReferenceError(f"no module {module!r}")
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return frozenset(names)


def check_reference(reference: str, what: str) -> str:
    """`reference` ("module:attribute") when its module's file defines the attribute, else raise."""
    module, colon, attribute = reference.partition(":")
    if not colon or not module or not attribute:
        raise HookReferenceError(f"{what}: {reference!r} is not 'module:attribute'")
    if attribute not in _top_level_names(module):
        raise HookReferenceError(f"{what}: module {module!r} defines no {attribute!r}")
    return reference


@dataclass(frozen=True)
class MethodSpec:
    """Where a method's graph is, its context class, how to describe it, and its lifecycle hooks."""

    graph: str
    """"module:attribute" of the compiled graph (shared by a method and its ablations)."""
    kind: Literal["classic", "llm"]
    """"classic" (no LLM) or "llm" (agents with an LLM policy and a deterministic fallback)."""
    summary: str
    """One line for help texts, reports and the Studio assistant's description."""
    context: type[Context] = Context
    """The method family's context class (the graph's `context_schema`); overrides must name its
    fields."""
    overrides: Mapping[str, Any] = field(default_factory=dict)
    """Context fields this method fixes; applied in the graph's `runtime.context` (Studio, bench,
    perf, recommend) and in what its hooks receive."""
    prepare: Hook = ""
    """(PrepareRequest) -> Prepared, run before ranking (training / warm-up); empty: nothing."""
    remote_prepare: Hook = ""
    """(PrepareRequest, RemoteRunner) -> Prepared: `prepare` for users ranked on a LangGraph deployment
    (`recgraph bench --server`), every write done by the deployment's service assistants; empty: a
    method with a `prepare` hook is refused under --server."""
    prepare_family: str = ""
    """Methods whose `prepare` steps share files (a method and its ablations: shared rounds, a
    planner's trajectories) name one family, and `recgraph bench --workers N` runs a family's steps
    one after another (bench/run/prepare_plan.py); empty: the family of every method with the same
    `prepare` hook."""
    prepare_ahead: Hook = ""
    """(PrepareRequest) -> Prepared: the part of `prepare` that reads no other method's files (the
    learned router's planner training runs in a training world of its own), which `recgraph bench
    --workers N` runs as a step of its own from the start, beside the steps `prepare` waits for;
    `prepare` then finds what it made. The methods sharing this hook share its first step's files
    (the planners' trajectories): the first of them in the run goes first, the others then run side
    by side (bench/run/prepare_plan.py). Empty: none."""
    ahead_parts: Hook = ""
    """(context) -> list[AheadPart]: parts of the `prepare_ahead` work that read nothing another part
    or step writes (the learned router's training-world SASRec, GRU4Rec and LightGCN, and the memory
    vectors its trajectories read), each a step of its own under `recgraph bench --workers N` that
    the first `prepare_ahead` step of the run waits for; that step then reads what they made instead
    of doing it in its own process. Empty: none."""
    prepare_cost: float = 1.0
    """About how many CPU seconds its one-time work takes (its `prepare_ahead` step's when it has
    one), as measured in `make bench`'s run (ml-100k, 200 users, report.md's one-time work table).
    In that run the first method of a family does the work the family shares (AMEM4Rec's shared
    extraction, the learned routers' trajectories), so a later one run without it takes longer than
    declared. Only the order in which `recgraph bench --workers N` starts ready steps reads it (the
    longest chain of work first, bench/run/prepare_plan.py); what a step computes never depends on it."""
    preload: Hook = ""
    """(context) -> None: heavy one-time loading (a model, dataset-wide arrays), started by bench in a
    background thread when the run starts and awaited before `prepare` (bench/run/preload.py)."""
    perf_prepare: Hook = ""
    """(PrepareRequest) -> Prepared run by `bench perf` before its warm-up pass, with a scratch
    `work_dir`: the state its users are ranked on (AMEM4Rec trains a small pool there)."""
    perf_extras: Hook = ""
    """(PerfRequest) -> dict: method-specific `bench perf` figures; empty: none."""
    record_extras: Hook = ""
    """(metrics, details, context) -> dict: per-user figures that need the scored ranking (e.g.
    ChainRec's reward), stored in results.jsonl `details`; empty: none."""
    cli: Hook = ""
    """(subparsers) -> None: registers the family's `recgraph <family> ...` subcommands; empty: none."""
    llm_calls: Hook = ""
    """(context, candidates) -> CallPlan: LLM requests per user before retries; empty: none for a
    classic method, not declared for an LLM one."""
    training_calls: Hook = ""
    """(context, users, scenario, seed) -> TrainingPlan: the LLM requests the `prepare` step plans for
    the run's users under test, `context` pointed at the run's world with the run's knobs; empty:
    not declared (the cost plan then counts the prepare step's tokens only as probed)."""
    studio_example: Mapping[str, Any] = field(default_factory=lambda: dict(STUDIO_REQUEST))
    """A valid input on ml-100k (README, Studio, and the dev-server test run it)."""
    reported: tuple[str, ...] = ()
    """Context fields printed beside the method's results ("ran with ..." under the console table and
    in report.md): what a reader needs to know ran, e.g. the planner and its checkpoint."""
    trained_state: str = ""
    """What the graph cannot rank without and does not build itself (empty: nothing), e.g. a learned
    planner checkpoint: `prepare` builds it for `recgraph bench`; in Studio and `graph.invoke()` the
    graph refuses in one line saying how to build it, never ranking with something else instead."""
    evidence: EvidenceUse | None = None
    """What it reads and learns from (the fairness table, bench/report/fairness.py); every method
    declares it."""
    item_vectors: bool = False
    """True when its nodes read the MiniLM item vectors of a user's history and candidates: bench and
    bench perf embed those rows for every evaluated user in large batches before ranking
    (bench/run/item_prefetch.py) instead of a few rows per user."""

    def __post_init__(self) -> None:
        check_reference(self.graph, f"graph of {self.summary!r}")
        for name in HOOK_FIELDS:
            value = getattr(self, name)
            if isinstance(value, str) and value:
                check_reference(value, f"{name} hook of {self.summary!r}")
            elif value and not callable(value):
                raise HookReferenceError(
                    f"{name} hook of {self.summary!r} is neither callable nor a reference"
                )
        known = {f.name for f in fields(self.context)}
        unknown = sorted(set(self.overrides) - known)
        if unknown:
            raise HookReferenceError(
                f"{self.summary!r}: override {unknown[0]!r} is not a field of {self.context.__name__}"
            )


@dataclass(frozen=True)
class ServiceGraph:
    """A graph served in Studio that is not a recommender (e.g. a memory-write or training graph)."""

    graph: str
    """"module:attribute" of the compiled graph."""
    summary: str
    """The Studio assistant's description."""
    studio_example: Mapping[str, Any]
    """A valid input on ml-100k (README, Studio, and the dev-server test run it)."""

    def __post_init__(self) -> None:
        check_reference(self.graph, f"graph of {self.summary!r}")

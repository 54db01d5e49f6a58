"""Which prepare steps a `recgraph bench --workers N` run starts ahead (bench/run/prepare_ahead.py),
and what each waits for: the earlier steps of its prepare family, and for a router variant the
steps of its prerequisites that the run also benches."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.protocol.spec import EvalCase, Protocol
from graphs.registry import METHODS, method_context
from state.context import Context

ITEM_VECTORS = "item vectors"
"""The step embedding the run's item vectors once (every evaluated user's visible history and
candidates, as the first method reading them would), which the steps of methods that read them
wait for: two processes embedding the same rows at once would each do all of the work."""

@dataclass(frozen=True)
class PrepareStep:
    """One method's prepare step, as its process gets it."""

    method: str
    """The registered method."""
    cases: list[EvalCase]
    """The run's users (the step's hook is told every user, as in the parent)."""
    protocol: Protocol
    """The run's protocol."""
    log_path: Path
    """The run's results.jsonl (its folder is where the hook keeps its files)."""
    ranked: frozenset[str]
    """The method's users already in the log."""
    concurrency: int
    """LLM calls the hook may have in flight."""
    context: Context
    """The method's context with the run's `--set` knobs, before its hook."""
    after: tuple[str, ...] = ()
    """Methods whose steps must finish first."""
    waiting: int = 0
    """How many steps wait for this one, directly or not (started first when larger)."""
    order: int = 0
    """The method's place in the run (the tie-break)."""


def prepare_family(method: str) -> str:
    """The family whose steps run one after another (`MethodSpec.prepare_family`, else its hook)."""
    spec = METHODS[method]
    return spec.prepare_family or str(spec.prepare)


def prerequisite_methods(method: str, context: Context) -> list[str]:
    """The methods whose `prepare` hooks a router variant runs on `context` (the run's, with its
    `--set` knobs; the method's own class and overrides applied here), none for any other method."""
    if str(METHODS[method].prepare) != "graphs.router.prepare:prepare_for_bench":
        return []
    from graphs.router.prepare import prerequisites

    return prerequisites(method_context(method, context))  # type: ignore[arg-type]


def dependencies(methods: Sequence[str], contexts: Callable[[str], Context]) -> dict[str, tuple[str, ...]]:
    """Method -> the methods (of `methods`, with a prepare hook) its step waits for: its family's
    step before it, and a router variant's prerequisites wherever they are in the run."""
    stepped = [m for m in methods if METHODS[m].prepare]
    after: dict[str, tuple[str, ...]] = {}
    last: dict[str, str] = {}  # family -> its latest step so far
    for method in stepped:
        family = prepare_family(method)
        wanted = [last[family]] if family in last else []
        wanted += [m for m in prerequisite_methods(method, contexts(method)) if m in stepped and m != method]
        after[method] = tuple(dict.fromkeys(wanted))
        last[family] = method
    return after


def waiting_counts(after: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """Method -> how many steps wait for it, directly or through others."""
    waiting: dict[str, set[str]] = {}

    def waiters(method: str) -> set[str]:
        if method not in waiting:
            direct = {m for m, befores in after.items() if method in befores}
            waiting[method] = direct.union(*(waiters(m) for m in direct))
        return waiting[method]

    return {method: len(waiters(method)) for method in after}


def plan_steps(
    methods: Sequence[str],
    cases: Sequence[EvalCase],
    protocol: Protocol,
    log_path: Path,
    ranked: Callable[[str], frozenset[str]],
    concurrency: int,
    contexts: Callable[[str], Context],
) -> dict[str, PrepareStep]:
    """Method -> its step, for every method of the run with a `prepare` hook, and the
    `ITEM_VECTORS` step when one of the run's methods reads item vectors."""
    after = dependencies(methods, contexts)
    if after and any(METHODS[m].item_vectors for m in methods):
        reads = {m: (*a, ITEM_VECTORS) if METHODS[m].item_vectors else a for m, a in after.items()}
        after = {ITEM_VECTORS: (), **reads}
    waiting = waiting_counts(after)
    steps = {}
    for method in after:
        own = method != ITEM_VECTORS
        steps[method] = PrepareStep(
            method, list(cases), protocol, log_path, ranked(method) if own else frozenset(), concurrency,
            contexts(method if own else methods[0]), after[method], waiting[method],
            methods.index(method) if own else -1,
        )  # fmt: skip
    return steps

"""Which prepare steps a `recgraph bench --workers N` run starts ahead (bench/run/prepare_ahead.py),
and what each waits for: the earlier steps of its prepare family, for a router variant the steps of
its prerequisites that the run also benches, and its own `prepare_ahead` step (the learned planners'
training), which waits for none of those but its parts (the training world's models); and how long
each chain of steps is estimated to take, the order in which ready steps start."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.protocol.spec import EvalCase, Protocol
from graphs.hooks import AheadPart
from graphs.registry import METHODS, method_context
from graphs.registry import hook as method_hook
from state.context import Context

ITEM_VECTORS = "item vectors"
"""The step embedding the run's item vectors once (every evaluated user's visible history and
candidates, as the first method reading them would), which the steps of methods that read them
wait for: two processes embedding the same rows at once would each do all of the work."""
ITEM_VECTORS_COST = 14.0
"""About the CPU seconds of the `ITEM_VECTORS` step in `make bench`'s run (`MethodSpec.prepare_cost`)."""
AHEAD = " (ahead)"
"""Appended to a method's name for its `prepare_ahead` step."""


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
    chain_cost: float = 0.0
    """Estimated CPU seconds of this step plus the longest chain of steps waiting for it
    (`chain_costs`): of the ready steps, the one with the largest starts first."""
    order: int = 0
    """The method's place in the run (the tie-break)."""
    hook: str = ""
    """The `prepare_ahead` hook this step runs instead of the method's preparation (empty: that, or
    the step's `part`)."""
    part: AheadPart | None = None
    """The part of the method's `prepare_ahead` work this step does instead (`MethodSpec.ahead_parts`)."""

    @property
    def name(self) -> str:
        """The step's name in the plan: the method's, with `AHEAD` for its `prepare_ahead` step and
        the part's name for a part of it (`part_name`)."""
        if self.part is not None:
            return part_name(self.method, self.part)
        return ahead_name(self.method) if self.hook else self.method

    @property
    def fresh_process(self) -> bool:
        """Whether it starts in a process that ran no step before (bench/run/prepare_ahead.py): a
        `prepare_ahead` step and its parts are trainings of their own, the heaviest of the run,
        whose peak would otherwise stack on what an earlier step left behind."""
        return bool(self.hook) or self.part is not None

    @property
    def row_prefix(self) -> str:
        """What its progress rows are named after: the method, or for a part the step (parts run side
        by side, and a step's end ends the rows under its name)."""
        return self.name if self.part is not None else self.method


def ahead_name(method: str) -> str:
    """The name of `method`'s `prepare_ahead` step."""
    return method + AHEAD


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


def method_ahead_parts(method: str, context: Context) -> list[AheadPart]:
    """The parts of `method`'s `prepare_ahead` work that are steps of their own
    (`MethodSpec.ahead_parts` on `context` with the method's overrides), none without the hook."""
    parts = method_hook(method, "ahead_parts")
    return list(parts(method_context(method, context))) if parts else []


def part_name(method: str, part: AheadPart) -> str:
    """The name of the step doing `part` of `method`'s `prepare_ahead` work."""
    return f"{method} ({part.name})"


def planned_parts(
    methods: Sequence[str], contexts: Callable[[str], Context]
) -> dict[str, tuple[str, AheadPart]]:
    """Step name -> (method, part) for the parts of the first `prepare_ahead` step of each hook in the
    run (the step the others of that hook wait for, which would otherwise do them itself)."""
    leaders: dict[str, str] = {}  # prepare_ahead hook -> the first method with it
    for method in methods:
        if METHODS[method].prepare and METHODS[method].prepare_ahead:
            leaders.setdefault(str(METHODS[method].prepare_ahead), method)
    return {
        part_name(method, part): (method, part)
        for method in leaders.values()
        for part in method_ahead_parts(method, contexts(method))
    }


def dependencies(
    methods: Sequence[str],
    contexts: Callable[[str], Context],
    parts: dict[str, tuple[str, AheadPart]] | None = None,
) -> dict[str, tuple[str, ...]]:
    """Step -> the steps it waits for. A method's step (for each of `methods` with a prepare hook)
    waits for its family's step before it, a router variant's for its prerequisites wherever they
    are in the run, and a method with a `prepare_ahead` hook for that step. Those steps wait for
    nothing but the first one of their hook in the run, which writes what they share; that one waits
    for its parts (`parts`: `planned_parts`, computed when not given), which wait for nothing."""
    stepped = [m for m in methods if METHODS[m].prepare]
    parts = planned_parts(methods, contexts) if parts is None else parts
    after: dict[str, tuple[str, ...]] = dict.fromkeys(parts, ())
    last: dict[str, str] = {}  # family -> its latest step so far
    first_ahead: dict[str, str] = {}  # prepare_ahead hook -> its first step
    for method in stepped:
        ahead = str(METHODS[method].prepare_ahead)
        if ahead:
            leader = first_ahead.setdefault(ahead, ahead_name(method))
            own_parts = tuple(name for name, (of, _) in parts.items() if of == method)
            after[ahead_name(method)] = (leader,) if leader != ahead_name(method) else own_parts
        family = prepare_family(method)
        wanted = [last[family]] if family in last else []
        wanted += [m for m in prerequisite_methods(method, contexts(method)) if m in stepped and m != method]
        wanted += [ahead_name(method)] if ahead else []
        after[method] = tuple(dict.fromkeys(wanted))
        last[family] = method
    return after


def step_cost(name: str) -> float:
    """Estimated CPU seconds of step `name` (`MethodSpec.prepare_cost`): a method with a
    `prepare_ahead` step has its cost there, its own step then only finds what that made."""
    if name == ITEM_VECTORS:
        return ITEM_VECTORS_COST
    spec = METHODS[name.removesuffix(AHEAD)]
    return spec.prepare_cost if name.endswith(AHEAD) or not spec.prepare_ahead else 1.0


def chain_costs(after: dict[str, tuple[str, ...]], cost: Callable[[str], float]) -> dict[str, float]:
    """Step -> its cost plus the largest chain cost of the steps waiting for it directly: the
    critical path from the step to the end of the plan. Starting ready steps by it (longest first)
    keeps a long independent step from being left to run alone at the end."""
    waiters = {name: [m for m, befores in after.items() if name in befores] for name in after}
    chains: dict[str, float] = {}

    def chain(name: str) -> float:
        if name not in chains:
            chains[name] = cost(name) + max((chain(m) for m in waiters[name]), default=0.0)
        return chains[name]

    return {name: chain(name) for name in after}


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
    parts = planned_parts(methods, contexts)
    after = dependencies(methods, contexts, parts)
    method_of = {name: parts[name][0] if name in parts else name.removesuffix(AHEAD) for name in after}

    def reads_items(name: str) -> bool:  # a part only when it says so (`AheadPart.item_vectors`)
        return name not in parts or parts[name][1].item_vectors

    if after and any(METHODS[m].item_vectors for m in methods):
        reads = {
            s: (*a, ITEM_VECTORS) if METHODS[method_of[s]].item_vectors and reads_items(s) else a
            for s, a in after.items()
        }
        after = {ITEM_VECTORS: (), **reads}
    chains = chain_costs(after, lambda name: parts[name][1].cost if name in parts else step_cost(name))
    steps = {}
    for name in after:
        method = method_of.get(name, ITEM_VECTORS)
        own = method != ITEM_VECTORS
        part = parts[name][1] if name in parts else None
        hook = str(METHODS[method].prepare_ahead) if own and name != method and part is None else ""
        steps[name] = PrepareStep(
            method, list(cases), protocol, log_path, ranked(method) if own else frozenset(), concurrency,
            contexts(method if own else methods[0]), after[name], chains[name],
            methods.index(method) if own else -1, hook, part,
        )  # fmt: skip
    return steps


def start_order(steps: Iterable[PrepareStep]) -> list[PrepareStep]:
    """`steps` in the order ready ones start: the longest chain of estimated work first
    (`PrepareStep.chain_cost`), then the run's order."""
    return sorted(steps, key=lambda step: (-step.chain_cost, step.order))

"""Every method by name: the registry only collects what each method's room declares.

A method family's room `graphs/<name>/` has a `spec.py` declaring `METHODS` (name -> `MethodSpec`:
its graph, context class, ablation overrides and lifecycle hooks) and `SERVICE_GRAPHS` (served
graphs that are not recommenders). Adding a method = its rooms + its name in `METHOD_PACKAGES`.
Hook references and overrides are checked when a spec is made (graphs/method_spec.py), so a typo
fails when the registry loads. The harness and the CLI call the hooks generically:

- `prepare(PrepareRequest) -> Prepared`: training or warm-up before any user is ranked;
- `preload(context)`: heavy loading started in the background when a bench run starts;
- `perf_prepare(PrepareRequest) -> Prepared`: what `bench perf` ranks on (AMEM4Rec: a small pool);
- `perf_extras(PerfRequest) -> dict`: extra `bench perf` figures (MemRec's curation latency);
- `record_extras(metrics, details, context) -> dict`: per-user figures that need the scored ranking;
- `cli(subparsers) -> None`: adds the method family's `recgraph <family> ...` subcommands;
- `llm_calls(context, candidates) -> CallPlan`: LLM requests per user before retries;
- `training_calls(context, users, scenario, seed) -> TrainingPlan`: the prepare step's requests.

`langgraph.json` is generated from `served_graphs()` (`python -m graphs.registry > langgraph.json`;
a test fails when they differ). `graphs` never imports the harness.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from graphs.method_spec import MethodSpec, ServiceGraph
from state.context import Context, context_as
from world.errors import RecgraphError

if TYPE_CHECKING:  # LangGraph is imported when a graph is first asked for: `recgraph --help` never needs it
    from langgraph.graph.state import CompiledStateGraph

METHOD_PACKAGES: tuple[str, ...] = (
    "baselines", "arag", "memrec", "amem4rec", "chainrec", "router", "agentcf",
)  # fmt: skip
"""The method families' rooms under `graphs/`, in the order `all` runs their methods."""


def collect(packages: Iterable[str]) -> tuple[dict[str, MethodSpec], dict[str, ServiceGraph]]:
    """Every room's `METHODS` and `SERVICE_GRAPHS` (from `graphs.<package>.spec`), refusing a name
    two rooms declare."""
    methods: dict[str, MethodSpec] = {}
    services: dict[str, ServiceGraph] = {}
    for package in packages:
        spec = importlib.import_module(f"graphs.{package}.spec")
        for found, declared in ((methods, spec.METHODS), (services, spec.SERVICE_GRAPHS)):
            clash = sorted((set(methods) | set(services)) & set(declared))
            if clash:
                raise RecgraphError(f"graphs.{package}.spec declares {clash[0]!r}, already registered")
            found.update(declared)
    return methods, services


METHODS, SERVICE_GRAPHS = collect(METHOD_PACKAGES)
"""Method name -> spec (`all` means every entry, in this order); service graph name -> spec."""


def parse_methods(text: str) -> list[str]:
    """Expand `a,b,...` or `all` into method names, refusing unknown ones."""
    names = list(METHODS) if text.strip() == "all" else [t.strip() for t in text.split(",")]
    names = [n for n in names if n]
    if not names:
        raise RecgraphError("--methods is empty; name at least one method or 'all'")
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise RecgraphError(f"unknown method {unknown[0]!r}; available: {', '.join(METHODS)} or 'all'")
    return list(dict.fromkeys(names))


def resolve(reference: str | Callable[..., Any]) -> Any:
    """The object a "module:attribute" reference names (imported on first use), or the callable."""
    if callable(reference):
        return reference
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


@cache
def get_graph(name: str) -> CompiledStateGraph:
    """The compiled graph of method `name`: its runs see the method's context class with its overrides
    applied (`MethodGraph`), its root run is named `name` in LangSmith and tagged `method:<name>`,
    and its routing functions are not traced."""
    from graphs.run_context import MethodGraph
    from graphs.tracing import quiet_routes

    spec = METHODS[name]
    graph = resolve(spec.graph)
    if not isinstance(graph, MethodGraph) or graph.context_schema is not spec.context:
        raise RecgraphError(
            f"{spec.graph} must be compiled with graphs.run_context.compile_method and "
            f"context_schema={spec.context.__name__}"
        )
    graph = quiet_routes(graph)
    config: dict[str, Any] = {"tags": [f"method:{name}"], "metadata": {"method": name}}
    return graph.copy(update={"name": name, "method_overrides": dict(spec.overrides)}).with_config(**config)


def service_graph(name: str) -> CompiledStateGraph:
    """The compiled service graph `name` (e.g. `memrec_write`), its routing functions not traced."""
    from graphs.tracing import quiet_routes

    return quiet_routes(resolve(SERVICE_GRAPHS[name].graph))


def method_context(name: str, context: Context | None) -> Context:
    """What method `name`'s graph and hooks see for a run's `context`: its context class, sharing
    the run's common settings, with its overrides applied."""
    spec = METHODS[name]
    return context_as(spec.context, context, spec.overrides)


def hook(
    name: str,
    which: Literal[
        "prepare",
        "prepare_ahead",
        "ahead_parts",
        "preload",
        "perf_prepare",
        "perf_extras",
        "record_extras",
        "llm_calls",
        "training_calls",
    ],
) -> Callable[..., Any] | None:
    """Method `name`'s lifecycle hook, or None when it declares none."""
    reference = getattr(METHODS[name], which)
    return resolve(reference) if reference else None


def cli_registrars() -> list[Callable[[Any], None]]:
    """Every distinct CLI registration hook, in registry order."""
    references = dict.fromkeys(spec.cli for spec in METHODS.values() if spec.cli)
    return [resolve(reference) for reference in references]


def served_graphs() -> dict[str, dict[str, str]]:
    """langgraph.json's `graphs`: every method and service graph by name, with the path the server
    imports it from and its summary (the Studio assistant's description)."""
    return {
        name: {"path": f"./graphs/served.py:{name}", "description": summary}
        for name, summary in descriptions().items()
    }


def studio_examples() -> dict[str, dict[str, Any]]:
    """A valid input on ml-100k for every served graph, by name."""
    found = {name: dict(spec.studio_example) for name, spec in METHODS.items()}
    found.update({name: dict(spec.studio_example) for name, spec in SERVICE_GRAPHS.items()})
    return found


def descriptions() -> dict[str, str]:
    """Studio assistant descriptions by graph name."""
    found = {name: spec.summary for name, spec in METHODS.items()}
    found.update({name: spec.summary for name, spec in SERVICE_GRAPHS.items()})
    return found


AUTH = {"path": "./graphs/auth/server.py:auth", "disable_studio_auth": True}
"""langgraph.json's `auth`: the project's custom auth (graphs/auth/), and no unchecked Studio bypass."""


def langgraph_json() -> str:
    """The content langgraph.json must have."""
    return json.dumps({"dependencies": ["."], "graphs": served_graphs(), "auth": AUTH}, indent=2) + "\n"


if __name__ == "__main__":
    print(langgraph_json(), end="")

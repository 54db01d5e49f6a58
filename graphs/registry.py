"""Every method by name: the one extension point.

A method is one `MethodSpec`: where its compiled graph is, what kind it is, the `Context` fields
its ablation fixes, and optional lifecycle hooks the harness and the CLI call generically:

- `prepare(PrepareRequest) -> Prepared`: training or warm-up before any user is ranked (MemRec's
  Stage W warm-up); returns the method's context and figures for metrics.json;
- `perf_prepare(PrepareRequest) -> Prepared`: what `bench perf` ranks on (AMEM4Rec: a small pool);
- `perf_extras(PerfRequest) -> dict`: extra `bench perf` figures (MemRec's curation latency);
- `record_extras(metrics, details, context) -> dict`: per-user figures that need the scored ranking;
- `cli(subparsers) -> None`: adds the method family's `recgraph <family> ...` subcommands;
- `llm_calls(context, candidates) -> CallPlan`: LLM requests per user before retries (printed by
  `recgraph bench` before a paid backend starts; graphs/lifecycle/call_plans.py).

Hooks are named as "module:function" and imported on first use, so reading the registry is cheap
(Studio starts fast) and `graphs` never imports the harness. `langgraph.json` is generated from
`served_graphs()` (`python -m graphs.registry > langgraph.json`; a test fails when they differ).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from typing import Any, Literal

from langgraph.graph.state import CompiledStateGraph

from graphs.method_spec import MethodSpec, ServiceGraph
from graphs.run_context import OVERRIDES_KEY
from graphs.tracing import quiet_routes
from state.context import Context
from world.errors import RecgraphError

CALL_PLANS = "graphs.lifecycle.call_plans"
MEMREC_WARMUP = "graphs.lifecycle.memrec_warmup"
MEMREC_PERF = "graphs.lifecycle.memrec_perf:memrec_extras"
MEMREC_CLI = "recgraph.memrec_command:register"


def _memrec(summary: str, prepare: str, **overrides: Any) -> MethodSpec:
    return MethodSpec(
        "graphs.memrec:graph",
        "llm",
        summary,
        overrides,
        prepare=f"{MEMREC_WARMUP}:{prepare}",
        preload="graphs.lifecycle.memrec_preload:preload",
        perf_extras=MEMREC_PERF,
        record_extras="graphs.lifecycle.memrec_whole_run:ranked",
        cli=MEMREC_CLI,
        llm_calls=f"{CALL_PLANS}:{'memrec_calls' if prepare == 'with_stage_w' else 'memrec_no_write_calls'}",
        item_vectors=True,
    )


AMEM4REC_HOOKS = "graphs.lifecycle.amem4rec_hooks"


def _amem4rec(summary: str, **overrides: Any) -> MethodSpec:
    return MethodSpec(
        "graphs.amem4rec:graph",
        "llm",
        summary,
        overrides,
        prepare=f"{AMEM4REC_HOOKS}:train_for_bench",
        perf_prepare=f"{AMEM4REC_HOOKS}:train_for_perf",
        perf_extras=f"{AMEM4REC_HOOKS}:ranking_perf",
        cli="recgraph.amem4rec_command:register",
        llm_calls=f"{CALL_PLANS}:amem4rec_calls",
        item_vectors=True,
    )


CHAINREC_REWARD = "graphs.lifecycle.chainrec_reward:reward_extras"
CHAINREC_ALL_TOOLS = 8
"""The Tool Agent Library's size: `chainrec_fixed` may call every tool (agents/chainrec/catalog.py)."""


CHAINREC_LEARNED = "graphs.lifecycle.chainrec_learned:train_for_bench"
"""Finds or trains (trajectories, SFT, DPO) the learned planner's checkpoint before ranking."""


def _chainrec(summary: str, **overrides: Any) -> MethodSpec:
    return MethodSpec(
        "graphs.chainrec:graph",
        "llm",
        summary,
        overrides,
        record_extras=CHAINREC_REWARD,
        llm_calls=f"{CALL_PLANS}:chainrec_calls",
        cli="recgraph.chainrec_command:register",
        item_vectors=True,
    )


METHODS: dict[str, MethodSpec] = {
    "random": MethodSpec("graphs.baselines:random_graph", "classic", "seeded random order"),
    "popularity": MethodSpec("graphs.baselines:popularity_graph", "classic", "training popularity"),
    "itemknn": MethodSpec("graphs.baselines:itemknn_graph", "classic", "item-item co-occurrence CF"),
    "bpr": MethodSpec("graphs.baselines:bpr_graph", "classic", "BPR matrix factorisation"),
    "embedding": MethodSpec(
        "graphs.baselines:embedding_graph", "classic", "MiniLM cosine to recent history", item_vectors=True
    ),
    "vanilla_llm": MethodSpec(
        "graphs.llm_baselines:vanilla_llm_graph",
        "llm",
        "zero-shot LLM ranking (LLMRank)",
        llm_calls=f"{CALL_PLANS}:one_call",
        item_vectors=True,
    ),
    "recency_llm": MethodSpec(
        "graphs.llm_baselines:recency_llm_graph",
        "llm",
        "LLM ranking from recent items (ARAG)",
        llm_calls=f"{CALL_PLANS}:one_call",
        item_vectors=True,
    ),
    "vanilla_rag": MethodSpec(
        "graphs.llm_baselines:vanilla_rag_graph",
        "llm",
        "LLM ranking with retrieved history",
        llm_calls=f"{CALL_PLANS}:one_call",
        item_vectors=True,
    ),
    "arag": MethodSpec(
        "graphs.arag:graph",
        "llm",
        "ARAG: UUA ∥ NLI → CSA → IRA blackboard agents",
        llm_calls=f"{CALL_PLANS}:arag_calls",
        item_vectors=True,
    ),
    "arag_no_nli": MethodSpec(
        "graphs.arag:arag_no_nli_graph",
        "llm",
        "ARAG without NLI",
        llm_calls=f"{CALL_PLANS}:arag_no_nli_calls",
        item_vectors=True,
    ),
    "arag_no_nli_csa": MethodSpec(
        "graphs.arag:arag_no_nli_csa_graph",
        "llm",
        "ARAG without NLI and CSA",
        llm_calls=f"{CALL_PLANS}:arag_no_nli_csa_calls",
        item_vectors=True,
    ),
    "memrec": _memrec("MemRec: curate, synthesise facets, rerank; Stage W", "with_stage_w"),
    "memrec_no_read": _memrec("MemRec without collaborative read", "with_stage_w", memrec_use_read=False),
    "memrec_no_llm_rules": _memrec(
        "MemRec with the generic curation rules", "with_stage_w", memrec_rules="generic"
    ),
    "memrec_no_write": _memrec("MemRec without collaborative write", "read_only"),
    "amem4rec": _amem4rec("AMEM4Rec: cross-user pattern memory pool; retrieve K memories, rank in one call"),
    "amem4rec_no_evolution": _amem4rec("AMEM4Rec without evolution (store only)", amem_evolution=False),
    "amem4rec_no_semantic": _amem4rec("AMEM4Rec without the semantic validator", amem_semantic=False),
    "amem4rec_no_similarity": _amem4rec("AMEM4Rec without the similarity validator", amem_similarity=False),
    "chainrec": _chainrec(
        "ChainRec: a planner routes tool agents on a conditional edge, then CandidateRank (learned "
        "planner when the dataset has a checkpoint, else rule)",
        chainrec_planner="auto",
    ),
    "chainrec_fixed": _chainrec(
        "ChainRec fixed workflow: every feasible tool in catalog order, then CandidateRank",
        chainrec_planner="fixed",
        chainrec_max_steps=CHAINREC_ALL_TOOLS,
    ),
    "chainrec_llm_planner": _chainrec("ChainRec with the zero-shot LLM planner", chainrec_planner="llm"),
    "chainrec_learned": replace(
        _chainrec(
            "ChainRec with the learned planner (SFT then DPO; trained when missing)",
            chainrec_planner="learned",
        ),
        prepare=CHAINREC_LEARNED,
    ),
    "chainrec_sft": replace(
        _chainrec(
            "ChainRec with the learned planner after SFT only",
            chainrec_planner="learned",
            chainrec_policy_stage="sft",
        ),
        prepare=CHAINREC_LEARNED,
    ),
}
"""Method name -> spec; `all` means every entry, in this order."""

SERVICE_GRAPHS: dict[str, ServiceGraph] = {
    "memrec_write": ServiceGraph(
        "graphs.memrec_write:graph",
        "MemRec Stage W: propagate one interaction into the memory graph",
        {"user_id": "1", "item_id": "50"},
    ),
    "amem4rec_train": ServiceGraph(
        "graphs.amem4rec_train:graph",
        "AMEM4Rec training: one window through extraction, Eq. 7, linking, evolution and commit",
        {"user_id": "1", "start": 0},
    ),
}
"""Graphs served in Studio besides the recommenders."""


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


def resolve(reference: str) -> Any:
    """The object a "module:attribute" reference names (imported on first use)."""
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


@cache
def get_graph(name: str) -> CompiledStateGraph:
    """The compiled graph of method `name`, carrying the method's Context overrides and name (its
    root run's name in LangSmith), tagged `method:<name>`, its routing functions not traced."""
    spec = METHODS[name]
    graph: CompiledStateGraph = quiet_routes(resolve(spec.graph))
    config: dict[str, Any] = {"tags": [f"method:{name}"], "metadata": {"method": name}}
    if spec.overrides:
        config["configurable"] = {OVERRIDES_KEY: dict(spec.overrides)}
    graph = graph.with_config(**config)
    return graph.copy(update={"name": name}) if graph.name != name else graph


def service_graph(name: str) -> CompiledStateGraph:
    """The compiled service graph `name` (e.g. `memrec_write`), its routing functions not traced."""
    return quiet_routes(resolve(SERVICE_GRAPHS[name].graph))


def method_context(name: str, context: Context) -> Context:
    """`context` with method `name`'s overrides applied (what its hooks and graph see)."""
    overrides = METHODS[name].overrides
    return replace(context, **overrides) if overrides else context


def hook(
    name: str,
    which: Literal["prepare", "preload", "perf_prepare", "perf_extras", "record_extras", "llm_calls"],
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


def langgraph_json() -> str:
    """The content langgraph.json must have."""
    return json.dumps({"dependencies": ["."], "graphs": served_graphs()}, indent=2) + "\n"


if __name__ == "__main__":
    print(langgraph_json(), end="")

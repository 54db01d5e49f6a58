"""AgentCF's registry entries: the three ranking variants of the paper (one trained memory serves
them all) and the training graph."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from graphs.evidence_use import TEXT_FIELDS, TRAINING, EvidenceUse
from graphs.method_spec import MethodSpec, ServiceGraph
from state.agentcf.context import AgentCFContext

HISTORY = {
    "sequential": "last {agentcf_history_items} (B+H's own window: `agentcf_history_items`)",
    "retrieval": "none (its past self-descriptions instead)",
}
"""What each ranking prompt shows of the history (basic: none; its memory stands for it)."""


def _agentcf(summary: str, **overrides: Any) -> MethodSpec:
    return MethodSpec(
        "graphs.agentcf.graph:graph",
        "llm",
        summary,
        AgentCFContext,
        overrides,
        prepare="graphs.agentcf.hooks:train_for_bench",
        perf_prepare="graphs.agentcf.hooks:train_for_bench",
        remote_prepare="graphs.agentcf.remote_training:train_remotely",
        llm_calls="graphs.agentcf.hooks:agentcf_calls",
        reported=("agentcf_memory",),
        evidence=EvidenceUse(
            HISTORY.get(overrides.get("agentcf_ranking", "basic"), "none"),
            f"its item agent's memory, then T(i)'s {TEXT_FIELDS}",
            learns_from="user and item memories trained on " + TRAINING,
        ),
    )


METHODS: dict[str, MethodSpec] = {
    "agentcf": replace(
        _agentcf("AgentCF: user and item agents learn by collaborative reflection; basic ranking"),
        prepare_cost=5,  # the variants after it find its trained memory
    ),
    "agentcf_sequential": _agentcf(
        "AgentCF ranking with the recent history too (B+H)", agentcf_ranking="sequential"
    ),
    "agentcf_retrieval": _agentcf(
        "AgentCF ranking with retrieved past self-descriptions (B+R)", agentcf_ranking="retrieval"
    ),
}
"""AgentCF and its ranking variants (their training knobs are the same: one trained memory)."""

SERVICE_GRAPHS: dict[str, ServiceGraph] = {
    "agentcf_train": ServiceGraph(
        "graphs.agentcf.train_graph:graph",
        "AgentCF training: one interaction through the user agent's choice and collaborative reflection",
        {"user_id": "1", "position": 0},
    ),
    "agentcf_commit": ServiceGraph(
        "graphs.agentcf.remote_commit:graph",
        "AgentCF training on a deployment: the trained memories written where the served graphs read them",
        {"user_id": "1"},
    ),
}
"""One training interaction as its own graph (Studio, and the bench training steps)."""

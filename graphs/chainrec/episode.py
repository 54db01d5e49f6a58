"""An episode as the planner graph's nodes see it: the tools' `Episode`, and the per-user details
CandidateRank writes for the benchmark."""

from __future__ import annotations

from typing import Any

from agents.chainrec.online.tool_agent import Episode
from state.chainrec.context import ChainRecContext
from state.chainrec.state import ChainRecState
from tools.chainrec.episode_tools import EpisodeScope
from world.environment import Environment


def episode_of(state: ChainRecState, ctx: ChainRecContext, env: Environment) -> Episode:
    """The episode a tool or CandidateRank works in."""
    scope = EpisodeScope(env, state["user_id"], state.get("scenario") or "classic")
    return Episode(scope, tuple(state["candidates"] or ()), tuple(state.get("memory", [])), ctx)


def episode_details(state: ChainRecState, ctx: ChainRecContext) -> dict[str, Any]:
    """Per-user figures for the benchmark: steps, tools, the trajectory and how the planning went."""
    memory = state.get("memory", [])
    decisions = state.get("decisions", [])
    return {
        "steps": len(memory),
        "tools": [entry["tool"] for entry in memory],
        "trajectory": [
            {
                "step": entry["step"],
                "tool": entry["tool"],
                "confidence": entry["confidence"],
                "summary": entry["summary"],
                "source": entry["source"],
            }
            for entry in memory
        ],
        "planner": ctx.chainrec_planner,
        "planner_used": sorted({d["planner"] for d in decisions}),
        "planner_repairs": sum(1 for d in decisions if d["repaired"]),
        "budget_stops": int(len(memory) >= ctx.chainrec_max_steps),
    }

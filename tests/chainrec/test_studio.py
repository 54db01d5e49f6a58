"""ChainRec under `langgraph dev` (the server Studio talks to): it runs without blocking the event loop,
and the drawn graph shows the planner, one node per tool and the planner's conditional edges."""

from __future__ import annotations

from itertools import groupby

from tests.dev_server import DevServer, call, run_wait
from tests.test_studio_server import server  # noqa: F401  (the session's Studio server)

TOOLS = {
    "long_term_preference",
    "short_term_preference",
    "positive_preference",
    "negative_preference",
    "item_semantic",
    "item_profile",
    "author_preference",
    "geo_context",
}


def test_chainrec_runs_in_the_dev_server(server: DevServer) -> None:  # noqa: F811
    request = {"user_id": "1", "candidates": ["1", "50", "181", "100", "258"]}
    result = run_wait(server.port, "chainrec", request, {"dataset": server.dataset})
    assert sorted(result["ranking"]) == ["1", "100", "181", "258", "50"]
    # the nodes in the order they posted (a node may post more than one note)
    roles = [role for role, _ in groupby(m["role"] for m in result["trace"])]
    assert roles[0] == "validate_input" and roles[-1] == "candidate_rank"
    # planner, tool, planner, tool, ..., planner, candidate_rank: every tool at most once
    steps = roles[2:-1:2]
    assert roles[1:-1:2] == ["planner"] * (len(steps) + 1)
    assert steps and set(steps) <= TOOLS and len(set(steps)) == len(steps)
    assert result["details"]["steps"] == len(steps)


def test_chainrec_graph_draws_every_tool_branch(server: DevServer) -> None:  # noqa: F811
    assistants = call(server.port, "/assistants/search", {"limit": 100})
    by_graph = {a["graph_id"]: a["assistant_id"] for a in assistants}
    drawn = call(server.port, f"/assistants/{by_graph['chainrec']}/graph")
    nodes = {node["id"] for node in drawn["nodes"]}
    assert {"planner", "candidate_rank", *TOOLS} <= nodes
    branches = {e["target"] for e in drawn["edges"] if e["source"] == "planner"}
    assert branches == {"candidate_rank", *TOOLS}
    assert all(e.get("conditional") for e in drawn["edges"] if e["source"] == "planner")


ROUTER_TOOLS = TOOLS | {
    "memory_neighbourhood", "pattern_memories", "intent_evidence", "collaborative_signal",
    "sequential_signal", "graph_signal", "agent_memories", "recency_ranking",
}  # fmt: skip


def test_router_runs_in_the_dev_server_with_its_nodes_named_by_tool(server: DevServer) -> None:  # noqa: F811
    """The router's method tools (some read a memory graph or a pool: off the event loop) run under
    `langgraph dev`, each trace entry named after its tool's node; Studio draws every branch."""
    request = {"user_id": "1", "candidates": ["1", "50", "181", "100", "258"]}
    for name in ("router", "router_fixed"):
        result = run_wait(server.port, name, request, {"dataset": server.dataset})
        roles = [role for role, _ in groupby(m["role"] for m in result["trace"])]
        steps = roles[2:-1:2]
        assert roles[1:-1:2] == ["planner"] * (len(steps) + 1) and roles[-1] == "candidate_rank"
        assert steps and set(steps) <= ROUTER_TOOLS and len(set(steps)) == len(steps)
        assert "collaborative_signal" in steps
    assistants = call(server.port, "/assistants/search", {"limit": 100})
    by_graph = {a["graph_id"]: a["assistant_id"] for a in assistants}
    drawn = call(server.port, f"/assistants/{by_graph['router']}/graph")
    branches = {e["target"] for e in drawn["edges"] if e["source"] == "planner"}
    assert branches == {"candidate_rank", *ROUTER_TOOLS}
    assert all(e.get("conditional") for e in drawn["edges"] if e["source"] == "planner")

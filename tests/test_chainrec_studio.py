"""ChainRec under `langgraph dev` (the server Studio talks to): it runs without blocking the event loop,
and the drawn graph shows the planner, one node per tool and the planner's conditional edges."""

from __future__ import annotations

from tests.test_studio_server import (  # noqa: F401  (the module-scoped server fixture)
    DevServer,
    call,
    run_wait,
    server,
)


def test_chainrec_runs_in_the_dev_server(server: DevServer) -> None:  # noqa: F811
    request = {"user_id": "1", "candidates": ["1", "50", "181", "100", "258"]}
    result = run_wait(server.port, "chainrec", request, {"dataset": server.dataset})
    assert sorted(result["ranking"]) == ["1", "100", "181", "258", "50"]
    roles = [m["role"] for m in result["trace"]]
    assert (
        roles[:3] == ["validate_input", "planner", "long_term_preference"] and roles[-1] == "candidate_rank"
    )
    assert result["details"]["steps"] == roles.count("planner") - 1


def test_chainrec_graph_draws_every_tool_branch(server: DevServer) -> None:  # noqa: F811
    assistants = call(server.port, "/assistants/search", {"limit": 100})
    by_graph = {a["graph_id"]: a["assistant_id"] for a in assistants}
    drawn = call(server.port, f"/assistants/{by_graph['chainrec']}/graph")
    nodes = {node["id"] for node in drawn["nodes"]}
    tools = {
        "long_term_preference",
        "short_term_preference",
        "positive_preference",
        "negative_preference",
        "item_semantic",
        "item_profile",
        "author_preference",
        "geo_context",
    }
    assert {"planner", "candidate_rank", *tools} <= nodes
    branches = {e["target"] for e in drawn["edges"] if e["source"] == "planner"}
    assert branches == {"candidate_rank", *tools}
    assert all(e.get("conditional") for e in drawn["edges"] if e["source"] == "planner")

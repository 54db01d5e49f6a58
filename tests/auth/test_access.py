"""Who may do what on the authenticated server: the status codes callers get through static API keys
and JWTs, threads a user may list, read and run, and requests past the bounds or moving deployment
settings refused before the run."""

from __future__ import annotations

import pytest

from tests.auth.client import SERVICE, USER7, USER8, rank, send, token
from tests.dev_server import DevServer

pytestmark = pytest.mark.slow


def test_status_codes_through_keys_and_tokens(server: DevServer) -> None:
    for seven, eight, service in (
        (USER7, USER8, SERVICE),
        (token("7", "user"), token("8", "user"), token("ops", "service")),
    ):
        assert rank(server, "itemknn", {"user_id": "7"}, None)[0] == 401
        assert rank(server, "itemknn", {"user_id": "7"}, seven[:-1] + "x")[0] == 401
        status, answer = rank(server, "itemknn", {"user_id": "7"}, seven)
        assert status == 200 and len(answer["ranking"]) == 10
        status, answer = rank(server, "itemknn", {"user_id": "8"}, seven)
        assert status == 403 and "may rank only for itself" in answer["detail"]
        status, answer = rank(server, "memrec_write", {"user_id": "7", "item_id": "50"}, seven)
        assert status == 403 and "service role" in answer["detail"]
        assert rank(server, "itemknn", {"user_id": "8"}, eight)[0] == 200
        assert rank(server, "itemknn", {"user_id": "8"}, service)[0] == 200
        status, answer = rank(
            server, "memrec_write", {"user_id": "7", "item_id": "50"}, service, memrec_write_mode="propose"
        )
        assert status == 200 and answer["status"] == "proposed"
    assert rank(server, "itemknn", {"user_id": "7"}, token("7", "user", seconds=-5))[0] == 401
    assert rank(server, "itemknn", {"user_id": "7"}, token("7", "user", secret="x" * 40))[0] == 401
    assert rank(server, "itemknn", {"user_id": "7"}, token("7", "admin"))[0] == 401


def test_a_user_lists_reads_and_runs_only_its_own_threads(server: DevServer) -> None:
    status, mine = send(server, "/threads", {"metadata": {"owner": "user:8"}}, USER7)
    assert status == 200 and mine["metadata"]["owner"] == "user:7"  # a user cannot plant another owner
    theirs = send(server, "/threads", {}, USER8)[1]
    listed = send(server, "/threads/search", {"limit": 1000}, USER7)[1]
    assert {t["metadata"]["owner"] for t in listed} == {"user:7"}
    assert mine["thread_id"] in {t["thread_id"] for t in listed}
    assert theirs["thread_id"] in {
        t["thread_id"] for t in send(server, "/threads/search", {"limit": 1000}, SERVICE)[1]
    }
    assert send(server, f"/threads/{theirs['thread_id']}", key=USER7)[0] == 404
    body = {"assistant_id": "itemknn", "input": {"user_id": "7"}, "context": {"dataset": server.dataset}}
    assert send(server, f"/threads/{theirs['thread_id']}/runs/wait", body, USER7)[0] == 404
    assert send(server, f"/threads/{mine['thread_id']}/runs/wait", body, USER7)[0] == 200
    assert send(server, f"/threads/{mine['thread_id']}/runs", key=USER8)[0] == 404
    put = {"namespace": ["user:8", "notes"], "key": "k", "value": {"v": 1}}
    assert send(server, "/store/items", put, USER7, method="PUT")[0] == 403
    assert (
        send(server, "/store/items", {**put, "namespace": ["user:7", "notes"]}, USER7, method="PUT")[0] == 204
    )
    assert send(server, "/assistants", {"graph_id": "memrec_write"}, USER7)[0] == 403
    # `langgraph dev` would take this header from anyone as a Studio user: it is switched off
    assert send(server, "/threads/search", {}, headers={"x-auth-scheme": "langsmith"})[0] == 401


def test_bounds_and_deployment_settings_are_refused_before_the_run(server: DevServer) -> None:
    cases = [
        ({"user_id": "7", "instruction": "x" * 2001}, USER7, {}, 422, "input.instruction: 2001 characters"),
        ({"user_id": "7", "candidates": [str(i) for i in range(501)]}, SERVICE, {}, 422, "input.candidates"),
        ({"user_id": "7", "history": ["1"] * 10}, USER7, {}, 422, "input.history: not a RecInput field"),
        ({"user_id": "7", "history": ["1"] * 501}, SERVICE, {}, 422, "input.history: 501 items"),
        ({"user_id": "7"}, USER7, {"base_url": "http://127.0.0.1:9/v1"}, 403, "context.base_url"),
        ({"user_id": "7"}, USER7, {"dataset": "/etc"}, 403, "context.dataset"),
    ]
    for payload, key, context, status, detail in cases:
        found = rank(server, "itemknn", payload, key, **context)
        assert found[0] == status and found[1]["detail"].startswith(detail), found

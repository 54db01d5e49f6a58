"""Calling the authenticated `langgraph dev` of these tests: its keys and JWT secret, a signed token,
and one request with a bearer credential."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

import jwt

from tests.dev_server import DevServer

USER7, USER8, SERVICE = "user-seven-key-0123456789", "user-eight-key-0123456789", "service-key-0123456789ab"
SECRET = "hs256-secret-for-the-auth-tests-0123456789"
"""Two users' API keys and a service's; the HS256 secret of the tokens."""
KEYS = f"{USER7}:user:7,{USER8}:user:8,{SERVICE}:service"
"""RECGRAPH_API_KEYS of the server: key:role[:user id], comma-separated."""


def token(sub: str, role: str, seconds: int = 600, secret: str = SECRET) -> str:
    """An HS256 JWT for `sub` in `role`, expiring in `seconds` (negative: already expired)."""
    return jwt.encode(
        {"sub": sub, "role": role, "exp": int(time.time()) + seconds}, secret, algorithm="HS256"
    )


def send(
    server: DevServer,
    path: str,
    body: Any = None,
    key: str | None = None,
    raw: bytes | None = None,
    method: str | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """(status, decoded answer) of one request; `key` goes as a bearer credential."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    sent = {"Content-Type": "application/json", **(headers or {})}
    if key:
        sent["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{path}",
        data=data,
        method=method or ("POST" if data else "GET"),
        headers=sent,
    )
    try:
        with urllib.request.urlopen(request, timeout=600) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def rank(server: DevServer, graph: str, payload: dict, key: str | None, **context: Any) -> tuple[int, Any]:
    """(status, answer) of one `/runs/wait` of `graph` on the server's dataset."""
    return send(
        server,
        "/runs/wait",
        {"assistant_id": graph, "input": payload, "context": {"dataset": server.dataset, **context}},
        key,
    )

"""Shared by the simulated-server tests: the prompt and its candidate ids, the minimal ranking answer,
a real ChatOpenAI client pointed at a `SimServer`, and one raw POST."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from llmsim.process import SimServer

IDS = ["i10", "i20", "i30", "i40", "i50"]
PROMPT = (
    "The user recently watched:\n[h1] Old Movie\n[h2] Older Movie\n"
    "Candidates:\n" + "\n".join(f"[{i}] Title {i}" for i in IDS) + "\nRank every candidate."
)


class SimpleRanking(BaseModel):
    """A minimal ranking answer."""

    ranking: list[str]


def chat(server: SimServer, timeout: float = 5) -> ChatOpenAI:
    """A real ChatOpenAI client pointed at the simulated server."""
    return ChatOpenAI(
        base_url=server.base_url, api_key="sim", model="sim-model", max_retries=0, timeout=timeout
    )


def post(server: SimServer, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
    """One raw POST /v1/chat/completions."""
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), json.loads(response.read())
    finally:
        conn.close()

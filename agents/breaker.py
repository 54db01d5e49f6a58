"""The circuit breaker on LLM endpoints: a dead endpoint stops the run instead of feeding it fallbacks.

Every agent's requests go through `agents.base.agent_loop`, which reports here how each request
ended. Connection failures (refused, reset, DNS: the request never reached a server) count per
endpoint, process-wide and across concurrent users; anything the server answered (an answer, a
429/500, an unusable JSON) proves it is reachable and resets the count. Timeouts neither count nor
reset: a slow or faulty server times out now and then among successes, and a run of them is not
"unreachable". When the count reaches `Context.max_connection_failures`, the failing agent raises
`EndpointUnreachable` and the run stops with that one line (the results log keeps what finished).

The count is never latched open: the next request is still sent, so a server that comes back
(e.g. in a long-lived `langgraph dev`) works again at its first answer.
"""

from __future__ import annotations

import os
import threading

from world.errors import RecgraphError

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
"""Where `openai:<model>` goes without --base-url or OPENAI_BASE_URL."""

_lock = threading.Lock()
_consecutive: dict[str, int] = {}


class EndpointUnreachable(RecgraphError):
    """An LLM endpoint failed `limit` connections in a row: the run stops rather than fall back."""


def endpoint_of(spec: str, base_url: str) -> str:
    """The URL a backend spec sends its requests to (how the breaker and its message name it)."""
    if spec == "local":
        return "local"
    if spec == "sim":
        return base_url or os.environ.get("RECGRAPH_SIM_URL", "") or "sim"
    return base_url or os.environ.get("OPENAI_BASE_URL", "") or OPENAI_DEFAULT_URL


def describe_failure(error: BaseException) -> str:
    """One line for a connection failure: the client's message and its root cause (clients wrap
    the socket error in one or two exceptions of their own)."""
    text = " ".join(str(error).split()) or type(error).__name__
    root, seen = error, {id(error)}
    while (cause := root.__cause__ or root.__context__) is not None and id(cause) not in seen:
        root = cause
        seen.add(id(cause))
    detail = " ".join(str(root).split())
    return f"{text} ({detail})" if detail and detail not in text else text


def connection_failed(endpoint: str, limit: int, error: BaseException) -> None:
    """Count one connection failure; raise `EndpointUnreachable` at `limit` in a row (0: never)."""
    with _lock:
        count = _consecutive.get(endpoint, 0) + 1
        _consecutive[endpoint] = count
    if limit > 0 and count >= limit:
        raise EndpointUnreachable(
            f"the LLM endpoint {endpoint} is unreachable: {count} connection failures in a row "
            f"(last: {describe_failure(error)}); start the server or fix --base-url "
            f"(--max-connection-failures {limit} sets when a run stops)"
        ) from None


def endpoint_answered(endpoint: str) -> None:
    """The server answered (whatever the answer): the endpoint is reachable, the count restarts."""
    with _lock:
        _consecutive.pop(endpoint, None)


def consecutive_failures(endpoint: str) -> int:
    """Connection failures in a row so far at `endpoint`."""
    with _lock:
        return _consecutive.get(endpoint, 0)


def reset_breakers() -> None:
    """Forget every count (a new run in the same process, tests)."""
    with _lock:
        _consecutive.clear()

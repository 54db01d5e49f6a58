"""The replicas of a LangGraph deployment one client run talks to (`recgraph bench --server A,B`).

Runs go out through `langgraph_sdk` as stateless `/runs/wait` requests: the graph id (= registry name)
as the assistant, the input, the run's `Context` as the run's context, and the tracing config (run
name, tags, metadata). Design choices:

- Each run goes to the live replica with the fewest runs in flight, so `--concurrency` runs are
  spread over the URLs and a slower replica gets fewer.
- A replica that drops a connection or refuses one (killed, restarted, unreachable) is taken out
  of the rotation for the rest of the run, and the run it was serving is sent to another replica:
  at most `MAX_ATTEMPTS` attempts per run. A run is idempotent per user (results are keyed by user
  and appended once, by the client, after the answer arrived), so nothing is lost or doubled.
- An error the graph raised on the server arrives as `{"__error__": {"error", "message"}}`: the
  project's own errors (bad input, an unreachable LLM endpoint, a missing dataset) become one
  `RemoteRunError` line with the server's message; anything else is a crash of the method.
- `langgraph_sdk` (and httpx) are imported on first use: `recgraph --help` stays light.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from bench.run.crash import MethodCrashed
from graphs.concurrency import run_concurrently
from graphs.method_spec import RemoteCall
from world.errors import InvalidRecInput, RecgraphError

PROBE_SECONDS = 3.0
"""How long a server may take to answer `/ok` before the run is refused (an unreachable URL)."""
CONNECT_SECONDS = 5.0
"""httpx connect timeout of a run's request."""
RUN_SECONDS = 900.0
"""How long one run may take on the server before the request is given up (and retried elsewhere)."""
MAX_ATTEMPTS = 3
"""Attempts per run over the replicas (the first and at most two retries on another replica)."""


class RemoteRunError(RecgraphError):
    """The deployment refused or failed a run for a reason of the project's (its one-line message)."""


class ServersLost(RecgraphError):
    """No replica is left to run on, or a run failed on `MAX_ATTEMPTS` replicas."""


def split_servers(text: str) -> tuple[str, ...]:
    """`--server A,B`: the URLs without trailing slashes, each at most once."""
    urls = [url.strip().rstrip("/") for url in text.split(",") if url.strip()]
    if not urls:
        raise RecgraphError("--server needs at least one URL (http://host:port[,http://host:port…])")
    for url in urls:
        if not url.startswith(("http://", "https://")):
            raise RecgraphError(f"--server {url!r} is not an http:// or https:// URL")
    return tuple(dict.fromkeys(urls))


def auth_headers(key: str | None) -> dict[str, str]:
    """The credential header of every request to a deployment (none without a key)."""
    return {"Authorization": f"Bearer {key}"} if key else {}


def _get(url: str, path: str, body: dict[str, Any] | None = None, key: str | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{url}{path}",
        data=data,
        method="POST" if data else "GET",
        headers={"Content-Type": "application/json", **auth_headers(key)},
    )
    with urllib.request.urlopen(request, timeout=PROBE_SECONDS) as answer:
        return json.loads(answer.read() or b"null")


def served_graph_ids(url: str, key: str | None = None) -> set[str]:
    """The graph ids `url` serves; `RecgraphError` (one line) when it does not answer in time or
    refuses the credential (401/403)."""
    try:
        _get(url, "/ok")
        return {a["graph_id"] for a in _get(url, "/assistants/search", {"limit": 1000}, key)}
    except urllib.error.HTTPError as error:
        if error.code in (401, 403):
            raise RecgraphError(refused_credential(url, error.code, key)) from None
        raise RecgraphError(f"cannot reach the LangGraph server {url}: HTTP {error.code}") from None
    except (OSError, ValueError) as error:  # refused, timed out, not a LangGraph server
        reason = getattr(error, "reason", None) or error
        raise RecgraphError(f"cannot reach the LangGraph server {url}: {reason}") from None


def refused_credential(url: str, status: int, key: str | None) -> str:
    """One line for a deployment that answered 401 or 403 (the key itself is never shown)."""
    name = "401 Unauthorized" if status == 401 else "403 Forbidden"
    if not key:
        return (
            f"the LangGraph server {url} answered {name}: it requires a credential; pass --server-key "
            "KEY or set RECGRAPH_SERVER_KEY (a service key or token)"
        )
    return f"the LangGraph server {url} answered {name} to the --server-key / RECGRAPH_SERVER_KEY given"


def project_error_names() -> set[str]:
    """Class names of the errors the project raises for the user's input (not bugs)."""
    names = {"InvalidRecInput", "ValidationError", InvalidRecInput.__name__}
    todo: list[type] = [RecgraphError]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return names


KNOWN_PROJECT_ERRORS = ("MissingCheckpoint", "PoolError", "DatabaseError", "DatasetNotFoundError")
"""Project errors whose classes the client may not have imported."""


def server_error(url: str, call: RemoteCall, error: dict[str, Any]) -> Exception:
    """What a run that failed on the server raises here: a project error's one line, else a crash."""
    name, message = str(error.get("error") or "Error"), str(error.get("message") or "")
    if name in project_error_names() or name in KNOWN_PROJECT_ERRORS:
        return RemoteRunError(f"{message} (from {url}, assistant {call.assistant})")
    where = f"reported by the LangGraph server {url} (its log has the traceback)"
    return MethodCrashed(call.assistant, call.user, None, f"{name}: {message}", where)


def wire_context(call: RemoteCall) -> dict[str, Any]:
    """The run's `Context` as JSON (its dataclass fields; the server's context schema checks them)."""
    return asdict(call.context)


@dataclass
class Replicas:
    """The deployment's URLs and what happened on each (see the module docstring)."""

    servers: tuple[str, ...]
    """Every URL given, in order."""
    down: dict[str, str] = field(default_factory=dict)
    """URL -> why it left the rotation."""
    runs: Counter[str] = field(default_factory=Counter)
    """Runs answered per URL."""
    retried: Counter[str] = field(default_factory=Counter)
    """Runs sent to another replica after one was lost, per assistant."""
    in_flight: Counter[str] = field(default_factory=Counter)
    """Runs waiting on each URL now."""
    on_run_created: Callable[[RemoteCall, str], None] | None = None
    """Told (call, server run id) when a run starts: its LangSmith root run id."""
    key: str | None = field(default=None, repr=False)
    """The credential sent to every URL (`--server-key`), never shown."""

    def check(self, graphs: Sequence[str]) -> None:
        """Refuse in one line a URL that does not answer or does not serve one of `graphs`."""
        for url in self.servers:
            missing = [g for g in graphs if g not in served_graph_ids(url, self.key)]
            if missing:
                raise RecgraphError(
                    f"the LangGraph server {url} serves no graph {', '.join(map(repr, missing))}: start "
                    "it from this project's langgraph.json"
                )

    def run_all(
        self,
        calls: Sequence[RemoteCall],
        done: Callable[[RemoteCall, dict[str, Any]], None],
        concurrency: int,
    ) -> None:
        """`RemoteRunner.run_all`: every call on the deployment, `done(call, output)` as each ends."""
        self.run_timed(calls, lambda call, output, _: done(call, output), concurrency)

    def run_timed(
        self,
        calls: Sequence[RemoteCall],
        done: Callable[[RemoteCall, dict[str, Any], float], None],
        concurrency: int,
    ) -> None:
        """`run_all`, with the seconds each answer took (the last attempt's)."""
        asyncio.run(self._run_all(calls, done, concurrency))

    async def _run_all(
        self,
        calls: Sequence[RemoteCall],
        done: Callable[[RemoteCall, dict[str, Any], float], None],
        concurrency: int,
    ) -> None:
        import httpx
        from langgraph_sdk import get_client

        timeout = httpx.Timeout(connect=CONNECT_SECONDS, read=RUN_SECONDS, write=60.0, pool=None)
        # api_key=None: the SDK would otherwise send LANGSMITH_API_KEY from the environment as x-api-key
        headers = auth_headers(self.key)
        clients = {
            url: get_client(url=url, api_key=None, headers=headers, timeout=timeout) for url in self.servers
        }

        async def one(call: RemoteCall) -> tuple[RemoteCall, dict[str, Any], float]:
            output, seconds = await self._call(clients, call)
            return call, output, seconds

        try:
            with warnings.catch_warnings():
                # the SDK warns once per cut-off answer before reconnecting; the loss is reported here
                warnings.filterwarnings("ignore", message="Request failed, attempting reconnect")
                await run_concurrently(calls, one, lambda result: done(*result), concurrency)
        finally:
            for client in clients.values():
                await client.aclose()

    def _pick(self) -> str:
        live = [url for url in self.servers if url not in self.down]
        if not live:
            lost = "; ".join(f"{url}: {why}" for url, why in self.down.items())
            raise ServersLost(f"every LangGraph server was lost ({lost}); rerun the same command to resume")
        return min(live, key=lambda url: self.in_flight[url])

    async def _call(self, clients: dict[str, Any], call: RemoteCall) -> tuple[dict[str, Any], float]:
        import httpx

        attempts = 0
        while True:
            url = self._pick()
            attempts += 1
            self.in_flight[url] += 1
            started = time.perf_counter()
            try:
                output = await clients[url].runs.wait(
                    None,
                    call.assistant,
                    input=dict(call.payload),
                    context=wire_context(call),
                    config=dict(call.config) if call.config else None,
                    raise_error=False,
                    on_run_created=self._created(call),
                )
            except (httpx.TransportError, httpx.HTTPStatusError) as error:
                if isinstance(error, httpx.HTTPStatusError) and error.response.status_code in (401, 403):
                    status = error.response.status_code
                    raise RemoteRunError(refused_credential(url, status, self.key)) from None
                if isinstance(error, httpx.HTTPStatusError) and error.response.status_code < 500:
                    raise RemoteRunError(
                        f"{url} refused the {call.assistant} run: {first_line(error)}"
                    ) from None
                self.down.setdefault(url, first_line(error))
                if attempts >= MAX_ATTEMPTS:
                    raise ServersLost(
                        f"the {call.assistant} run of user {call.user!r} failed on {attempts} servers "
                        f"(last: {url}: {first_line(error)}); rerun the same command to resume"
                    ) from None
                self.retried[call.assistant] += 1
                continue
            finally:
                self.in_flight[url] -= 1
            if isinstance(output, dict) and isinstance(output.get("__error__"), dict):
                raise server_error(url, call, output["__error__"])
            self.runs[url] += 1
            return output, time.perf_counter() - started

    def _created(self, call: RemoteCall) -> Callable[[Any], None] | None:
        if self.on_run_created is None:
            return None
        report = self.on_run_created
        return lambda created: report(call, str(created["run_id"]))

    def summary(self) -> dict[str, Any]:
        """Runs per server, retries per assistant and the servers lost (metrics.json `servers`)."""
        return {
            "servers": {url: self.runs[url] for url in self.servers},
            "retried": dict(self.retried),
            "lost": dict(self.down),
        }


def first_line(error: BaseException) -> str:
    """An error's first line (its type when it has no message)."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__

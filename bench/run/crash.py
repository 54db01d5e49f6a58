"""When a method crashes: one line naming the method, the user and the node, the traceback in
`<out>/errors.log`, and what the partial reports say about it.

A crash is an exception that is not a `RecgraphError` (those are the user's input, e.g. an
unreachable endpoint, and keep their own one-line message): a node raising, a bug. LangGraph notes
on the exception which task (node) it happened in; `timed_invocation` (bench/run/runner.py) adds the
user, and the runner stops at the first one (`RunStopped`), keeping every result already logged.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from world.errors import RecgraphError

EXIT_METHOD_CRASHED = 4
"""`recgraph bench`'s exit code when a method crashed (2: bad input, 3: too many fallbacks)."""
ERRORS_LOG = "errors.log"
"""Where the full tracebacks of crashes go, under the run's output folder (appended)."""
_TASK_NOTE = re.compile(r"During task with name '(?P<name>[^']+)'")


class MethodCrashed(Exception):
    """A method raised while ranking one user, or outside any user's run (`user` None: while
    preparing, or checking what a graph returned).

    It carries text only (method, user, node, the error's one line, the traceback, the phase), so it
    pickles across processes and the traceback survives where the original exception does not.
    """

    def __init__(
        self,
        method: str,
        user: str | None,
        node: str | None,
        error: str,
        details: str,
        phase: str = "ranking",
    ) -> None:
        """`error` is "<Type>: <message>"; `details` the formatted traceback; `phase` "ranking" or
        "preparing"."""
        super().__init__(method, user, node, error, details, phase)
        self.method, self.user, self.node, self.error = method, user, node, error
        self.details, self.phase = details, phase

    @classmethod
    def of(cls, method: str, user: str | None, error: BaseException, phase: str = "ranking") -> MethodCrashed:
        """Describe `error`, raised by `method` on `user` (None: outside one user's run)."""
        if isinstance(error, MethodCrashed):
            return error
        details = "".join(traceback.format_exception(error))
        return cls(method, user, crash_node(error), error_line(error), details, phase)

    def __str__(self) -> str:
        """The one line: method, user (or the phase), node and error."""
        where = f"on user {self.user!r}" if self.user is not None else f"while {self.phase}"
        node = f" in node {self.node!r}" if self.node else ""
        return f"{self.method} crashed {where}{node}: {self.error}"

    def as_dict(self) -> dict[str, Any]:
        """The crash as metrics.json's `failed` block shows it."""
        return {
            "method": self.method,
            "user": self.user,
            "node": self.node,
            "error": self.error,
            "phase": self.phase,
        }


class RunStopped(Exception):
    """A method failed and the run stopped: the metrics of the methods that finished before it and
    the error (a `MethodCrashed`, or a `RecgraphError` such as an unreachable endpoint)."""

    def __init__(self, results: dict[str, dict[str, Any]], method: str, error: Exception) -> None:
        """`results`: metrics of the finished methods; `method`: the one that failed."""
        super().__init__(method, str(error))
        self.results, self.method, self.error = results, method, error


def stop_reason(method: str, error: Exception) -> Exception:
    """What stopped the run: a `RecgraphError` as it is (the user's input, its own message), any
    other exception as a `MethodCrashed` (its user named when a user's run raised it)."""
    if not is_crash(error) or isinstance(error, MethodCrashed):
        return error
    return MethodCrashed.of(method, None, error)


def is_crash(error: BaseException) -> bool:
    """True for a bug (anything but a `RecgraphError`, the user's input, or a cancellation)."""
    return isinstance(error, Exception) and not isinstance(error, RecgraphError)


def crash_node(error: BaseException) -> str | None:
    """The graph node an exception was raised in, from LangGraph's task notes ("outer/inner" when
    it crossed subgraphs), looking through its causes; None outside any node."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        names = [m["name"] for note in getattr(current, "__notes__", []) if (m := _TASK_NOTE.match(note))]
        if names:  # LangGraph notes the innermost task first, then each enclosing one
            return "/".join(reversed(list(dict.fromkeys(names))))
        current = current.__cause__ or current.__context__
    return None


def error_line(error: BaseException) -> str:
    """ "<Type>: <first line of the message>" (the type alone when there is no message)."""
    message = str(error).strip().splitlines()
    return f"{type(error).__name__}: {message[0]}" if message else type(error).__name__


def append_errors_log(out: Path, crash: MethodCrashed) -> Path:
    """Append the crash (UTC time, method, user, node, traceback) to `<out>/errors.log`."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / ERRORS_LOG
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    header = f"=== {stamp} {crash.method} user={crash.user} node={crash.node}\n"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(header + crash.details.rstrip("\n") + "\n\n")
    return path


def record_stop(
    stopped: RunStopped, methods: Sequence[str], done: Collection[str], users: int, out: Path
) -> dict:
    """What a stopped run leaves: a crash's traceback appended to `<out>/errors.log`, and the
    `failed` block of metrics.json (`done`: the failed method's users already in results.jsonl)."""
    if isinstance(stopped.error, MethodCrashed):
        append_errors_log(out, stopped.error)
    return failure_block(stopped, methods, len(done), users)


def failure_block(stopped: RunStopped, methods: Sequence[str], users_done: int, users: int) -> dict[str, Any]:
    """metrics.json's `failed` entry: who failed where, how many of its users are kept in
    results.jsonl, and which methods were not run because the run stopped."""
    error = stopped.error
    block = (
        error.as_dict()
        if isinstance(error, MethodCrashed)
        else {"method": stopped.method, "error": str(error)}
    )
    later = list(methods)[list(methods).index(stopped.method) + 1 :]
    block.update(users_done=users_done, users=users, not_run=later)
    if isinstance(error, MethodCrashed):
        block["errors_log"] = ERRORS_LOG
    return block


def failure_markdown(failed: dict[str, Any] | None) -> str:
    """report.md's note on a failed method (empty when nothing failed)."""
    if not failed:
        return ""
    user = failed.get("user")
    where = f" on user {user!r}" if user is not None else f" while {failed.get('phase', 'ranking')}"
    node = f" in node {failed['node']!r}" if failed.get("node") else ""
    text = (
        f"**{failed['method']} failed{where}{node}: {failed['error']}** — not in the table; "
        f"{failed['users_done']} of its {failed['users']} users are kept in results.jsonl and the same "
        "command resumes from them"
    )
    if failed.get("errors_log"):
        text += f"; traceback in {failed['errors_log']}"
    if failed.get("not_run"):
        text += f". Not run because the run stopped: {', '.join(failed['not_run'])}"
    return f"> {text}."

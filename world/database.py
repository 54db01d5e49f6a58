"""The shared database: PostgreSQL chosen by one setting, behind the stores' own interfaces.

`RECGRAPH_DATABASE_URL=postgresql://…` (or `--database-url`, which sets it for the process and the
workers it starts) moves MemRec's memory graph and write queue, AMEM4Rec's pools and graph-run
checkpoints into that database; without it they stay in SQLite and Chroma under `RECGRAPH_HOME`.

psycopg is imported on first use only: commands that never open a store never pay for it.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from world.errors import RecgraphError

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

log = logging.getLogger(__name__)
T = TypeVar("T")

DATABASE_URL_ENV = "RECGRAPH_DATABASE_URL"
"""Environment variable naming the shared PostgreSQL database (empty or unset: SQLite files)."""
CONNECT_TIMEOUT = 5
"""Seconds one connection attempt may take (libpq's connect_timeout)."""
OPEN_TIMEOUT = 10.0
"""Seconds a pool may take to hand out its first connection before the URL is reported unreachable."""
POOL_SIZE = 8
"""Most connections one process keeps to the database (writer threads plus concurrent runs)."""


class DatabaseError(RecgraphError):
    """The database URL is malformed, or the database cannot be reached or refused us."""


def database_url() -> str | None:
    """The configured database URL, or None for the file-based default."""
    url = os.environ.get(DATABASE_URL_ENV, "").strip()
    return url or None


def use_database_url(url: str | None) -> None:
    """Make `url` this process's (and its child processes') database; None or "" keeps the setting."""
    if url:
        check_url(url)
        os.environ[DATABASE_URL_ENV] = url


def redact(url: str) -> str:
    """`url` with any password replaced by ***, for messages and logs."""
    url = re.sub(r"(://[^:/@?]+:)[^@/?]*@", r"\1***@", url)
    return re.sub(r"(password=)[^&\s]*", r"\1***", url)


def check_url(url: str) -> None:
    """Refuse a URL libpq cannot parse or that is not PostgreSQL, in one line naming it."""
    if not re.match(r"^postgres(ql)?://", url):
        raise DatabaseError(f"database URL {redact(url)!r} is not a postgresql:// URL")
    from psycopg.conninfo import conninfo_to_dict

    try:
        conninfo_to_dict(url)
    except Exception as error:  # psycopg.ProgrammingError: the parser's own message
        raise DatabaseError(f"database URL {redact(url)!r} is malformed: {first_line(error)}") from None


def first_line(error: BaseException) -> str:
    """The first line of an error's message, any password redacted (for one-line errors)."""
    text = str(error).strip().splitlines()
    return redact(text[0]) if text else type(error).__name__


_POOLS: dict[tuple[int, str], ConnectionPool] = {}
_POOLS_LOCK = threading.Lock()


def shared_pool(url: str) -> ConnectionPool:
    """This process's connection pool to `url` (autocommit connections), opened on first use.

    Raises `DatabaseError` naming the URL when no connection is made within `OPEN_TIMEOUT` s."""
    key = (os.getpid(), url)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = open_pool(url)
    return pool


def open_pool(url: str, max_size: int = POOL_SIZE) -> ConnectionPool:
    """A new pool of autocommit connections to `url`, checked by taking one connection."""
    check_url(url)
    reason = _probe(url)  # one direct attempt first: a refused or unknown host fails at once, quietly
    if reason is not None:
        raise DatabaseError(f"cannot reach the database {redact(url)}: {reason}")
    from psycopg_pool import ConnectionPool, PoolTimeout

    pool = ConnectionPool(
        url,
        check=ConnectionPool.check_connection,  # a connection the server dropped (a restart) is replaced
        min_size=1,
        max_size=max_size,
        kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT},
        open=False,
        name="recgraph",
        reconnect_timeout=OPEN_TIMEOUT,
    )
    try:
        pool.open(wait=True, timeout=OPEN_TIMEOUT)
    except PoolTimeout:
        pool.close(timeout=0)
        reason = _probe(url) or f"no connection within {OPEN_TIMEOUT:.0f} s"
        raise DatabaseError(f"cannot reach the database {redact(url)}: {reason}") from None
    return pool


def _probe(url: str) -> str | None:
    """Why one connection attempt to `url` fails, or None when it succeeds."""
    import psycopg

    try:
        psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT).close()
    except psycopg.Error as error:
        return first_line(error)
    return None


RECONNECT_WINDOW_ENV = "RECGRAPH_DATABASE_WAIT"
"""Seconds a store waits for a database that went away (a restart) before it stops (default 60)."""


def reconnect_window() -> float:
    """How long `retry_on_disconnect` keeps trying, from `RECGRAPH_DATABASE_WAIT`."""
    return float(os.environ.get(RECONNECT_WINDOW_ENV) or 60)


def retry_on_disconnect(url: str, work: Callable[[], T], what: str) -> T:
    """Run `work` (one whole transaction, safe to replay), again while the server is unreachable.

    A restarted or briefly unreachable database is waited for up to `reconnect_window()` seconds
    (work is replayed from its start; stores make replays idempotent); then one `DatabaseError`
    line naming the URL and `what` was being done. Errors other than a lost connection pass through.
    """
    import psycopg
    from psycopg_pool import PoolTimeout

    deadline = time.monotonic() + reconnect_window()
    delay = 0.2
    while True:
        try:
            return work()
        except (psycopg.OperationalError, PoolTimeout) as error:
            if time.monotonic() >= deadline:
                raise DatabaseError(
                    f"lost the database {redact(url)} while {what} and it did not come back within "
                    f"{reconnect_window():.0f} s: {first_line(error)}"
                ) from None
            log.warning("database %s unreachable while %s (%s); retrying", redact(url), what, error)
            time.sleep(delay)
            delay = min(delay * 2, 2.0)


def close_pools() -> None:
    """Close every pool this process opened (tests and servers shutting down)."""
    with _POOLS_LOCK:
        pools = [p for (pid, _), p in _POOLS.items() if pid == os.getpid()]
        _POOLS.clear()
    for pool in pools:
        pool.close()

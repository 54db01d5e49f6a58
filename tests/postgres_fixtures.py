"""pytest fixtures of the throwaway PostgreSQL server (see tests/postgres_server.py)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.postgres_server import PostgresServer


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL (with pgvector) for the test session, started on first use, deleted at the end.

    Its folder is outside pytest's temporary root: a later pytest session makes that root private
    (0700), and the unprivileged server of a session still running could then no longer reach it."""
    server = PostgresServer(Path(tempfile.mkdtemp(prefix="recgraph-pg-")) / "cluster")
    server.init()
    server.start()
    try:
        yield server
    finally:
        from world.database import close_pools

        close_pools()
        server.close()
        shutil.rmtree(server.folder.parent, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database (vector extension created) on the session's server."""
    return postgres_server.create_database()

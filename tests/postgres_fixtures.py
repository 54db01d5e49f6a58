"""pytest fixtures of the throwaway PostgreSQL server (see tests/postgres_server.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.postgres_server import PostgresServer


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """One PostgreSQL (with pgvector) for the test session, started on first use, deleted at the end."""
    server = PostgresServer(tmp_path_factory.mktemp("postgres") / "cluster")
    server.init()
    server.start()
    try:
        yield server
    finally:
        from world.database import close_pools

        close_pools()
        server.close()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database (vector extension created) on the session's server."""
    return postgres_server.create_database()

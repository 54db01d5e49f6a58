"""The shared database setting: one-line errors for bad URLs, and waiting out a restart."""

from __future__ import annotations

import threading
import time

import pytest

from tests.postgres_server import PostgresServer
from world.database import DatabaseError, check_url, open_pool, redact, retry_on_disconnect


def test_a_password_never_reaches_a_message() -> None:
    assert redact("postgresql://ann:s3cret@db:5432/rec") == "postgresql://ann:***@db:5432/rec"
    assert (
        redact("postgresql://db/rec?password=s3cret&sslmode=off")
        == "postgresql://db/rec?password=***&sslmode=off"
    )
    with pytest.raises(DatabaseError) as error:
        check_url("postgresql://ann:s3cret@[db")
    assert "s3cret" not in str(error.value)
    assert "is malformed" in str(error.value)


def test_a_url_of_another_kind_is_refused_by_name() -> None:
    with pytest.raises(DatabaseError, match=r"'mysql://db/rec' is not a postgresql:// URL"):
        check_url("mysql://db/rec")


def test_an_unreachable_database_is_one_line_naming_it() -> None:
    with pytest.raises(DatabaseError) as error:
        open_pool("postgresql://postgres@127.0.0.1:9/rec")
    message = str(error.value)
    assert message.startswith("cannot reach the database postgresql://postgres@127.0.0.1:9/rec: ")
    assert "\n" not in message


def test_a_restarted_database_is_waited_for(postgres_server: PostgresServer, postgres_url: str) -> None:
    pool = open_pool(postgres_url)
    with pool.connection() as conn:
        conn.execute("CREATE TABLE seen (n INTEGER)")
    postgres_server.stop("immediate")
    restart = threading.Timer(1.0, postgres_server.start)
    restart.start()
    started = time.monotonic()

    def insert() -> int:
        with pool.connection() as conn:
            conn.execute("INSERT INTO seen VALUES (1)")
            return conn.execute("SELECT count(*) FROM seen").fetchone()[0]

    try:
        assert retry_on_disconnect(postgres_url, insert, "counting") == 1  # once, not lost or doubled
    finally:
        restart.join()
        pool.close()
    assert time.monotonic() - started >= 0.9  # it waited for the restart instead of failing


def test_a_database_that_stays_away_stops_the_work_in_one_line(
    postgres_server: PostgresServer, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECGRAPH_DATABASE_WAIT", "1")
    pool = open_pool(postgres_url)
    postgres_server.stop("immediate")

    def read() -> None:
        # a pool's own wait for a connection (30 s by default) would outlast the 1 s window
        with pool.connection(timeout=0.5) as conn:
            conn.execute("SELECT 1")

    try:
        with pytest.raises(DatabaseError, match=r"^lost the database .* while reading and it did not"):
            retry_on_disconnect(postgres_url, read, "reading")
    finally:
        postgres_server.start()
        pool.close(timeout=1)

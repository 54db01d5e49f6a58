"""Fixtures of MemRec's store tests: each parametrised test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from world.database import DATABASE_URL_ENV


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The memory store under test: "sqlite" (no database URL) or "postgres" (a fresh database)."""
    if request.param == "postgres":
        monkeypatch.setenv(DATABASE_URL_ENV, request.getfixturevalue("postgres_url"))
    else:
        monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    return request.param

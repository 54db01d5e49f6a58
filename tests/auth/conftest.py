"""The one authenticated `langgraph dev` (graphs/auth/) every test of this folder calls, started once
for the folder, and the dataset it serves."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphs.registry import studio_examples
from tests.auth.client import KEYS, SECRET
from tests.dev_server import DevServer, dev_server


@pytest.fixture(scope="package")
def dataset(tmp_path_factory: pytest.TempPathFactory, write_studio_slice) -> str:
    """The Studio slice with users 7 and 8 (the users the keys stand for)."""
    examples = [*studio_examples().values(), {"user_id": "7"}, {"user_id": "8"}]
    return str(write_studio_slice(tmp_path_factory.mktemp("auth-data"), examples))


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory, dataset: str) -> Iterator[DevServer]:
    """One `langgraph dev` with the keys and an HS256 secret at once, shared by the package's tests."""
    env = {"RECGRAPH_API_KEYS": KEYS, "RECGRAPH_JWT_SECRET": SECRET, "RECGRAPH_USER_DATASETS": dataset}
    with dev_server(tmp_path_factory, dataset, "langgraph-dev-auth", **env) as running:
        yield running

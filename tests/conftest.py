"""Shared fixtures: offline environment, a cache folder, small datasets written on the fly (a tiny
catalog, catalogs of the shapes real data has, a catalog whose texts carry prompt injections), the
shared Amazon CDs data when the machine has it, a graph's final state, and the Studio tests' dev server."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.dev_server import DevServer, dev_server
from tests.fixtures import injection_catalog, shape_catalogs, studio_slice
from tests.postgres_fixtures import postgres_server, postgres_url  # noqa: F401 (fixtures)

REPO = Path(__file__).resolve().parent.parent
_SHARED_DATA = REPO.parent / "shared" / "data" / "amazon-cds-100"

os.environ.setdefault("RECGRAPH_HOME", str(REPO / ".cache" / "test-home"))
for key, value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "ANONYMIZED_TELEMETRY": "False",
}.items():
    os.environ[key] = value
os.environ.pop("OPENAI_API_KEY", None)

_TINY_ITEMS = [
    ("1", "Alpha Wars", "1977", "Action Sci-Fi"),
    ("2", "Beta Love", "1990", "Romance Comedy"),
    ("3", "Gamma Quest", "1981", "Action Adventure"),
    ("4", "Delta Laughs", "1995", "Comedy"),
    ("5", "Epsilon Drama", "1996", "Drama"),
    ("6", "Zeta Space", "1979", "Sci-Fi"),
]
# user -> [(item, timestamp)], deliberately out of time order in the file.
_TINY_EVENTS = {
    "u1": [("3", 300), ("1", 100), ("6", 200), ("4", 400)],
    "u2": [("1", 100), ("3", 200), ("6", 300)],
    "u3": [("2", 100), ("4", 200), ("5", 300), ("2", 400)],
    "u4": [("5", 100), ("2", 200)],
}


def _write_tiny_atomic(folder: Path, name: str = "tiny") -> Path:
    """Write a six-item, four-user RecBole atomic dataset and return its folder."""
    folder.mkdir(parents=True, exist_ok=True)
    items = ["item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq"]
    items += ["\t".join(row) for row in _TINY_ITEMS]
    (folder / f"{name}.item").write_text("\n".join(items) + "\n")
    inter = ["user_id:token\titem_id:token\trating:float\ttimestamp:float"]
    for user, events in _TINY_EVENTS.items():
        inter += [f"{user}\t{item}\t4\t{ts}" for item, ts in events]
    (folder / f"{name}.inter").write_text("\n".join(inter) + "\n")
    return folder


@pytest.fixture
def tiny_dataset_dir(tmp_path: Path) -> Path:
    """A tiny RecBole atomic dataset folder, written to `tmp_path / "tiny"` (dataset name `tiny`)."""
    return _write_tiny_atomic(tmp_path / "tiny")


@pytest.fixture
def shared_data() -> Path:
    """The shared Amazon CDs data folder (sequential splits); the test is skipped on a machine without it."""
    if not _SHARED_DATA.is_dir():
        pytest.skip(f"needs the shared Amazon CDs data at {_SHARED_DATA}, which is absent")
    return _SHARED_DATA


def _final_state(compiled: Any, request: dict, context: Any) -> dict[str, Any]:
    final: dict[str, Any] = {}
    for values in compiled.stream(request, context=context, stream_mode="values"):
        final = values
    return final


@pytest.fixture(scope="session")
def final_state() -> Callable[[Any, dict, Any], dict[str, Any]]:
    """`final_state(compiled, request, context)`: the graph's final state after a run (every channel,
    not only the output schema)."""
    return _final_state


@pytest.fixture(scope="session")
def write_shape() -> Callable[..., Path]:
    """`write(folder, shape, name="shape") -> folder`: writes the fourteen-item catalog in `shape`
    (`full`, `titles_only`, `order_only` or `titles_and_order`; another raises ValueError)."""
    return shape_catalogs.write_shape


@pytest.fixture
def shape_candidates() -> dict[str, list[str]]:
    """A few users of the shape catalogs and candidate lists (each holds the user's test item)."""
    return {
        "a": ["9", "3", "7", "12", "5"],
        "b": ["7", "10", "13", "6", "14"],
        "c": ["5", "2", "9", "14", "7"],
    }


@pytest.fixture(scope="session")
def write_injection_dataset() -> Callable[..., Path]:
    """`write(folder, name="inject") -> folder`: writes the injected catalog (sixteen items) and eight
    users' interactions with ratings, timestamps and reviews (`injection_review` on injected items)."""
    return injection_catalog.write_injection_dataset


@pytest.fixture
def injection_dataset(tmp_path: Path) -> str:
    """The injected catalog, written to `tmp_path / "inject"` (dataset name `inject`): its path."""
    return str(injection_catalog.write_injection_dataset(tmp_path / "inject"))


@pytest.fixture(scope="session")
def injection_foreign_id() -> str:
    """The id-like string the injected texts name; no item has it."""
    return injection_catalog.FOREIGN_ID


@pytest.fixture(scope="session")
def injection_items() -> list[tuple[str, str, str, str]]:
    """The injected catalog's items: (id, title, year, categories separated by ';')."""
    return list(injection_catalog.INJECTION_ITEMS)


@pytest.fixture(scope="session")
def injected_item_ids() -> tuple[str, ...]:
    """Items whose title or category carries an instruction."""
    return injection_catalog.INJECTED


@pytest.fixture(scope="session")
def injection_review() -> str:
    """A review text (on the injected items) that tries to close ChainRec's <data> block."""
    return injection_catalog.INJECTION_REVIEW


@pytest.fixture(scope="session")
def write_studio_slice() -> Callable[..., Path]:
    """Writes a small slice of ml-100k for the dev-server tests: every graph runs on it from a cold
    cache in seconds (the full catalog's MiniLM embeddings take a minute or more), and it keeps every
    user and item id the given examples name, with their real titles, genres and timestamps.
    Called as (folder, examples, users=30, items=120); returns the dataset's path."""
    return studio_slice.write_studio_slice


@pytest.fixture(scope="session")
def other_studio_request() -> dict[str, Any]:
    """A request sharing no candidate with the registry's Studio examples (another user, other items):
    its item vectors are not on disk after the examples ran, so a node must embed them off the event
    loop."""
    return {"user_id": "2", "candidates": ["7", "9", "11", "12", "22"]}


@pytest.fixture(scope="session")
def studio_dataset(
    tmp_path_factory: pytest.TempPathFactory,
    write_studio_slice: Callable[..., Path],
    other_studio_request: dict[str, Any],
) -> str:
    """The ml-100k slice holding every id of the registry's Studio examples and the other request."""
    from graphs.registry import studio_examples  # the project, once the environment above is set

    examples = [*studio_examples().values(), other_studio_request]
    return str(write_studio_slice(tmp_path_factory.mktemp("studio-data"), examples))


@pytest.fixture(scope="session")
def studio_server(tmp_path_factory: pytest.TempPathFactory, studio_dataset: str) -> Iterator[DevServer]:
    """One `langgraph dev` on `studio_dataset` for the session (per pytest-xdist worker), started on first
    use: the Studio tests of tests/test_studio_server.py and tests/chainrec/test_studio.py share it."""
    with dev_server(tmp_path_factory, studio_dataset) as running:
        yield running

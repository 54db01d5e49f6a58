"""Finding and loading datasets by name or path (cached once per process)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from world.data import Dataset
from world.errors import DatasetNotFoundError
from world.filters import apply_filters, split_spec
from world.loaders.recbole_atomic import load_recbole_atomic
from world.loaders.sequential import load_sequential

BUILTIN = ("ml-100k",)
_load_lock = threading.Lock()


def recbole_example_folder(name: str) -> Path:
    """The folder of an example dataset shipped in recbole's wheel (downloaded, never installed)."""
    from world.recbole_wheel import DATASET, ml100k_dir

    if name != DATASET:
        raise DatasetNotFoundError(f"the recbole wheel has no example dataset {name!r}")
    return ml100k_dir()


def load_path(path: Path) -> Dataset:
    """Detect the layout at `path` and load it.

    `path` may be a folder (RecBole atomic files, one sequential split, AgentSociety JSON,
    InstructRec, MIND, one Amazon review category), a file (an Amazon reviews file, MIND's
    `behaviors.tsv`) or a file prefix such as `data/CDs-100-user-dense` naming one of several
    sequential splits in a folder.
    """
    if path.is_file():
        return _load_file(path)
    from world.loaders.agentrecbench import is_layout, load_view, scenario_spec

    if path.is_dir() and is_layout(path):  # named without a scenario: the classic task folder's view
        return load_view(scenario_spec(str(path), "classic"))
    folder, prefix = (path, path.name) if path.is_dir() else (path.parent, path.name)
    if not folder.is_dir():
        raise DatasetNotFoundError(f"no dataset at {str(path)!r}: not a folder or file prefix")
    tests = sorted(folder.glob(f"{prefix}*.test.inter" if not path.is_dir() else "*.test.inter"))
    if tests:
        if len(tests) > 1:
            names = ", ".join(t.name.removesuffix(".test.inter") for t in tests)
            raise DatasetNotFoundError(
                f"{folder} holds several sequential splits ({names}); pass {folder}/<one of them>"
            )
        return load_sequential(folder, tests[0].name.removesuffix(".test.inter"))
    if (folder / "item.json").is_file() and (folder / "review.json").is_file():
        from world.loaders.agentsociety import load_agentsociety

        return load_agentsociety(folder)
    if list(folder.glob("*.instruction")):
        from world.loaders.instructrec import load_instructrec

        return load_instructrec(folder)
    inters = sorted(folder.glob(f"{prefix}.inter")) or sorted(folder.glob("*.inter"))
    if len(inters) == 1:
        return load_recbole_atomic(folder, inters[0].stem)
    if path.is_dir():
        from world.loaders.amazon import find_reviews, load_amazon
        from world.loaders.mind import load_mind, mind_folders

        if mind_folders(path):
            return load_mind(path)
        if reviews := find_reviews(path):
            return load_amazon(reviews)
    raise DatasetNotFoundError(
        f"no dataset at {str(path)!r}: expected RecBole atomic files (<name>.inter/.item), "
        "a <name>.test.inter split, AgentSociety item.json/review.json, InstructRec files, "
        "MIND behaviors.tsv/news.tsv, or Amazon reviews <Category>.jsonl[.gz] / .json[.gz]"
    )


def _load_file(path: Path) -> Dataset:
    """A dataset named by one of its files: MIND's behaviors.tsv or an Amazon reviews file."""
    from world.loaders.amazon import find_reviews, load_amazon
    from world.loaders.mind import load_mind, mind_folders

    if mind_folders(path):
        return load_mind(path)
    if reviews := find_reviews(path):
        return load_amazon(reviews)
    raise DatasetNotFoundError(
        f"no dataset at {str(path)!r}: a file must be MIND's behaviors.tsv or an Amazon reviews "
        "file (<Category>.jsonl[.gz], <Category>.json[.gz], reviews_<Category>.json.gz)"
    )


def check_dataset_spec(spec: str) -> None:
    """Raise `DatasetNotFoundError` when `spec` is neither a built-in nor an existing path (or a file
    stem beside one): a cheap check, so a command can refuse a bad name before any heavy work."""
    from world.loaders.agentrecbench import TASK_MARK, split_domain

    spec = split_domain(split_spec(spec)[0].partition(TASK_MARK)[0])[0]
    if spec in BUILTIN:
        return
    path = Path(spec).expanduser()
    if path.exists() or (path.parent.is_dir() and list(path.parent.glob(f"{path.name}.*"))):
        return
    raise DatasetNotFoundError(
        f"unknown dataset {spec!r}: not a built-in ({', '.join(BUILTIN)}) and not a path"
    )


@lru_cache(maxsize=8)
def _load_cached(spec: str) -> Dataset:
    base, filters = split_spec(spec)
    if filters:  # the unfiltered data is not cached: memory follows what the filter keeps
        return apply_filters(_load_unfiltered(base), filters)
    return _load_unfiltered(spec)


def _load_unfiltered(spec: str) -> Dataset:
    check_dataset_spec(spec)
    if spec in BUILTIN:
        # Named by what it is, not where this venv extracted it: caches and AMEM4Rec pools of
        # ml-100k stay valid across checkouts and virtual environments.
        return replace(load_recbole_atomic(recbole_example_folder(spec), spec), source=f"builtin:{spec}")
    from world.loaders.agentrecbench import TASK_MARK, load_view, parse_view, split_domain

    if TASK_MARK in spec:  # one scenario's view of AgentRecBench's release layout
        root, scenario, domain = parse_view(spec)
        return load_view(f"{root.resolve()}{TASK_MARK}{scenario}" + (f":{domain}" if domain else ""))
    if split_domain(spec)[1]:
        raise DatasetNotFoundError(f"{spec!r}: a #domain: mark needs a scenario (AgentRecBench's tasks)")
    # Resolved, so the cache key (world.paths.dataset_key) names the data, not how the path was spelt
    # or which folder the command ran from.
    return load_path(Path(spec).expanduser().resolve())


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the block (restored after, if it was on).

    A loader allocates hundreds of thousands of objects that all stay alive; each allocation burst
    triggers a full collection that walks every object of the process (with torch and LangGraph
    imported, over a million). On the 50k-user synthetic catalog that was 1-2 of the 3-4 CPU-s
    the sequential loader took."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_dataset(spec: str) -> Dataset:
    """Load a built-in dataset by name (`ml-100k`) or any supported layout by path, filtered as
    its trailing marks say (`world.filters.filtered_spec`: `<spec>#kcore:5`)."""
    with _load_lock, collector_paused():
        return _load_cached(spec)

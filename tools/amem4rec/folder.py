"""Where an AMEM4Rec pool lives and how it becomes an open `MemoryPool`.

Without a database URL a pool is a folder (`tools.amem4rec.pool_sqlite`) starting with
`manifest.json`: the dataset it was built from (name and source) and the configuration that shapes
its content (`state.amem4rec.context.POOL_CONFIG_FIELDS`). With `RECGRAPH_DATABASE_URL` set it is a
named pool in that database (`tools.amem4rec.pool_postgres`) with the same manifest: an explicit
`amem4rec_pool` is its name (a path is taken as text, not resolved), a default pool is named like
its folder under RECGRAPH_HOME (`<dataset key>/amem4rec/pool-<config key>`), so every process
finds it whatever its RECGRAPH_HOME. Opening checks the manifest and never overwrites anything:
another dataset, other training settings, a folder that is not a pool, or a damaged one is refused
with one `PoolError` line. Open pools are cached per process.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from state.amem4rec.context import POOL_CONFIG_FIELDS
from tools.amem4rec.index import PoolError
from tools.amem4rec.pool import MemoryPool
from tools.amem4rec.pool_sqlite import MANIFEST, SqlitePool, write_manifest
from world.data import Dataset
from world.database import database_url, redact
from world.paths import dataset_cache, dataset_key

FORMAT = 1
"""Pool folder format version."""
__all__ = ["MANIFEST", "forget_pool", "open_pool", "pool_config", "pool_exists", "pool_location"]

_open: dict[Path | tuple[str, str], MemoryPool] = {}
_lock = threading.Lock()


def pool_config(context: Any) -> dict[str, Any]:
    """The configuration a pool records: the Context fields that shape its content."""
    return {name: getattr(context, name) for name in POOL_CONFIG_FIELDS}


def config_key(config: dict[str, Any]) -> str:
    """A short digest of a pool configuration (names a default pool folder)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:10]


def default_pool_dir(dataset: Dataset, config: dict[str, Any]) -> Path:
    """The dataset's default pool for this configuration, under RECGRAPH_HOME."""
    return dataset_cache(dataset) / "amem4rec" / f"pool-{config_key(config)}"


def pool_location(context: Any, dataset: Dataset) -> str:
    """What names the context's pool: `Context.amem4rec_pool` as given, else the default pool's
    folder (embedded) or name (in the database, where it does not depend on RECGRAPH_HOME)."""
    if context.amem4rec_pool:
        return str(Path(context.amem4rec_pool).expanduser())
    if database_url():
        return f"{dataset_key(dataset)}/amem4rec/pool-{config_key(pool_config(context))}"
    return str(default_pool_dir(dataset, pool_config(context)))


def pool_exists(location: Path | str) -> bool:
    """Whether a pool was created at `location` (a folder, or a name in the database)."""
    url = database_url()
    if url:
        from tools.amem4rec.pool_postgres import postgres_pool_exists

        return postgres_pool_exists(url, str(location))
    return (Path(location) / MANIFEST).is_file()


def pool_dir(context: Any, dataset: Dataset) -> Path:
    """`Context.amem4rec_pool`, or the dataset's default pool for the context's configuration."""
    return (
        Path(context.amem4rec_pool).expanduser()
        if context.amem4rec_pool
        else default_pool_dir(dataset, pool_config(context))
    )


def read_manifest(folder: Path) -> dict[str, Any]:
    """A pool folder's manifest; `PoolError` when it is missing or unreadable."""
    path = folder / MANIFEST
    if not path.is_file():
        raise PoolError(f"{folder} is not an AMEM4Rec pool (no {MANIFEST}); nothing was changed")
    try:
        manifest = json.loads(path.read_text())
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise ValueError(f"format is not {FORMAT}")
        if not isinstance(manifest.get("dataset"), dict) or not isinstance(manifest.get("config"), dict):
            raise ValueError("no dataset or config")
    except (OSError, ValueError) as error:
        raise PoolError(f"pool folder {folder} is damaged: {MANIFEST} is unreadable ({error})") from None
    return manifest


def _check(where: str, manifest: dict[str, Any], dataset: Dataset, config: dict[str, Any] | None) -> None:
    built = manifest["dataset"]
    if (built.get("name"), built.get("source")) != (dataset.name, dataset.source):
        raise PoolError(
            f"the pool {where} was built for dataset {built.get('name')!r} ({built.get('source')}), "
            f"not {dataset.name!r}; pass another pool or that dataset"
        )
    if config is not None and manifest["config"] != config:
        differs = sorted(
            k for k in {*config, *manifest["config"]} if manifest["config"].get(k) != config.get(k)
        )
        shown = ", ".join(f"{k}={manifest['config'].get(k)!r} (asked {config.get(k)!r})" for k in differs)
        raise PoolError(f"the pool {where} was trained with {shown}; use another pool for these settings")


def open_pool(
    location: Path | str,
    dataset: Dataset,
    config: dict[str, Any] | None = None,
    *,
    create: bool = False,
    backend: str | None = None,
) -> MemoryPool:
    """The pool at `location` (a folder, or a name in the database when `RECGRAPH_DATABASE_URL` is
    set), checked against `dataset` (and `config` when training more into it).

    `create` makes a new pool in a missing or empty folder (a missing name); otherwise such a
    location is a `PoolError`. `backend` (training) is recorded in the manifest's list of backends.
    """
    url = database_url()
    key = (url, str(Path(location).expanduser())) if url else Path(location).resolve()
    with _lock:
        pool = _open.get(key)
        if pool is None:
            pool = _open[key] = _open_new(key, dataset, config, create)
        _check(pool.where, pool.manifest, dataset, config)
        if backend and backend not in pool.manifest.setdefault("backends", []):
            pool.manifest["backends"].append(backend)
            pool.save_manifest()
        return pool


def _new_manifest(dataset: Dataset, config: dict[str, Any] | None) -> dict[str, Any]:
    if config is None:
        raise PoolError("a new pool needs its configuration")
    source = {"name": dataset.name, "source": dataset.source}
    return {"format": FORMAT, "dataset": source, "config": config, "backends": []}


def _open_new(
    key: Path | tuple[str, str], dataset: Dataset, config: dict[str, Any] | None, create: bool
) -> MemoryPool:
    if isinstance(key, tuple):
        from tools.amem4rec.pool_postgres import open_postgres_pool

        url, name = key
        manifest = _new_manifest(dataset, config) if create else None
        found = open_postgres_pool(url, name, dataset_key(dataset), manifest)
        if found is None:
            raise PoolError(
                f"no AMEM4Rec pool {name!r} in the database {redact(url)}; train one with "
                "`recgraph amem4rec train`"
            )
        _check(found.where, found.manifest, dataset, None)
        return found
    folder = key
    if not folder.is_dir() or not any(folder.iterdir()):
        if not create:
            raise PoolError(f"no AMEM4Rec pool at {folder}; train one with `recgraph amem4rec train`")
        manifest = _new_manifest(dataset, config)
        folder.mkdir(parents=True, exist_ok=True)
        write_manifest(folder, manifest)
    manifest = read_manifest(folder)
    _check(f"at {folder}", manifest, dataset, None)
    return SqlitePool(folder, manifest)


def forget_pool(location: Path | str) -> None:
    """Close an open pool and drop it from the process cache (e.g. before deleting its folder)."""
    url = database_url()
    key = (url, str(Path(location).expanduser())) if url else Path(location).resolve()
    with _lock:
        pool = _open.pop(key, None)
    if pool is not None:
        pool.close()

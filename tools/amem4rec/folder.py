"""Where an AMEM4Rec pool lives and how a folder becomes an open `MemoryPool`.

A pool folder starts with `manifest.json`: the dataset it was built from (name and source) and the
configuration that shapes its content (`state.amem4rec.context.POOL_CONFIG_FIELDS`). Opening checks
it and never overwrites anything: another dataset, other training settings, a folder that is not
a pool, or a damaged one is refused with one `PoolError` line. Open pools are cached per process.
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
from world.data import Dataset
from world.paths import dataset_cache

FORMAT = 1
"""Pool folder format version."""
MANIFEST = "manifest.json"

_open: dict[Path, MemoryPool] = {}
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


def _write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    temporary = folder / f"{MANIFEST}.tmp"
    temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    temporary.replace(folder / MANIFEST)  # atomic: a crash never leaves half a manifest


def _check(folder: Path, manifest: dict[str, Any], dataset: Dataset, config: dict[str, Any] | None) -> None:
    built = manifest["dataset"]
    if (built.get("name"), built.get("source")) != (dataset.name, dataset.source):
        raise PoolError(
            f"the pool at {folder} was built for dataset {built.get('name')!r} ({built.get('source')}), "
            f"not {dataset.name!r}; pass another pool or that dataset"
        )
    if config is not None and manifest["config"] != config:
        differs = sorted(
            k for k in {*config, *manifest["config"]} if manifest["config"].get(k) != config.get(k)
        )
        shown = ", ".join(f"{k}={manifest['config'].get(k)!r} (asked {config.get(k)!r})" for k in differs)
        raise PoolError(
            f"the pool at {folder} was trained with {shown}; use another pool folder for these settings"
        )


def open_pool(
    folder: Path,
    dataset: Dataset,
    config: dict[str, Any] | None = None,
    *,
    create: bool = False,
    backend: str | None = None,
) -> MemoryPool:
    """The pool in `folder`, checked against `dataset` (and `config` when training more into it).

    `create` makes a new pool in a missing or empty folder; otherwise such a folder is a
    `PoolError`. `backend` (training) is recorded in the manifest's list of backends used.
    """
    folder = folder.resolve()
    with _lock:
        pool = _open.get(folder)
        if pool is None:
            if not folder.is_dir() or not any(folder.iterdir()):
                if not create:
                    raise PoolError(f"no AMEM4Rec pool at {folder}; train one with `recgraph amem4rec train`")
                if config is None:
                    raise PoolError("a new pool needs its configuration")
                folder.mkdir(parents=True, exist_ok=True)
                source = {"name": dataset.name, "source": dataset.source}
                _write_manifest(
                    folder, {"format": FORMAT, "dataset": source, "config": config, "backends": []}
                )
            manifest = read_manifest(folder)
            _check(folder, manifest, dataset, None)
            pool = _open[folder] = MemoryPool(folder, manifest)
        _check(folder, pool.manifest, dataset, config)
        if backend and backend not in pool.manifest.setdefault("backends", []):
            pool.manifest["backends"].append(backend)
            _write_manifest(folder, pool.manifest)
        return pool


def forget_pool(folder: Path) -> None:
    """Close an open pool and drop it from the process cache (e.g. before deleting its folder)."""
    with _lock:
        pool = _open.pop(folder.resolve(), None)
    if pool is not None:
        pool.close()

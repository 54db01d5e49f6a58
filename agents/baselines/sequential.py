"""SASRec and GRU4Rec from cornac (`cornac.models.SASRec`, `cornac.models.GRU4Rec`, plain PyTorch).

Each split user's training history is one cornac session (the most recent `<m>_max_len` + 1 items,
as SASRec's paper keeps the latest n actions); a second set of sessions, the same items followed by
the validation target, is cornac's `val_set`: with `model_selection="best"` checked every epoch,
cornac keeps the epoch whose validation recall@20 is best (early stopping by the best checkpoint).
Only the validation targets of `training_data` are checked: at most `trained.VALIDATION_USERS` users'
(a seeded sample on a larger catalog; cornac scores each one against the whole catalog).
Cornac's item index is our catalog row (its item map is filled with every row first), so a
candidate's score is read at its row. The network's weights are cached (`agents.baselines.trained`);
a reloaded model is the same cornac recommender with those weights.

Scoring reads the visible history's warm items (the last `<m>_max_len`), oldest first; a model keeps
the score rows of the latest histories it scored (`SequentialModel.memo`), since the baseline, the
router's method tool in every router variant and the planners' trajectories score the same users.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from agents.baselines.trained import (
    MemoryWatch,
    TrainingData,
    cache_path,
    knobs,
    library_version,
    load_checkpoint,
    save_checkpoint,
    seeded_torch,
    training_data,
)
from state.baselines.context import BaselinesContext
from world.environment import Environment
from world.progress import report

SEQUENTIAL = ("sasrec", "gru4rec")
"""The cornac sequential baselines."""
SCORE_MEMO_BYTES = 16 * 2**20
"""How much of the latest score rows a model keeps (`SequentialModel.memo`): about 1,200 users'
rows on ml-100k, 120 on a 17,000-item catalog."""


@dataclass
class SequentialModel:
    """A trained cornac next-item recommender and what its training did."""

    recommender: Any
    """The cornac `SASRec` / `GRU4Rec` (fitted, or rebuilt around cached weights)."""
    max_len: int
    """How many of the most recent history items it reads."""
    info: dict[str, Any] = field(default_factory=dict)
    """metrics.json's `training` entry: library, epochs, sessions, seconds, cache file, reuse."""

    memo: OrderedDict[tuple[int, ...], np.ndarray] = field(
        default_factory=OrderedDict, repr=False, compare=False
    )
    """The score rows of the latest histories scored (`scores` writes it, least recent dropped
    first beyond `SCORE_MEMO_BYTES`): the baseline, the router's method tool in each router
    variant, and a planner's trajectories score one user's history again and again."""
    memo_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    """Guards `memo` (users are ranked on several threads)."""

    def scores(self, history_rows: Sequence[int]) -> np.ndarray:
        """Scores of every catalog row after the given history (rows, oldest first); a history
        scored before gets a copy of the same row (the network is in eval mode: the same bits)."""
        recent = tuple(list(history_rows)[-self.max_len :])
        with self.memo_lock:
            found = self.memo.get(recent)
            if found is not None:
                self.memo.move_to_end(recent)
                return found.copy()
        row = np.asarray(self.recommender.score(0, history_items=list(recent)), dtype=np.float64)
        with self.memo_lock:
            self.memo[recent] = row
            while len(self.memo) * row.nbytes > SCORE_MEMO_BYTES and len(self.memo) > 1:
                self.memo.popitem(last=False)
        return row.copy()


def recommender(name: str, settings: dict[str, Any], trainable: bool = True) -> Any:
    """The cornac recommender for `settings` (`knobs`); loss and sampling are cornac's defaults."""
    common = {
        "batch_size": settings["batch_size"],
        "learning_rate": settings["learning_rate"],
        "n_sample": settings["negatives"],
        "n_epochs": settings["epochs"],
        "seed": settings["seed"],
        "model_selection": "best",
        "val_eval_every": 1,
        "trainable": trainable,
    }
    if name == "sasrec":
        from cornac.models import SASRec

        return SASRec(
            embedding_dim=settings["embedding_dim"],
            max_len=settings["max_len"],
            num_blocks=settings["num_blocks"],
            num_heads=settings["num_heads"],
            dropout=settings["dropout"],
            **common,
        )
    from cornac.models import GRU4Rec

    return GRU4Rec(layers=[settings["hidden"]], **common)


def network(name: str, settings: dict[str, Any], n_items: int) -> Any:
    """An untrained network of the shape cornac's `fit` builds (to load cached weights into)."""
    if name == "sasrec":
        from cornac.models.sasrec.sasrec import SASRecModel

        return SASRecModel(
            item_num=n_items,
            embedding_dim=settings["embedding_dim"],
            maxlen=settings["max_len"],
            n_layers=settings["num_blocks"],
            n_heads=settings["num_heads"],
            use_biases=False,
            dropout=settings["dropout"],
            pad_idx=n_items,
        )
    from cornac.models.gru4rec.gru4rec import GRU4RecModel

    return GRU4RecModel(n_items=n_items, layers=[settings["hidden"]])


def sessions(env: Environment, data: TrainingData, max_len: int) -> tuple[Any, Any]:
    """cornac's (train_set, val_set): each user's latest `max_len` + 1 training items, and the
    latest `max_len` followed by the validation target."""
    from cornac.data import SequentialDataset

    items: OrderedDict[int, int] = OrderedDict((row, row) for row in range(len(env.item_ids)))
    users: OrderedDict[str, int] = OrderedDict()
    train, valid = [], []
    for user, rows in data.sequences.items():
        train += [(user, user, row, t) for t, row in enumerate(rows[-(max_len + 1) :])]
        if user in data.validation:
            shown = [*rows[-max_len:], data.validation[user]]
            valid += [(user, user, row, t) for t, row in enumerate(shown)]
    train_set = SequentialDataset.build(
        train, fmt="USIT", global_uid_map=users, global_sid_map=OrderedDict(), global_iid_map=items
    )
    val_set = SequentialDataset.build(
        valid, fmt="USIT", global_uid_map=users, global_sid_map=OrderedDict(), global_iid_map=items
    )
    return train_set, val_set


@contextmanager
def prefix_budget(prefixes: int, batch: int) -> Iterator[None]:
    """While cornac's SASRec trains, each epoch stops after `ceil(prefixes / batch)` batches of its
    prefix iterator (`session_seq_iter`, which shuffles the sessions every epoch from the model's
    seeded generator, so each epoch trains on another seeded subset of whole sessions); 0: no limit.
    Cornac yields one training example per prefix of every session (558,742 at 50k users), where
    SASRec's paper trains each sequence once, all positions at a time."""
    from cornac.models.sasrec import recom_sasrec

    if prefixes <= 0:
        yield
        return
    every_prefix = recom_sasrec.session_seq_iter
    batches = -(-prefixes // batch)
    recom_sasrec.session_seq_iter = lambda *args, **kwargs: islice(every_prefix(*args, **kwargs), batches)
    try:
        yield
    finally:
        recom_sasrec.session_seq_iter = every_prefix


def train_sequential(env: Environment, ctx: BaselinesContext, name: str) -> SequentialModel:
    """`name` trained on `env`'s training sessions, or rebuilt from its cached weights."""
    import cornac

    settings = knobs(name, ctx)
    data = training_data(env)
    path = cache_path(env, name, settings, library_version(name), data)
    train_set, val_set = sessions(env, data, settings["max_len"])
    info = {
        "library": f"cornac {cornac.__version__}",
        "sessions": len(train_set.sessions),
        "prefixes": sum(max(0, len(rows) - 1) for rows in train_set.sessions.values()),
        "cache": str(path),
    }
    if path.is_file():
        return rebuilt(name, settings, train_set, load_checkpoint(path), {**info, "reused": True})
    label, started = f"{name} training", time.perf_counter()
    report(label, 0, settings["epochs"])
    # cornac's GRU4Rec iterator assumes at least a batch of sessions (its hidden state has
    # batch_size rows): a smaller catalog trains with one batch of all its sessions. It skips
    # one-item sessions, so for GRU4Rec only the others count (SASRec's iterator has no such need).
    batch = min(settings["batch_size"], max(1, len(train_set.sessions)))
    if name == "gru4rec":
        batch = min(batch, max(1, sum(len(rows) > 1 for rows in train_set.sessions.values())))
    model = recommender(name, {**settings, "batch_size": batch})
    budget = prefix_budget(settings["epoch_prefixes"], batch) if name == "sasrec" else nullcontext()
    with MemoryWatch() as memory, seeded_torch(ctx.seed), budget:
        model.fit(train_set, val_set)
    report(label, settings["epochs"], settings["epochs"])
    seconds = time.perf_counter() - started
    info.update(epochs=settings["epochs"], seconds=round(seconds, 2), reused=False, **memory.figures())
    save_checkpoint(path, {"state": model.model.state_dict(), "seconds": seconds})
    return SequentialModel(model, settings["max_len"], info)


def rebuilt(
    name: str, settings: dict[str, Any], train_set: Any, saved: dict[str, Any], info: dict[str, Any]
) -> SequentialModel:
    """The cornac recommender around cached weights (its maps set by a no-training `fit`)."""
    model = recommender(name, settings, trainable=False)
    model.fit(train_set)
    model.model = network(name, settings, model.total_items)
    model.model.load_state_dict(saved["state"])
    model.pad_idx = model.total_items
    info.update(epochs=settings["epochs"], seconds=round(float(saved["seconds"]), 2))
    return SequentialModel(model, settings["max_len"], info)

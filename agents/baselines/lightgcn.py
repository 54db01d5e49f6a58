"""LightGCN from PyTorch Geometric (`torch_geometric.nn.models.LightGCN`, plain PyTorch).

The graph is the user-item bipartite graph of the training interactions only (validation and test
targets are never edges); PyG's LightGCN propagates the embeddings over it (`lightgcn_layers` layers,
symmetric normalisation, layer mean) and its `recommendation_loss` is the paper's BPR loss with L2 on
the batch's ego embeddings. Training follows the paper: Adam, batches of training interactions (at
most `max_batches` per epoch: a larger graph gets larger batches), one uniformly sampled item the
user did not interact with in training per positive, drawn among the items that have training
interactions (as cornac's samplers do: an item only a validation or test target holds is never
touched, its embedding stays as initialised). Every `lightgcn_eval_every` epochs the validation
targets (at most `trained.VALIDATION_USERS` users') are ranked against the whole catalog (training
items masked) and recall@20 is taken; training stops after `lightgcn_patience` checks without a gain
and the best checkpoint's propagated embeddings are kept (cached, so scoring needs no torch).

Scoring: in the classic scenario, the user's propagated embedding; otherwise (and for users with no
training interactions) the mean of the visible warm items' propagated embeddings, as bpr does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
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
from world.progress import end, report

RECALL_AT = 20
"""The validation metric's cut-off (the paper's recall@20)."""
REDRAWS = 100
"""Most redraws of a negative that turned out to be one of the user's training items."""
EVAL_USERS = 2048
"""Users scored at once in a validation check (bounds its memory on a large catalog)."""
MAX_BATCHES = 48
"""Most BPR batches per epoch: each batch propagates over the whole graph (~0.65 CPU s at 50k users x
17k items, whatever the batch size), so on a large graph the batch grows to
ceil(interactions / MAX_BATCHES) instead of `lightgcn_batch_size`. ml-100k (98,114 training
interactions, 48 batches of 2048) keeps its batch size."""


EPOCH_WORK = 24_000_000
"""Most training interactions x batches per epoch: a batch's cost grows with the graph (it propagates
over every edge), so a graph of over `EPOCH_WORK / MAX_BATCHES` = 500,000 training interactions gets
fewer batches still, `EPOCH_WORK // interactions` (36 at 650,000, the 50k-user synthetic catalog's
training interactions: ~23 CPU s an epoch where 48 took ~31), which keeps 20 epochs within the
10-minute budget. ml-100k keeps its 48."""


def max_batches(n_interactions: int) -> int:
    """Most BPR batches per epoch for a graph of `n_interactions` training interactions."""
    return max(1, min(MAX_BATCHES, EPOCH_WORK // max(1, n_interactions)))


def batch_size(settings: dict[str, Any], n_interactions: int) -> int:
    """The BPR batch: `lightgcn_batch_size`, or larger so that an epoch has at most
    `max_batches(n_interactions)` batches."""
    return max(settings["batch_size"], -(-n_interactions // max_batches(n_interactions)))


@dataclass
class LightGCNModel:
    """LightGCN's propagated embeddings (users then items, catalog order) and its training figures."""

    users: np.ndarray
    """Row `env.user_index[u]`: user u's final embedding."""
    items: np.ndarray
    """Row `env.item_index[i]`: item i's final embedding."""
    info: dict[str, Any] = field(default_factory=dict)
    """metrics.json's `training` entry."""


def edges(env: Environment, data: TrainingData) -> tuple[np.ndarray, np.ndarray]:
    """Distinct training (user row, item row) pairs."""
    pairs = {(env.user_index[u], row) for u, rows in data.sequences.items() for row in rows}
    ordered = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    return ordered[:, 0], ordered[:, 1]


def train_lightgcn(env: Environment, ctx: BaselinesContext) -> LightGCNModel:
    """LightGCN trained on `env`'s training interactions, or its cached embeddings."""
    import torch_geometric

    settings = knobs("lightgcn", ctx)
    data = training_data(env)
    path = cache_path(env, "lightgcn", settings, library_version("lightgcn"), data)
    info: dict[str, Any] = {"library": f"torch_geometric {torch_geometric.__version__}", "cache": str(path)}
    if path.is_file():
        saved = load_checkpoint(path)
        info.update(saved["info"], reused=True)
        return LightGCNModel(saved["users"].numpy(), saved["items"].numpy(), info)
    started = time.perf_counter()
    with MemoryWatch() as memory, seeded_torch(ctx.seed):
        users, items, figures = fit(env, data, settings)
    seconds = round(time.perf_counter() - started, 2)
    info.update(figures, seconds=seconds, reused=False, **memory.figures())
    save_checkpoint(path, {"users": users, "items": items, "info": figures})
    return LightGCNModel(users.numpy(), items.numpy(), info)


def fit(env: Environment, data: TrainingData, settings: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """The training loop; returns the best check's (user, item) embeddings and the figures."""
    import torch
    from torch_geometric.nn.models import LightGCN
    from torch_geometric.utils import to_torch_csr_tensor

    n_users, n_items = len(env.user_ids), len(env.item_ids)
    user_rows, item_rows = edges(env, data)
    u, i = torch.from_numpy(user_rows), torch.from_numpy(item_rows) + n_users
    graph = to_torch_csr_tensor(
        torch.stack([torch.cat([u, i]), torch.cat([i, u])]), size=(n_users + n_items,) * 2
    )
    model = LightGCN(n_users + n_items, settings["embedding_dim"], settings["layers"])
    optimiser = torch.optim.Adam(model.parameters(), lr=settings["learning_rate"])
    seen = env.train_matrix.tocsr()
    warm = np.unique(item_rows)
    rng = np.random.default_rng(settings["seed"])
    label, epochs = "lightgcn training", settings["epochs"]
    size = batch_size(settings, len(user_rows))
    best: tuple[float, int, Any] = (-1.0, 0, None)
    checks_without_gain, epoch = 0, 0
    report(label, 0, epochs)
    while epoch < epochs and (checks_without_gain < settings["patience"] or best[2] is None):
        model.train()
        order = rng.permutation(len(user_rows))
        for start in range(0, len(order), size):
            batch = order[start : start + size]
            negatives = unseen_items(seen, user_rows[batch], warm, rng)
            pairs = torch.stack(
                [u[batch].repeat(2), torch.cat([i[batch], torch.from_numpy(negatives) + n_users])]
            )
            optimiser.zero_grad()
            positive, negative = model(graph, pairs).chunk(2)
            loss = model.recommendation_loss(
                positive, negative, node_id=pairs.unique(), lambda_reg=settings["reg"]
            )
            loss.backward()
            optimiser.step()
        epoch += 1
        report(label, epoch, epochs)
        if epoch % settings["eval_every"] == 0 or epoch == epochs:
            embedding = propagated(model, graph)
            recall = validation_recall(env, data, seen, embedding, n_users)
            if recall > best[0]:
                best, checks_without_gain = (recall, epoch, embedding), 0
            else:
                checks_without_gain += 1
    end(label)
    embedding = best[2]
    figures = {
        "epochs": epoch, "best_epoch": best[1], "validation_recall_at_20": round(best[0], 4),
        "batch_size": size, "validation_users": len(data.validation),
    }  # fmt: skip
    return embedding[:n_users].clone(), embedding[n_users:].clone(), figures


def propagated(model: Any, graph: Any) -> Any:
    """PyG's final (layer-averaged) embeddings of every node, without gradients."""
    import torch

    model.eval()
    with torch.no_grad():
        return model.get_embedding(graph)


def unseen_items(seen: Any, users: np.ndarray, pool: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One item of `pool` per user, uniformly, that the user has no training interaction with
    (redrawn until so, at most `REDRAWS` times: a user who has every item keeps a positive)."""
    negatives = pool[rng.integers(0, len(pool), len(users))]
    clash = np.asarray(seen[users, negatives]).ravel() > 0
    for _ in range(REDRAWS):
        if not clash.any():
            break
        negatives[clash] = pool[rng.integers(0, len(pool), int(clash.sum()))]
        clash = np.asarray(seen[users, negatives]).ravel() > 0
    return negatives


def validation_recall(env: Environment, data: TrainingData, seen: Any, embedding: Any, n_users: int) -> float:
    """Share of validation targets ranked in the top 20 of the catalog (training items masked)."""
    users = [env.user_index[u] for u in data.validation]
    targets = np.array(list(data.validation.values()), dtype=np.int64)
    if not users:
        return 0.0
    hits = 0
    items = embedding[n_users:].numpy()
    for start in range(0, len(users), EVAL_USERS):
        rows = np.array(users[start : start + EVAL_USERS])
        scores = embedding[rows].numpy() @ items.T
        scores[seen[rows].toarray() > 0] = -np.inf
        target = scores[np.arange(len(rows)), targets[start : start + EVAL_USERS]]
        hits += int(((scores > target[:, None]).sum(axis=1) < RECALL_AT).sum())
    return hits / len(users)

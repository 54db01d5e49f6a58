"""The trained baselines (SASRec, GRU4Rec from cornac; LightGCN from PyTorch Geometric) on a small
catalog written here: deterministic, trained on training histories only, scoring exactly the given
candidates, with the counted cold-start fallback.

The catalog: 24 users, items 1..20 in overlapping runs; item 99 exists only as user `u0`'s
validation target and item 98 only as user `u1`'s test target (planted: no model may learn them);
user `cold` has two interactions with items 97 and 96, which nobody else has (too few to split:
both are visible history, neither is warm)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.baselines.lightgcn import train_lightgcn
from agents.baselines.sequential import network, sessions, train_sequential
from agents.baselines.trained import knobs, seeded_torch, training_data
from graphs.registry import get_graph
from state.baselines.context import BaselinesContext
from world.environment import get_environment

SMALL = {
    "sasrec_embedding_dim": 8, "sasrec_max_len": 5, "sasrec_epochs": 2, "sasrec_negatives": 16,
    "sasrec_batch_size": 32, "gru4rec_hidden": 8, "gru4rec_epochs": 2, "gru4rec_negatives": 16,
    "gru4rec_batch_size": 8, "gru4rec_max_len": 5, "lightgcn_embedding_dim": 8, "lightgcn_epochs": 4,
    "lightgcn_eval_every": 2, "lightgcn_batch_size": 64,
}  # fmt: skip


def write_catalog(folder: Path) -> str:
    """The module docstring's catalog as RecBole atomic files; returns its path."""
    folder.mkdir(parents=True)
    items = ["item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq"]
    items += [f"{i}\tTitle {i}\t1990\tDrama" for i in [*range(1, 21), 96, 97, 98, 99]]
    (folder / "small.item").write_text("\n".join(items) + "\n")
    rows = ["user_id:token\titem_id:token\trating:float\ttimestamp:float"]
    for user in range(24):
        sequence = [(user + step) % 20 + 1 for step in range(8)]
        if user == 0:
            sequence[-2] = 99  # validation target only
        if user == 1:
            sequence[-1] = 98  # test target only
        rows += [f"u{user}\t{item}\t4\t{t}" for t, item in enumerate(sequence)]
    rows += ["cold\t97\t4\t1", "cold\t96\t4\t2"]
    (folder / "small.inter").write_text("\n".join(rows) + "\n")
    return str(folder)


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The catalog, with an empty cache folder."""
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    return write_catalog(tmp_path / "small")


def context(dataset: str, **more: object) -> BaselinesContext:
    """Small knobs, so that each model trains in about a second."""
    return BaselinesContext(dataset=dataset, **{"seed": 3, **SMALL, **more})


def train(name: str, dataset: str, ctx: BaselinesContext) -> dict[str, np.ndarray]:
    """`name` trained (or read back) on `dataset`: its weights as arrays, by name."""
    env = get_environment(dataset)
    if name == "lightgcn":
        model = train_lightgcn(env, ctx)
        return {"users": model.users, "items": model.items, "reused": np.array(model.info["reused"])}
    model = train_sequential(env, ctx, name)
    weights = {k: v.detach().numpy().copy() for k, v in model.recommender.model.state_dict().items()}
    return {**weights, "reused": np.array(model.info["reused"])}


@pytest.mark.parametrize("name", ["sasrec", "gru4rec", "lightgcn"])
def test_training_is_deterministic_and_read_back_exactly(
    name: str, catalog: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = context(catalog)
    first = train(name, catalog, ctx)
    again = train(name, catalog, ctx)  # from the cache
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "other-home"))
    retrained = train(name, catalog, ctx)  # a second training from scratch
    assert not first.pop("reused") and again.pop("reused") and not retrained.pop("reused")
    for key, value in first.items():
        assert np.array_equal(value, again[key]) and np.array_equal(value, retrained[key]), key
    other_seed = train(name, catalog, context(catalog, seed=4))
    assert any(not np.array_equal(v, other_seed[k]) for k, v in first.items())


@pytest.mark.parametrize("name", ["sasrec", "gru4rec"])
def test_sequential_models_never_learn_a_validation_or_test_only_item(name: str, catalog: str) -> None:
    env = get_environment(catalog)
    ctx = context(catalog)
    settings = knobs(name, ctx)
    planted = [env.item_index["99"], env.item_index["98"]]
    train_set, _ = sessions(env, training_data(env), settings["max_len"])
    assert not set(planted) & set(train_set.uir_tuple[1].tolist())  # never a training item
    with seeded_torch(ctx.seed):
        torch.manual_seed(ctx.seed)
        initial = network(name, settings, len(env.item_ids))
        if name == "gru4rec":
            initial._reset_weights_to_compatibility_mode()
    trained = train_sequential(env, ctx, name).recommender.model
    table = "item_emb.weight" if name == "sasrec" else "Wy.weight"
    before, after = initial.state_dict()[table], trained.state_dict()[table]
    assert torch.equal(before[planted], after[planted])  # untouched by training
    warm = env.item_index["5"]
    assert not torch.equal(before[warm], after[warm])  # while a training item moved


def test_lightgcn_never_learns_a_validation_or_test_only_item(catalog: str) -> None:
    from torch_geometric.nn.models import LightGCN

    env = get_environment(catalog)
    ctx = context(catalog)
    with seeded_torch(ctx.seed):
        initial = LightGCN(len(env.user_ids) + len(env.item_ids), 8, ctx.lightgcn_layers)
    ego = initial.embedding.weight.detach().numpy()[len(env.user_ids) :]
    model = train_lightgcn(env, ctx)
    for item in ("99", "98"):  # no edge, never a sampled negative: its ego embedding, layer-averaged
        row = env.item_index[item]
        assert np.allclose(model.items[row], ego[row] / (ctx.lightgcn_layers + 1), atol=1e-7)
    assert not np.allclose(model.items[env.item_index["5"]], ego[env.item_index["5"]] / 4, atol=1e-4)


@pytest.mark.parametrize("name", ["sasrec", "gru4rec", "lightgcn"])
def test_exactly_the_candidates_are_scored_and_cold_ones_go_last(name: str, catalog: str) -> None:
    candidates = ["7", "97", "3", "12", "99"]  # 97 and 99 have no training interaction
    output = get_graph(name).invoke({"user_id": "u5", "candidates": candidates}, context=context(catalog))
    assert sorted(output["ranking"]) == sorted(candidates)
    assert set(output["scores"]) == set(candidates)
    assert output["ranking"][-2:] == ["97", "99"]  # cold candidates last, in the order given
    assert output["details"] == {"cold_user": 0, "cold_candidates": 2}
    warm = output["ranking"][:3]
    assert [output["scores"][i] for i in warm] == sorted((output["scores"][i] for i in warm), reverse=True)


@pytest.mark.parametrize("name", ["sasrec", "gru4rec", "lightgcn"])
def test_a_user_without_warm_history_gets_the_popularity_order_counted(name: str, catalog: str) -> None:
    env = get_environment(catalog)
    candidates = ["20", "97", "3", "1"]
    output = get_graph(name).invoke({"user_id": "cold", "candidates": candidates}, context=context(catalog))
    by_popularity = sorted(candidates, key=lambda i: -env.popularity.get(i, 0))  # stable: given order
    assert output["ranking"] == by_popularity
    assert output["details"] == {"cold_user": 1, "cold_candidates": 1}


def test_memory_watch_sees_a_peak_that_is_freed_before_training_ends() -> None:
    """The watch samples while the block runs: 200 MB held for a moment and freed before the end is
    counted in the peak (the resident set at the end would miss it)."""
    from agents.baselines.trained import MemoryWatch, resident_mb

    with MemoryWatch(interval=0.01) as memory:
        block = np.ones(200 * 2**20 // 8)  # 200 MB, touched
        time.sleep(0.2)
        del block
    figures = memory.figures()
    assert figures["rss_growth_mb"] >= 150 and figures["peak_rss_mb"] >= figures["rss_start_mb"] + 150
    assert resident_mb() < figures["peak_rss_mb"] - 100  # freed: the end is below the peak


def test_memory_watch_counts_cpu_not_waiting() -> None:
    """Half a second asleep costs (almost) no CPU; half a second of work costs at least that."""
    from agents.baselines.trained import MemoryWatch

    with MemoryWatch() as idle:
        time.sleep(0.5)
    with MemoryWatch() as busy:
        started = time.process_time()
        while time.process_time() - started < 0.5:
            pass
    assert idle.figures()["cpu_seconds"] < 0.25 and busy.figures()["cpu_seconds"] >= 0.5


@pytest.mark.parametrize("name", ["sasrec", "lightgcn"])
def test_training_records_its_resident_memory(name: str, catalog: str) -> None:
    env = get_environment(catalog)
    ctx = context(catalog)
    model = train_lightgcn(env, ctx) if name == "lightgcn" else train_sequential(env, ctx, name)
    info = model.info
    assert info["peak_rss_mb"] >= info["rss_start_mb"] > 0
    assert info["rss_growth_mb"] == pytest.approx(info["peak_rss_mb"] - info["rss_start_mb"], abs=0.11)


def test_gru4rec_trains_when_one_item_sessions_leave_fewer_than_a_batch(tmp_path: Path) -> None:
    """cornac's GRU4Rec skips one-item sessions; with fewer trainable sessions than the batch, its
    hidden state had more rows than its first batch and training crashed."""
    dataset = write_catalog(tmp_path / "small")
    short = ["short\t1\t4\t1", "short\t2\t4\t2", "short\t3\t4\t3"]  # one training item: a one-item session
    with (Path(dataset) / "small.inter").open("a") as handle:
        handle.write("\n".join(short) + "\n")
    env = get_environment(dataset)
    train_set, _ = sessions(env, training_data(env), 5)
    lengths = [len(rows) for rows in train_set.sessions.values()]
    assert 1 in lengths and len(lengths) < 64  # the case: a batch of every session, one of them too short
    model = train_sequential(env, context(dataset, gru4rec_batch_size=64), "gru4rec")
    assert all(torch.isfinite(w).all() for w in model.recommender.model.state_dict().values())

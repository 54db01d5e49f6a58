"""`recgraph datasets synth`: files the loaders read, in the shape asked for, seeded, with pools for
the documented share of users, and enough structure that collaborative baselines beat random."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.baselines.classic import score_itemknn, score_popularity, score_random
from bench.protocol.metrics import mean_metrics, rank_of, user_metrics
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from recgraph.cli import main
from recgraph.datasets_command import fields_of
from state.baselines.context import BaselinesContext
from world.datasets import load_path
from world.environment import Environment
from world.shape import present_fields
from world.synth import POOL_FRACTION, SynthError, SynthSpec, generate
from world.synth_write import write_synth


def synth(folder: Path, *flags: str, users: int = 50, items: int = 80, interactions: int = 600) -> Path:
    """Run the CLI into `folder` and return it."""
    sizes = ["--users", str(users), "--items", str(items), "--interactions", str(interactions)]
    assert main(["datasets", "synth", *sizes, *flags, "--out", str(folder)]) == 0
    return folder


def test_titles_and_order_only_with_pools_loads_as_the_sequential_layout(tmp_path: Path) -> None:
    folder = synth(tmp_path / "amz", "--no-categories", "--no-timestamps", "--candidates-pool", "12")
    assert sorted(p.name for p in folder.iterdir()) == [
        "amz.item", "amz.random", "amz.synth.json", "amz.test.inter"
    ]  # fmt: skip
    data = load_path(folder)
    assert (len(data.items), len(data.presplit or {})) == (80, 50)
    assert len(data.interactions) == 600
    assert present_fields(data) == frozenset()  # titles only, order only
    assert fields_of(data) == "order only, fixed candidates"
    titles = [item.title for item in data.items.values()]
    assert all(not title.isdigit() and len(title.split()) >= 3 for title in titles)
    pools = {u: s.candidates for u, s in (data.presplit or {}).items() if s.candidates}
    assert len(pools) == round(50 * POOL_FRACTION) == 6
    for user, pool in pools.items():
        split = data.presplit[user]  # type: ignore[index]
        taken = {*split.history, split.valid, split.target}
        assert len(pool) == len(set(pool)) == 12 and not taken & set(pool)


def test_timestamps_and_categories_load_as_recbole_atomic(tmp_path: Path) -> None:
    data = load_path(synth(tmp_path / "full"))
    assert data.has_time and data.presplit is None
    assert present_fields(data) == {"categories", "timestamps"}
    env = Environment(data)
    assert len(env.cases) == 50  # every user has history, validation and target
    for case in env.cases.values():
        times = [e.timestamp for e in (*case.history, case.valid, case.target)]
        items = [e.item_id for e in (*case.history, case.valid, case.target)]
        assert times == sorted(times) and len(items) == len(set(items))


def test_same_seed_same_files_other_seed_other_files(tmp_path: Path) -> None:
    flags = ("--no-timestamps", "--candidates-pool", "5", "--seed", "7")
    one, two = synth(tmp_path / "a" / "s", *flags), synth(tmp_path / "b" / "s", *flags)
    three = synth(tmp_path / "c" / "s", *flags[:-1], "8")
    for name in ("s.item", "s.test.inter", "s.random"):
        assert (one / name).read_bytes() == (two / name).read_bytes()
    assert (one / "s.test.inter").read_bytes() != (three / "s.test.inter").read_bytes()


def test_impossible_arguments_are_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SynthError, match="at least 3 per user"):
        generate(SynthSpec(users=10, items=50, interactions=20))
    assert main(["datasets", "synth", "--users", "5", "--items", "50", "--interactions", "50",
                 "--candidates-pool", "5", "--out", str(tmp_path / "x")]) == 2  # fmt: skip
    assert "needs --no-timestamps" in capsys.readouterr().err
    assert main(["datasets", str(tmp_path), "--users", "5"]) == 2
    assert "--users only apply to `recgraph datasets synth`" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_collaborative_baselines_beat_random(tmp_path: Path) -> None:
    data = generate(SynthSpec(users=300, items=200, interactions=4000, seed=3))
    env = Environment(load_path(write_synth(data, tmp_path / "cf")[0].parent))
    cases = plan_cases(env, Protocol(dataset="cf", candidates=20, users=200))
    ctx = BaselinesContext()
    scores = {}
    scorers = {"random": score_random, "popularity": score_popularity, "itemknn": score_itemknn}
    for name, scorer in scorers.items():
        per_user = []
        for case in cases:
            history = env.history(case.user_id)
            values = scorer(env, ctx, case.user_id, history, case.candidates, "classic")
            ranking = [c for _, c in sorted(zip(-values, case.candidates, strict=True))]
            per_user.append(user_metrics(rank_of(case.target, ranking), len(case.candidates)))
        scores[name] = mean_metrics(per_user)["ndcg@5"]
    assert scores["random"] < 0.2 < scores["popularity"] < scores["itemknn"]

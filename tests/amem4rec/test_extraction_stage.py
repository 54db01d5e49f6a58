"""AMEM4Rec's shared extraction stage: the ablations' pools ask the extractor once per window between
them, train exactly the pools they trained alone, re-ask when a knob the extraction depends on
changes, hold training windows only, and a second process building the stage waits for the first."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest

from agents.amem4rec.extract import extraction_request, extraction_task
from agents.amem4rec.windows import plan_windows, window_items
from graphs.amem4rec.extraction import stage_key
from graphs.amem4rec.training import train_pool
from state.amem4rec.context import Amem4RecContext
from tests.fakes import PatternModel, install
from tools.amem4rec.extraction_stage import ExtractionStage
from tools.amem4rec.folder import config_key
from world.environment import get_environment

USERS = ["a", "b", "c", "d"]
ABLATIONS = {
    "amem4rec": {},
    "no_similarity": {"amem4rec_similarity": False},
    "no_evolution": {"amem4rec_evolution": False},
    "no_semantic": {"amem4rec_semantic": False},
}


def extractions(model: PatternModel) -> int:
    """Extraction calls the model received."""
    return sum("consecutive interactions" in str(m[-1].content) for m in model.received)


def stage_at(folder: Path, ctx: Amem4RecContext) -> ExtractionStage:
    key = stage_key(ctx, {"dataset": ctx.dataset}, USERS)
    return ExtractionStage(folder / f"extractions-{config_key(key)}", key)


@pytest.fixture
def ctx(amem_dataset: str) -> Amem4RecContext:
    return Amem4RecContext(dataset=amem_dataset, llm="openai:gpt-4o-mini", amem4rec_round_windows=3)


def test_the_ablations_ask_each_extraction_once_and_train_the_pools_they_trained_alone(
    ctx: Amem4RecContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = install(monkeypatch, PatternModel())
    env = get_environment(ctx.dataset)
    windows = len(plan_windows(env, USERS, 3, ctx.amem4rec_windows_per_user))
    alone, shared = {}, {}
    for name, knobs in ABLATIONS.items():
        knobbed = replace(ctx, **knobs, amem4rec_pool=str(tmp_path / "alone" / name))
        alone[name] = train_pool(env, knobbed, USERS, concurrency=3).pool.fingerprint()
    assert extractions(model) == windows * len(ABLATIONS)
    model.received.clear()
    for name, knobs in ABLATIONS.items():
        knobbed = replace(ctx, **knobs, amem4rec_pool=str(tmp_path / "shared" / name))
        stage = stage_at(tmp_path / "stages", knobbed)
        run = train_pool(env, knobbed, USERS, concurrency=3, stage=stage)
        shared[name] = run.pool.fingerprint()
        # The run's own calls: the extractions only when its pool was the first to need them.
        asked = sum(r["calls"] for r in run.usage if r["agent"] == "extract")
        assert asked == (windows if name == "amem4rec" else 0)
    assert extractions(model) == windows  # once for the four pools
    assert shared == alone
    assert len({*alone.values()}) > 2  # the ablations do train different pools here


def test_a_knob_the_extraction_depends_on_asks_again_one_it_does_not_shares(
    ctx: Amem4RecContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = install(monkeypatch, PatternModel())
    env = get_environment(ctx.dataset)
    first = replace(ctx, amem4rec_pool=str(tmp_path / "first"))
    train_pool(env, first, USERS, concurrency=2, stage=stage_at(tmp_path, first))
    asked = extractions(model)
    later = replace(ctx, amem4rec_tau_low=0.4, amem4rec_top_l=3, amem4rec_pool=str(tmp_path / "later"))
    assert stage_at(tmp_path, later).folder == stage_at(tmp_path, first).folder
    train_pool(env, later, USERS, concurrency=2, stage=stage_at(tmp_path, later))
    assert extractions(model) == asked
    shorter = replace(ctx, amem4rec_memory_chars=120, amem4rec_pool=str(tmp_path / "shorter"))
    assert stage_at(tmp_path, shorter).folder != stage_at(tmp_path, first).folder
    # Even handed the first one's stage, the changed request is a row of its own: asked again.
    train_pool(env, shorter, USERS, concurrency=2, stage=stage_at(tmp_path, first))
    assert extractions(model) == 2 * asked


def test_the_stage_holds_training_windows_only(
    ctx: Amem4RecContext,
    tmp_path: Path,
    amem_histories: dict[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = install(monkeypatch, PatternModel())
    env = get_environment(ctx.dataset)
    stage = stage_at(tmp_path, ctx)
    train_pool(env, replace(ctx, amem4rec_pool=str(tmp_path / "pool")), USERS, concurrency=2, stage=stage)
    expected, prompts = set(), set()
    for ref in plan_windows(env, USERS, 3, ctx.amem4rec_windows_per_user):
        items = window_items(env, ref.user_id, ref.start, 3)
        assert set(items) <= set(amem_histories[ref.user_id][:-2])  # training part only
        task = extraction_task(env, items, ctx.amem4rec_memory_chars)[0]
        expected.add((ref.key, extraction_request(task, ctx)))
        prompts.add(str(task.messages[-1].content))
    assert stage.stored() == expected
    asked = [str(m[-1].content) for m in model.received if "consecutive interactions" in str(m[-1].content)]
    assert sorted(asked) == sorted(prompts)  # each training window once, nothing else


def test_a_second_builder_waits_for_the_first(tmp_path: Path) -> None:
    key = {"knobs": {"amem4rec_window": 3}}
    first, second = ExtractionStage(tmp_path, key), ExtractionStage(tmp_path, key)
    order: list[str] = []
    holding, release = threading.Event(), threading.Event()

    def build_first() -> None:
        with first.building():
            holding.set()
            release.wait()
            first.put("a:0", "r", {"memory": {"behavior_explanation": "x", "pattern_description": "y"}})
            order.append("first done")

    def build_second() -> None:
        holding.wait()
        with second.building():
            order.append("second in")
            order.append(f"found {second.get('a:0', 'r') is not None}")

    threads = [threading.Thread(target=build_first), threading.Thread(target=build_second)]
    for thread in threads:
        thread.start()
    holding.wait()
    release.set()
    for thread in threads:
        thread.join()
    assert order == ["first done", "second in", "found True"]
    assert second.put("a:0", "r", {"memory": None}) == first.get("a:0", "r")  # the first writer's row stays

"""The cost plan of AMEM4Rec's pool training: its windows counted from the run's split and `--set`
knobs (the paper's training, `PAPER_TRAINING`, plans every window one after another: more than the
bench default's latest 5 per user in rounds of 16), its requests at most per window, the probe
training with the run's knobs, and the plan's training line. `published.json` makes `recgraph
reproduce` pass `PAPER_TRAINING`. A hand-built MIND folder: U1 has 8 clicks, U2 12 (6 and 10
training items: 4 and 8 windows of 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.cost.measured import Usage
from bench.cost.planned_calls import PlannedCalls, describe_plan, planned_calls
from bench.cost.planned_training import planned_training
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from bench.report.call_plan import plan_block, plan_markdown
from bench.run.cost_probe import probe
from graphs.amem4rec.training_plan import amem4rec_training_calls
from graphs.hooks import CallPlan, TrainingPlan
from state.amem4rec.context import PAPER_TRAINING, Amem4RecContext
from world.environment import get_environment

PAPER = tuple(PAPER_TRAINING.items())
NEWS = [f"N{k}\tnews\tnewsus\tHeadline {k}\tAbstract {k}." for k in range(1, 31)]


@pytest.fixture
def mind(tmp_path: Path) -> str:
    """U1: 7 history clicks then one in an impression; U2: 11 then one (20 news shown beside each)."""
    folder = tmp_path / "MINDplan"
    folder.mkdir()
    shown = " ".join(f"N{k}-0" for k in range(13, 31))
    behaviors = [
        f"1\tU1\t11/11/2019 9:00:00 AM\t{' '.join(f'N{k}' for k in range(1, 8))}\tN8-1 {shown}",
        f"2\tU2\t11/11/2019 9:00:00 AM\t{' '.join(f'N{k}' for k in range(1, 12))}\tN12-1 {shown}",
    ]
    (folder / "behaviors.tsv").write_text("\n".join(behaviors) + "\n", encoding="utf-8")
    (folder / "news.tsv").write_text("\n".join(NEWS) + "\n", encoding="utf-8")
    return str(folder)


def test_windows_follow_the_split_and_the_knobs(mind: str) -> None:
    bench = amem4rec_training_calls(Amem4RecContext(dataset=mind), ["U1", "U2"], "classic", 0)
    assert (bench.steps, bench.per_step, bench.light_steps) == (4 + 5, 3, 9)  # U2 capped at its latest 5
    assert bench.calls == 9  # one round of 16 holds every window: each meets the empty pool
    paper = Amem4RecContext(dataset=mind, **PAPER_TRAINING)
    plan = amem4rec_training_calls(paper, ["U1", "U2"], "classic", 0)
    assert (plan.steps, plan.light_steps, plan.calls) == (4 + 8, 1, 1 + 11 * 3)
    assert plan.note == "every window of each user of 2 users, w=3, one after another"
    wider = amem4rec_training_calls(Amem4RecContext(dataset=mind, amem4rec_window=4), ["U2"], "classic", 0)
    assert wider.steps == 5 and "latest 5 per user of 1 users, w=4, in rounds of 16" in wider.note
    store_only = Amem4RecContext(dataset=mind, amem4rec_evolution=False, **PAPER_TRAINING)
    assert amem4rec_training_calls(store_only, ["U1", "U2"], "classic", 0).calls == 12  # the extractor only
    no_link = Amem4RecContext(dataset=mind, amem4rec_semantic=False, **PAPER_TRAINING)
    assert amem4rec_training_calls(no_link, ["U1"], "classic", 0).calls == 1 + 3 * 2


def test_the_run_s_knobs_reach_the_plan_and_the_probe(mind: str) -> None:
    """The probe trains as the run will: with PAPER_TRAINING its measured training asks more requests
    than the bench default can (9 windows, 1 each), and never more than the plan's bound."""
    env = get_environment(mind)
    context = Amem4RecContext(dataset=mind, llm="sim")
    default, paper = (
        Protocol(mind, candidates=5, users=2, llm="sim"),
        Protocol(mind, candidates=5, users=2, llm="sim", knobs=PAPER),
    )
    cases = plan_cases(env, default)
    assert [c.user_id for c in cases] == ["U1", "U2"]
    assert planned_training(["amem4rec", "popularity"], cases, default, context)["amem4rec"].steps == 9
    plans = planned_training(["amem4rec", "amem4rec_no_evolution"], cases, paper, context)
    assert plans["amem4rec"].steps == 12 and plans["amem4rec_no_evolution"].calls == 12
    probed = probe(["amem4rec"], cases, paper, context)["amem4rec"]
    assert probed.training == plans["amem4rec"] and probed.steps == (12,)
    trained = probed.prepare_for()
    assert trained is not None and 12 <= trained.calls <= plans["amem4rec"].calls
    assert trained.calls > 9 and trained.input_tokens > 0
    (row,) = planned_calls(["amem4rec"], {"amem4rec": 2}, context, 5, {"amem4rec": probed})
    assert row.training == plans["amem4rec"] and row.training_tokens == trained
    assert row.total == 2 + plans["amem4rec"].calls
    assert row.tokens is not None and row.tokens.input_tokens > trained.input_tokens  # ranking on top


def test_the_plan_prints_the_training_line() -> None:
    training = TrainingPlan(
        300, "windows", 3, 16, "every window of each user of 10 users, w=3, in rounds of 16"
    )
    row = PlannedCalls(
        "amem4rec", 10, CallPlan(1), Usage(900, 40_000, 5_000), training, Usage(880, 30_000, 4_000)
    )
    text = describe_plan([row], 2, "openai:gpt-4o-mini")
    assert text.startswith(f"planned LLM requests: {10 + 16 + 284 * 3:,} before retries")
    line = next(line for line in text.splitlines() if line.strip().startswith("training:"))
    assert "300 windows (every window of each user of 10 users" in line
    assert f"at most {16 + 284 * 3:,} requests; the first 16 windows meet an empty pool" in line
    assert "30,000 input + 4,000 output tokens, $" in line
    assert "amem4rec: 10 users × 1 = 10" in text and "with the training below" in text
    entry = {"users": 10, "llm_calls": 10, "input_tokens": 1, "output_tokens": 1, "est_cost_usd": 0.0}
    entry["call_plan"] = {"per_user": 1, "at_most": False, "note": ""}
    block = plan_block({"amem4rec": entry}, "openai:gpt-4o-mini", [row])
    assert block is not None and block["amem4rec"]["declared_training"] == {
        "steps": 300, "step": "windows", "calls_at_most": 16 + 284 * 3,
    }  # fmt: skip
    assert f"| amem4rec | 10 | 10 + ≤{16 + 284 * 3:,} training (300 windows) |" in plan_markdown(block)


def test_published_protocol_trains_as_the_paper() -> None:
    published = Path(__file__).resolve().parents[2] / "graphs" / "amem4rec" / "published.json"
    assert json.loads(published.read_text())["protocol"]["knobs"] == PAPER_TRAINING

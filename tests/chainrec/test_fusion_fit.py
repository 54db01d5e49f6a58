"""Learned fusion weights (agents/chainrec/offline/fusion_fit.py) on a hand-made trajectory row whose
two item tools disagree, every figure worked out by hand below.

Candidates [b7, b3, b8, b9], target b3. Percentile ranks of the tools' scores:
- ItemSemantic (A), scores .1 .9 .2 .3  -> b7 0, b3 1, b8 1/3, b9 2/3 (the target first);
- CollaborativeSignal (B), .9 .5 .8 .1  -> b7 1, b3 1/3, b8 2/3, b9 0 (the target third).
Both confidences 1. With weights (a, 3): score(b3) = (a + 1)/(a + 3), score(b7) = 3/(a + 3),
score(b8) = (a/3 + 2)/(a + 3), score(b9) = (2a/3)/(a + 3).
- a = 1 (the context): b7 .75, b8 .583, b3 .5, b9 .167 -> target rank 3, AvgHR 2/3;
- a = 2: b3 and b7 tie at 3/5 and the tie keeps input order (b7 first): still rank 2, AvgHR 2/3;
- a = 4: b3 5/7, b8 10/21, b7 3/7, b9 8/21 -> target first, AvgHR 1.
The conditional-logit fit raises the likelihood of b3 by weighing ItemSemantic (b3 on top) up and
CollaborativeSignal (b7 and b8 above b3) down to its bound 0.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from agents.chainrec.offline.fusion_fit import (
    cross_validated,
    describe,
    fit_weights,
    learn_fusion,
    refused,
    row_signals,
)
from agents.chainrec.online.fusion import fuse, with_fusion_weights
from agents.chainrec.online.item_tools import fetch_items
from agents.chainrec.online.tool_agent import Episode
from agents.router.catalog import METHOD_TOOLS
from state.chainrec.context import ChainRecContext
from state.router.context import RouterContext
from tools.chainrec.episode_tools import EpisodeScope
from world.environment import get_environment

CANDIDATES = ["b7", "b3", "b8", "b9"]
TOOLS = ["ItemSemantic", "CollaborativeSignal"]


def _entry(tool: str, scores: list[float]) -> dict[str, Any]:
    items = [{"item_id": c, "score": s, "note": ""} for c, s in zip(CANDIDATES, scores, strict=True)]
    return {"step": 1, "tool": tool, "facets": [], "confidence": 1.0, "summary": "", "items": items,
            "source": "fallback", "stats": {}, "evidence": []}  # fmt: skip


def _row(user: str = "u1") -> dict[str, Any]:
    outputs = {"ItemSemantic": _entry("ItemSemantic", [0.1, 0.9, 0.2, 0.3]),
               "CollaborativeSignal": _entry("CollaborativeSignal", [0.9, 0.5, 0.8, 0.1])}  # fmt: skip
    stale = {"ranking": CANDIDATES, "avg_hr": 0.0}
    return {
        "user_id": user,
        "task": {"user_id": "u1", "target": "b3", "candidates": CANDIDATES, "scenario": "classic"},
        "tools": TOOLS,
        "tool_outputs": outputs,
        "tool_tokens": {},
        "rankings": {"0": stale, "1": stale, "0.1": stale},
        "chains": [["0", "0", 0.0], ["1", "1", 0.0], ["0.1", "0.1", 0.0], ["1.0", "0.1", 0.0]],
    }


@pytest.fixture
def context(books: str) -> RouterContext:
    """The router's knobs on the books folder, CollaborativeSignal weighed 3."""
    # A method tool's card (so its weight field) is known to the fusion once agents/router/catalog.py
    # registered the method tools, as in a router run; alone, this file would fuse without it.
    assert "CollaborativeSignal" in {spec.name for spec in METHOD_TOOLS}
    return replace(RouterContext(), dataset=books, chainrec_weight_collaborative=3.0)


def test_the_signals_fuse_as_candidate_rank_does(books: str, context: RouterContext) -> None:
    env = get_environment(books)
    signals = row_signals(env, context, [_row()])
    assert signals.tools == TOOLS
    np.testing.assert_allclose(signals.signal[0, 0], [0, 1, 1 / 3, 2 / 3])
    np.testing.assert_allclose(signals.signal[0, 1], [1, 1 / 3, 2 / 3, 0])
    weights = {"ItemSemantic": 1.0, "CollaborativeSignal": 3.0}
    np.testing.assert_allclose(signals.scores(weights)[0], [0.75, 0.5, 7 / 12, 1 / 6])
    episode = Episode(EpisodeScope(env, "u1", "classic"), tuple(CANDIDATES), (), context)
    memory = list(_row()["tool_outputs"].values())
    fused = fuse(env, context, fetch_items(episode, CANDIDATES), memory)
    order = np.argsort(-signals.scores(weights)[0], kind="stable")
    assert [CANDIDATES[i] for i in order] == fused.order == ["b7", "b8", "b3", "b9"]
    assert signals.avg_hr(weights) == pytest.approx(2 / 3)


def test_the_fit_weighs_up_the_tool_that_finds_the_target_and_drops_the_other(
    books: str, context: RouterContext
) -> None:
    signals = row_signals(get_environment(books), context, [_row()])
    fitted = fit_weights(signals, {"ItemSemantic": 1.0, "CollaborativeSignal": 3.0}, np.array([0]))
    assert fitted["CollaborativeSignal"] == 0.0 and fitted["ItemSemantic"] > 0.0
    assert signals.avg_hr(fitted) == 1.0
    assert fit_weights(signals, {"ItemSemantic": 0.5}, np.array([0])) == fitted  # convex: one optimum


def test_refusing_rewrites_every_tool_set_ranking_and_chain_reward(
    books: str, context: RouterContext
) -> None:
    rows = [_row()]
    signals = row_signals(get_environment(books), context, rows)
    [row] = refused(rows, signals, {"ItemSemantic": 4.0, "CollaborativeSignal": 3.0}, lam=0.01, cost_lam=0.0)
    assert row["rankings"]["0"] == {"ranking": ["b3", "b9", "b8", "b7"], "avg_hr": 1.0}
    assert row["rankings"]["1"] == {"ranking": ["b7", "b8", "b3", "b9"], "avg_hr": pytest.approx(2 / 3)}
    assert row["rankings"]["0.1"] == {"ranking": ["b3", "b8", "b7", "b9"], "avg_hr": 1.0}
    assert row["chains"] == [
        ["0", "0", 0.99], ["1", "1", 0.656667], ["0.1", "0.1", 0.98], ["1.0", "0.1", 0.98]
    ]  # fmt: skip


def test_one_task_is_too_few_to_hold_out_so_the_start_weights_answer(
    books: str, context: RouterContext
) -> None:
    """A training world with a single task (a tiny catalog) cannot be cross-validated: the start
    weights (the context's: target third, AvgHR 2/3) stand for the fit instead of failing."""
    signals = row_signals(get_environment(books), context, [_row()])
    start = {"ItemSemantic": 1.0, "CollaborativeSignal": 3.0}
    assert cross_validated(signals, start, np.array([0])).tolist() == pytest.approx([2 / 3])


def test_auto_keeps_the_context_weights_when_one_tool_alone_does_as_well(
    books: str, context: RouterContext
) -> None:
    rows = [_row(f"u1-{n}") for n in range(5)]
    kept, record = learn_fusion(rows, range(5), get_environment(books), context, "auto", 0.01, 0.0)
    assert kept == rows  # ItemSemantic alone already ranks the target first on every task
    assert record["used"] == "context"
    assert record["train_avg_hr"] == {"context": 0.6667, "context_best_set": 1.0, "learned": 1.0}
    assert record["weights"]["CollaborativeSignal"] == 0.0
    assert record["cross_validated"] == {
        "learned": 1.0, "context_best_set": 1.0, "gain": 0.0, "standard_error": 0.0, "kept": False,
        "keep_z": 2.0,
    }  # fmt: skip


def test_auto_keeps_a_fit_that_beats_every_tool_alone_on_every_fold(
    books: str, context: RouterContext
) -> None:
    """Each tool alone ranks the target second (ItemSemantic after b7, CollaborativeSignal after
    b8), and so do the context's weights (1, 3): (2/3 + 2)/4 for b3 < 3/4 for b8. The task is
    symmetric in the two tools (b7 <-> b8), so the convex fit weighs them equally: b3 4w/3 above b7
    and b8 at w (tied: input order), the target first on every task of every fold."""
    rows = [_row(f"u1-{n}") for n in range(5)]
    for row in rows:
        row["tool_outputs"] = {
            "ItemSemantic": _entry("ItemSemantic", [0.9, 0.6, 0.1, 0.3]),
            "CollaborativeSignal": _entry("CollaborativeSignal", [0.1, 0.6, 0.9, 0.3]),
        }
    kept, record = learn_fusion(rows, range(5), get_environment(books), context, "auto", 0.01, 0.0)
    assert record["used"] == "learned"
    weights = record["weights"]
    assert weights["ItemSemantic"] == weights["CollaborativeSignal"] > 0
    assert record["cross_validated"] == {
        "learned": 1.0, "context_best_set": 0.6667, "gain": 0.3333, "standard_error": 0.0, "kept": True,
        "keep_z": 2.0,
    }  # fmt: skip
    assert all(row["rankings"]["0.1"] == {"ranking": ["b3", "b7", "b8", "b9"], "avg_hr": 1.0} for row in kept)
    w = weights["ItemSemantic"]
    assert describe(record).endswith(
        "5-fold 1.0 vs 0.6667, gain +0.3333 ± 0.0 (kept). "
        f"Learned: ItemSemantic {w:g}, CollaborativeSignal {w:g}"
    )


def test_learned_mode_refuses_the_rows_and_context_mode_never_fits(
    books: str, context: RouterContext
) -> None:
    env = get_environment(books)
    rows = [_row()]
    learned, record = learn_fusion(rows, [0], env, context, "learned", 0.01, 0.0)
    assert record["used"] == "learned" and "cross_validated" not in record
    assert learned[0]["rankings"]["0.1"]["avg_hr"] == 1.0
    w = record["weights"]["ItemSemantic"]
    assert describe(record) == (
        "fusion (learned): learned weights; training AvgHR of every tool fused 1.0 learned vs 0.6667 "
        f"context (its best tool set 1.0). Learned: ItemSemantic {w:g}, CollaborativeSignal 0"
    )
    same, record = learn_fusion(rows, [0], env, context, "context", 0.01, 0.0)
    assert same == rows and record == {"mode": "context", "used": "context",
                                       "context_weights": record["context_weights"]}  # fmt: skip
    assert describe(record) == "fusion: the context's weights (fusion mode context)"
    with pytest.raises(ValueError, match="unknown fusion mode 'best': auto, learned, context"):
        learn_fusion(rows, [0], env, context, "best", 0.01, 0.0)


def test_learned_weights_go_into_the_context_the_context_has_fields_for() -> None:
    router = with_fusion_weights(RouterContext(), {"ItemSemantic": 4.0, "CollaborativeSignal": 0.5})
    assert (router.chainrec_weight_item_semantic, router.chainrec_weight_collaborative) == (4.0, 0.5)
    chainrec = with_fusion_weights(ChainRecContext(), {"ItemSemantic": 4.0, "CollaborativeSignal": 0.5})
    assert chainrec.chainrec_weight_item_semantic == 4.0 and not hasattr(chainrec, "router_collaborative")
    base = ChainRecContext()
    assert with_fusion_weights(base, None) is base

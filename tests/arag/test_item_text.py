"""ARAG reads what its paper's agents read: T(i) = title, description, reviews (from training
interactions only), the user context u = (C_lt, C_st) split by time, and a ranker whose left-out
ids follow a rule with no score. Vanilla RAG retrieves history by the user context."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.baselines.llm import retrieved_history
from agents.ranking import left_out_order
from graphs.arag.graph import graph
from prompts.common import quote
from state.arag.context import AragContext
from state.baselines.context import BaselinesContext
from tests.fakes import SchemaRoutedModel, install
from tools.user_context import history_times, session_length, split_context
from world.environment import get_environment
from world.item_reviews import REVIEWS_PER_ITEM, item_reviews

DAY = 86400
DESCRIPTIONS = {
    str(i): f"Description of item {i}: a {'quiet' if i % 2 else 'loud'} record" for i in range(1, 9)
}
# user -> (item, day); the last two are validation and target. Every review on those two is SECRET.
EVENTS = {
    "a": [("1", 1), ("2", 2), ("3", 30), ("4", 30.5), ("5", 31)],
    "b": [("5", 1), ("6", 2), ("7", 3), ("1", 4), ("2", 5)],
    "c": [("5", 2), ("3", 3), ("8", 4), ("6", 5), ("7", 6)],
    "d": [("5", 3), ("8", 4), ("1", 5), ("3", 6), ("4", 7)],
}


def write_dataset(folder: Path) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    rows = ["item_id:token\ttitle:token_seq\tdescription:token_seq"]
    rows += [f"{i}\tRecord {i}\t{text}" for i, text in DESCRIPTIONS.items()]
    (folder / "rev.item").write_text("\n".join(rows) + "\n")
    inter = ["user_id:token\titem_id:token\trating:float\ttimestamp:float\treview:token_seq"]
    for user, events in EVENTS.items():
        for n, (item, day) in enumerate(events):
            review = f"SECRET {user} on {item}" if n >= len(events) - 2 else f"{user} says {item} is fine"
            inter.append(f"{user}\t{item}\t4\t{day * DAY}\t{review}")
    (folder / "rev.inter").write_text("\n".join(inter) + "\n")
    return str(folder)


@pytest.fixture
def reviewed(tmp_path: Path) -> str:
    return write_dataset(tmp_path / "rev")


def test_reviews_come_from_training_interactions_only(reviewed: str) -> None:
    """Item 5 is a's target: b's, c's and d's training reviews of it may show (the first two in
    time), a's held-out one never; no held-out review of anyone reaches any item's sample."""
    env = get_environment(reviewed)
    assert item_reviews(env, "5") == ("b says 5 is fine", "c says 5 is fine")
    assert len(item_reviews(env, "5")) == REVIEWS_PER_ITEM
    every = [text for item in env.item_ids for text in item_reviews(env, item)]
    assert every and not any("SECRET" in text for text in every)
    assert item_reviews(env, "4") == ()  # only a's validation and d's target reviewed it


def scripted() -> SchemaRoutedModel:
    judgments = [{"item_id": i, "score": 8.0, "justification": "fits"} for i in ("5", "6", "7", "8")]
    return SchemaRoutedModel(
        answers={
            "UserSummary": json.dumps({"long_term": "Quiet records.", "session_intent": "More of them."}),
            "NliJudgments": json.dumps({"judgments": judgments}),
            "ContextSummary": json.dumps({"summary": "Quiet records."}),
            "ExplainedRanking": json.dumps({"ranking": ["7", "8"], "rationales": [], "explanation": "x"}),
        }
    )


def test_nli_summary_and_ranker_prompts_quote_description_and_reviews(
    reviewed: str, monkeypatch: Any
) -> None:
    """T(i) reaches the three agents that read item text, quoted as data; held-out reviews never do."""
    model = install(monkeypatch, scripted())
    context = AragContext(dataset=reviewed, llm="openai:x", llm_backoff=0.0, llm_retries=0)
    output = graph.invoke({"user_id": "a", "candidates": ["8", "5", "7", "6"]}, context=context)
    description, review = quote(DESCRIPTIONS["5"], 300), quote("b says 5 is fine", 160)
    for schema in ("NliJudgments", "ContextSummary", "ExplainedRanking"):
        [prompt] = model.prompts_for(schema)
        assert f"    description: {description}" in prompt, schema
        assert review in prompt and "SECRET" not in prompt, schema
    # The ranker left 5 and 6 out: they follow in the seeded left-out order every LLM ranker shares,
    # and count as repairs, not as the model's.
    assert output["ranking"] == ["7", "8", *[i for i in left_out_order(["8", "5", "7", "6"]) if i in "56"]]
    [ranker] = [u for u in output["usage"] if u["agent"] == "item_ranker"]
    assert sorted(ranker["model_ids"]) == ["7", "8"]


def test_the_nli_prompt_carries_the_long_term_items_and_the_time_split_session(
    reviewed: str, monkeypatch: Any
) -> None:
    """a's visible history is 1, 2 (days 1-2) then 3, 4 (days 30-30.5): by time the session is 3, 4
    and C_lt is 1, 2 — both listed in the NLI prompt (by position, the session would be all four)."""
    env = get_environment(reviewed)
    history = env.history("a")
    assert history == ["1", "2", "3", "4"]
    times = history_times(env, "a", history)
    assert times == [DAY * d for d in (1, 2, 30, 30.5)]
    assert session_length(history, 5, times, 24.0) == 2
    assert session_length(history, 5, None) == 4 and session_length(history, 5, times, 0) == 4
    assert split_context(history, 5, times, 24.0) == (["1", "2"], ["3", "4"])
    model = install(monkeypatch, scripted())
    context = AragContext(dataset=reviewed, llm="openai:x", llm_backoff=0.0, llm_retries=0)
    graph.invoke({"user_id": "a", "candidates": ["8", "5", "7", "6"]}, context=context)
    [prompt] = model.prompts_for("NliJudgments")
    long_term, session = prompt.split("current session")[0], prompt.split("current session")[1]
    assert "the 2 latest of 2 earlier" in long_term and "[1]" in long_term and "[2]" in long_term
    assert "[3]" in session.split("Candidates")[0] and "[1]" not in session.split("Candidates")[0]


def test_session_by_time_is_capped_and_never_reads_the_target() -> None:
    """Five same-day items and a cap of 3: the last 3. A lone late item: a session of one."""
    history = ["a", "b", "c", "d", "e"]
    assert session_length(history, 3, [0, 1, 2, 3, 4], 24.0) == 3
    assert session_length(history, 5, [0, 1, 2, 3, 10 * DAY], 24.0) == 1
    assert session_length([], 5, None) == 0


def test_vanilla_rag_retrieves_history_by_the_user_context_not_the_candidates(monkeypatch: Any) -> None:
    """Hand-made vectors: the user context (session 4, 5 blended with 1-3) points along axis 0; the
    candidates point along axis 1. The history items nearest the user context are retrieved, and
    changing the candidates changes nothing."""
    env = get_environment("ml-100k")
    rows = {item: i for i, item in enumerate(env.item_ids)}
    vectors = np.zeros((len(env.item_ids), 3))
    axis = {"1": 0, "2": 0, "3": 2, "4": 0, "5": 0, "6": 2, "7": 2, "50": 1, "181": 1}
    for item, dim in axis.items():
        vectors[rows[item], dim] = 1.0
    monkeypatch.setattr(env, "item_vectors", lambda: vectors)
    ctx = BaselinesContext(vanilla_rag_items=3)
    history = ["3", "6", "1", "7", "2", "4", "5"]  # by position: C_lt = 3, 6; C_st = 1, 7, 2, 4, 5
    picked = retrieved_history(env, ctx, history, ["50", "181"])
    assert picked == ["1", "2", "4"]  # the closest to u (ties in history order); 3, 6, 7 are not
    assert picked == retrieved_history(env, ctx, history, ["3", "6"])  # candidates play no part
    assert picked == [i for i in history if i in picked]  # shown in time order

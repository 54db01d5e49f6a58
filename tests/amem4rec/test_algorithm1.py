"""AMEM4Rec's training as Algorithm 1 on hand-sized examples with a scripted model: strictly
sequential training (each window against the pool the previous one left) against rounds proposed
against one snapshot; the linker's "store separately" outcome; a failed extraction call storing
nothing; the prompts' rules from the paper (Eq. 8's outcomes, Fig. 3's update target)."""

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from agents.amem4rec.retrieval import training_pool
from graphs.amem4rec.train_graph import graph
from graphs.amem4rec.training import train_pool, training_summary
from state.amem4rec.context import PAPER_TRAINING, Amem4RecContext
from tests.fakes import ScriptedChatModel, install
from tools.amem4rec.record import memory_text
from world.embeddings import embed_texts
from world.environment import get_environment

DRAMA = ("Keeps choosing serious dramas.", "One drama follows another.")
ROMANCE = ("Often picks dramas with a romantic side.", "A drama, then a romance.")
SHARED = " Many users share it."
# The window each user's latest training window starts with (windows_per_user=1: a:3, b:3, c:3).
FIRST_TITLE = {"Silent River": DRAMA, "Galaxy Drifters": ROMANCE, "Laughing Gas": ROMANCE}
MEMORY_LINE = re.compile(r'^\[(?P<id>[^\]]+)\] \([^)]*\) behaviour: (?P<behaviour>".*?") \| pattern: ')


def cosine(a: str, b: str) -> float:
    vectors = embed_texts([a, b])
    return float(vectors[0] @ vectors[1])


class WindowModel(BaseChatModel):
    """Extracts by the window's first title (`FIRST_TITLE`), links every memory offered, and refines
    every linked memory by appending `SHARED` to its behaviour: the answer depends only on the prompt,
    so proposals may run in any order."""

    calls: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "window"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        prompt = str(messages[-1].content)
        properties = kwargs["extra_body"]["response_format"]["json_schema"]["schema"]["properties"]
        lines = [MEMORY_LINE.match(line) for line in prompt.splitlines()]
        shown = {m["id"]: json.loads(m["behaviour"]) for m in lines if m}
        if "linked_thought_ids" in properties:
            self.calls.append("link")
            answer: dict[str, Any] = {
                "should_link": True,
                "linked_thought_ids": list(shown),
                "reasoning": "r",
            }
        elif "updates" in properties:
            self.calls.append("evolve")
            updates = [
                {
                    "thought_id": i,
                    "behavior_explanation": b + SHARED,
                    "pattern_description": None,
                    "reasoning": "r",
                }
                for i, b in shown.items()
            ]
            answer = {"should_evolve": True, "updates": updates}
        else:
            self.calls.append("extract")
            line = next(line for line in prompt.splitlines() if line.startswith("["))
            first = next(title for title in FIRST_TITLE if title in line)
            behaviour, pattern = FIRST_TITLE[first]
            answer = {"behavior_explanation": behaviour, "pattern_description": pattern}
        message = AIMessage(
            content=json.dumps(answer),
            usage_metadata={"input_tokens": 9, "output_tokens": 9, "total_tokens": 18},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def memories(pool: Any) -> dict[str, tuple[str, str, int]]:
    return {
        m.id: (m.behavior_explanation, m.pattern_description, m.evolution_count)
        for m in pool.memories().values()
    }


def ledger(pool: Any) -> list[tuple[str, str, str | None, list[str], list[str]]]:
    return [(r["window_key"], r["action"], r["stored"], r["linked"], r["evolved"]) for r in pool.ledger()]


def test_sequential_training_reproduces_algorithm_1_on_three_windows(
    amem_dataset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Eq. 7's branches below follow from these MiniLM similarities: check them first.
    drama, romance = memory_text(*DRAMA), memory_text(*ROMANCE)
    assert 0.55 <= cosine(romance, drama) < 0.9
    assert 0.55 <= cosine(romance, memory_text(DRAMA[0] + SHARED, DRAMA[1])) < 0.9

    model = install(monkeypatch, WindowModel())
    env = get_environment(amem_dataset)
    base = Amem4RecContext(dataset=amem_dataset, llm="openai:gpt-4o-mini", amem4rec_windows_per_user=1)
    sequential = replace(base, amem4rec_pool=str(tmp_path / "seq"), amem4rec_round_windows=1)

    # Window 1 (a:3) meets an empty pool: store. Window 2 (b:3) is within [tau_low, tau_high) of it:
    # UPDATE and STORE, linking and evolving the memory window 1 created.
    after_two = train_pool(env, sequential, ["a", "b"], concurrency=3).pool
    assert memories(after_two) == {"m-a-3": (DRAMA[0] + SHARED, DRAMA[1], 1), "m-b-3": (*ROMANCE, 0)}
    # Window 3 (c:3) repeats window 2's pattern: s = 1 with m-b-3 (p_high 1/2, p_low 0: row 5), so it
    # links the memory window 2 created as well as m-a-3 and evolves both.
    pool = train_pool(env, sequential, ["a", "b", "c"], concurrency=3).pool
    assert ledger(pool) == [
        ("a:3", "store_only", "m-a-3", [], []),
        ("b:3", "update_and_store", "m-b-3", ["m-a-3"], ["m-a-3"]),
        ("c:3", "update_and_store", "m-c-3", ["m-b-3", "m-a-3"], ["m-b-3", "m-a-3"]),
    ]
    assert memories(pool) == {
        "m-a-3": (DRAMA[0] + SHARED + SHARED, DRAMA[1], 2),
        "m-b-3": (ROMANCE[0] + SHARED, ROMANCE[1], 1),
        "m-c-3": (*ROMANCE, 0),
    }
    assert model.calls == ["extract", "extract", "link", "evolve", "extract", "link", "evolve"]
    assert [(r["version"], r["kind"], r["window_key"]) for r in pool.history("m-a-3")] == [
        (1, "created", "a:3"),
        (2, "evolved", "b:3"),
        (3, "evolved", "c:3"),
    ]

    # Rounds: all three windows are proposed against the same (empty) snapshot, so none links.
    rounds = replace(base, amem4rec_pool=str(tmp_path / "rounds"), amem4rec_round_windows=16)
    snapshot = train_pool(env, rounds, ["a", "b", "c"], concurrency=3).pool
    assert [row[1] for row in ledger(snapshot)] == ["store_only"] * 3
    assert memories(snapshot) == {"m-a-3": (*DRAMA, 0), "m-b-3": (*ROMANCE, 0), "m-c-3": (*ROMANCE, 0)}


def test_the_paper_setting_is_sequential_over_every_window(amem_dataset: str) -> None:
    paper = replace(Amem4RecContext(dataset=amem_dataset), **PAPER_TRAINING)
    assert paper.amem4rec_round_windows == 1 and paper.amem4rec_windows_per_user == 0
    assert (paper.amem4rec_window, paper.amem4rec_top_l, paper.amem4rec_top_k) == (3, 5, 5)
    assert (paper.amem4rec_tau_low, paper.amem4rec_tau_high) == (0.55, 0.9)


def extraction(texts: tuple[str, str]) -> str:
    return json.dumps({"behavior_explanation": texts[0], "pattern_description": texts[1]})


def test_the_linkers_store_separately_outcome_stores_the_new_memory_under_update_only(
    amem_dataset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    separately = {"should_link": False, "linked_thought_ids": [], "reasoning": "Another group of users."}
    no_ids = {"should_link": True, "linked_thought_ids": ["m-zz-9"], "reasoning": "x"}
    script = [extraction(DRAMA), extraction(DRAMA), json.dumps(no_ids), json.dumps(separately)]
    model = install(monkeypatch, ScriptedChatModel(script=script))
    ctx = Amem4RecContext(
        dataset=amem_dataset,
        llm="openai:gpt-4o-mini",
        llm_retries=1,
        llm_backoff=0.0,
        amem4rec_pool=str(tmp_path / "pool"),
    )
    graph.invoke({"user_id": "a", "start": 0}, context=ctx)
    out = graph.invoke({"user_id": "b", "start": 0}, context=ctx)  # s = 1, k = 1: UPDATE only (row 3)
    assert out["action"] == "update_only" and out["linked"] == []
    assert out["plan"]["store"] is True and out["plan"]["rewrites"] == []
    assert "store separately" in next(m for m in out["trace"] if m["role"] == "semantic_validator")["content"]
    # should_link true without an offered id was asked again, not taken as "store separately".
    assert out["usage"][1]["calls"] == 2 and not model.script
    link_prompt = str(model.received[2][-1].content)
    assert "store separately" in link_prompt and "completely unrelated" in link_prompt
    pool = training_pool(ctx, get_environment(amem_dataset))  # the commit applied the plan
    assert ledger(pool) == [("a:0", "store_only", "m-a-0", [], []), ("b:0", "update_only", "m-b-0", [], [])]
    assert memories(pool) == {"m-a-0": (*DRAMA, 0), "m-b-0": (*DRAMA, 0)}


def test_a_failed_extraction_stores_nothing_and_is_counted(
    amem_dataset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(monkeypatch, ScriptedChatModel(script=["not json at all"]))
    env = get_environment(amem_dataset)
    ctx = Amem4RecContext(
        dataset=amem_dataset,
        llm="openai:gpt-4o-mini",
        llm_retries=0,
        amem4rec_windows_per_user=1,
        amem4rec_pool=str(tmp_path / "llm"),
    )
    run = train_pool(env, ctx, ["a"], concurrency=1)
    assert run.pool.size() == 0 and ledger(run.pool) == [("a:3", "skipped", None, [], [])]
    summary = training_summary(run)
    assert summary["actions"] == {"store_only": 0, "update_and_store": 0, "update_only": 0, "skipped": 1}
    assert summary["stored"] == 0 and summary["agents"]["extract"]["fallbacks"] == 1
    # The heuristic backend has no model to fail: its template pattern is the extraction, and stored.
    heuristic = replace(ctx, llm="heuristic", amem4rec_pool=str(tmp_path / "heuristic"))
    template = train_pool(env, heuristic, ["a"], concurrency=1).pool
    assert [row[:3] for row in ledger(template)] == [("a:3", "store_only", "m-a-3")]
    assert "Drama" in template.get("m-a-3").behavior_explanation


def test_the_evolution_prompt_aims_at_half_to_four_fifths_and_names_may_stay_in_patterns(
    amem_dataset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = ("Loves Moonlight Harbor.", "Moonlight Harbor, then The Quiet Orchard: one drama after another.")
    evolution = {"should_evolve": False, "updates": []}
    link = {"should_link": True, "linked_thought_ids": ["m-a-0"], "reasoning": "Same drama habit."}
    script = [extraction(named), extraction(named), json.dumps(link), json.dumps(evolution)]
    model = install(monkeypatch, ScriptedChatModel(script=script))
    ctx = Amem4RecContext(
        dataset=amem_dataset, llm="openai:gpt-4o-mini", llm_retries=0, amem4rec_pool=str(tmp_path / "pool")
    )
    first = graph.invoke({"user_id": "a", "start": 0}, context=ctx)["plan"]["memory"]
    assert first["behavior_explanation"] == "Loves one such item."
    assert first["pattern_description"] == named[1]  # a sequence of named items is allowed here
    extract_prompt = str(model.received[0][-1].content)
    assert "may be named here only where it stands for a general sequence" in extract_prompt
    graph.invoke({"user_id": "b", "start": 0}, context=ctx)
    assert "about half to four fifths" in str(model.received[3][-1].content)

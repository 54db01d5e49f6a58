"""LLMRank's three prompting variants on the tiny dataset: the history in order and numbered, the
recency reminder naming the latest interaction, the in-context demonstration built from the user's
own earlier items (never the held-out target), and their heuristic fallbacks.

Tiny dataset, user u1 (by time): 1, 6 (training), 3 (validation), 4 (test target). The classic
scenario shows [1, 6, 3]."""

from __future__ import annotations

from pathlib import Path

from agents.baselines.llm import RANKERS
from agents.baselines.llmrank import recency_profile
from graphs.registry import get_graph
from state.baselines.context import BaselinesContext
from tools.similarity import similarity_order
from world.environment import get_environment

CANDIDATES = ["4", "2", "5", "1"]


def prompt(name: str, folder: Path, **knobs: object) -> str:
    """The human message method `name` sends for u1."""
    env = get_environment(str(folder))
    ctx = BaselinesContext(dataset=str(folder), **knobs)
    task = RANKERS[name].task(env, ctx, env.history("u1"), CANDIDATES)
    return str(task.messages[-1].content)


def before_candidates(text: str) -> str:
    """The part of a prompt before its candidate list."""
    return text.split("These are the candidates")[0]


def test_sequential_prompt_numbers_the_history_oldest_first(tiny_dataset_dir: Path) -> None:
    text = before_candidates(prompt("llmrank_sequential", tiny_dataset_dir))
    lines = [line for line in text.splitlines() if line[:1].isdigit()]
    assert [line.split(" ")[:2] for line in lines] == [["1.", "[1]"], ["2.", "[6]"], ["3.", "[3]"]]
    assert "[4]" not in text  # the test target is no history item


def test_history_window_keeps_the_most_recent_items(tiny_dataset_dir: Path) -> None:
    text = before_candidates(prompt("llmrank_sequential", tiny_dataset_dir, llmrank_history_items=2))
    assert "1. [6]" in text and "2. [3]" in text and "[1]" not in text


def test_recency_prompt_names_the_latest_interaction_after_the_history(tiny_dataset_dir: Path) -> None:
    text = before_candidates(prompt("llmrank_recency", tiny_dataset_dir))
    history, reminder = text.split("most recent interaction")
    assert "3. [3]" in history
    assert reminder.count("[") == 1 and "[3]" in reminder  # the latest item alone
    assert "[4]" not in text


def test_in_context_demo_is_the_user_s_own_earlier_items_never_the_target(tiny_dataset_dir: Path) -> None:
    text = before_candidates(prompt("llmrank_icl", tiny_dataset_dir))
    demo, rest = text.split("the right recommendation was")
    answer, task = rest.split("whole record")
    assert "1. [1]" in demo and "2. [6]" in demo and "[3]" not in demo  # the history but its last item
    assert answer.count("[") == 1 and "[3]" in answer  # -> that last item
    assert "3. [3]" in task  # then the real request over the whole shown history
    assert "[4]" not in text  # the held-out target is never part of the demonstration


def test_heuristic_fallbacks_rank_by_similarity_to_their_profiles(tiny_dataset_dir: Path) -> None:
    env = get_environment(str(tiny_dataset_dir))
    context = BaselinesContext(dataset=str(tiny_dataset_dir))
    shown = ["1", "6", "3"]
    assert recency_profile(shown) == ["1", "6", "3", "3", "3", "3"]  # the latest: half the weight
    assert recency_profile([]) == []
    profiles = {"llmrank_sequential": shown, "llmrank_recency": recency_profile(shown), "llmrank_icl": shown}
    for name, profile in profiles.items():
        output = get_graph(name).invoke({"user_id": "u1", "candidates": CANDIDATES}, context=context)
        assert output["usage"][0]["source"] == "heuristic"
        assert output["ranking"] == similarity_order(env, profile, CANDIDATES)

"""ChainRec tool mining (`recgraph chainrec mine-tools`): label normalisation, the correct-and-concise
filter, k by silhouette, cluster cards, trace tasks (never the test target, only what an episode at
the validation time could see), and the command end to end on the fixture and with `--llm sim`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from agents.base import InvalidAnswer
from agents.chainrec.mining.cards import CARD_KEYS, build_cards
from agents.chainrec.mining.clusters import Clustering, cluster_vectors
from agents.chainrec.mining.filters import drop_reason, select
from agents.chainrec.mining.labels import PHRASE_SYNONYMS, normalise_label
from agents.chainrec.mining.records import Step, Trace, load_traces
from agents.chainrec.mining.tasks import trace_task, trainable_users
from agents.chainrec.mining.traces import generate_traces, open_log, trace_agent
from agents.ranking import left_out_order
from recgraph.cli import main
from state.chainrec.context import ChainRecContext
from state.chainrec.mining_schemas import CotAnswer, CotStep
from tests.fakes import ScriptedChatModel, install
from world.environment import get_environment

FIXTURE = Path(__file__).parent / "fixtures" / "traces.jsonl"


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("Step 2: User-Profile Analysis!", "user profile assessment"),
        ("3. Final Ranking Synthesis", "final ranking"),
        ("Consolidated ranking.", "final ranking"),
        ("(b) Favorite genres check", "favourite genre assessment"),
        ("- Recent interests", "short term interest"),
        ("Step 1: (a) Dislike filtering", "negative preference"),
        ("iv) Price & value hints", "price and value hints"),
        ("Item profile step", "item profile"),
        ("2) Long-term taste", "long term preference"),
        ("Short-term intent drift", "short term interest shift"),
        ("  ", ""),
    ],
)
def test_labels_are_normalised_by_the_documented_table(raw: str, normalised: str) -> None:
    assert normalise_label(raw) == normalised


def test_normalisation_is_idempotent_on_every_phrase_and_the_fixture() -> None:
    labels = [*PHRASE_SYNONYMS, *PHRASE_SYNONYMS.values()]
    labels += [step.label for trace in load_traces(FIXTURE) for step in trace.steps]
    for label in labels:
        once = normalise_label(label)
        assert normalise_label(once) == once, label


def _trace(labels: list[str], target_at: int, source: str = "llm") -> Trace:
    ranking = tuple(f"i{n}" for n in range(10))
    return Trace("u", ranking[target_at], ranking, tuple(Step(label) for label in labels), source)


def test_the_filter_keeps_correct_concise_traces_and_names_why_others_go() -> None:
    kept = _trace(["User profile", "Genre check", "Final ranking"], target_at=4)
    cases = {
        "fallback": _trace(["User profile"], 0, source="fallback"),
        "no_steps": _trace([], 0),
        "target_not_in_top5": _trace(["User profile", "Final ranking"], target_at=5),
        "over_budget": _trace([f"step kind {n}" for n in range(5)], 0),
        "immediate_repeat": _trace(["Step 1: Genre check", "2. genre check!", "Final ranking"], 0),
    }
    assert drop_reason(kept, budget=4) is None
    for reason, trace in cases.items():
        assert drop_reason(trace, budget=4) == reason
    # a repeat that is not immediate is allowed
    assert drop_reason(_trace(["Genre check", "User profile", "Genre check"], 0), budget=4) is None
    selection = select([kept, *cases.values()], budget=4)
    assert selection.kept == [kept] and selection.total == 6
    assert dict(selection.dropped) == dict.fromkeys(cases, 1)


def test_self_consistency_keeps_the_shortest_chain_of_the_majority_outcome() -> None:
    def chain(user: str, top: str, n_steps: int) -> Trace:
        ranking = (top, *(i for i in ("a", "b", "c", "t") if i != top))
        return Trace(user, "t", ranking, tuple(Step(f"kind {n}") for n in range(n_steps)))

    long_a, short_a, shortest_b = chain("u1", "a", 4), chain("u1", "a", 3), chain("u1", "b", 2)
    tie_t, tie_c = chain("u2", "t", 3), chain("u2", "c", 2)  # one vote each: the shorter outcome wins
    alone = chain("u3", "a", 5)
    selection = select([long_a, shortest_b, short_a, tie_t, tie_c, alone], budget=6)
    assert selection.kept == [short_a, tie_c, alone]
    assert dict(selection.dropped) == {"self_consistency": 3} and selection.total == 6


def _blobs() -> tuple[np.ndarray, list[int]]:
    rng = np.random.default_rng(0)
    centres = np.eye(6)[:3]
    rows = [c + rng.normal(0, 0.03, 6) for c in centres for _ in range(4)]
    vectors = np.array(rows) / np.linalg.norm(rows, axis=1, keepdims=True)
    return vectors, [1, 1, 1, 1, 2, 2, 2, 2, 5, 2, 1, 1]


def test_k_is_chosen_by_silhouette_on_a_separable_set() -> None:
    vectors, counts = _blobs()
    assignment, k, silhouette, inertia = cluster_vectors(vectors, counts, 2, 6)
    assert k == 3 and list(silhouette) == [2, 3, 4, 5, 6] and list(inertia) == [2, 3, 4, 5, 6]
    assert silhouette[3] == max(silhouette.values()) and silhouette[3] > 0.8
    assert inertia[3] < inertia[2]
    groups = [set(assignment[i * 4 : i * 4 + 4]) for i in range(3)]
    assert all(len(g) == 1 for g in groups) and len(set().union(*groups)) == 3
    # clusters are numbered by occurrences: blob 3 (9), blob 2 (8), blob 1 (4)
    assert [assignment[0], assignment[4], assignment[8]] == [2, 1, 0]


def test_too_few_labels_or_a_bad_range_is_a_clear_error() -> None:
    vectors, counts = _blobs()
    with pytest.raises(ValueError, match="only 2 distinct step labels"):
        cluster_vectors(vectors[:2], counts[:2], 2, 6)
    with pytest.raises(ValueError, match="--k-min 3 --k-max 2"):
        cluster_vectors(vectors, counts, 3, 2)


def test_cards_have_the_documented_keys_and_map_each_cluster_to_its_nearest_tool() -> None:
    vectors, counts = _blobs()
    assignment, k, silhouette, inertia = cluster_vectors(vectors, counts, 2, 6)
    labels = tuple(f"label {n}" for n in range(12))
    clustering = Clustering(labels, tuple(counts), vectors, assignment, k, silhouette, inertia)
    tools = (["A", "B", "C", "D"], np.vstack([np.eye(6)[:3], np.eye(6)[5]]))
    cards = build_cards(clustering, {label: (label.upper(), "why") for label in labels}, tools)
    assert [tuple(card) for card in cards] == [CARD_KEYS] * 3
    assert [card["tool"] for card in cards] == ["C", "B", "A"]
    assert [card["size"] for card in cards] == [9, 8, 4]
    assert [card["share"] for card in cards] == [round(n / 21, 4) for n in (9, 8, 4)]
    first = cards[0]["representative_steps"][0]
    assert set(first) == {"label", "count", "similarity", "example_label", "example_text"}
    assert first["example_label"] == first["label"].upper() and 0.9 < cards[0]["tool_score"] <= 1.0


def test_mine_tools_on_the_fixture_end_to_end(tmp_path: Path) -> None:
    assert main(["chainrec", "mine-tools", "--traces", str(FIXTURE), "--out", str(tmp_path)]) == 0
    document = json.loads((tmp_path / "clusters.json").read_text())
    assert document["traces"] == {
        "total": 52,
        "kept": 40,
        "dropped": {"fallback": 2, "target_not_in_top5": 4, "over_budget": 3, "immediate_repeat": 3},
    }
    assert list(document["silhouette"]) == [str(k) for k in range(2, 13)]
    best = max(document["silhouette"].values())
    assert document["silhouette"][str(document["k"])] == best
    cards = document["clusters"]
    assert len(cards) == document["k"] and sum(c["size"] for c in cards) == document["steps"] == 180
    tool_of = {label: card["tool"] for card in cards for label in card["labels"]}
    assert tool_of["final ranking"] == "CandidateRank"
    assert tool_of["user profile"] == "LongTermPreference"
    assert tool_of["short term interest shift"] == "ShortTermPreference"
    assert tool_of["genre alignment assessment"] == "ItemSemantic"
    assert tool_of["candidate popularity assessment"] == "ItemProfile"
    assert tool_of["positive preference"] == "PositivePreference"
    assert document["tool_map"]["CandidateRank"] == [0] and document["tool_map"]["GeoContext"] == []
    # the positive/negative cluster maps to both tools (the paper's [4]); every cluster to its nearest
    both = {tuple(card["tools"]) for card in cards if "positive preference" in card["labels"]}
    assert both == {("PositivePreference", "NegativePreference")}
    assert all(card["tools"][0] == card["tool"] for card in cards)
    assert sum(len(ids) for ids in document["tool_map"].values()) == sum(len(c["tools"]) for c in cards)
    markdown = (tmp_path / "clusters.md").read_text()
    assert f"| {document['k']} | {best:.4f} ← chosen |" in markdown
    assert markdown.count("\n## Cluster ") == document["k"]


def test_heuristic_without_traces_and_malformed_files_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chainrec", "mine-tools", "--llm", "heuristic", "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "needs a traces file (--traces FILE" in error
    good = FIXTURE.read_text().splitlines()[0]
    for bad, problem in [
        ("{not json", "line 2: not valid JSON"),
        (json.dumps({"steps": [], "ranking": []}), "line 2: missing 'target'"),
        (json.dumps({"steps": [{"text": "x"}], "ranking": [], "target": "a"}), "line 2: steps[0] must be"),
        (json.dumps({"steps": [], "ranking": ["z"], "target": "a", "candidates": ["a"]}), "line 2: ranking"),
    ]:
        path = tmp_path / "traces.jsonl"
        path.write_text(f"{good}\n{bad}\n")
        assert main(["chainrec", "mine-tools", "--traces", str(path), "--out", str(tmp_path)]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and f"{path}, {problem}" in error, error


def test_trace_tasks_show_what_the_validation_time_allows_and_never_the_test_target(books: str) -> None:
    env = get_environment(books)
    assert trainable_users(env) == ["u1", "u2", "u3", "u4"]
    task = trace_task(env, "u1", ["b7", "b2", "b9", "b8", "b10"])
    assert task.target == "b2" and task.missing == ()
    prompt = "\n".join(str(m.content) for m in trace_agent(task, budget=7).messages)
    assert "[b3]" not in prompt and "A darker sequel" not in prompt  # the test target and its reviews
    assert [line.split("]")[0] for line in task.history] == ["[b5", "[b4", "[b6", "[b1"]  # newest first
    assert '"Dull drawing rooms."' in task.history[0]  # the user's own review, quoted
    assert "the best world-building" in task.history[3]  # another reader's, before the validation time
    assert '"Gibson at his best."' in prompt and "Disappointing" not in prompt  # b7: 2019 yes, 2020-07 no
    assert "Dry." not in prompt  # b9's only review comes after u1's validation time
    assert prompt.rindex("Candidates (id in square brackets):") < prompt.index("[b7]")
    with pytest.raises(ValueError, match="not the test target"):
        trace_task(env, "u1", ["b2", "b3", "b7"])


def test_titles_only_catalogs_say_what_is_missing(titles_only_catalog: str) -> None:
    env = get_environment(titles_only_catalog)
    task = trace_task(env, "a", ["t5", "t3", "t6"])
    assert task.missing == ("review text", "ratings", "categories", "dates")
    prompt = "\n".join(str(m.content) for m in trace_agent(task, budget=7).messages)
    assert "Not in this dataset: review text, ratings, categories, dates." in prompt
    assert '[t3] "Green Finch"' in prompt and "review:" not in prompt


def test_answers_are_validated_against_the_candidates(books: str) -> None:
    task = trace_task(get_environment(books), "u2", ["b8", "b1", "b2"])
    validate = trace_agent(task, budget=7).validate
    steps = [CotStep(label=" User   profile ", text="likes dune"), CotStep(label="Final ranking", text="")]
    answer, repairs = validate(CotAnswer(steps=steps, ranking=["b1", "ghost", "b1"]))
    left_out = [i for i in left_out_order(["b8", "b1", "b2"]) if i != "b1"]  # the rule every ranker shares
    assert answer.ranking == ["b1", *left_out] and answer.steps[0].label == "User profile"
    assert sorted(repairs) == ["duplicate_id", "missing_id", "missing_id", "unknown_id"]
    with pytest.raises(InvalidAnswer, match="none of the ids"):
        validate(CotAnswer(steps=steps, ranking=["ghost"]))
    with pytest.raises(InvalidAnswer, match="non-empty 'label'"):
        validate(CotAnswer(steps=[CotStep(label=" ", text="x")], ranking=["b1"]))


def test_llm_sim_end_to_end_traces_resume_and_mine(
    books: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mined"
    command = [
        "chainrec",
        "mine-tools",
        "--dataset",
        books,
        "--llm",
        "sim",
        "--users",
        "4",
        "--candidates",
        "5",
        "--k-max",
        "6",
        "--out",
        str(out),
    ]
    assert main(command) == 0
    assert "traces generated 4 (by source: {'llm': 4}), already done 0" in capsys.readouterr().out
    records = [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines()]
    env = get_environment(books)
    assert sorted(r["user_id"] for r in records) == ["u1", "u2", "u3", "u4"]
    for record in records:
        case = env.cases[record["user_id"]]
        assert record["target"] == case.valid.item_id and case.target.item_id not in record["candidates"]
        assert sorted(record["ranking"]) == sorted(record["candidates"]) and len(record["candidates"]) == 5
        assert len(record["steps"]) == 2 and record["source"] == "llm" and record["usage"]["calls"] == 1
    document = json.loads((out / "clusters.json").read_text())
    assert document["traces"] == {"total": 4, "kept": 4, "dropped": {}}  # 5 candidates: always in the top 5
    assert document["steps"] == 8 and sum(card["size"] for card in document["clusters"]) == 8
    assert main(command) == 0  # resumed: every user is already traced
    assert "traces generated 0 (by source: -), already done 4" in capsys.readouterr().out
    assert len((out / "traces.jsonl").read_text().splitlines()) == 4
    other = [*command[:-2], "--candidates", "4", "--out", str(out)]  # same log, another protocol
    assert main(other) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "holds a run with another protocol" in error


def test_generation_retries_a_useless_answer_falls_back_after_the_retries_and_logs_both(
    books: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = get_environment(books)
    tasks = [trace_task(env, "u2", ["b8", "b1", "b2"]), trace_task(env, "u4", ["b1", "b8", "b2"])]
    good = json.dumps(
        {"steps": [{"label": "Series check", "text": "likes sequels"}], "ranking": ["b8", "b2"]}
    )
    ghost = json.dumps({"steps": [{"label": "Guess", "text": ""}], "ranking": ["ghost"]})
    model = install(monkeypatch, ScriptedChatModel(script=[ghost, good, ghost, ghost]))
    context = ChainRecContext(llm="openai:gpt-4o-mini", llm_backoff=0.0, llm_retries=1)
    log = open_log(tmp_path / "out" / "traces.jsonl", {"dataset": "books"})
    records = asyncio.run(generate_traces(tasks, context, log, budget=7, concurrency=1))
    assert model.received[0] == trace_agent(tasks[0], 7).messages  # exactly the prompt of the first task
    assert "Your previous answer was rejected: none of the ids" in str(model.received[1][-1].content)
    first, second = records
    assert (first["source"], first["ranking"], first["usage"]["errors"]) == (
        "llm",
        ["b8", "b2", "b1"],
        {"no_valid_ids": 1},
    )
    assert first["usage"]["repairs"] == {"missing_id": 1} and first["steps"][0]["label"] == "Series check"
    assert (second["source"], second["steps"], second["ranking"]) == ("fallback", [], ["b1", "b8", "b2"])
    traces = load_traces(tmp_path / "out" / "traces.jsonl")
    assert [drop_reason(trace, 7) for trace in traces] == [None, "fallback"]
    again = asyncio.run(generate_traces(tasks, context, open_log(log.path, {"dataset": "books"}), 7))
    assert again == [] and len(model.script) == 0  # both users were already traced: no call

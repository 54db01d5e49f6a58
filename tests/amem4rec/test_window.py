"""One window at a time through `amem4rec_train` with a scripted model, through every branch of Eq. 7
(store only, update only, update and store, and store only by row 4), asserting the exact pool
afterwards: texts, versions, evolution counts, history rows and ledger."""

import json
from pathlib import Path

import pytest

from graphs.amem4rec.train_graph import graph
from prompts.amem4rec import EXTRACT
from prompts.common import item_block
from state.amem4rec.context import Amem4RecContext
from tests.fakes import ScriptedChatModel, install
from tools.amem4rec.folder import open_pool
from tools.amem4rec.record import memory_text
from world.embeddings import embed_texts
from world.environment import get_environment

DRAMA = ("Keeps choosing serious dramas.", "One drama follows another.")
REFINED = "Keeps choosing serious, quiet dramas."
ROMANCE = ("Often picks dramas with a romantic side.", "A drama, then a romance.")
REFINED_2 = "Keeps choosing serious dramas, sometimes romantic ones."
SCIFI = ("Likes fast science fiction and action.", "Action moves on to science fiction.")


def extraction(texts: tuple[str, str]) -> str:
    return json.dumps({"behavior_explanation": texts[0], "pattern_description": texts[1]})


def cosine(a: str, b: str) -> float:
    vectors = embed_texts([a, b])
    return float(vectors[0] @ vectors[1])


def test_every_branch_leaves_the_exact_pool(
    amem_dataset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The branches below follow from these similarities (MiniLM); check them first.
    refined_text = memory_text(REFINED, DRAMA[1])
    assert 0.55 <= cosine(memory_text(*ROMANCE), refined_text) < 0.9
    assert cosine(memory_text(*SCIFI), refined_text) < 0.55
    assert cosine(memory_text(*SCIFI), memory_text(*ROMANCE)) < 0.55

    data = amem_dataset
    env = get_environment(data)
    link = json.dumps(
        {"should_link": True, "linked_thought_ids": ["m-a-0"], "reasoning": "Same drama habit."}
    )
    script = [
        extraction(DRAMA),  # window a:0, empty pool -> store only (row 1)
        extraction(DRAMA),  # window b:0, s = 1 with m-a-0, k = 1 -> update only (row 3)
        link,
        json.dumps(
            {
                "should_evolve": True,
                "updates": [
                    {
                        "thought_id": "m-a-0",
                        "behavior_explanation": REFINED,
                        "pattern_description": None,
                        "reasoning": "Quieter dramas.",
                    }
                ],
            }
        ),
        extraction(ROMANCE),  # window c:0, tau_low <= s_max < tau_high -> update and store (row 2)
        link,
        json.dumps(
            {
                "should_evolve": True,
                "updates": [
                    {
                        "thought_id": "m-a-0",
                        "behavior_explanation": REFINED_2,
                        "pattern_description": None,
                        "reasoning": "Romance joins.",
                    }
                ],
            }
        ),
        extraction(SCIFI),  # window d:0, unrelated -> store only (row 1)
        extraction(SCIFI),  # window e:0, s = 1 with m-d-0, 2 of 3 below tau_low -> store only (row 4)
    ]
    model = install(monkeypatch, ScriptedChatModel(script=list(script)))
    ctx = Amem4RecContext(
        dataset=data, llm="openai:gpt-4o-mini", llm_retries=0, amem4rec_pool=str(tmp_path / "pool")
    )

    outputs = {user: graph.invoke({"user_id": user, "start": 0}, context=ctx) for user in "abcde"}
    assert [o["action"] for o in outputs.values()] == [
        "store_only",
        "update_only",
        "update_and_store",
        "store_only",
        "store_only",
    ]
    rows = [
        next(m for m in o["trace"] if m["role"] == "similarity_validator")["content"]
        for o in outputs.values()
    ]
    assert [
        "row 1:" in rows[0],
        "row 3:" in rows[1],
        "row 2:" in rows[2],
        "row 1:" in rows[3],
        "row 4:" in rows[4],
    ] == [True] * 5
    roles = [m["role"] for m in outputs["b"]["trace"]]
    assert roles == [
        "validate_window",
        "extract",
        "similarity_validator",
        "update_only",
        "semantic_validator",
        "evolve",
        "commit",
    ]
    assert [sum(u["calls"] for u in o["usage"]) for o in outputs.values()] == [1, 3, 3, 1, 1]
    assert not model.script

    # The exact messages: the window shown to the extractor, the memory offered to the linker.
    first = model.received[0][-1].content
    assert (
        first
        == EXTRACT.format_messages(count=3, window=item_block(env.dataset, ["1", "4", "8"]), chars=300)[
            -1
        ].content
    )
    assert (
        model.received[2][-1].content.count(
            "\n[m-a-0] (similarity 1.00, refined 0x) behaviour: "
            '"Keeps choosing serious dramas." | pattern: "One drama follows another."'
        )
        == 1
    )
    evolve_prompt = model.received[6][-1].content
    assert f'[m-a-0] (refined 1x) behaviour: "{REFINED}" | pattern: "{DRAMA[1]}"' in evolve_prompt

    pool = open_pool(Path(ctx.amem4rec_pool), env.dataset)
    memories = {
        m.id: (
            m.behavior_explanation,
            m.pattern_description,
            m.evolution_count,
            m.version,
            m.created_user,
            m.created_window,
        )
        for m in pool.memories().values()
    }
    assert memories == {
        "m-a-0": (REFINED_2, DRAMA[1], 2, 3, "a", "a:0"),
        "m-c-0": (*ROMANCE, 0, 1, "c", "c:0"),
        "m-d-0": (*SCIFI, 0, 1, "d", "d:0"),
        "m-e-0": (*SCIFI, 0, 1, "e", "e:0"),
    }
    lineage = [
        (r["version"], r["kind"], r["window_key"], r["behavior_explanation"], r["evolution_count"])
        for r in pool.history("m-a-0")
    ]
    assert lineage == [
        (1, "created", "a:0", DRAMA[0], 0),
        (2, "evolved", "b:0", REFINED, 1),
        (3, "evolved", "c:0", REFINED_2, 2),
    ]
    ledger = [(r["window_key"], r["action"], r["stored"], r["linked"], r["evolved"]) for r in pool.ledger()]
    assert ledger == [
        ("a:0", "store_only", "m-a-0", [], []),
        ("b:0", "update_only", None, ["m-a-0"], ["m-a-0"]),
        ("c:0", "update_and_store", "m-c-0", ["m-a-0"], ["m-a-0"]),
        ("d:0", "store_only", "m-d-0", [], []),
        ("e:0", "store_only", "m-e-0", [], []),
    ]
    assert pool.evolution_histogram() == {0: 3, 2: 1}


def test_item_names_are_removed_from_an_extractions_behaviour(
    amem_dataset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = amem_dataset
    leaky = {
        "behavior_explanation": "Loves Moonlight Harbor and the quiet orchard.",
        "pattern_description": "After Night Shift Blues comes a crime drama.",
    }
    install(monkeypatch, ScriptedChatModel(script=[json.dumps(leaky)]))
    ctx = Amem4RecContext(
        dataset=data, llm="openai:gpt-4o-mini", llm_retries=0, amem4rec_pool=str(tmp_path / "pool")
    )
    out = graph.invoke({"user_id": "a", "start": 0}, context=ctx)
    memory = out["plan"]["memory"]
    assert memory["behavior_explanation"] == "Loves one such item and one such item."
    # The pattern description may name an item (the paper's rule: a sequence or co-occurrence).
    assert memory["pattern_description"] == "After Night Shift Blues comes a crime drama."
    assert out["usage"][0]["repair_kinds"] == {"named_item": 2}


def test_ablations_change_the_route(amem_dataset: str, tmp_path: Path) -> None:
    data = amem_dataset
    base = Amem4RecContext(dataset=data, amem4rec_pool=str(tmp_path / "full"))
    graph.invoke({"user_id": "a", "start": 0}, context=base)
    same = graph.invoke({"user_id": "f", "start": 0}, context=base)  # heuristic: a similar drama window
    assert same["action"] != "store_only" and same["linked"]
    off = Amem4RecContext(dataset=data, amem4rec_pool=str(tmp_path / "off"), amem4rec_evolution=False)
    graph.invoke({"user_id": "a", "start": 0}, context=off)
    assert graph.invoke({"user_id": "f", "start": 0}, context=off)["action"] == "store_only"
    no_sim = Amem4RecContext(dataset=data, amem4rec_pool=str(tmp_path / "nosim"), amem4rec_similarity=False)
    graph.invoke({"user_id": "a", "start": 0}, context=no_sim)
    scifi = graph.invoke({"user_id": "b", "start": 0}, context=no_sim)
    assert scifi["action"] == "update_and_store" and scifi["linked"] == ["m-a-0"]
    no_sem = Amem4RecContext(dataset=data, amem4rec_pool=str(tmp_path / "nosem"), amem4rec_semantic=False)
    graph.invoke({"user_id": "a", "start": 0}, context=no_sem)
    out = graph.invoke({"user_id": "f", "start": 0}, context=no_sem)
    assert out["linked"] and out["usage"][1]["calls"] == 0
    assert (
        "semantic validator off"
        in next(m for m in out["trace"] if m["role"] == "semantic_validator")["content"]
    )

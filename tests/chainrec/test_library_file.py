"""The tool library as a file: the shipped default is what the planner loads, `mine-tools` writes a
library that round-trips and that a run loads (`chainrec_library`), a library lacking a needed tool
fails in one line, and a mined card the shipped library lacks reaches the planner and runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.chainrec.online.catalog import TOOLS
from agents.chainrec.online.library_file import (
    DEFAULT_LIBRARY_FILE,
    LibraryFileError,
    MissingTool,
    library_json,
    load_library,
    read_library,
)
from graphs.chainrec.graph import graph
from recgraph.cli import main
from state.chainrec.context import ChainRecContext
from tests.fakes import ScriptedChatModel, install

FIXTURE = Path(__file__).parent / "fixtures" / "traces.jsonl"
ML_CANDIDATES = ["50", "181", "1", "2", "3", "100", "258", "300", "12", "7"]
USERS = ("1", "7", "42", "300")


def _mine(tmp_path: Path) -> Path:
    out = tmp_path / "mined"
    assert main(["chainrec", "mine-tools", "--traces", str(FIXTURE), "--out", str(out)]) == 0
    return out / "library.json"


def _edited(tmp_path: Path, name: str, edit) -> Path:
    data = json.loads(DEFAULT_LIBRARY_FILE.read_text())
    edit(data)
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_the_planner_s_catalog_is_the_shipped_file() -> None:
    data = json.loads(DEFAULT_LIBRARY_FILE.read_text())
    assert [card["name"] for card in data["tools"]] == [spec.name for spec in TOOLS]
    assert load_library().catalog == TOOLS and TOOLS[-1].name == "CandidateRank"
    # a description edited in the file is what the catalog would carry: the file is the source
    changed = json.loads(DEFAULT_LIBRARY_FILE.read_text())
    changed["tools"][0]["description"] = "Edited in the file."
    assert read_library_from(changed).catalog[0].description == "Edited in the file."


def read_library_from(data: dict) -> object:
    from agents.chainrec.online.library_file import parse_library

    return parse_library(data, "memory")


def test_mine_tools_writes_a_library_that_round_trips(tmp_path: Path) -> None:
    path = _mine(tmp_path)
    library = read_library(path)
    assert library_json(library) == json.loads(path.read_text())
    names = library.names
    assert names[-1] == "CandidateRank" and "GeoContext" not in names and "AuthorPreference" not in names
    both = [tools for tools in library.clusters.values() if "NegativePreference" in tools]
    assert both == [("PositivePreference", "NegativePreference")]  # one cluster, two tools
    cards = {card["name"]: card for card in json.loads(path.read_text())["tools"]}
    assert cards["NegativePreference"]["clusters"] == cards["PositivePreference"]["clusters"] != []
    assert cards["ItemProfile"]["stage"] == "item" and cards["LongTermPreference"]["stage"] == "user"
    assert json.loads(path.read_text())["mining"]["unmapped"] == ["AuthorPreference", "GeoContext"]


def _rankings(context: ChainRecContext) -> list[tuple[list[str], dict[str, float], list[str]]]:
    found = []
    for user in USERS:
        output = graph.invoke({"user_id": user, "candidates": ML_CANDIDATES}, context=context)
        found.append((output["ranking"], output["scores"], output["details"]["tools"]))
    return found


def test_a_copy_of_the_default_and_the_mined_library_rank_as_the_shipped_one(tmp_path: Path) -> None:
    copy = tmp_path / "copy.json"
    copy.write_text(DEFAULT_LIBRARY_FILE.read_text())
    shipped = _rankings(ChainRecContext())
    assert _rankings(ChainRecContext(chainrec_library=str(copy))) == shipped
    # the mined library lacks only the domain tools ml-100k masks anyway: the same episodes
    assert _rankings(ChainRecContext(chainrec_library=str(_mine(tmp_path)))) == shipped


def test_a_library_without_a_needed_tool_fails_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def drop(name: str):
        return lambda data: data.update(tools=[c for c in data["tools"] if c["name"] != name])

    no_profile = _edited(tmp_path, "no_profile.json", drop("ItemProfile"))
    with pytest.raises(MissingTool, match=r"has no ItemProfile card, which the rule planner needs"):
        graph.invoke(
            {"user_id": "1", "candidates": ML_CANDIDATES},
            context=ChainRecContext(chainrec_library=str(no_profile)),
        )
    no_rank = _edited(tmp_path, "no_rank.json", drop("CandidateRank"))
    with pytest.raises(MissingTool, match="has no CandidateRank card"):
        read_library(no_rank)
    bad_node = _edited(tmp_path, "bad.json", lambda d: d["tools"][0].update(node="telepathy"))
    with pytest.raises(LibraryFileError, match="runs on node 'telepathy', which no tool agent has"):
        read_library(bad_node)
    out = tmp_path / "run"
    args = ["bench", "--methods", "chainrec", "--users", "2", "--out", str(out)]
    code = main([*args, "--set", f"chainrec_library={no_profile}"])
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1 and "no ItemProfile card" in error, error


def test_a_mined_extra_tool_is_shown_to_the_planner_and_runs(tmp_path: Path, monkeypatch) -> None:
    extra = {
        "name": "PriceValue",
        "node": "item_profile",
        "stage": "item",
        "description": "Whether each candidate is good value for its price (mined cluster 7).",
        "inputs": "get_item for every candidate",
        "outputs": "one entry per candidate (value score 0-1)",
        "requires": [],
        "fusion_weight": "chainrec_weight_item_profile",
        "clusters": [7],
    }

    def add(data: dict) -> None:
        data["tools"].insert(-1, extra)
        data["clusters"] = {"7": ["PriceValue", "ItemProfile"]}

    path = _edited(tmp_path, "extra.json", add)
    assert read_library(path).clusters == {"7": ("PriceValue", "ItemProfile")}
    model = install(
        monkeypatch,
        ScriptedChatModel(
            script=[
                json.dumps({"action": "PriceValue", "reason": "value"}),
                json.dumps({"action": "CandidateRank", "reason": "enough"}),
            ]
        ),
    )
    context = ChainRecContext(
        llm="heuristic",
        planner_model="openai:gpt-4o-mini",
        chainrec_planner="llm",
        chainrec_library=str(path),
    )
    output = graph.invoke({"user_id": "1", "candidates": ML_CANDIDATES}, context=context)
    prompt = "\n".join(str(m.content) for m in model.received[0])
    assert "- PriceValue: Whether each candidate is good value for its price" in prompt
    assert output["details"]["tools"] == ["PriceValue"]  # ran on ItemProfile's node, under its own name
    fixed = ChainRecContext(
        chainrec_planner="fixed", chainrec_fixed_chain="PriceValue", chainrec_library=str(path)
    )
    alone = graph.invoke({"user_id": "1", "candidates": ML_CANDIDATES}, context=fixed)
    profile = graph.invoke(
        {"user_id": "1", "candidates": ML_CANDIDATES},
        context=ChainRecContext(chainrec_planner="fixed", chainrec_fixed_chain="ItemProfile"),
    )
    assert alone["details"]["tools"] == ["PriceValue"] and alone["ranking"] == profile["ranking"]

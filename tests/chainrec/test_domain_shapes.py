"""AuthorPreference and GeoContext on AgentRecBench's real field shapes (fixtures written by us in
tests/fixtures/agentsociety_shapes.py): Goodreads author objects and series ids, Yelp coordinates,
cities and opening hours; and the `chainrec_no_geo` ablation (Table 4) never calling GeoContext."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.chainrec.online.domain_tools import haversine_km
from graphs.chainrec.graph import graph
from graphs.registry import get_graph
from state.chainrec.context import ChainRecContext
from tests.fixtures.agentsociety_shapes import goodreads_folder, write_task, yelp_folder
from world.errors import RecgraphError


def memory_of(
    final_state: Callable[..., dict[str, Any]], dataset: str, user: str, candidates: list[str]
) -> dict:
    """The memory entries of a fixed-chain episode running every tool, by tool."""
    context = ChainRecContext(dataset=dataset, chainrec_planner="fixed", chainrec_max_steps=8)
    final = final_state(graph, {"user_id": user, "candidates": candidates}, context)
    return {entry["tool"]: entry for entry in final["memory"]}


def test_goodreads_author_objects_reach_author_preference(
    tmp_path: Path, final_state: Callable[..., dict[str, Any]]
) -> None:
    folder = str(goodreads_folder(tmp_path / "goodreads"))
    memory = memory_of(final_state, folder, "u1", ["g4", "g5", "g6", "g7", "g8"])
    author = memory["AuthorPreference"]
    # u1's visible history: g1 (5/5: author 100, series S1), g2 (4/5: 100, 200 illustrator), g3 (2/5: 300)
    # weights: author 100 = 1.0 + 0.8, series S1 = 1.0, author 200 = 0.8, author 300 = 0.4; score = w / 3
    scores = {e["item_id"]: e["score"] for e in author["items"]}
    assert scores == pytest.approx(
        {"g4": 0.8 / 3, "g5": 1.0 / 3, "g6": 0.4 / 3, "g7": 0.0, "g8": 1.8 / 3}, abs=1e-4
    )
    assert author["facets"][0] == {
        "key": "favourite_authors",
        "value": "author 100 (1.8), series S1 (1.0), author 200 (Illustrator) (0.8), author 300 (0.4)",
    }
    assert (
        author["summary"]
        == "Favours author 100, series S1, author 200 (Illustrator); 4 candidates share an author."
    )
    notes = {e["item_id"]: e["note"] for e in author["items"]}
    assert notes["g4"].startswith("by author 200 (Illustrator), author 500; 0.8 weighted")


def test_yelp_hours_and_location_reach_geo_context(
    tmp_path: Path, final_state: Callable[..., dict[str, Any]]
) -> None:
    folder = str(yelp_folder(tmp_path / "yelp"))
    geo = memory_of(final_state, folder, "u1", ["c1", "c2", "c3", "c4"])["GeoContext"]
    items = {e["item_id"]: e for e in geo["items"]}
    home = (32.22, -110.97)  # median of the visits p1, p2, p1
    near = math.exp(-haversine_km(home, (32.22, -110.96)) / 5)
    # visit windows (newest first): Sat 17:00-23:00 (p1), Sat 10:00-22:00 (p2), Fri 17:00-23:00 (p1).
    # c1 open Fri/Sat 18:00-02:00: 5/6, 4/12, 5/6 of the windows -> fit 2/3; c2 closed Fri/Sat -> 0;
    # c3 has no hours (keeps its score); c4 open all Saturday, closed Friday -> 2/3.
    assert items["c1"]["score"] == pytest.approx(near * (0.5 + 0.5 * 2 / 3), abs=1e-4)
    assert items["c2"]["score"] == pytest.approx(near * 0.5, abs=1e-4)
    assert (
        items["c3"]["score"] == pytest.approx(0.3) and items["c3"]["note"] == "in Phoenix, AZ, not Tucson, AZ"
    )
    assert items["c4"]["score"] == pytest.approx(0.5 * (0.5 + 0.5 * 2 / 3), abs=1e-4)
    assert items["c1"]["note"] == "0.9 km; open 67% of the user's usual visit times"
    facets = {f["key"]: f["value"] for f in geo["facets"]}
    assert facets["usual_city"] == "Tucson, AZ"
    assert facets["usual_days"] == "Sat (2), Fri (1)"
    assert facets["open_at_usual_times"] == "2 of 3 with opening hours"
    assert geo["confidence"] == pytest.approx(0.75)
    assert geo["stats"]["hours_candidates"] == 3.0


def test_a_task_location_is_the_user_s_home(
    tmp_path: Path, final_state: Callable[..., dict[str, Any]]
) -> None:
    folder = yelp_folder(tmp_path / "yelp")
    write_task(folder, 0, "u1", ["c1", "c2", "c3", "c4"], "c1", [32.30, -110.80])
    geo = memory_of(final_state, str(folder), "u1", ["c1", "c2", "c3", "c4"])["GeoContext"]
    facets = {f["key"]: f["value"] for f in geo["facets"]}
    assert facets["inferred_location"] == "32.3000, -110.8000 (the user's profile)"
    c2 = next(e for e in geo["items"] if e["item_id"] == "c2")
    assert c2["score"] == pytest.approx(
        0.5 * math.exp(-haversine_km((32.30, -110.80), (32.22, -110.96)) / 5), abs=1e-4
    )


def test_chainrec_no_geo_never_calls_geo_context(tmp_path: Path) -> None:
    folder = str(yelp_folder(tmp_path / "yelp"))
    request = {"user_id": "u1", "candidates": ["c1", "c2", "c3", "c4"]}
    full = get_graph("chainrec").invoke(request, context=ChainRecContext(dataset=folder))
    assert "GeoContext" in full["details"]["tools"]  # the rule planner calls it on Yelp-shaped data
    ablated = get_graph("chainrec_no_geo").invoke(request, context=ChainRecContext(dataset=folder))
    assert "GeoContext" not in ablated["details"]["tools"] and ablated["details"]["tools"]
    every = ChainRecContext(
        dataset=folder, chainrec_planner="fixed", chainrec_max_steps=8, chainrec_drop_tools="geo_context"
    )
    fixed = get_graph("chainrec_fixed").invoke(request, context=every)
    assert fixed["details"]["tools"] == [
        "LongTermPreference",
        "ShortTermPreference",
        "PositivePreference",
        "NegativePreference",
        "ItemSemantic",
        "ItemProfile",
    ]
    assert sorted(ablated["ranking"]) == ["c1", "c2", "c3", "c4"]


def test_an_unknown_dropped_tool_is_refused_in_one_line(tmp_path: Path) -> None:
    folder = str(yelp_folder(tmp_path / "yelp"))
    context = ChainRecContext(dataset=folder, chainrec_drop_tools="GeoContext, Telepathy")
    with pytest.raises(
        RecgraphError, match=r"chainrec_drop_tools: 'Telepathy' is not a tool of the library; use "
    ):
        graph.invoke({"user_id": "u1", "candidates": ["c1", "c2"]}, context=context)

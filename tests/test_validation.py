"""agents.validation: the shared id filter, the text cutter and the kind vocabulary."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from agents import validation
from agents.base import InvalidAnswer
from agents.ranking import left_out_order, repair_ranking
from agents.validation import (
    ERROR_KINDS,
    REPAIR_KINDS,
    cut_text,
    is_error_kind,
    keep_known_unique,
    missing_ids,
)
from state.schemas import RankedList

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("agents", "graphs", "tools")


def _constant(node: ast.AST) -> str | None:
    """The kind a node names: a string literal or a constant of agents.validation."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if (
        isinstance(node, ast.Name)
        and node.id.isupper()
        and isinstance(getattr(validation, node.id, None), str)
    ):
        return getattr(validation, node.id)
    return None


def _is_repairs(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id.endswith("repairs")


def collected_kinds() -> dict[str, set[str]]:
    """Every repair and error kind the code names: `repairs.append(k)`, `repairs += [k]`,
    `repairs.extend([k])`, `InvalidAnswer(msg, k)` / `kind=k`, keep_known_unique's
    `unknown=`/`duplicate=`, and f-string kinds (reported as their source, so they fail)."""
    found: dict[str, set[str]] = {"repair": set(), "error": set()}
    for folder in SCANNED:
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                values: list[tuple[str, ast.AST]] = []
                if isinstance(node, ast.Call):
                    func = node.func
                    if isinstance(func, ast.Attribute) and _is_repairs(func.value) and node.args:
                        arg = node.args[0]
                        parts = arg.elts if isinstance(arg, ast.List) else [arg]
                        values += [("repair", p) for p in parts]
                    if isinstance(func, ast.Name) and func.id == "InvalidAnswer":
                        values += [("error", a) for a in node.args[1:2]]
                        values += [("error", k.value) for k in node.keywords if k.arg == "kind"]
                    if isinstance(func, ast.Name) and func.id in ("keep_known_unique", "missing_ids"):
                        keys = ("unknown", "duplicate", "kind")
                        values += [("repair", k.value) for k in node.keywords if k.arg in keys]
                if isinstance(node, ast.AugAssign) and _is_repairs(node.target):
                    value = node.value
                    if isinstance(value, ast.IfExp):
                        value = value.body
                    if isinstance(value, ast.List):
                        values += [("repair", e) for e in value.elts]
                for family, value in values:
                    candidates = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
                    for candidate in candidates:
                        name = _constant(candidate)
                        if name is not None:
                            found[family].add(name)
                        elif isinstance(candidate, ast.JoinedStr):
                            found[family].add(f"{path.relative_to(ROOT)}: {ast.unparse(candidate)}")
    return found


def test_every_kind_in_the_code_is_in_the_vocabulary() -> None:
    found = collected_kinds()
    assert {"unknown_id", "score_clipped", "unknown_neighbour", "memory_cut"} <= found["repair"]
    assert {"empty_answer", "no_valid_ids", "schema_invalid"} <= found["error"]
    assert sorted(found["repair"] - REPAIR_KINDS) == []
    assert sorted(k for k in found["error"] if not is_error_kind(k)) == []


def test_vocabulary_has_one_spelling_per_kind() -> None:
    assert {"clipped_score", "unknown_neighbor", "duplicate_neighbor"}.isdisjoint(REPAIR_KINDS | ERROR_KINDS)
    constants = {v for k, v in vars(validation).items() if k.isupper() and isinstance(v, str)}
    assert constants <= REPAIR_KINDS | ERROR_KINDS
    assert is_error_kind("http_503") and not is_error_kind("http_5xx") and not is_error_kind("oops")


def test_keep_known_unique_keeps_first_known_in_order_and_names_repairs() -> None:
    skipped: list[str] = []

    def keep(item: str, raw: str) -> str | None:
        if raw.endswith("!"):
            skipped.append(item)
            return None
        return raw.upper()

    kept, repairs = keep_known_unique(
        ["b", " a", "zz", "b", "c!", "c", "c"], {"a", "b", "c"}, key=lambda r: r.strip(" !"), keep=keep
    )
    assert kept == {"b": "B", "a": " A", "c": "C"} and list(kept) == ["b", "a", "c"]
    assert repairs == ["unknown_id", "duplicate_id", "duplicate_id"] and skipped == ["c"]
    _, named = keep_known_unique(
        ["x", "n", "n"],
        {"n"},
        key=str,
        keep=lambda i, _: i,
        unknown="unknown_neighbour",
        duplicate="duplicate_neighbour",
    )
    assert named == ["unknown_neighbour", "duplicate_neighbour"]
    assert missing_ids({"b"}, ["c", "b", "a", "c"]) == (["c", "a"], ["missing_id", "missing_id"])


def test_repair_ranking_keeps_the_model_order_and_fills_in_the_shared_left_out_order() -> None:
    ranking, repairs = repair_ranking([" c", "x", "c", "a"], ["a", "b", "c", "d"])
    assert ranking[:2] == ["c", "a"]
    assert ranking[2:] == [i for i in left_out_order(["a", "b", "c", "d"]) if i in {"b", "d"}]
    assert repairs == ["unknown_id", "duplicate_id", "missing_id", "missing_id"]
    with pytest.raises(InvalidAnswer) as error:
        repair_ranking(["x"], ["a"])
    assert error.value.kind == "no_valid_ids"


def test_left_out_order_depends_on_the_candidate_set_alone() -> None:
    """One order per candidate set, whatever order the candidates came in: no method's scores and
    no given order can reach it (the one rule of every LLM ranker)."""
    ids = [str(i) for i in range(1, 21)]
    order = left_out_order(ids)
    assert sorted(order) == sorted(ids)
    assert left_out_order(list(reversed(ids))) == order == left_out_order(ids[7:] + ids[:7])
    assert order not in (ids, sorted(ids), list(reversed(ids)))  # a shuffle, not a given order
    assert left_out_order([*ids[:19], "99"]) != order  # another set, another seed


def test_cut_text_bounds_length_with_an_ellipsis() -> None:
    assert cut_text("short", 5) == "short"
    assert cut_text("one two three", 8) == "one two…"
    assert cut_text("one two three", 9) == "one two…"
    assert cut_text("one two three", 9, rstrip=False) == "one two …"
    assert cut_text("one   two\nthree", 13, collapse=True) == "one two three"
    assert cut_text("one   two\nthree", 13) == "one   two\nth…"
    assert len(cut_text("x" * 50, 20)) == 20


def _without_descriptions(node: object) -> object:
    if isinstance(node, dict):
        return {k: _without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_without_descriptions(v) for v in node]
    return node


def test_constrained_schema_closes_the_model_and_merges_the_request_enum() -> None:
    from agents.ranking import ranking_json_schema

    schema = ranking_json_schema(["7", "9"], reason_chars=50)
    assert _without_descriptions(schema) == {
        "type": "object",
        "properties": {
            "ranking": {
                "type": "array",
                "items": {"type": "string", "enum": ["7", "9"]},
                "minItems": 2,
                "maxItems": 2,
            },
            "reason": {"type": "string", "maxLength": 50},
        },
        "required": ["ranking", "reason"],
        "additionalProperties": False,
    }
    assert "best first" in schema["properties"]["ranking"]["description"]  # from the pydantic field


def test_constrained_schema_inlines_nested_models_and_aliases() -> None:
    from agents.memrec.synthesis import facet_json_schema
    from agents.memrec.write import write_json_schema

    schema = facet_json_schema(2, ["i:1"], "u:9")
    assert "$defs" not in json.dumps(schema) and "title" not in json.dumps(schema)
    edge = schema["properties"]["support_edges"]["items"]
    assert edge["required"] == ["from", "to", "w"] and edge["additionalProperties"] is False
    assert edge["properties"]["from"]["enum"] == ["i:1", "u:9"] and edge["properties"]["w"]["maximum"] == 1
    facet = schema["properties"]["facets"]
    assert (facet["minItems"], facet["maxItems"]) == (2, 2)
    assert facet["items"]["properties"]["supporting_neighbors"]["items"] == {
        "type": "string",
        "enum": ["i:1"],
    }
    assert "enum" not in json.dumps(facet_json_schema(2, [], "u:9")["properties"]["facets"])
    # Stage W's long texts stay without maxLength (llama.cpp grammars); empty ones are refused.
    write = write_json_schema(["i:1"])
    assert "maxLength" not in json.dumps(write) and write["properties"]["user_memory"]["minLength"] == 1
    with pytest.raises(KeyError):
        validation.constrained_schema(RankedList, {"rankings[]": {"enum": []}})


def test_the_simulator_fills_every_derived_schema_validly() -> None:
    import random

    from agents.memrec.rerank import scores_json_schema
    from agents.memrec.synthesis import facet_json_schema
    from agents.memrec.write import write_json_schema
    from llmsim.schema import fill_schema
    from state.memrec.schemas import CandidateScores, FacetSet, MemoryWrite

    ids = ["i:1", "u:2"]
    for schema, model in [
        (scores_json_schema(["1", "2", "3"]), CandidateScores),
        (facet_json_schema(2, ids, "u:9"), FacetSet),
        (write_json_schema(ids), MemoryWrite),
    ]:
        answer = model.model_validate(fill_schema(schema, ["1", "2", "3"], random.Random(0)))
        assert answer.model_dump()
    scores = CandidateScores.model_validate(
        fill_schema(scores_json_schema(["1", "2"]), ["1", "2"], random.Random(1))
    )
    assert sorted(s.item_id for s in scores.scores) == ["1", "2"]

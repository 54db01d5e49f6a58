"""MemRec's per-user and whole-run costs (issue 15): caches that must not change what is computed."""

from __future__ import annotations

from agents.memrec.rerank import scores_json_schema
from agents.validation import constrained_schema
from state.memrec_schemas import CandidateScores


def test_constrained_schema_is_a_fresh_copy_per_call() -> None:
    """The model's schema is generated once, but each caller may constrain its copy freely."""
    first = scores_json_schema(["a", "b"])
    first["properties"]["scores"]["items"]["properties"]["item_id"]["enum"].append("zzz")
    first["properties"]["scores"]["maxItems"] = 99
    second = scores_json_schema(["c"])
    assert second["properties"]["scores"]["items"]["properties"]["item_id"]["enum"] == ["c"]
    assert second["properties"]["scores"]["maxItems"] == 1
    plain = constrained_schema(CandidateScores)
    assert "enum" not in plain["properties"]["scores"]["items"]["properties"]["item_id"]
    assert plain["additionalProperties"] is False

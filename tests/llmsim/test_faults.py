"""The simulator's options and error bodies (llmsim/faults.py): the fault kinds and refused shapes
share one name parser, and a refusal is an `error_body` naming its parameter, worded as before."""

import json

import pytest

from llmsim.faults import FAULT_KINDS, OPT_IN_FAULTS, error_body, parse_fault_kinds, parse_refused, refusal


def test_unknown_names_are_named_with_the_choices() -> None:
    with pytest.raises(ValueError) as shapes:
        parse_refused("json_schema,bogus,x")
    assert str(shapes.value) == (
        "unknown shape(s) to refuse: bogus, x; choose from json_schema, json_object, tools"
    )
    with pytest.raises(ValueError) as kinds:
        parse_fault_kinds("http_429,nope")
    assert str(kinds.value) == "unknown fault kind(s): nope; choose from " + ", ".join(("all", *FAULT_KINDS))


def test_names_are_stripped_and_kept_once_in_order() -> None:
    assert parse_refused(" tools, json_schema,tools") == ("tools", "json_schema")
    assert parse_fault_kinds(["echo", " http_500", "echo", ""]) == ("echo", "http_500")
    assert parse_fault_kinds("all") == tuple(k for k in FAULT_KINDS if k not in OPT_IN_FAULTS)


def test_a_refusal_is_the_error_body_of_its_parameter() -> None:
    message = "Invalid parameter: 'response_format' of type 'json_object' is not supported with this model."
    body = refusal({"response_format": {"type": "json_object"}}, ("json_object",))
    error = {"message": message, "type": "invalid_request_error", "param": "response_format", "code": None}
    assert json.dumps(body) == json.dumps({"error": error})
    tools = refusal({"tools": [{}]}, ("tools",))
    assert tools == error_body("Invalid parameter: 'tools' is not supported with this model.",
                               "invalid_request_error", param="tools")  # fmt: skip
    assert refusal({"tools": [{}]}, ("json_schema",)) is None
    assert error_body("m", "k", "c") == {"error": {"message": "m", "type": "k", "param": None, "code": "c"}}

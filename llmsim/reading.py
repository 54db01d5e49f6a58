"""What a chat-completions request asks the simulator for: the text of its messages, the tool to call
and the schema its answer must satisfy (from `response_format`, its tools, or the schema a
`json_object` prompt writes after `SCHEMA_NOTE`). Standard library only."""

from __future__ import annotations

import json
from typing import Any

SCHEMA_NOTE = "The JSON object must follow this JSON Schema:"
"""Where a `json_object` request writes its schema (`agents.structured_output.SCHEMA_NOTE`)."""


def message_text(content: Any) -> str:
    """Text of an OpenAI message content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def schema_in_prompt(messages: list[Any]) -> dict[str, Any] | None:
    """The JSON schema a `json_object` request wrote after `SCHEMA_NOTE` (the last one), if any."""
    for message in reversed(messages):
        text = message_text(message.get("content")) if isinstance(message, dict) else ""
        at = text.rfind(SCHEMA_NOTE)
        if at >= 0:
            try:
                found, _ = json.JSONDecoder().raw_decode(text[at + len(SCHEMA_NOTE) :].lstrip())
            except ValueError:
                return None
            return found if isinstance(found, dict) else None
    return None


def answer_target(body: dict[str, Any], ids: list[str]) -> tuple[str | None, dict[str, Any] | None]:
    """Which tool to call (or None) and which schema the answer must satisfy (or None)."""
    tools = [
        t["function"]
        for t in body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    ]
    choice = body.get("tool_choice")
    fmt = body.get("response_format") or {}
    forced = isinstance(choice, dict) or choice == "required"
    if tools and choice != "none" and (forced or fmt.get("type") != "json_schema"):
        chosen = tools[0]
        if isinstance(choice, dict):
            wanted = (choice.get("function") or {}).get("name")
            chosen = next((t for t in tools if t.get("name") == wanted), chosen)
        params = chosen.get("parameters") or {"type": "object", "properties": {}}
        return str(chosen.get("name", "tool")), params
    if fmt.get("type") == "json_schema":
        return None, (fmt.get("json_schema") or {}).get("schema") or {"type": "object", "properties": {}}
    if fmt.get("type") == "json_object":
        written = schema_in_prompt(body.get("messages") or [])
        if written is not None:  # the schema the prompt asks for, as a model that reads it
            return None, written
        if ids:
            return None, {
                "type": "object",
                "properties": {"ranking": {"type": "array", "items": {"type": "string"}}},
            }
        return None, {"type": "object", "properties": {"answer": {"type": "string"}}}
    return None, None

"""LM_Mem as rule writer: a domain's curation rules from its statistics, validated or replaced."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from agents.base import AgentTask, InvalidAnswer
from agents.memrec.rule_files import load_rule_set, rule_set_schema
from agents.memrec.rules import RuleSet, RuleSetError
from agents.memrec.statistics import domain_statistics
from agents.validation import INVALID_RULES, MISSING_DOMAIN, MISSING_NAME
from prompts.memrec.rules import RULE_WRITER
from world.environment import Environment

AGENT = "memrec_rule_writer"


class RuleSetDraft(BaseModel):
    """A model's proposed rule set before the rule language's own validation."""

    model_config = ConfigDict(extra="allow")
    rules: list[dict[str, Any]]
    """The proposed rules (validated by `agents.memrec.rule_files.load_rule_set`)."""


def rule_writer_task(env: Environment) -> AgentTask[Any]:
    """The agent task: statistics in, a valid `RuleSet` out (the generic set as fallback)."""
    name = env.dataset.name
    statistics = domain_statistics(env)
    messages = RULE_WRITER.format_messages(dataset=name, statistics=json.dumps(statistics, indent=1))

    def validate(draft: RuleSetDraft) -> tuple[RuleSet, list[str]]:
        raw = draft.model_dump()
        repairs = []
        for key, value, kind in (("name", f"{name}-llm", MISSING_NAME), ("domain", name, MISSING_DOMAIN)):
            if not isinstance(raw.get(key), str) or not raw.get(key):
                raw[key] = value
                repairs.append(kind)
        raw["description"] = f"Written by LM_Mem from the statistics of {name}: {json.dumps(statistics)}"
        try:
            return load_rule_set(raw), repairs
        except RuleSetError as error:
            raise InvalidAnswer(str(error), kind=INVALID_RULES) from None

    def fallback() -> RuleSet:
        generic = load_rule_set("generic").model_dump()
        generic.update(name=f"{name}-generic", domain=name)
        generic["description"] = "The generic rule set (LM_Mem unavailable or its rules invalid). " + str(
            generic.get("description", "")
        )
        return load_rule_set(generic)

    return AgentTask(
        agent=AGENT,
        role="mem",
        messages=messages,
        schema=RuleSetDraft,
        validate=validate,
        fallback=fallback,
        json_schema=rule_set_schema(),
    )

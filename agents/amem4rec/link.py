"""The semantic validator (Eq. 8): the linker ("mem" role) reads the new pattern and the memories
the similarity validator offered and either links some of them or answers "store separately"
(`should_link` false: the paper's second outcome; the training graph then evolves nothing and stores
the new memory even under UPDATE only). Ids are constrained to the offered ones (an enum in the JSON
schema; unknown and repeated ids are dropped as repairs); `should_link` true with no offered id
left is rejected (the model is asked again), since linking nothing is the other outcome.

Fallback — and the `amem4rec_semantic=False` ablation — is the similarity validator alone: link every
offered memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents.base import AgentTask, InvalidAnswer
from agents.validation import constrained_schema, keep_known_unique
from prompts import amem4rec as prompts
from state.amem4rec.schemas import LinkDecision


def validate_links(answer: LinkDecision, offered: Sequence[str]) -> tuple[LinkDecision, list[str]]:
    """Keep offered ids once each, in the answer's order; `should_link` false links nothing (store
    separately); `InvalidAnswer` when `should_link` is true but no offered id is listed."""
    found, repairs = keep_known_unique(
        answer.linked_thought_ids, set(offered), key=lambda raw: str(raw).strip(), keep=lambda i, _: i
    )
    kept = list(found)
    if answer.should_link and not kept:
        raise InvalidAnswer("'should_link' is true but 'linked_thought_ids' names no offered id")
    if not answer.should_link and kept:
        repairs.append("links_without_should_link")
        kept = []
    reasoning = " ".join(answer.reasoning.split())[:240]
    return LinkDecision(should_link=bool(kept), linked_thought_ids=kept, reasoning=reasoning), repairs


def link_task(
    memory: Mapping[str, str], neighbours: Sequence[Mapping[str, Any]], offered: Sequence[str], tau_low: float
) -> AgentTask[LinkDecision]:
    """The semantic validator's task for one new pattern and the memories offered to it."""
    shown = [n for n in neighbours if n["id"] in set(offered)]
    messages = prompts.LINK.format_messages(
        behavior=prompts.quote(memory["behavior_explanation"]),
        pattern=prompts.quote(memory["pattern_description"]),
        tau_low=tau_low,
        memories=prompts.memory_lines(shown),
    )

    def validate(answer: LinkDecision) -> tuple[LinkDecision, list[str]]:
        return validate_links(answer, offered)

    def fallback() -> LinkDecision:
        return LinkDecision(
            should_link=bool(offered),
            linked_thought_ids=list(offered),
            reasoning="similarity validator alone: every offered memory is linked",
        )

    schema = constrained_schema(
        LinkDecision,
        {"linked_thought_ids[]": {"enum": list(offered)}, "linked_thought_ids": {"maxItems": len(offered)}},
    )
    return AgentTask(
        agent="semantic_validator",
        role="mem",
        messages=messages,
        schema=LinkDecision,
        validate=validate,
        fallback=fallback,
        json_schema=schema,
    )

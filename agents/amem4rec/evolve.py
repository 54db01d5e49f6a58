"""Memory evolution (Eq. 9): the evolver ("mem" role) rewrites every linked memory in ONE call
(the paper's prompt already returns a list of updates).

Validation: updates name linked memories only, once each (unknown / repeated ids dropped as
repairs); a null field keeps the memory's text; unchanged rewrites are dropped; fields are cut to
`amem4rec_memory_chars`; `should_evolve` false changes nothing. Each kept rewrite carries the version
it was based on, so the pool applies it by compare-and-set (or merges it when another window
evolved the memory in between).

Fallback: a deterministic bounded merge of the new pattern into each linked memory
(`tools.memrec.writer.merge_memory`: new phrases appended, duplicates skipped, oldest phrases after
the first dropped when the text would exceed the bound).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents.base import AgentTask
from agents.validation import MEMORY_CUT, constrained_schema, cut_text, keep_known_unique
from prompts import amem4rec as prompts
from state.amem4rec.schemas import Evolution, MemoryRewrite
from tools.memrec.writer import merge_memory

FIELDS = ("behavior_explanation", "pattern_description")


def validate_evolution(
    answer: Evolution, linked: Mapping[str, Mapping[str, Any]], chars: int
) -> tuple[Evolution, list[str]]:
    """Rewrites of linked memories only, complete (nulls filled from the memory) and bounded."""
    cuts: list[str] = []

    def rewrite(memory_id: str, update: MemoryRewrite) -> MemoryRewrite | None:
        texts = {}
        for field in FIELDS:
            proposed = " ".join((getattr(update, field) or "").split())
            if proposed and len(proposed) > chars:
                cuts.append(MEMORY_CUT)
            texts[field] = cut_text(proposed, chars) if proposed else linked[memory_id][field]
        if all(texts[f] == linked[memory_id][f] for f in FIELDS):
            return None  # a rewrite that changes nothing is no evolution
        return MemoryRewrite(
            thought_id=memory_id, reasoning=cut_text(update.reasoning, 200, collapse=True), **texts
        )

    kept, repairs = keep_known_unique(
        answer.updates, set(linked), key=lambda u: str(u.thought_id).strip(), keep=rewrite
    )
    repairs += cuts
    if not answer.should_evolve and kept:
        repairs.append("updates_without_should_evolve")
        kept = {}
    return Evolution(should_evolve=bool(kept), updates=list(kept.values())), repairs


def merge_evolution(new: Mapping[str, str], linked: Mapping[str, Mapping[str, Any]], chars: int) -> Evolution:
    """The deterministic fallback: the new pattern merged into every linked memory, bounded."""
    updates = []
    for memory_id, memory in linked.items():
        texts = {f: merge_memory(memory[f], new[f], chars) for f in FIELDS}
        if any(texts[f] != memory[f] for f in FIELDS):
            updates.append(
                MemoryRewrite(thought_id=memory_id, reasoning="bounded merge of the new pattern", **texts)
            )
    return Evolution(should_evolve=bool(updates), updates=updates)


def evolution_schema(linked: Sequence[str]) -> dict[str, Any]:
    """`Evolution` as sent to the model: `thought_id` an enum of the linked memories, at most one
    update each."""
    return constrained_schema(
        Evolution, {"updates[].thought_id": {"enum": list(linked)}, "updates": {"maxItems": len(linked)}}
    )


def evolve_task(
    memory: Mapping[str, str], neighbours: Sequence[Mapping[str, Any]], linked_ids: Sequence[str], chars: int
) -> AgentTask[Evolution]:
    """The evolver's task: the new pattern and the linked memories (with their evolution counts)."""
    linked = {n["id"]: n for n in neighbours if n["id"] in set(linked_ids)}
    messages = prompts.EVOLVE.format_messages(
        behavior=prompts.quote(memory["behavior_explanation"]),
        pattern=prompts.quote(memory["pattern_description"]),
        memories=prompts.memory_lines(list(linked.values()), with_score=False),
        chars=chars,
    )

    def validate(answer: Evolution) -> tuple[Evolution, list[str]]:
        return validate_evolution(answer, linked, chars)

    def fallback() -> Evolution:
        return merge_evolution(memory, linked, chars)

    return AgentTask(
        agent="evolve",
        role="mem",
        messages=messages,
        schema=Evolution,
        validate=validate,
        fallback=fallback,
        json_schema=evolution_schema(list(linked)),
    )

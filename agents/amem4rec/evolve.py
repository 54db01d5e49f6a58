"""Memory evolution (Eq. 9): the evolver ("mem" role) rewrites every linked memory in ONE call
(the paper's prompt already returns a list of updates).

Validation: updates name linked memories only, once each (unknown / repeated ids dropped as
repairs); a null field keeps the memory's text; unchanged rewrites are dropped; fields are cut to
`amem_memory_chars`; `should_evolve` false changes nothing. Each kept rewrite carries the version
it was based on, so the pool applies it by compare-and-set (or merges it when another window
evolved the memory in between).

Fallback: a deterministic bounded merge of the new pattern into each linked memory
(`tools.memory_writer.merge_memory`: new phrases appended, duplicates skipped, oldest phrases after
the first dropped when the text would exceed the bound).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents.base import AgentTask
from prompts import amem4rec as prompts
from state.amem4rec_schemas import Evolution, MemoryRewrite, evolution_json_schema
from tools.memory_writer import merge_memory

FIELDS = ("behavior_explanation", "pattern_description")


def _bounded(text: str, chars: int) -> tuple[str, bool]:
    text = " ".join(text.split())
    return (text, False) if len(text) <= chars else (text[: chars - 1].rstrip() + "…", True)


def validate_evolution(
    answer: Evolution, linked: Mapping[str, Mapping[str, Any]], chars: int
) -> tuple[Evolution, list[str]]:
    """Rewrites of linked memories only, complete (nulls filled from the memory) and bounded."""
    repairs: list[str] = []
    kept: dict[str, MemoryRewrite] = {}
    for update in answer.updates:
        memory_id = str(update.thought_id).strip()
        if memory_id not in linked:
            repairs.append("unknown_id")
            continue
        if memory_id in kept:
            repairs.append("duplicate_id")
            continue
        texts = {}
        for field in FIELDS:
            proposed = getattr(update, field)
            text, cut = (
                _bounded(proposed, chars)
                if proposed and proposed.strip()
                else (linked[memory_id][field], False)
            )
            repairs += ["memory_cut"] if cut else []
            texts[field] = text
        if all(texts[f] == linked[memory_id][f] for f in FIELDS):
            continue  # a rewrite that changes nothing is no evolution
        kept[memory_id] = MemoryRewrite(
            thought_id=memory_id, reasoning=" ".join(update.reasoning.split())[:200], **texts
        )
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


def evolve_task(
    memory: Mapping[str, str], neighbours: Sequence[Mapping[str, Any]], linked_ids: Sequence[str], chars: int
) -> AgentTask[Evolution]:
    """The evolver's task: the new pattern and the linked memories (with their evolution counts)."""
    linked = {n["id"]: n for n in neighbours if n["id"] in set(linked_ids)}
    messages = prompts.EVOLVE.format_messages(
        behavior=memory["behavior_explanation"],
        pattern=memory["pattern_description"],
        memories=prompts.memory_lines(list(linked.values()), with_score=False),
        chars=chars,
    )

    def validate(answer: Evolution) -> tuple[Evolution, list[str]]:
        return validate_evolution(answer, linked, chars)

    def fallback() -> Evolution:
        return merge_evolution(memory, linked, chars)

    return AgentTask(
        "evolve", "mem", messages, Evolution, validate, fallback, evolution_json_schema(list(linked))
    )

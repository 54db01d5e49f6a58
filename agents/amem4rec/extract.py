"""Memory creation (Eq. 2): the extractor ("mem" role) turns one window of w consecutive training
items into an abstract pattern p = {behavior_explanation, pattern_description}.

Validation, the paper's rule (Appendix A): the behaviour explanation must not name an item; the
pattern description may, where an item stands for a general sequence or co-occurrence. In the
behaviour explanation every title of the window (also without its "(year)" suffix and with a
trailing ", The"-style article moved to the front) and every brand/author/artist-like attribute is
searched for, case-insensitively on word boundaries; a hit is replaced by "one such item" and
counted as a `named_item` repair. Fields are cut to `amem4rec_memory_chars` (`memory_cut`).

Fallback: `patterns.fallback_pattern` (window statistics, never a name). It is the heuristic
backend's answer (no model: the template is the extraction); after a FAILED call under a model
backend the training graph stores nothing for the window (graphs/amem4rec/train_graph.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from agents.amem4rec.patterns import NO_CATEGORIES_NOTE, fallback_pattern
from agents.base import AgentResult, AgentTask, InvalidAnswer
from agents.validation import MEMORY_CUT, SCHEMA_INVALID, constrained_schema, cut_text
from prompts import amem4rec as prompts
from prompts.common import item_block
from state.amem4rec.schemas import PatternExtraction
from state.context import Context, backend_for
from world.environment import Environment

NAME_ATTRIBUTES = ("brand", "author", "artist", "series", "publisher", "manufacturer", "studio", "label")
"""Item attributes whose values are names a pattern must not contain."""
MIN_NAME_CHARS = 3
"""Shorter names are not searched for (they collide with ordinary words)."""
REDACTED = "one such item"
_YEAR = re.compile(r"\s*\(\d{4}\)\s*$")
_TRAILING_ARTICLE = re.compile(r"^(?P<head>.+),\s*(?P<article>The|A|An|Les|La|Le|Il|Das|Der|Die|El)$", re.I)


def name_variants(title: str) -> set[str]:
    """A title and the forms a model is likely to write it in."""
    base = _YEAR.sub("", title).strip()
    variants = {title.strip(), base}
    moved = _TRAILING_ARTICLE.match(base)
    if moved:
        variants |= {f"{moved['article']} {moved['head']}", moved["head"]}
    return {v for v in variants if len(v) >= MIN_NAME_CHARS}


def forbidden_names(env: Environment, items: Sequence[str]) -> list[str]:
    """Names the window's pattern must not contain, longest first."""
    names: set[str] = set()
    for item_id in items:
        item = env.dataset.items[item_id]
        names |= name_variants(item.title)
        names |= {
            v.strip()
            for k, v in item.attributes.items()
            if k in NAME_ATTRIBUTES and len(v.strip()) >= MIN_NAME_CHARS
        }
    return sorted(names, key=lambda n: (-len(n), n))


def scrub_names(text: str, names: Sequence[str]) -> tuple[str, int]:
    """`text` with every name replaced by a neutral phrase, and how many were replaced."""
    hits = 0
    for name in names:
        pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)
        text, count = pattern.subn(REDACTED, text)
        hits += count
    return text, hits


REQUEST_FIELDS = (
    "base_url",
    "temperature",
    "max_output_tokens",
    "output_budget",
    "structured_output",
    "seed",
    "llm_retries",
    "llm_timeout",
    "item_text",
)
"""Context fields that change what the extractor answers, beside its prompt and its backend."""
NAME_FREE_FIELDS = ("behavior_explanation",)
"""Fields where an item name is removed (the pattern description may name items: Appendix A)."""


def validate_extraction(
    answer: PatternExtraction, names: Sequence[str], chars: int
) -> tuple[PatternExtraction, list[str]]:
    """Remove item names from the behaviour explanation, bound both fields; `InvalidAnswer` when a
    field is empty."""
    repairs: list[str] = []
    fields = {}
    for field in ("behavior_explanation", "pattern_description"):
        text = " ".join(getattr(answer, field).split())
        if not text:
            raise InvalidAnswer(f"'{field}' is empty", SCHEMA_INVALID)
        if field in NAME_FREE_FIELDS:
            text, hits = scrub_names(text, names)
            repairs += ["named_item"] * hits
        if len(text) > chars:
            repairs.append(MEMORY_CUT)
            text = cut_text(text, chars)
        fields[field] = text
    return PatternExtraction(**fields), repairs


def extraction_task(
    env: Environment, items: Sequence[str], chars: int
) -> tuple[AgentTask[PatternExtraction], str]:
    """The extractor's task for one window, and a note on what its fallback would use."""
    names = forbidden_names(env, items)
    note = (
        "from the window's categories"
        if any(env.dataset.items[i].categories for i in items)
        else NO_CATEGORIES_NOTE
    )
    messages = prompts.EXTRACT.format_messages(
        count=len(items), window=item_block(env.dataset, items), chars=chars
    )

    def validate(answer: PatternExtraction) -> tuple[PatternExtraction, list[str]]:
        return validate_extraction(answer, names, chars)

    def fallback() -> PatternExtraction:
        behavior, pattern, _ = fallback_pattern(env, items, chars)
        return PatternExtraction(behavior_explanation=behavior, pattern_description=pattern)

    task = AgentTask(
        agent="extract",
        role="mem",
        messages=messages,
        schema=PatternExtraction,
        validate=validate,
        fallback=fallback,
        json_schema=constrained_schema(PatternExtraction),
    )
    return task, note


def extraction_request(task: AgentTask[PatternExtraction], context: Context) -> str:
    """A digest of everything one extraction's answer depends on besides the catalog: the prompt,
    the answer schema, the mem backend and the context fields in `REQUEST_FIELDS` (the key of a
    window's row in the shared extraction stage, `tools.amem4rec.extraction_stage`)."""
    asked = {
        "messages": [[m.type, m.content] for m in task.messages],
        "schema": task.json_schema,
        "backend": backend_for(context, task.role),
        **{name: getattr(context, name) for name in REQUEST_FIELDS},
    }
    return hashlib.sha256(json.dumps(asked, sort_keys=True, default=str).encode()).hexdigest()[:32]


def replayed(stored: dict[str, Any], result: AgentResult) -> dict[str, Any]:
    """A stored extraction as this node's update: its usage rows take this node's superstep and are
    marked `shared` (the call was made, and is counted, by the stage's builder)."""
    step = result.usage.as_dict().get("step")
    usage = [{**row, "step": step, "shared": True} for row in stored.get("usage", [])]
    return {**stored, "usage": usage}

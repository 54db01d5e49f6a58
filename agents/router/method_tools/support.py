"""What the method tools (MemoryNeighbourhood, PatternMemories, IntentEvidence) share: the episode's
visible history, the wrapped method's knobs, per-candidate evidence, and the planned cost of the
tool's one LLM call.

Cost: a method tool makes exactly one LLM call (role "rec") when a model is configured and its fetch
says a call adds something (`Fetched.needed`); the wrapped method's own LLM agents are not re-run
inside the tool (each module says which of the method's steps run as their deterministic
fallback). Tokens of that call = the prompt's estimated tokens (the tool prompt with the fetched
data, about 4 characters a token: `agents.usage.estimate_tokens`) + the answer budget of an item
tool (`tool_agent.ITEM_ANSWER_TOKENS`: a base plus a share per candidate).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from agents.arag.signals import titled
from agents.chainrec.online.catalog import ToolCost, ToolSpec
from agents.chainrec.online.evidence import clip01
from agents.chainrec.online.tool_agent import ITEM_ANSWER_TOKENS, Episode, Fetched
from agents.usage import estimate_tokens
from prompts.chainrec import candidate_block, tool_messages
from state.chainrec.context import ChainRecContext
from state.chainrec.schemas import NOTE_CHARS, ItemEvidence
from state.context import Context, context_as
from world.environment import Environment

K = TypeVar("K", bound=Context)

LLM_CALLS = 1
"""LLM requests one method-tool call makes with an LLM backend (none with the heuristic backend or
when its fetch found nothing worth asking about)."""


def visible_items(episode: Episode) -> list[str]:
    """The episode user's visible history, oldest first: exactly what `get_user` shows of them
    (the scenario's rule; never the held-out target)."""
    scope = episode.scope
    return [event.item_id for event in scope.corpus.visible_events(scope.user_id, scope.scenario)]


def hides_history(env: Environment, user_id: str, visible: Sequence[str]) -> bool:
    """Whether the scenario hides some of the user's training interactions (`visible`: what the
    episode shows of them)."""
    case = env.cases.get(user_id)
    return case is not None and not {event.item_id for event in case.history} <= set(visible)


def knobs(ctx: ChainRecContext, cls: type[K]) -> K:
    """The run's context as the wrapped method's context: the router's context already is one (it
    inherits every method's knobs); a plain ChainRec context gets that method's defaults for its own
    knobs (`context_as`: the common ones keep the run's values)."""
    return ctx if isinstance(ctx, cls) else context_as(cls, ctx, {})  # type: ignore[return-value]


def item_evidence(item_id: str, score: float, note: str) -> ItemEvidence:
    """One candidate's entry: score clipped into [0, 1] (4 decimals), note cut to the schema's length."""
    return ItemEvidence(item_id=item_id, score=round(clip01(score), 4), note=note[:NOTE_CHARS])


def ranked_evidence(
    records: Sequence[Mapping[str, Any]], scores: np.ndarray, basis: str, label: str
) -> tuple[list[ItemEvidence], list[Mapping[str, Any]], str]:
    """A scoring tool's answer parts for its candidates (`records`: their `get_item` rows, `scores`
    in [0, 1]): each one's entry (note `<basis> rank 0.83`), the three best-scored records (ties in
    the given order) and the candidate block with `<label> score 0.83` beside each."""
    pairs = list(zip(records, scores, strict=True))
    items = [item_evidence(r["item_id"], float(s), f"{basis} rank {s:.2f}") for r, s in pairs]
    best = [records[i] for i in np.argsort(-np.asarray(scores), kind="stable")[:3]]
    text = candidate_block([(r, f"{label} score {s:.2f}", []) for r, s in pairs])
    return items, best, text


def top_titles(env: Environment, items: Sequence[str], scores: np.ndarray, top: int = 3) -> str:
    """`Title (year); ...` of the `top` best-scored items (ties keep the given order)."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")[:top]
    return "; ".join(titled(env.dataset, items[i]) for i in order)


def fetched_cost(spec: ToolSpec, fetched: Fetched) -> ToolCost:
    """The cost of asking the model about what was fetched: the tool prompt with `fetched.data` (the
    memory digest of earlier tools left out) plus the answer budget; no call when none is needed."""
    if not fetched.needed:
        return ToolCost(0, 0)
    base, per_item = ITEM_ANSWER_TOKENS
    messages = tool_messages(spec.name, spec.description, fetched.data, "", True)
    prompt = estimate_tokens("\n".join(str(message.content) for message in messages))
    return ToolCost(LLM_CALLS, prompt + base, per_item)


def planned_cost(spec: ToolSpec, data_chars: int, candidate_chars: int) -> ToolCost:
    """The cost planned before fetching: the tool prompt's fixed text and `data_chars` characters of
    fetched data that do not depend on the candidates, `candidate_chars` more per candidate (each
    module estimates both from its knobs), and the answer budget."""
    base, per_item = ITEM_ANSWER_TOKENS
    messages = tool_messages(spec.name, spec.description, "", "", True)
    fixed = sum(len(str(message.content)) for message in messages)
    return ToolCost(
        LLM_CALLS, math.ceil((fixed + data_chars) / 4) + base, math.ceil(candidate_chars / 4) + per_item
    )

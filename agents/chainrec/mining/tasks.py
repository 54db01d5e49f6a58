"""Training tasks for trace generation: each user's validation interaction is the target, the
training interactions before it are the history (the test target is never shown, nor used as a
candidate: candidates come from items the user never interacted with), and reviews are those an
episode at the validation time could see (others' reviews before it; the user's own on history
items).

Per the paper's appendix: the 10 most recent history items with up to 3 reviews each (the user's own
first, then others', most informative first), every candidate with up to 10 reviews.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prompts.chainrec.mining import entry
from prompts.common import item_line
from tools.chainrec.episode_corpus import Corpus, corpus_of
from world.data import Interaction
from world.environment import Environment
from world.errors import ProtocolError

HISTORY_ITEMS = 10
HISTORY_REVIEWS = 3
CANDIDATE_REVIEWS = 10


@dataclass(frozen=True)
class TraceTask:
    """What one trace request shows, and the answer it is checked against."""

    user_id: str
    """The task's user."""
    target: str
    """The user's validation item (the training target)."""
    candidates: tuple[str, ...]
    """The target and sampled never-seen items, in the order shown."""
    history: tuple[str, ...]
    """The prompt's history entries (item line, then review snippets), newest first."""
    candidate_entries: tuple[str, ...]
    """The prompt's candidate entries (item line with statistics, then review snippets)."""
    missing: tuple[str, ...]
    """What the dataset lacks for this prompt (e.g. "review text"), said in the prompt and the trace."""


def missing_fields(corpus: Corpus) -> tuple[str, ...]:
    """The fields the paper's prompt uses that this dataset does not have."""
    names = {
        "reviews": "review text",
        "ratings": "ratings",
        "categories": "categories",
        "timestamps": "dates",
    }
    return tuple(label for key, label in names.items() if not corpus.domain[key])


def _others_reviews(corpus: Corpus, item_id: str, viewer: str, cutoff: float | None, limit: int) -> list[str]:
    """Others' review texts of `item_id` visible before `cutoff`, longest (most informative) first."""
    if limit <= 0:
        return []
    events = [e for e in corpus.item_side(item_id, viewer, cutoff) if e.review]
    events.sort(key=lambda e: (-len(e.review or ""), -e.timestamp))
    return [e.review or "" for e in events[:limit]]


def _history_entry(env: Environment, corpus: Corpus, event: Interaction, cutoff: float | None) -> str:
    line = item_line(env.dataset, event.item_id)
    if event.rating is not None:
        line += f" | rated {event.rating:g}"
    own = [event.review] if event.review else []
    others = _others_reviews(corpus, event.item_id, event.user_id, cutoff, HISTORY_REVIEWS - len(own))
    return entry(line, [*own, *others])


def _candidate_entry(
    env: Environment, corpus: Corpus, item_id: str, user_id: str, cutoff: float | None
) -> str:
    count, mean, _ = corpus.item_stats(item_id, user_id, cutoff)
    line = item_line(env.dataset, item_id) + f" | {count} interaction{'' if count == 1 else 's'}"
    if mean is not None:
        line += f", mean rating {mean:.2f}"
    return entry(line, _others_reviews(corpus, item_id, user_id, cutoff, CANDIDATE_REVIEWS))


def trainable_users(env: Environment) -> list[str]:
    """Users with a validation interaction and at least one training interaction, in id order."""
    return [
        u for u in env.user_ids if (c := env.cases.get(u)) is not None and c.valid is not None and c.history
    ]


def trace_task(env: Environment, user_id: str, candidates: Sequence[str]) -> TraceTask:
    """The training task of `user_id` over `candidates` (which must hold the validation item and none
    of the user's test target)."""
    case = env.cases.get(user_id)
    if case is None or case.valid is None:
        raise ProtocolError(f"user {user_id!r} has no validation interaction to build a training task on")
    target = case.valid.item_id
    if target not in candidates or case.target.item_id in candidates:
        raise ProtocolError(
            f"user {user_id!r}: training candidates must hold the validation item and not the test target"
        )
    corpus = corpus_of(env)
    cutoff = case.valid.timestamp if env.dataset.has_time else None
    # The classic view is everything before the test target; its last event is the validation one.
    visible = corpus.visible_events(user_id, "classic")[:-1]
    events = visible[-HISTORY_ITEMS:][::-1]
    return TraceTask(
        user_id=user_id,
        target=target,
        candidates=tuple(candidates),
        history=tuple(_history_entry(env, corpus, e, cutoff) for e in events),
        candidate_entries=tuple(_candidate_entry(env, corpus, i, user_id, cutoff) for i in candidates),
        missing=missing_fields(corpus),
    )

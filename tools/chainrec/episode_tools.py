"""The environment as tools (AgentSociety-style): `get_user`, `get_item`, `get_reviews`.

They are LangChain tools with typed arguments, so a tool agent calls them with `.invoke(...)` and an
LLM planner can be offered them as function schemas. Every call is bound to an episode by the
injected `scope` argument (hidden from a model's schema); a model only ever sees what a call
returned. Contract:

- `get_user(user_id, limit)`: the user's attributes and interactions (item id, title, first
  categories, year, rating, date), most recent first, at most `limit`. For the episode's user,
  exactly what the scenario shows (never the held-out target); for anybody else, interactions
  before the episode user's target time.
- `get_item(item_ids)`: per item its title, categories, description (cut), attributes (author,
  location, price, year, ...), its list and object fields in their shapes (`structured`: Goodreads
  author objects, Yelp opening hours, ...) and how many visible interactions and what mean rating it has.
- `get_reviews(user_id | item_id, order, limit, max_chars)`: reviews by the episode's user (visible
  ones) or of an item (by others, before the target time), most recent or most helpful first,
  truncated to `max_chars` of text in all. Our data model keeps no helpful-vote counts, so "helpful"
  means the most informative: the longest text first (ties: most recent). Datasets without review
  text answer with ratings only and say so in `note`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Any, Literal

from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool, ToolException, tool
from pydantic import BaseModel, ConfigDict, Field

from tools.chainrec.episode_corpus import Corpus, corpus_of
from world.data import Interaction, Item
from world.environment import Environment

DESCRIPTION_CHARS = 300
ATTRIBUTE_CHARS = 80
STRUCTURED_ENTRIES = 20
"""`get_item`: entries of a list field (authors, shelves, ...) one record carries at most."""


@dataclass(frozen=True)
class EpisodeScope:
    """Which episode a tool call serves: the environment, the episode's user and scenario."""

    env: Environment
    """The dataset's environment."""
    user_id: str
    """The episode's (target) user."""
    scenario: str
    """The scenario deciding which of the user's interactions are visible."""

    @property
    def corpus(self) -> Corpus:
        """The dataset's indexed interactions."""
        return corpus_of(self.env)

    @property
    def cutoff(self) -> float | None:
        """Others' interactions are visible only before this time (None: no timestamps)."""
        return self.corpus.cutoff(self.user_id)


Scope = Annotated[EpisodeScope, InjectedToolArg]


class _Args(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    scope: Scope = Field(description="The episode (injected by the caller, not by a model).")


class UserArgs(_Args):
    """Arguments of `get_user`."""

    user_id: str = Field(description="The user id.")
    limit: int = Field(default=20, ge=1, le=500, description="Most recent interactions to return.")


class ItemArgs(_Args):
    """Arguments of `get_item`."""

    item_ids: list[str] = Field(min_length=1, max_length=100, description="One or more item ids.")


class ReviewArgs(_Args):
    """Arguments of `get_reviews` (exactly one of `user_id` and `item_id`)."""

    user_id: str | None = Field(default=None, description="Reviews written by this user.")
    item_id: str | None = Field(default=None, description="Reviews of this item (by other users).")
    order: Literal["recent", "helpful"] = Field(default="recent", description="Which reviews first.")
    limit: int = Field(default=3, ge=1, le=50, description="Reviews to return at most.")
    max_chars: int = Field(default=600, ge=40, le=20000, description="Review text budget in all.")


@lru_cache(maxsize=1 << 16)
def _date(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).date().isoformat()


def _when(scope: EpisodeScope, event: Interaction) -> dict[str, Any]:
    return {"date": _date(event.timestamp)} if scope.env.dataset.has_time else {}


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _brief(item: Item) -> dict[str, Any]:
    """An item as a history row shows it: id, title, first categories and year."""
    row: dict[str, Any] = {"item_id": item.id, "title": item.title, "categories": list(item.categories[:4])}
    if year := item.attributes.get("year"):
        row["year"] = year
    return row


def _user_events(scope: EpisodeScope, user_id: str) -> list[Interaction]:
    env = scope.env
    if user_id not in env.user_index:
        raise ToolException(f"unknown user id {user_id!r}")
    if user_id == scope.user_id:
        return scope.corpus.visible_events(user_id, scope.scenario)
    return scope.corpus.other_events(user_id, scope.cutoff)


@tool("get_user", args_schema=UserArgs, response_format="content")
def get_user(user_id: str, scope: EpisodeScope, limit: int = 20) -> dict[str, Any]:
    """A user's profile attributes and visible interactions, most recent first."""
    events = _user_events(scope, user_id)
    shown = events[::-1][:limit]
    rows = []
    for event in shown:
        row = _brief(scope.env.dataset.items[event.item_id])
        if event.rating is not None:
            row["rating"] = event.rating
        row.update(_when(scope, event))
        row["reviewed"] = bool(event.review)
        rows.append(row)
    attributes = {k: _cut(v, ATTRIBUTE_CHARS) for k, v in scope.env.dataset.users.get(user_id, {}).items()}
    return {"user_id": user_id, "attributes": attributes, "interactions": rows, "total": len(events)}


def item_record(scope: EpisodeScope, item_id: str) -> dict[str, Any]:
    """What `get_item` says about one item."""
    items = scope.env.dataset.items
    if item_id not in items:
        raise ToolException(f"unknown item id {item_id!r}")
    item = items[item_id]
    count, mean, reviews = scope.corpus.item_stats(item_id, scope.user_id, scope.cutoff)
    return {
        "item_id": item_id,
        "title": item.title,
        "categories": list(item.categories),
        "description": _cut(item.description or "", DESCRIPTION_CHARS),
        "attributes": {k: _cut(v, ATTRIBUTE_CHARS) for k, v in item.attributes.items()},
        "structured": {
            k: v[:STRUCTURED_ENTRIES] if isinstance(v, list) else v for k, v in item.structured.items()
        },
        "interactions": count,
        "mean_rating": None if mean is None else round(mean, 3),
        "reviews": reviews,
    }


@tool("get_item", args_schema=ItemArgs, response_format="content")
def get_item(item_ids: list[str], scope: EpisodeScope) -> dict[str, Any]:
    """Items' metadata (title, categories, description, attributes) and visible rating statistics."""
    return {"items": [item_record(scope, item_id) for item_id in item_ids]}


def _review_note(scope: EpisodeScope) -> str:
    domain = scope.corpus.domain
    if domain["reviews"]:
        return ""
    if domain["ratings"]:
        return "this dataset has ratings but no review text: ratings only"
    return "this dataset has no ratings and no review text: interactions only"


@tool("get_reviews", args_schema=ReviewArgs, response_format="content")
def get_reviews(
    scope: EpisodeScope,
    user_id: str | None = None,
    item_id: str | None = None,
    order: Literal["recent", "helpful"] = "recent",
    limit: int = 3,
    max_chars: int = 600,
) -> dict[str, Any]:
    """Reviews by a user or of an item, most recent or most helpful first, within a text budget."""
    if (user_id is None) == (item_id is None):
        raise ToolException("give exactly one of user_id and item_id")
    if user_id is not None:
        events = _user_events(scope, user_id)
    else:
        if item_id not in scope.env.dataset.items:
            raise ToolException(f"unknown item id {item_id!r}")
        events = scope.corpus.item_side(item_id, scope.user_id, scope.cutoff)
    if scope.corpus.domain["reviews"]:
        events = [e for e in events if e.review]
    newest = events[::-1]
    chosen = sorted(newest, key=lambda e: -len(e.review or "")) if order == "helpful" else newest
    rows, budget, truncated = [], max_chars, False
    for event in chosen[:limit]:
        row: dict[str, Any] = {"user_id": event.user_id, "item_id": event.item_id, "rating": event.rating}
        row.update(_when(scope, event))
        if event.review:
            text = " ".join(event.review.split())
            if len(text) > budget:
                text, truncated = _cut(text, budget), True
            budget -= len(text)
            row["text"] = text
        rows.append(row)
        if budget <= 0:
            truncated = truncated or len(rows) < len(chosen)
            break
    answer: dict[str, Any] = {"reviews": rows, "total": len(events), "truncated": truncated}
    if note := _review_note(scope):
        answer["note"] = note
    return answer


ENVIRONMENT_TOOLS: tuple[BaseTool, ...] = (get_user, get_item, get_reviews)
"""The environment tools, for binding to a model (`tool_call_schema` hides the injected scope)."""


def call(tool_: StructuredTool, scope: EpisodeScope, **arguments: Any) -> dict[str, Any]:
    """Call an environment tool for `scope` the way the tool agents do: the arguments are checked
    against the tool's typed schema, then its function runs (a refused call raises `ToolException`).

    No callback run is opened per fetch: a fetch belongs to its tool node's run in a trace, and a
    LangChain `invoke` costs several milliseconds of CPU per call, about as much as the fetch itself.
    Models and other callers use `tool.invoke(...)` as with any LangChain tool.
    """
    checked = tool_.args_schema.model_validate({**arguments, "scope": scope})  # type: ignore[union-attr]
    return tool_.func(**{name: getattr(checked, name) for name in type(checked).model_fields})

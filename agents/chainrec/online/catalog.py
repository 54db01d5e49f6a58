"""The Tool Agent Library's catalog: what the planner sees of each action (name, description, inputs,
outputs), which graph node runs it, and which dataset fields it needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class ToolSpec:
    """One action of the planner: a tool of the library or the terminal CandidateRank."""

    name: str
    """The action's name (what planners choose and trajectories record)."""
    node: str
    """The graph node that runs it."""
    side: Literal["user", "item", "terminal"]
    """Whose evidence it gathers: the user's, the candidates' (per-candidate entries), or none."""
    description: str
    """What it does, for the planner."""
    inputs: str
    """What it reads through the environment tools."""
    outputs: str
    """What it writes to the episode memory."""
    requires: tuple[str, ...] = ()
    """Domain flags (see `tools.chainrec.episode_corpus.Corpus.domain`) it cannot work without."""


@dataclass(frozen=True)
class ToolCost:
    """What one call of a tool is planned to cost (the mask's and the reward's cost term)."""

    calls: int
    """LLM requests one call makes (0: it answers without a model)."""
    prompt_tokens: int
    """Planned tokens of one request that do not depend on the candidates (prompt and answer)."""
    per_candidate: int = 0
    """Planned tokens each candidate adds to one request (its prompt row and answer entry)."""

    def tokens(self, candidates: int) -> int:
        """Planned tokens of one call over `candidates` candidates."""
        return self.calls * (self.prompt_tokens + self.per_candidate * candidates)

    def describe(self, candidates: int) -> str:
        """`1 LLM call, ~900 tokens` / `no LLM call` for the planner's prompt."""
        if not self.calls:
            return "no LLM call"
        plural = "s" if self.calls > 1 else ""
        return f"{self.calls} LLM call{plural}, ~{self.tokens(candidates)} tokens"


LONG_TERM = "LongTermPreference"
SHORT_TERM = "ShortTermPreference"
POSITIVE = "PositivePreference"
NEGATIVE = "NegativePreference"
ITEM_SEMANTIC = "ItemSemantic"
ITEM_PROFILE = "ItemProfile"
AUTHOR = "AuthorPreference"
GEO = "GeoContext"
CANDIDATE_RANK = "CandidateRank"
MEMORY_NEIGHBOURHOOD = "MemoryNeighbourhood"
"""Method tool (router): MemRec's curated neighbourhood and facets, from its memory graph."""
PATTERN_MEMORIES = "PatternMemories"
"""Method tool (router): AMEM4Rec's retrieved pattern memories, from its trained pool."""
INTENT_EVIDENCE = "IntentEvidence"
"""Method tool (router): ARAG's user understanding, NLI scores and context summary."""
COLLABORATIVE = "CollaborativeSignal"
"""Method tool (router): classic collaborative scores (item-kNN, BPR) for the candidates."""

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        LONG_TERM,
        "long_term_preference",
        "user",
        "A stable long-horizon profile of the user: favourite categories, representative items, era.",
        "get_user: the user's visible history (most recent first, up to the long-horizon budget)",
        "facets on lasting tastes; confidence grows with history length",
    ),
    ToolSpec(
        SHORT_TERM,
        "short_term_preference",
        "user",
        "The user's recent intent: what the last few interactions are about and how they differ "
        "from the long run.",
        "get_user: the most recent interactions",
        "facets on recent categories and emerging interests",
    ),
    ToolSpec(
        POSITIVE,
        "positive_preference",
        "user",
        "What to favour: the items and categories the user rated highly, and what their favourable "
        "reviews praise.",
        "get_user (ratings) and get_reviews by the user, most helpful first",
        "facets on liked categories, liked items and praised qualities",
        ("ratings",),
    ),
    ToolSpec(
        NEGATIVE,
        "negative_preference",
        "user",
        "What to avoid: the items and categories the user rated poorly, and what their unfavourable "
        "reviews criticise.",
        "get_user (ratings) and get_reviews by the user, most helpful first",
        "facets on disliked categories and items",
        ("ratings",),
    ),
    ToolSpec(
        ITEM_SEMANTIC,
        "item_semantic",
        "item",
        "Per-candidate themes and tags, and how close each candidate's content is to what the user consumed.",
        "get_item for every candidate, get_user for the recent history, get_reviews per candidate",
        "one entry per candidate (semantic fit 0-1 and tags)",
    ),
    ToolSpec(
        ITEM_PROFILE,
        "item_profile",
        "item",
        "A structured profile of every candidate: how many people interacted with it, its mean "
        "rating, year, price.",
        "get_item for every candidate",
        "one entry per candidate (popularity-and-quality score 0-1)",
    ),
    ToolSpec(
        AUTHOR,
        "author_preference",
        "item",
        "Favoured authors or series and each candidate's affinity to them (book-like domains).",
        "get_user for the history, get_item for history items and candidates",
        "facets on favourite authors; one entry per candidate (author affinity 0-1)",
        ("authors",),
    ),
    ToolSpec(
        GEO,
        "geo_context",
        "item",
        "Where the user usually goes and how far each candidate is from there (places with locations).",
        "get_user for the history, get_item for history places and candidates",
        "the inferred location; one entry per candidate (geo score 0-1 from the distance)",
        ("locations",),
    ),
    ToolSpec(
        CANDIDATE_RANK,
        "candidate_rank",
        "terminal",
        "Stop gathering evidence and rank every candidate from what the memory holds.",
        "the episode memory",
        "the final ranking with a short rationale per candidate",
    ),
)
"""Every action, in catalog order (CandidateRank last)."""

BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}
EVIDENCE_TOOLS: tuple[str, ...] = tuple(spec.name for spec in TOOLS if spec.side != "terminal")
"""The tools that gather evidence (every action but CandidateRank), in catalog order."""
ACTIONS: tuple[str, ...] = tuple(spec.name for spec in TOOLS)


def is_user_tool(name: str) -> bool:
    """True for a user-side tool of ChainRec's library; every other evidence tool (item tools and the
    router's method tools, all item-side) writes per-candidate entries."""
    spec = BY_NAME.get(name)
    return spec is not None and spec.side == "user"


Catalog = tuple[ToolSpec, ...]
"""A planner's actions in catalog order, CandidateRank last (ChainRec's `TOOLS`, or the router's)."""


def evidence_tools(catalog: Catalog = TOOLS) -> tuple[str, ...]:
    """The catalog's evidence tools (every action but CandidateRank), in catalog order."""
    return tuple(spec.name for spec in catalog if spec.side != "terminal")


def normalise_action(text: str, catalog: Catalog = TOOLS) -> str | None:
    """The action a model's text names (case, spaces, underscores and hyphens ignored; the node name
    is accepted too), or None when it names none."""
    key = "".join(ch for ch in text.lower() if ch.isalnum())
    for spec in catalog:
        if key in (spec.name.lower(), spec.node.replace("_", "")):
            return spec.name
    return None


def parse_chain(text: str, catalog: Catalog = TOOLS) -> list[str]:
    """A comma-separated chain of tool names (empty: every evidence tool in catalog order);
    raises ValueError naming an unknown tool."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    tools = evidence_tools(catalog)
    if not names:
        return list(tools)
    chain = []
    for name in names:
        action = normalise_action(name, catalog)
        if action is None or action == CANDIDATE_RANK:
            raise ValueError(
                f"unknown ChainRec tool {name!r} in chainrec_fixed_chain; use {', '.join(tools)}"
            )
        chain.append(action)
    return list(dict.fromkeys(chain))

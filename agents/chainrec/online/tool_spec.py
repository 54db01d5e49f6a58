"""What a planner sees of one action (a tool card: name, description, inputs, outputs, stage) and what
one call is planned to cost. The cards themselves live in a library file (library_file.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Side = Literal["user", "item", "terminal"]
"""A card's stage: whose evidence it gathers (the user's, the candidates'), or the terminal ranking."""
SIDES: tuple[str, ...] = ("user", "item", "terminal")
"""Every stage a card may name."""


@dataclass(frozen=True)
class ToolSpec:
    """One action of the planner: a tool of the library or the terminal CandidateRank."""

    name: str
    """The action's name (what planners choose and trajectories record)."""
    node: str
    """The graph node that runs it (several cards may run on one node: a mined card that renames or
    splits a tool runs that tool's agent under its own name and description)."""
    side: Side
    """Whose evidence it gathers: the user's, the candidates' (per-candidate entries), or none."""
    description: str
    """What it does, for the planner."""
    inputs: str
    """What it reads through the environment tools."""
    outputs: str
    """What it writes to the episode memory."""
    requires: tuple[str, ...] = ()
    """Domain flags (see `tools.chainrec.episode_corpus.Corpus.domain`) it cannot work without."""
    weight_field: str = ""
    """The context field holding its weight in CandidateRank's fusion ("" for CandidateRank; a
    context without the field weighs it 0)."""


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


Catalog = tuple[ToolSpec, ...]
"""A planner's actions in catalog order, CandidateRank last (a library file's cards, or those cards
with tools registered through extensions.py)."""

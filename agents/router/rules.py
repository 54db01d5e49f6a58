"""The router's rule planner: ChainRec's state-dependent heuristic over the extended library.

It is ChainRec's `RulePlanner` (regime from the scenario tag and the reported history length; GeoContext
first and AuthorPreference second whenever feasible; a thin recent window adds LongTerm; many low
ratings add NegativePreference; no high rating drops PositivePreference; the plan's i-th tool scores
1 − 0.05·i, CandidateRank 0.5, any other tool 0.1) with plans that call the method tools where each
one's evidence is strongest:

- classic: CollaborativeSignal first (a user with history: co-occurrence is the strongest cheap
  signal, no LLM call), LongTerm, PatternMemories, ShortTerm, ItemProfile, ItemSemantic, Positive;
- cold_user (or at most 5 visible history items): MemoryNeighbourhood first (similar users' curated
  memory makes up for the short history), CollaborativeSignal, ItemProfile, ItemSemantic;
- cold_item: IntentEvidence first (reads every candidate's content against the user's intent; no
  co-occurrence for cold targets, so no CollaborativeSignal and no ItemProfile), ItemSemantic,
  LongTerm, ShortTerm;
- evolving_short: ShortTerm, PatternMemories (cross-user patterns of recent activity),
  CollaborativeSignal, ItemSemantic, ItemProfile;
- evolving_long: ShortTerm, LongTerm, CollaborativeSignal, PatternMemories, ItemSemantic, ItemProfile.

Memory adjusts it further: when CollaborativeSignal reported that most candidates have no
co-occurrence link with the history (`linked_candidates` below half), IntentEvidence and ItemSemantic
move right after it. A method tool that cannot run (no memory graph, no pool) is masked, so the plan
skips it.
"""

from __future__ import annotations

from typing import ClassVar

from agents.chainrec.online.catalog import ITEM_PROFILE, ITEM_SEMANTIC, LONG_TERM, POSITIVE, SHORT_TERM
from agents.chainrec.online.planners import RulePlanner
from agents.chainrec.online.planning import PlanView
from agents.router.method_tools.collaborative import NAME as COLLABORATIVE
from agents.router.method_tools.intent_evidence import NAME as INTENT_EVIDENCE
from agents.router.method_tools.memory_neighbourhood import NAME as MEMORY_NEIGHBOURHOOD
from agents.router.method_tools.pattern_memories import NAME as PATTERN_MEMORIES


class RouterRulePlanner(RulePlanner):
    """ChainRec's rule planner with plans over the method tools (see the module docstring)."""

    PLANS: ClassVar[dict[str, tuple[str, ...]]] = {
        "classic": (
            COLLABORATIVE,
            LONG_TERM,
            PATTERN_MEMORIES,
            SHORT_TERM,
            ITEM_PROFILE,
            ITEM_SEMANTIC,
            POSITIVE,
        ),
        "cold_user": (MEMORY_NEIGHBOURHOOD, COLLABORATIVE, ITEM_PROFILE, ITEM_SEMANTIC),
        "cold_item": (INTENT_EVIDENCE, ITEM_SEMANTIC, LONG_TERM, SHORT_TERM),
        "evolving_short": (SHORT_TERM, PATTERN_MEMORIES, COLLABORATIVE, ITEM_SEMANTIC, ITEM_PROFILE),
        "evolving_long": (
            SHORT_TERM,
            LONG_TERM,
            COLLABORATIVE,
            PATTERN_MEMORIES,
            ITEM_SEMANTIC,
            ITEM_PROFILE,
        ),
    }
    WEAK_LINKS = 0.5
    """CollaborativeSignal is weak when fewer than this share of candidates are linked to the history."""

    def plan(self, view: PlanView) -> list[str]:
        """ChainRec's plan adjustments over the router's plans, then content tools first when the
        collaborative signal turned out weak."""
        plan = super().plan(view)
        linked = view.stat("linked_candidates")
        if linked is not None and view.candidates and linked < self.WEAK_LINKS * len(view.candidates):
            content = [INTENT_EVIDENCE, ITEM_SEMANTIC]
            rest = [tool for tool in plan if tool not in content]
            at = rest.index(COLLABORATIVE) + 1 if COLLABORATIVE in rest else 0
            plan = [*rest[:at], *content, *rest[at:]]
        return plan

"""What a method reads and learns from, as its registry entry declares it (`MethodSpec.evidence`).

Each method's room declares one `EvidenceUse` per method; `bench/report/fairness.py` renders them,
with the knob values the method runs with, as docs/benchmarking.md's fairness table, and
`tests/bench/report/test_fairness.py` renders every LLM method's prompts to check the declarations
against what the prompts really show. The one contract the LLM methods share is `prompts/evidence.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

TEXT_FIELDS = "description, reviews"
"""The contract's text beyond an item's line: what `item_text=title` withholds."""
CONTRACT_CANDIDATES = f"T(i): line, {TEXT_FIELDS}"
"""The evidence contract's candidate text (`prompts.evidence.item_text`; `item_text=title`: line only)."""
NO_TRAINING = "nothing: no training"
"""What a method that trains nothing learns from."""
TRAINING = "training interactions"
"""What a learner trained on the split's training histories learns from."""
VALIDATION_PICKS = "; the validation targets pick the epoch (never trained on)"
"""How the trained baselines use the validation interactions."""
TOOL_CANDIDATES = CONTRACT_CANDIDATES + " + tool notes"
"""ChainRec's and the router's CandidateRank: the contract's text with what the tools found."""
CHAINREC_HISTORY = "tools: last {chainrec_long_items} (long), {chainrec_short_items} (short)"
"""What ChainRec's (and the router's) user tools read of the visible history."""
PLANNER_TRAINING = "a planner trained on sampled users' last training interactions (the training world)"
"""What a learned ChainRec or router planner learns from (agents/chainrec/offline/training_env.py)."""


@dataclass(frozen=True)
class EvidenceUse:
    """One row of the fairness table: what a method sees of the user and the candidates, and what
    it learns from. `{knob}` in a text is replaced by the knob's value in the method's context."""

    history: str
    """Which of the visible history items it reads (its prompts, or its model's input)."""
    candidates: str = CONTRACT_CANDIDATES
    """What it sees of a candidate (`CONTRACT_CANDIDATES` for the evidence contract's text)."""
    instruction: bool = True
    """Whether the user's instruction reaches its ranker (under `use_instruction`)."""
    learns_from: str = NO_TRAINING
    """What it learns from before ranking (memories, pools, planners, model weights)."""

    def shows_text(self) -> bool:
        """Whether its candidates include the contract's description and reviews."""
        return TEXT_FIELDS in self.candidates

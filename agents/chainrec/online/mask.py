"""The feasibility mask, computed before every planner decision (a pure function).

Rules, in order (the first that applies names why an action is masked):
1. domain: a tool that needs a dataset field the dataset lacks is never feasible (AuthorPreference
   needs authors, GeoContext locations, Positive/NegativePreference ratings);
2. no repeats: a tool already in the trajectory is not feasible again;
3. budget: once `max_steps` tools ran, only CandidateRank is feasible (it is forced);
4. CandidateRank needs evidence: it is feasible only after at least one tool ran, unless no tool
   can run any more (then it is forced, so an episode always ends).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agents.chainrec.online.catalog import CANDIDATE_RANK, TOOLS

REASONS = {
    "domain": "the dataset has no {field}",
    "used": "already called",
    "budget": "step budget of {budget} spent",
    "evidence": "needs at least one evidence tool first",
}
"""How `mask_notes` words each rule."""


def feasibility(
    used: Sequence[str], max_steps: int, domain: Mapping[str, bool]
) -> tuple[dict[str, bool], dict[str, str]]:
    """(action -> feasible, action -> why it is masked) for a state where `used` tools already ran."""
    mask: dict[str, bool] = {}
    notes: dict[str, str] = {}
    spent = len(used) >= max_steps
    for spec in TOOLS:
        if spec.name == CANDIDATE_RANK:
            continue
        missing = [flag for flag in spec.requires if not domain.get(flag, False)]
        if missing:
            notes[spec.name] = REASONS["domain"].format(field=" or ".join(missing))
        elif spec.name in used:
            notes[spec.name] = REASONS["used"]
        elif spent:
            notes[spec.name] = REASONS["budget"].format(budget=max_steps)
        mask[spec.name] = spec.name not in notes
    any_tool = any(mask.values())
    mask[CANDIDATE_RANK] = bool(used) or not any_tool
    if not mask[CANDIDATE_RANK]:
        notes[CANDIDATE_RANK] = REASONS["evidence"]
    return mask, notes


def feasible_actions(mask: Mapping[str, bool]) -> list[str]:
    """The feasible actions in catalog order (CandidateRank last)."""
    return [spec.name for spec in TOOLS if mask.get(spec.name, False)]


def forced(mask: Mapping[str, bool]) -> bool:
    """True when CandidateRank is the only feasible action (no decision to make)."""
    return feasible_actions(mask) == [CANDIDATE_RANK]

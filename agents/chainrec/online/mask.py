"""The feasibility mask, computed before every planner decision (a pure function).

Rules, in order (the first that applies names why an action is masked):
1. domain: a tool that needs a dataset field the dataset lacks is never feasible (AuthorPreference
   needs authors, GeoContext locations, Positive/NegativePreference ratings); a method tool whose
   prerequisite is missing (the router: a MemRec memory graph, a trained AMEM4Rec pool) is never
   feasible either, its note saying what is missing and how to build it (`unavailable`);
2. no repeats: a tool already in the trajectory is not feasible again;
3. budget: once `max_steps` tools ran, only CandidateRank is feasible (it is forced);
4. CandidateRank needs evidence: it is feasible only after at least one tool ran, unless no tool
   can run any more (then it is forced, so an episode always ends).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agents.chainrec.online.catalog import CANDIDATE_RANK, TOOLS, Catalog

REASONS = {
    "domain": "the dataset has no {field}",
    "used": "already called",
    "budget": "step budget of {budget} spent",
    "evidence": "needs at least one evidence tool first",
}
"""How `mask_notes` words each rule."""


def feasibility(
    used: Sequence[str],
    max_steps: int,
    domain: Mapping[str, bool],
    catalog: Catalog = TOOLS,
    unavailable: Mapping[str, str] | None = None,
) -> tuple[dict[str, bool], dict[str, str]]:
    """(action -> feasible, action -> why it is masked) for a state where `used` tools already ran,
    over `catalog`'s actions; `unavailable` maps a tool that cannot run at all to the reason."""
    mask: dict[str, bool] = {}
    notes: dict[str, str] = {}
    spent = len(used) >= max_steps
    for spec in catalog:
        if spec.name == CANDIDATE_RANK:
            continue
        missing = [flag for flag in spec.requires if not domain.get(flag, False)]
        if missing:
            notes[spec.name] = REASONS["domain"].format(field=" or ".join(missing))
        elif unavailable and spec.name in unavailable:
            notes[spec.name] = unavailable[spec.name]
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


def feasible_actions(mask: Mapping[str, bool], catalog: Catalog = TOOLS) -> list[str]:
    """The feasible actions in catalog order (CandidateRank last)."""
    return [spec.name for spec in catalog if mask.get(spec.name, False)]


def forced(mask: Mapping[str, bool]) -> bool:
    """True when CandidateRank is the only feasible action (no decision to make)."""
    return [action for action, ok in mask.items() if ok] == [CANDIDATE_RANK]

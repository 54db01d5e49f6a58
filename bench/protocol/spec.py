"""What fixes a benchmark's inputs (`Protocol`) and one user's test query (`EvalCase`), with the
checks of the numbers a run is given; planning the cases is bench/protocol/plan.py."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from world.errors import ProtocolError

ALL_USERS = "all"
"""`--users all`: every eligible user (`Protocol.users` None)."""


@dataclass(frozen=True)
class Protocol:
    """Everything that fixes a benchmark's inputs (and so must match on resume)."""

    dataset: str
    """Dataset name or path."""
    candidates: int = 10
    """N: target + N-1 negatives."""
    seed: int = 0
    """Seeds user selection and candidate sampling."""
    scenario: str = "classic"
    """One of world.scenarios' `BENCH_SCENARIOS`."""
    users: int | None = 200
    """How many users to evaluate (all eligible ones if fewer); None (`--users all`): every eligible
    user, in user-id order, as a paper's "full test set" is evaluated."""
    llm: str = "heuristic"
    """The LLM backend label (heuristic = no LLM; agents use their fallbacks)."""
    mix_candidates: bool = False
    """When the dataset ships candidate pools: also evaluate users without one (uniform negatives)."""
    candidate_source: str = "auto"
    """auto: the dataset's pools where it ships them (not MIND's impressions), else uniform negatives;
    impressions: MIND's news shown beside the user's last click; retrieval: ARAG's recall stage's top
    N as retrieved; retrieval_negatives: the target and N−1 negatives drawn from the
    retrieval's top `retrieval_pool` (bench/protocol/retrieval_candidates.py)."""
    retrieval_pool: int = 0
    """retrieval_negatives: K, the top of the retrieval the negatives are drawn from (0: 5N; at
    least 5N)."""
    knobs: tuple[tuple[str, Any], ...] = ()
    """The run's `--set NAME=VALUE` knobs, parsed (bench/protocol/knob_settings.py), in the order given."""

    def as_dict(self) -> dict[str, object]:
        """The protocol as written to metrics.json and results.jsonl (`mix_candidates` only when
        set, `candidate_source` only when not auto, and the knobs as `set` only when given, so logs
        written before the options existed still resume, and a resumed run with other --set values
        is refused; a `retrieval` run says `missed_target: scores 0`, so a log written when a missed
        target was swapped in is refused too)."""
        fields = asdict(self)
        del fields["knobs"]
        if not self.mix_candidates:
            del fields["mix_candidates"]
        if self.candidate_source == "auto":
            del fields["candidate_source"]
        if not self.retrieval_pool:
            del fields["retrieval_pool"]
        if self.candidate_source == "retrieval":  # a log of the old swap-in rule is another protocol
            fields["missed_target"] = "scores 0"
        if self.knobs:
            fields["set"] = dict(self.knobs)
        return fields


@dataclass(frozen=True)
class EvalCase:
    """One user's test query."""

    user_id: str
    """The user."""
    target: str
    """The held-out item."""
    candidates: list[str]
    """Shuffled target + negatives."""
    recalled: bool | None = None
    """With a retrieval source: whether the retrieval's top N held the target (its recall@N is the
    share of such cases; with `retrieval` a missed target is not among the candidates); None for the
    other sources."""

    def request(self, scenario: str) -> dict[str, object]:
        """The `RecInput` a graph receives for this case."""
        return {"user_id": self.user_id, "candidates": self.candidates, "scenario": scenario}


def user_count(text: str) -> int | None:
    """`--users`: a positive count, or "all" (None: every eligible user); ProtocolError otherwise."""
    if text.strip().lower() == ALL_USERS:
        return None
    try:
        count = int(text)
    except ValueError:
        raise ProtocolError(f"--users must be a number of users or {ALL_USERS}, got {text!r}") from None
    if count < 1:
        raise ProtocolError(f"--users must be at least 1 (or {ALL_USERS}), got {count}")
    return count


def check_protocol(protocol: Protocol) -> None:
    """Refuse impossible numbers before any work starts."""
    if protocol.users is not None and protocol.users < 1:
        raise ProtocolError(f"--users must be at least 1 (or all), got {protocol.users}")
    if protocol.candidates < 2:
        raise ProtocolError(
            f"--candidates must be at least 2 (the target and a negative), got {protocol.candidates}"
        )
    if protocol.retrieval_pool < 0:
        raise ProtocolError(f"--retrieval-pool must be 0 (5N) or more, got {protocol.retrieval_pool}")
    if protocol.retrieval_pool and protocol.candidate_source != "retrieval_negatives":
        raise ProtocolError("--retrieval-pool applies to --candidate-source retrieval_negatives only")

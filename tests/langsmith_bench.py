"""What the LangSmith tests share: a short `recgraph bench` on ml-100k, the simulator backend, and the
warning lines a run prints."""

from __future__ import annotations

USERS = 2
"""Users per traced bench run."""
BENCH = ["bench", "--users", str(USERS), "--candidates", "10", "--seed", "0", "--concurrency", "2"]
SIM = ["--llm", "sim", "--llm-timeout", "30"]
"""The simulator with a timeout no busy machine reaches (no retries: one LLM run per agent)."""


def warnings_in(text: str) -> list[str]:
    """The `recgraph: warning:` lines of `text`."""
    return [line for line in text.splitlines() if line.startswith("recgraph: warning:")]

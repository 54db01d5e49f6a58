"""Reading and writing ARAG's blackboard posts.

The context summary and item ranker agents take their inputs from the blackboard, never
from side channels: S_user from the latest `user_understanding` post, the NLI judgments
from the `nli` posts (one batched post, or one per item), S_ctx from the latest
`context_summary` post. Only posts after the latest `recall` post count, so a thread that
is run again (with a checkpointer) does not mix in an earlier request's judgments.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from state.blackboard import BlackboardMessage

RECALL = "recall"
USER_UNDERSTANDING = "user_understanding"
NLI = "nli"
CONTEXT_SUMMARY = "context_summary"
ITEM_RANKER = "item_ranker"


def this_run(trace: Sequence[BlackboardMessage]) -> list[BlackboardMessage]:
    """The posts from the latest `recall` post on (all posts when there is none)."""
    starts = [i for i, message in enumerate(trace) if message["role"] == RECALL]
    return list(trace[starts[-1] :]) if starts else list(trace)


def latest_post(trace: Sequence[BlackboardMessage], role: str) -> BlackboardMessage | None:
    """The latest post of `role` in this run, if any."""
    found = [message for message in this_run(trace) if message["role"] == role]
    return found[-1] if found else None


def latest_text(trace: Sequence[BlackboardMessage], role: str) -> str | None:
    """The text of `latest_post(trace, role)` without its source tag, if any."""
    message = latest_post(trace, role)
    return untagged(message["content"]) if message is not None else None


def nli_content(scores: Mapping[str, float], justifications: Mapping[str, str], source: str) -> str:
    """An NLI post's content: JSON that people and the downstream agents can both read."""
    return json.dumps(
        {"source": source, "scores": dict(scores), "justifications": dict(justifications)},
        ensure_ascii=False,
    )


def read_nli(trace: Sequence[BlackboardMessage]) -> tuple[dict[str, float], dict[str, str]] | None:
    """All NLI judgments of this run (later posts win per item), or None when NLI did not run.
    Judgments are the JSON posts; NLI's other posts (a switched-off feature) are words."""
    posts = [m for m in this_run(trace) if m["role"] == NLI and m["content"].startswith("{")]
    if not posts:
        return None
    scores: dict[str, float] = {}
    justifications: dict[str, str] = {}
    for message in posts:
        data = json.loads(message["content"])
        scores.update({str(k): float(v) for k, v in data["scores"].items()})
        justifications.update({str(k): str(v) for k, v in data.get("justifications", {}).items()})
    return scores, justifications


SOURCE_TAGS = ("llm", "fallback", "heuristic")
"""Where a post's text came from (the `AgentUsage.source` values)."""


def tagged(source: str, text: str) -> str:
    """A text post marked with where it came from: `[llm] ...`."""
    return f"[{source}] {text}"


def untagged(text: str | None) -> str | None:
    """A post's text without its source tag."""
    if text is None:
        return None
    for source in SOURCE_TAGS:
        if text.startswith(f"[{source}] "):
            return text[len(source) + 3 :]
    return text

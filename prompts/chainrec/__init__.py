"""ChainRec's prompts, in our own words after the paper's structure: one shared frame for the tools of
the Tool Agent Library, the zero-shot planner and CandidateRank.

Everything a tool fetched from the environment is shown as quoted data: item lines are built from
what the environment tools returned (the `prompts.common` layout), user and review text and what
earlier tools wrote are JSON-quoted (`prompts.common.quote`), and the system message carries
`prompts.common.DATA_RULE`. Candidate
lists come last, under the shared "Candidates" header.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.prompts import ChatPromptTemplate

from prompts.common import CANDIDATES_HEADER, DATA_RULE, data_block, described_item
from prompts.common import quote as quote_text

TOOL_SYSTEM = (
    "You are one tool of a recommender's tool library, named {name}. Your job: {description} "
    "You read only the data the tool fetched for this episode and report what it shows as a few "
    "(key, value) facets, a confidence from 0 (the data says almost nothing) to 1 (the data is "
    "clear and plentiful) and a one- or two-sentence summary. " + DATA_RULE + " Reply with a JSON "
    "object only."
)

TOOL = ChatPromptTemplate.from_messages(
    [
        ("system", TOOL_SYSTEM),
        (
            "human",
            "{memory}{data}\n\n{instruction}",
        ),
    ]
)
"""A tool call: {name}, {description}, {memory} (what earlier tools found, or nothing), {data} (a
`<data>` block),
{instruction} (what to answer; for item tools it is followed by the candidates, inside the data)."""

USER_TOOL_ASK = (
    "Write the facets (short keys such as favourite_categories; values of a few words, naming "
    "categories and titles where they matter), the confidence and the summary. Leave 'items' out."
)
ITEM_TOOL_ASK = (
    "Write the facets and the summary about the candidate set as a whole, the confidence, and in "
    "'items' one entry per candidate: its 'item_id' (the id in square brackets), a 'score' from 0 "
    "(poor fit by this tool's evidence) to 1 (excellent fit) and a 'note' of a few words."
)

PLANNER_SYSTEM = (
    "You plan the evidence gathering of a recommender agent. An episode starts with only a user id "
    "and a set of candidate items; everything else must be fetched by tools, and each tool call "
    "costs a step. At every step you choose the one action that adds the most useful evidence for "
    "ranking the candidates, or CandidateRank to stop and rank when the evidence is enough. Choose "
    "only among the feasible actions. " + DATA_RULE + " Reply with a JSON object only."
)

PLANNER = ChatPromptTemplate.from_messages(
    [
        ("system", PLANNER_SYSTEM),
        (
            "human",
            "Episode: user {user}, {n_candidates} candidates. Steps used: "
            "{step} of {budget}.\n\nTool catalog:\n{catalog}\n\nWhat the memory holds so far:\n"
            "{memory}\n\nFeasible now: {feasible}\nNot feasible: {masked}\n\n"
            "Give 'action' (one feasible action name) and 'reason' (one sentence).",
        ),
    ]
)
"""The zero-shot planner: {user}, {n_candidates}, {step}, {budget}, {catalog}, {memory}, {feasible},
{masked}. No scenario tag: the planner's state is Eq. 2's S_t = (u, I_cand, M_t), and the TRL
exports (agents/chainrec/offline/export.py) are these very messages."""

RANK_SYSTEM = (
    "You are CandidateRank, the last step of a recommender agent: you order every candidate for "
    "one user using only the evidence the agent's tools collected. " + DATA_RULE + " Reply with a "
    "JSON object only."
)

RANK = ChatPromptTemplate.from_messages(
    [
        ("system", RANK_SYSTEM),
        (
            "human",
            "{data}\n\n"
            "Put every candidate in 'ranked' exactly once, best fit first, each with its 'item_id' "
            "(the id in square brackets) and a 'reason' of a few words citing the evidence.",
        ),
    ]
)
"""CandidateRank: {data} (the user-side memory and the candidate lines with the item tools' notes, as
one `<data>` block; see `rank_messages`)."""


def quote(text: str, max_chars: int = 400) -> str:
    """User-written text as a JSON string literal (cut), so it reads as data, not as instructions."""
    return quote_text(text, max_chars)


def _facts(row: Mapping[str, Any], keys: Iterable[str]) -> str:
    return " | ".join(f"{key} {row[key]}" for key in keys if row.get(key) not in (None, ""))


def record_line(row: Mapping[str, Any], max_chars: int = 200) -> str:
    """`[id] "Title" (year) | categories: "a", "b"` from what an environment tool returned (the
    `prompts.common` layout; the title is cut so the line stays near `max_chars`)."""
    year = row.get("year") or (row.get("attributes") or {}).get("year")
    categories = row.get("categories") or ()
    return described_item(row["item_id"], row["title"], year, categories, max(max_chars - 80, 24))


def history_block(rows: Sequence[Mapping[str, Any]]) -> str:
    """`get_user` interactions as item lines (newest first) with rating and date when known."""
    lines = []
    for row in rows:
        extra = _facts(row, ("rating", "date"))
        lines.append(record_line(row) + (f" | {extra}" if extra else ""))
    return "\n".join(lines) or "(no visible interactions)"


def review_block(reviews: Sequence[Mapping[str, Any]], titles: Mapping[str, str] | None = None) -> str:
    """`get_reviews` results, one per line: about which item, rating, date and the quoted text."""
    lines = []
    for review in reviews:
        about = f"on {quote(titles[review['item_id']], 80)}" if titles and review["item_id"] in titles else ""
        facts = _facts(review, ("rating", "date"))
        text = quote(review["text"]) if review.get("text") else "(no text)"
        lines.append("- " + " | ".join(p for p in (about, facts, text) if p))
    return "\n".join(lines) or "(none)"


def candidate_block(rows: Sequence[tuple[Mapping[str, Any], str, Sequence[str]]]) -> str:
    """The candidates under the shared header: `(get_item record, extra facts, quoted reviews)` each."""
    lines = [CANDIDATES_HEADER]
    for record, extra, reviews in rows:
        lines.append(record_line(record) + (f" | {extra}" if extra else ""))
        lines += [f"    review: {text}" for text in reviews]
    return "\n".join(lines)


def memory_digest(memory: Sequence[Mapping[str, Any]], with_facets: bool = True) -> str:
    """What earlier tools wrote: tool, confidence, summary (and facets), one block per entry."""
    blocks = []
    for entry in memory:
        head = f"- {entry['tool']} (confidence {float(entry['confidence']):.2f}): {quote(entry['summary'])}"
        shown = entry["facets"] if with_facets else []
        facets = "; ".join(f"{quote(f['key'], 60)}: {quote(f['value'])}" for f in shown)
        blocks.append(head + (f"\n  facets: {facets}" if facets else ""))
    return "\n".join(blocks)


def tool_messages(name: str, description: str, data: str, memory: str, item_tool: bool) -> list[BaseMessage]:
    """A tool call's messages; item tools see what earlier tools found about the user."""
    shown = f"What earlier tools found (context only):\n{memory}\n\n" if memory else ""
    return TOOL.format_messages(
        name=name,
        description=description,
        memory=shown,
        data=data_block(data),
        instruction=ITEM_TOOL_ASK if item_tool else USER_TOOL_ASK,
    )


def planner_messages(
    user: str,
    n_candidates: int,
    step: int,
    budget: int,
    catalog: str,
    memory: str,
    feasible: Sequence[str],
    masked: Mapping[str, str],
) -> list[BaseMessage]:
    """The zero-shot planner's messages."""
    return PLANNER.format_messages(
        user=user,
        n_candidates=n_candidates,
        step=step,
        budget=budget,
        catalog=catalog,
        memory=memory or "(nothing yet)",
        feasible=", ".join(feasible),
        masked="; ".join(f"{name} ({why})" for name, why in masked.items()) or "(none)",
    )


def rank_messages(user_evidence: str, candidates: str) -> list[BaseMessage]:
    """CandidateRank's messages."""
    evidence = f"Evidence about the user:\n{user_evidence or '(none collected)'}\n\n{candidates}"
    return RANK.format_messages(data=data_block(evidence))

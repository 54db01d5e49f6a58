"""The evidence contract: what every LLM method's prompts show of the user and the candidates.

One comparison is fair only when every method ranks the same candidates from the same evidence.
Every LLM ranker's prompt therefore takes these three things from here and nowhere else:

- **the candidates' text**: each candidate's item line (id, title, year, categories) and, where
  the dataset has them, its description and a sample of its training reviews (`world.item_reviews`)
  on indented lines below, every text quoted as data and cut to a bound. ARAG's paper calls this
  T(i) (4.2); every method sees the same T(i). `Context.item_text = "title"` withholds the
  description and reviews (title line only);
- **the instruction**: the request the caller passed (`RecInput.instruction`) or else the
  dataset's instruction for the user (InstructRec's), shown on one line above the candidates.
  `Context.use_instruction = False` withholds it;
- **the visible history**: the most recent `Context.history_items` items of the scenario's visible
  history (0: all of it). A method that shows less or more does so only through a knob of its own,
  listed in docs/benchmarking.md's fairness table (`bench.report.fairness`).

A title-only dataset without reviews or instructions gets exactly the item lines of
`prompts.common.item_line`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from prompts.common import CANDIDATES_HEADER, item_line, quote
from state.context import Context
from world.environment import Environment
from world.item_reviews import item_reviews

DESCRIPTION_CHARS = 300
"""Cap on a description in a prompt (characters, inside the quotes)."""
REVIEW_CHARS = 160
"""Cap on one review in a prompt."""
INSTRUCTION_CHARS = 400
"""Cap on the user's instruction in a prompt."""
REQUEST_LABEL = "The user's own request (data):"
"""What the instruction line starts with (the simulator and tests find it by this label)."""


def full_text(ctx: Context | None) -> bool:
    """Whether candidates show description and reviews (`item_text = "full"`, the default)."""
    return ctx is None or ctx.item_text == "full"


def item_text(env: Environment, item_id: str, ctx: Context | None = None, head: str | None = None) -> str:
    """The item's line (or `head`, a line already built for it) with, unless `ctx` withholds them,
    its description and its reviews on indented lines below."""
    lines = [head if head is not None else item_line(env.dataset, item_id)]
    if not full_text(ctx):
        return lines[0]
    description = env.dataset.items[item_id].description
    if description and description.strip():
        lines.append(f"    description: {quote(description, DESCRIPTION_CHARS)}")
    reviews = item_reviews(env, item_id)
    if reviews:
        lines.append("    reviews: " + ", ".join(quote(text, REVIEW_CHARS) for text in reviews))
    return "\n".join(lines)


def item_text_block(
    env: Environment,
    item_ids: Sequence[str],
    ctx: Context | None = None,
    notes: Mapping[str, str] | None = None,
    heads: Mapping[str, str] | None = None,
) -> str:
    """`item_text` of every id, one after the other; `notes` adds a method's own facts to an
    item's line (`[id] "Title" ... | <note>`), `heads` replaces an item's line with a method's own
    (AgentCF's `[id] "<item agent's memory>"`), the description and reviews still below it."""
    lines = []
    for item in item_ids:
        note = (notes or {}).get(item)
        head = (heads or {}).get(item) or (f"{item_line(env.dataset, item)} | {note}" if note else None)
        lines.append(item_text(env, item, ctx, head))
    return "\n".join(lines) or "(none)"


def instruction_for(
    env: Environment, user_id: str | None, given: str | None, ctx: Context | None
) -> str | None:
    """The instruction a prompt shows: the caller's (`given`) or else the dataset's for the user;
    None when there is none or `ctx.use_instruction` is off."""
    if ctx is not None and not ctx.use_instruction:
        return None
    text = given or (env.dataset.instructions.get(user_id) if user_id is not None else None)
    return text if text and text.strip() else None


def request_line(instruction: str | None) -> str:
    """`The user's own request (data): "..."`, or "" without an instruction."""
    return f"{REQUEST_LABEL} {quote(instruction, INSTRUCTION_CHARS)}" if instruction else ""


def candidates_evidence(
    env: Environment,
    item_ids: Sequence[str],
    ctx: Context | None = None,
    *,
    user_id: str | None = None,
    instruction: str | None = None,
    notes: Mapping[str, str] | None = None,
    use_instruction: bool = True,
) -> str:
    """The candidates as every LLM ranker shows them: the request line (when there is an
    instruction for `user_id` and `ctx` allows it), the shared header, then each candidate's text.
    `use_instruction=False` leaves the request line to another prompt of the same method (ARAG's
    NLI agent, MemRec's synthesis: their rankers show it)."""
    shown = instruction_for(env, user_id, instruction, ctx) if use_instruction else None
    request = request_line(shown)
    block = f"{CANDIDATES_HEADER}\n{item_text_block(env, item_ids, ctx, notes)}"
    return f"{request}\n\n{block}" if request else block


def shown_history(history: Sequence[str], ctx: Context | None, limit: int | None = None) -> list[str]:
    """The most recent `limit` (default `ctx.history_items`) items of the visible history; all of
    it when the limit is 0."""
    n = limit if limit is not None else (ctx.history_items if ctx is not None else 0)
    return list(history[-n:]) if n > 0 else list(history)

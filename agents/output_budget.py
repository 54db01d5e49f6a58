"""How many tokens each agent may answer with: one table, applied where every request is made
(agents/base.py), so no agent file sets its own budget.

A budget fits what the agent's answer takes in its paper (or, where the paper gives no figure, what
its answer schema allows: the ids, the bounded free-text fields, the JSON around them), with room to
spare: it is a ceiling, paid only for the tokens the model writes, so a tight one only adds
truncated answers. Where an answer lists one entry per candidate (a ranking, NLI judgments) or per
offered memory (MemRec's Stage W, AMEM4Rec's evolution), the budget grows with that count, read from
the request's JSON schema (`listed_entries`). The context decides how the table applies:
`output_budget="per_agent"` (the default) gives each agent `max(max_output_tokens, its budget)`,
so `max_output_tokens` (512) is the least any agent gets; `output_budget="flat"` gives every agent
`max_output_tokens` exactly (what every agent had before the table existed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from state.context import Context


@dataclass(frozen=True)
class Budget:
    """An agent's output budget: `max(least, base + per_entry * n)` tokens for an answer listing n
    entries (the context's `max_output_tokens` is a further floor in per-agent mode)."""

    base: int
    """Tokens of the answer's fixed part (its free-text fields and JSON)."""
    per_entry: int = 0
    """Tokens per listed entry (an id with its score, reason or rewritten memory); 0: a fixed answer."""
    least: int = 0
    """A floor whatever n is (e.g. the authors' own allowance)."""
    why: str = ""
    """Where the figures come from."""

    def tokens(self, entries: int) -> int:
        """The budget for an answer listing `entries` entries."""
        return max(self.least, self.base + self.per_entry * max(0, entries))

    def formula(self) -> str:
        """The budget as a short formula, n being the entries the answer lists."""
        text = f"{self.base} + {self.per_entry}·n" if self.per_entry else str(self.base)
        return f"max({self.least}, {text})" if self.least else text


BUDGETS: Mapping[str, Budget] = {
    # MemRec (Table 8, books-1k: average output per stage; the authors' code allows 1000 tokens)
    "synthesise": Budget(
        1000, why="Stage R answers ~400 tokens on average (Table 8); the authors allow 1000"
    ),
    "rerank": Budget(
        200,
        80,
        why="ReRank answers ~500 tokens at N=10 (Table 8: a score and a rationale per candidate); "
        "1000 at N=10, the authors' allowance, and 80 more per candidate",
    ),
    "propagate": Budget(
        350,
        220,
        least=1000,
        why="Stage W answers ~700 tokens (Table 8); the authors allow 1000; the user and item memories "
        "(<=600 characters each) and, per offered neighbour, its whole rewritten memory (<=600) and a "
        "reason (<=200): what the prompt lets a model write",
    ),
    "initialise": Budget(512, why="one memory of at most 600 characters"),
    "memrec_rule_writer": Budget(1500, why="a rule set as JSON (what `recgraph memrec rules` asked for)"),
    # ARAG (the paper gives no output lengths: the answer schemas' bounds, about twice over)
    "user_understanding": Budget(512, why="a preference summary paragraph"),
    "context_summary": Budget(512, why="a summary of the accepted items"),
    "nli": Budget(100, 60, why="a score and a justification (<=80 characters) per judged item"),
    "item_ranker": Budget(
        150, 60, why="the ranked ids, a reason (<=80 characters) per item and an explanation (<=300)"
    ),
    # AMEM4Rec (no output lengths in the paper: its fields' bound, amem4rec_memory_chars=300)
    "extract": Budget(512, why="a behaviour explanation and a pattern description, <=300 characters each"),
    "semantic_validator": Budget(200, 15, why="a link decision, the linked ids and a reason"),
    "evolve": Budget(150, 180, why="per linked memory: two rewritten fields (<=300 characters each)"),
    "rank": Budget(150, 20, why="the ranked candidate ids and a reason (<=240 characters)"),
    # ChainRec (its own per-candidate figures, which its agents already apply to their context)
    "candidate_rank": Budget(60, 30, why="agents/chainrec/online/candidate_rank.py ANSWER_TOKENS"),
    "chainrec_cot_trace": Budget(
        1500, why="a mined reasoning trace (what `recgraph chainrec mine` asked for)"
    ),
    # AgentCF (no output lengths in the paper: its memories' bounds, agentcf_user_chars/_item_chars)
    "user_agent": Budget(
        150, 20, why="the ranked ids and a reason; its two-item choice (an id and a sentence) fits the base"
    ),
    "user_reflection": Budget(512, why="one self-description of at most 1,100 characters (~280 tokens)"),
    "item_reflection": Budget(512, why="two item descriptions of at most 320 characters each"),
}
"""Agent (node) name -> budget. Agents not named here get `BASELINE_RANKER` when their name ends in
`_ranker` (the single-call LLM baselines' `<method>_ranker`), else `DEFAULT`."""

BASELINE_RANKER = Budget(
    150, 20, why="the single-call LLM baselines: the ranked ids and a reason (<=200 characters)"
)
"""The LLM baselines' rankers (`<method>_ranker`, agents/baselines/llm.py)."""

DEFAULT = Budget(0, why="no answer that needs more than the context's max_output_tokens")
"""Every other agent (ChainRec's planner and tool agents: its item tools raise their own context's cap
per candidate, agents/chainrec/online/tool_agent.py)."""


def budget_of(agent: str) -> Budget:
    """The table's entry for `agent`."""
    if agent in BUDGETS:
        return BUDGETS[agent]
    return BASELINE_RANKER if agent.endswith("_ranker") else DEFAULT


def _enums(node: Any) -> Iterator[list[Any]]:
    """Every `enum` list inside a JSON schema."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "enum" and isinstance(value, list):
                yield value
            else:
                yield from _enums(value)
    elif isinstance(node, list):
        for value in node:
            yield from _enums(value)


def listed_entries(json_schema: Mapping[str, Any] | None) -> int:
    """How many entries an answer to this request lists: the longest id enum of its JSON schema (the
    candidates of a ranker, the offered neighbours or memories of a writer); 0 without one."""
    return max((len(set(map(str, values))) for values in _enums(json_schema or {})), default=0)


def output_budget(agent: str, entries: int, context: Context) -> int:
    """The output-token cap of one request of `agent` listing `entries` entries under `context`."""
    if context.output_budget == "flat":
        return context.max_output_tokens
    return max(context.max_output_tokens, budget_of(agent).tokens(entries))

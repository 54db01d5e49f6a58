"""Model prices per million input and output tokens, from `prices.json` (with the date it was read)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PRICES = Path(__file__).with_name("prices.json")
"""The price table: USD per 1M input/output tokens per model, and when it was read."""


@dataclass(frozen=True)
class Price:
    """One model's price."""

    model: str
    """The table's model name that matched (longest prefix of the run's model)."""
    input: float
    """USD per million input tokens."""
    output: float
    """USD per million output tokens."""

    def dollars(self, input_tokens: float, output_tokens: float) -> float:
        """The cost of that many tokens."""
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


@cache
def price_table() -> tuple[str, dict[str, Price]]:
    """(the date the table was read, model -> price)."""
    data = json.loads(PRICES.read_text(encoding="utf-8"))
    table = {m: Price(m, p["input"], p["output"]) for m, p in data["usd_per_million"].items()}
    return data["read_on"], table


def price_for(llm: str) -> Price | None:
    """The price of a `--llm openai:<model>` backend (longest matching model-name prefix, as
    agents/usage.py matches "gpt-4o-mini-2024-07-18"), None when the table has no such model; local,
    sim and heuristic backends cost nothing and have no price either."""
    if not llm.startswith("openai:"):
        return None
    name = llm.removeprefix("openai:")
    _, table = price_table()
    matches = [key for key in table if name.startswith(key)]
    return table[max(matches, key=len)] if matches else None

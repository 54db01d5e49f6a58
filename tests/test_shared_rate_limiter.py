"""`--rps` governs the run: agents with different output budgets share one model and its rate limiter,
each request carrying its own budget."""

from __future__ import annotations

import asyncio

from langchain_core.messages import HumanMessage

from agents.base import AgentTask, _model_for
from agents.output_budget import listed_entries, output_budget
from state.context import Context
from state.schemas import RankedList

CONTEXT = Context(llm="openai:gpt-4o-mini", base_url="http://llm.test/v1", requests_per_second=2.0)


def task(agent: str, listed: int) -> AgentTask[RankedList]:
    """A ranking task of `agent` whose request schema lists `listed` candidate ids."""
    ids = [f"i{n}" for n in range(listed)]
    schema = {"type": "object", "properties": {"ranking": {"type": "array", "items": {"enum": ids}}}}
    return AgentTask(
        agent=agent,
        role="rec",
        messages=[HumanMessage(content="rank")],
        schema=RankedList,
        validate=lambda answer: (answer, []),
        fallback=lambda: RankedList(ranking=ids, reason="fallback"),
        json_schema=schema,
    )


def test_two_budgets_share_one_model_and_one_limiter() -> None:
    small, large = task("vanilla_llm_ranker", 2), task("vanilla_llm_ranker", 40)
    budgets = [output_budget(t.agent, listed_entries(t.json_schema), CONTEXT) for t in (small, large)]
    assert budgets[0] != budgets[1]

    async def on_a_loop() -> list:
        return [_model_for(small, CONTEXT), _model_for(large, CONTEXT)]

    synchronous = [_model_for(small, CONTEXT), _model_for(large, CONTEXT)]
    for first, second in (synchronous, asyncio.run(on_a_loop())):
        assert first.model is second.model
        assert first.model.rate_limiter is second.model.rate_limiter is not None
        sent = [m.request("json_schema", small.messages)[0].kwargs["max_tokens"] for m in (first, second)]
        assert sent == budgets
    assert synchronous[0].model.max_tokens is None  # no cap of its own: only the bound budget

"""Candidate order is a protocol choice: every ranking prompt lists the candidates in the order the
request gives them (the protocol's seeded shuffle), and the simulator's answers do not depend on
where a candidate stands in the prompt."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from graphs.registry import METHODS, get_graph
from llmsim.schema import arrange_ids, extract_candidate_ids, fill_schema
from tests.fakes import install

CANDIDATES = ["258", "100", "1", "181", "50", "7", "22", "9", "11", "12"]
"""A request's candidates in a deliberately unsorted order (ids and popularity both shuffled)."""

LLM_RANKERS = ["vanilla_llm", "recency_llm", "vanilla_rag", "arag", "memrec_no_write", "amem4rec", "chainrec"]
"""One registered method per family whose agents see the candidate list (MemRec without its
Stage W warm-up, which is a bench prepare step)."""


class SchemaFillingModel(BaseChatModel):
    """Answers any schema the way the loopback simulator does (llmsim.schema), recording prompts."""

    prompts: list[tuple[str, str]] = Field(default_factory=list)
    """(schema name, last user message) of every call."""

    @property
    def _llm_type(self) -> str:
        return "schema-filling"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        response_format = kwargs["extra_body"]["response_format"]["json_schema"]
        prompt = str(messages[-1].content)
        self.prompts.append((response_format["name"], prompt))
        ids = extract_candidate_ids(prompt)
        answer = fill_schema(response_format["schema"], ids, random.Random(len(self.prompts)))
        message = AIMessage(
            content=json.dumps(answer),
            usage_metadata={"input_tokens": 50, "output_tokens": 10, "total_tokens": 60},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


@pytest.mark.parametrize("method", LLM_RANKERS)
def test_every_candidate_list_in_a_prompt_keeps_the_request_order(method: str, monkeypatch) -> None:
    model = install(monkeypatch, SchemaFillingModel())
    context = METHODS[method].context(llm="openai:scripted")
    get_graph(method).invoke({"user_id": "1", "candidates": CANDIDATES}, context=context)
    listed = [(name, extract_candidate_ids(prompt)) for name, prompt in model.prompts]
    with_candidates = [(name, ids) for name, ids in listed if set(ids) == set(CANDIDATES)]
    assert with_candidates, f"{method}: no prompt listed the candidates ({[n for n, _ in listed]})"
    for name, ids in with_candidates:
        assert ids == CANDIDATES, f"{method}'s {name} prompt reorders the candidates"


def test_the_simulator_s_first_id_is_uniform_over_prompt_positions() -> None:
    """Over many answers, each prompt position comes first about 1/N of the time (the simulator's
    shuffle never favours the first or last listed candidate)."""
    ids = [str(i) for i in range(10)]
    firsts = Counter(ids.index(arrange_ids(ids, random.Random(seed))[0]) for seed in range(20_000))
    assert set(firsts) == set(range(10))
    assert all(1_700 <= count <= 2_300 for count in firsts.values()), firsts

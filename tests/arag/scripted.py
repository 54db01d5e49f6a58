"""What the ARAG tests share: the request, an OpenAI-backend context, the blackboard's posters, and a
model scripted per agent schema."""

from __future__ import annotations

import json

from langchain_core.messages import BaseMessage

from state.arag.context import AragContext
from tests.fakes import SchemaRoutedModel

CANDIDATES = ["50", "181", "1", "2", "3", "100"]
REQUEST = {"user_id": "1", "candidates": CANDIDATES}
LLM = AragContext(llm="openai:gpt-4o-mini", llm_backoff=0.0, llm_retries=1)
"""An OpenAI-backend context with one retry and no backoff (the model is installed in-process)."""


def roles(output: dict) -> list[str]:
    """The blackboard's posters, in order."""
    return [message["role"] for message in output["trace"]]


NLI_ANSWER = {"50": 9.0, "181": 14.0, "1": 2.0, "2": 7.0, "3": 1.0}  # "100" left out, 14 clipped
LLM_RANKING = ["3", "100", "2", "1", "181", "50"]


def scripted_model() -> SchemaRoutedModel:
    """A model answering each ARAG agent by its schema (batched and per-item NLI, the summary, the
    ranking), with a ghost judgment, a duplicate and a missing item to repair."""
    judgments = [{"item_id": i, "score": s, "justification": f"why {i}"} for i, s in NLI_ANSWER.items()]
    judgments.append({"item_id": "ghost", "score": 5, "justification": "?"})

    def per_item(messages: list[BaseMessage]) -> str:
        item = str(messages[-1].content).split("Candidates (id in square brackets):\n[")[1].split("]")[0]
        return json.dumps({"item_id": item, "score": NLI_ANSWER.get(item, 0.0), "justification": "one"})

    return SchemaRoutedModel(
        answers={
            "UserSummary": json.dumps(
                {"long_term": "Loves space operas.", "session_intent": "Wants comedy."}
            ),
            "NliJudgments": json.dumps({"judgments": judgments}),
            "NliJudgment": per_item,
            "ContextSummary": json.dumps({"summary": "Sci-fi classics with a comic streak."}),
            "ExplainedRanking": json.dumps(
                {
                    "ranking": [*LLM_RANKING[:-1], "3"],  # a duplicate, and "50" missing
                    "rationales": [{"item_id": "3", "reason": "funny"}, {"item_id": "zzz", "reason": "?"}],
                    "explanation": "Comedy first.",
                }
            ),
        }
    )

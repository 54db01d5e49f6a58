"""Fixtures for the AgentCF tests: the shape catalogs of tests/conftest.py, a catalog with a planted
item only held-out interactions hold, and a deterministic stand-in LLM for AgentCF's four agents."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

PLANTED = "99"
"""The planted item: only validation and test interactions hold it."""
PLANTED_TITLE = "Zanzibar Lighthouse Keeper"


class AgentModel(BaseChatModel):
    """Answers AgentCF's agents by the requested schema, deterministically from the prompt: the
    choice picks by a hash of the prompt, reflections write texts that name that hash, the ranker
    returns the candidates reversed (or only the first `partial` of them when set)."""

    received: list[tuple[str, list[BaseMessage]]] = Field(default_factory=list)
    """(schema name, messages) of every call."""
    partial: int = 0
    """When > 0, rankings list only this many ids (validation appends the rest)."""

    @property
    def _llm_type(self) -> str:
        return "agentcf-fake"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        spec = kwargs["extra_body"]["response_format"]["json_schema"]
        self.received.append((spec["name"], list(messages)))
        prompt = str(messages[-1].content)
        digest = int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 1000
        properties = spec["schema"]["properties"]
        if "choice" in properties:
            ids = properties["choice"]["enum"]
            answer = {"choice": ids[digest % 2], "explanation": f"reason {digest}"}
        elif "self_description" in properties:
            answer = {"self_description": f"I like pattern {digest}. I dislike pattern {digest + 1}."}
        elif "chosen_description" in properties:
            answer = {
                "chosen_description": f"suits users who like pattern {digest}",
                "rejected_description": f"passed over by users who like pattern {digest}",
            }
        else:
            ids = list(reversed(properties["ranking"]["items"]["enum"]))
            answer = {"ranking": ids[: self.partial] if self.partial else ids, "reason": "reversed"}
        message = AIMessage(
            content=json.dumps(answer),
            usage_metadata={"input_tokens": 40, "output_tokens": 10, "total_tokens": 50},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def prompts(self) -> list[str]:
        """Every prompt's text (all messages), in call order."""
        return ["\n".join(str(m.content) for m in messages) for _, messages in self.received]


def write_planted(folder: Path) -> Path:
    """Six users; item 99 is the validation item of user a and the test item of users b and c, never
    a training interaction."""
    folder.mkdir(parents=True, exist_ok=True)
    items = [
        ("1", "Moonlight Harbor", "Drama Romance"), ("2", "Iron Comet", "Action Sci-Fi"),
        ("3", "Laughing Gas", "Comedy"), ("4", "The Quiet Orchard", "Drama"),
        ("5", "Starfall Legion", "Action War"), ("6", "Paper Hearts", "Comedy Romance"),
        ("7", "Dust and Thunder", "Western"), ("8", "Night Shift Blues", "Drama Crime"),
        (PLANTED, PLANTED_TITLE, "Mystery"),
    ]  # fmt: skip
    histories = {
        "a": ["1", "4", "8", "6", PLANTED, "2"],
        "b": ["2", "5", "3", "7", "1", PLANTED],
        "c": ["3", "6", "1", "4", "8", PLANTED],
        "d": ["7", "2", "5", "8", "3", "6"],
        "e": ["6", "1", "3", "4", "5", "7"],
        "f": ["8", "4", "1", "2", "6", "3"],
    }
    header = "item_id:token\tmovie_title:token_seq\tclass:token_seq"
    (folder / "planted.item").write_text("\n".join([header, *("\t".join(r) for r in items)]) + "\n")
    rows = ["user_id:token\titem_id:token\ttimestamp:float"]
    rows += [f"{u}\t{i}\t{100 * (n + 1)}" for u, seq in histories.items() for n, i in enumerate(seq)]
    (folder / "planted.inter").write_text("\n".join(rows) + "\n")
    return folder


@pytest.fixture
def planted_dataset(tmp_path: Path) -> str:
    """The planted catalog's path (see `write_planted`)."""
    return str(write_planted(tmp_path / "planted"))


@pytest.fixture
def shape_dataset(tmp_path: Path, write_shape: Callable[..., Path]) -> str:
    """The fourteen-item `full` shape catalog (seven users, six training items each)."""
    return str(write_shape(tmp_path / "full", "full"))


@pytest.fixture(autouse=True)
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test trains into its own empty RECGRAPH_HOME."""
    home = tmp_path / "home"
    monkeypatch.setenv("RECGRAPH_HOME", str(home))
    return home

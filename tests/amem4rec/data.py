"""Small datasets for the AMEM4Rec tests, written on the fly (RecBole atomic files)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

ITEMS = [
    ("1", "Moonlight Harbor", "1994", "Drama Romance"),
    ("2", "Iron Comet", "1986", "Action Sci-Fi"),
    ("3", "Laughing Gas", "1991", "Comedy"),
    ("4", "The Quiet Orchard", "1997", "Drama"),
    ("5", "Starfall Legion", "1995", "Action Sci-Fi War"),
    ("6", "Paper Hearts", "1999", "Comedy Romance"),
    ("7", "Dust and Thunder", "1968", "Western"),
    ("8", "Night Shift Blues", "1993", "Drama Crime"),
    ("9", "Galaxy Drifters", "1980", "Adventure Sci-Fi"),
    ("10", "Holiday Mixup", "1996", "Comedy"),
    ("11", "Silent River", "1992", "Drama Thriller"),
    ("12", "Robot Rebellion", "1998", "Action Sci-Fi"),
]
# user -> items in time order; the last two are the validation and test interactions.
HISTORIES = {
    "a": ["1", "4", "8", "11", "6", "4", "2", "9"],
    "b": ["2", "5", "12", "9", "2", "3", "1", "7"],
    "c": ["3", "10", "6", "3", "1", "4", "12", "5"],
    "d": ["7", "2", "5", "9", "12", "8", "11", "10"],
    "e": ["6", "1", "11", "4", "3", "10", "7", "2"],
    "f": ["8", "11", "1", "4", "5", "2", "6", "3"],
}


def write_dataset(folder: Path, name: str = "amem", categories: bool = True) -> Path:
    """Write the dataset (with or without categories: titles-only) and return its folder."""
    folder.mkdir(parents=True, exist_ok=True)
    if categories:
        header = "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq"
        rows = ["\t".join(row) for row in ITEMS]
    else:
        header = "item_id:token\tmovie_title:token_seq"
        rows = [f"{item}\t{title}" for item, title, _, _ in ITEMS]
    (folder / f"{name}.item").write_text("\n".join([header, *rows]) + "\n")
    inter = ["user_id:token\titem_id:token\trating:float\ttimestamp:float"]
    for user, items in HISTORIES.items():
        inter += [f"{user}\t{item}\t4\t{100 * (n + 1)}" for n, item in enumerate(items)]
    (folder / f"{name}.inter").write_text("\n".join(inter) + "\n")
    return folder


PATTERNS = [
    ("Drawn to serious character dramas.", "Stays with dramas for several steps."),
    ("Drawn to serious character dramas.", "Stays with dramas for several steps."),
    ("Prefers fast action and science fiction.", "Moves from action to science fiction."),
    ("Enjoys light comedies and romance.", "Alternates comedy and romance."),
    ("Explores older westerns and adventures.", "Jumps between eras and genres."),
]
"""What `PatternModel` extracts, chosen by a hash of the window's prompt (repeats on purpose)."""


class PatternModel(BaseChatModel):
    """A deterministic stand-in LLM: the answer depends only on the prompt. Extraction picks one of
    `PATTERNS`; the linker links every offered memory; the evolver refines the first linked memory;
    the ranker returns the candidates in reverse order."""

    received: list[list[BaseMessage]] = Field(default_factory=list)
    """Every call's messages."""

    @property
    def _llm_type(self) -> str:
        return "pattern"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.received.append(list(messages))
        prompt = str(messages[-1].content)
        schema = kwargs["extra_body"]["response_format"]["json_schema"]["schema"]
        properties = schema["properties"]
        ids = [line[1 : line.index("]")] for line in prompt.splitlines() if line.startswith("[")]
        digest = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
        if "linked_thought_ids" in properties:
            answer = {"should_link": True, "linked_thought_ids": ids, "reasoning": "shared tendency"}
        elif "updates" in properties:
            first = properties["updates"]["items"]["properties"]["thought_id"]["enum"][0]
            answer = {
                "should_evolve": True,
                "updates": [
                    {
                        "thought_id": first,
                        "behavior_explanation": f"Refined tendency {digest % 97}.",
                        "pattern_description": None,
                        "reasoning": "reinforced",
                    }
                ],
            }
        elif "ranked_item_ids" in properties:
            candidates = properties["ranked_item_ids"]["items"]["enum"]
            answer = {"ranked_item_ids": list(reversed(candidates)), "reasoning": "recent first"}
        else:
            behavior, pattern = PATTERNS[digest % len(PATTERNS)]
            answer = {"behavior_explanation": behavior, "pattern_description": pattern}
        message = AIMessage(
            content=json.dumps(answer),
            usage_metadata={"input_tokens": 50, "output_tokens": 10, "total_tokens": 60},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

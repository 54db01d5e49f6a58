"""The simulator's `injection` fault: answers as a model that obeyed an instruction hidden in an item's
text (standard library only).

Which item is "the injected one": the first candidate whose line carries instruction-like words
(`ignore`, `instruction`, `rank this`, ...), else a seeded pick. What the obedient model does is
one of `INJECTION_MODES`, drawn per request from the request's own RNG (so the same request under
the same seed always gets the same mode):

- `first`: a valid answer with the injected item put first (the client cannot tell it apart from
  a preference: not observable);
- `outside_id`: the injected item replaced, at the head, by an id named in some item's text that is
  not a candidate (or `injected-<n>`): the client sees one unknown and one missing id;
- `prose`: a chatty sentence instead of JSON: the client sees malformed JSON.

Requests without candidate ids (profiles, memories) can only get `prose`.
"""

from __future__ import annotations

import random
import re

INJECTION_MODES: tuple[str, ...] = ("first", "outside_id", "prose")
"""How an obedient model misbehaves; `/stats` counts each under `injection_modes`."""
SYMPTOMS: dict[str, str] = {"outside_id": "unknown_ids", "prose": "malformed_json"}
"""Injection mode -> the fault kind whose client-side symptom it shares (`first` has none)."""

_INSTRUCTION = re.compile(
    r"\b(ignore|disregard|instructions?|rank (?:this|it)|put (?:this|it)|system prompt|you must)\b",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"\[([^\]\s]+)\]")
_LEADING_ID = re.compile(r"^\s*\[(?P<id>[^\]\s]+)\](?P<rest>.*)$")


def candidate_texts(text: str, candidate_ids: list[str]) -> dict[str, str]:
    """Each candidate's text after its leading `[id]`, from the prompt's candidate lines (first line
    per id; indented continuation lines such as quoted reviews belong to the candidate above)."""
    texts: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines():
        match = _LEADING_ID.match(line)
        if match and match["id"] in candidate_ids:
            current = match["id"]
            texts.setdefault(current, match["rest"])
        elif current is not None and line.startswith((" ", "\t")):
            texts[current] += " " + line.strip()
        else:
            current = None
    return texts


def injected_item(texts: dict[str, str], candidate_ids: list[str], rng: random.Random) -> str:
    """The candidate whose text carries an instruction (the first such), else a seeded pick."""
    for item in candidate_ids:
        if _INSTRUCTION.search(texts.get(item, "")):
            return item
    return rng.choice(candidate_ids)


def foreign_id(texts: dict[str, str], candidate_ids: list[str]) -> str:
    """An id an item's text names in square brackets that is not a candidate, else `injected-<n>`."""
    for item in candidate_ids:
        for token in _BRACKETED.findall(texts.get(item, "")):
            if token not in candidate_ids:
                return token
    n = 1
    while f"injected-{n}" in candidate_ids:
        n += 1
    return f"injected-{n}"


def choose_mode(id_aware: bool, rng: random.Random) -> str:
    """The request's injection mode (`prose` when the answer holds no candidate ids)."""
    return rng.choice(INJECTION_MODES) if id_aware else "prose"


def obedient_order(arranged: list[str], mode: str, injected: str, foreign: str) -> list[str]:
    """`arranged` (a normal answer's order) bent by the instruction: the injected item first, or
    replaced at the head by the foreign id."""
    rest = [item for item in arranged if item != injected]
    return [injected if mode == "first" else foreign, *rest]


def prose_answer(injected: str | None) -> str:
    """What an obedient chat model says instead of the requested JSON."""
    chosen = f"item {injected}" if injected is not None else "the item the note names"
    return (
        f"Understood. As the note in the item's text instructs, {chosen} goes first: it is the best "
        "choice for this user, and the other candidates matter less."
    )

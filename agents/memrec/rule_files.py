"""MemRec's curation rule sets as files: the shipped ones by name, a JSON file or a dict validated
into a `RuleSet` (one line naming the rule and the problem), and the JSON Schema LM_Mem writes to."""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agents.memrec.rules import RuleSet, RuleSetError


def _problem(error: ValidationError, raw: Mapping[str, Any]) -> str:
    """Turn pydantic's first error into 'rule 'id' (index i): where: what'."""
    first = error.errors()[0]
    loc, msg = list(first["loc"]), first["msg"].removeprefix("Value error, ")
    rules = raw.get("rules") if isinstance(raw.get("rules"), list) else []
    if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int):
        index = loc[1]
        rule = rules[index] if index < len(rules) else None
        rid = rule.get("id") if isinstance(rule, Mapping) else None
        where = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in loc[2:]).replace(".[", "[")
        return f"rule {rid!r} (index {index}): {where or 'rule'}: {msg}"
    return f"{'.'.join(map(str, loc)) or 'rule set'}: {msg}"


RULESET_DIR = "rulesets"
"""The shipped rule sets' folder, beside this module."""


def shipped_rule_sets() -> list[str]:
    """Names of the rule sets shipped with recgraph (books, generic, goodreads, movietv, yelp)."""
    folder = resources.files(__package__ or "agents.memrec") / RULESET_DIR
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def load_rule_set(source: str | Path | Mapping[str, Any]) -> RuleSet:
    """Validate a rule set from a dict, a JSON file path, or a shipped name; raises `RuleSetError`."""
    where = ""
    if not isinstance(source, Mapping):
        path = Path(source)
        if not path.is_file() and str(source) in shipped_rule_sets():
            path = Path(str(resources.files(__package__ or "agents.memrec") / RULESET_DIR / f"{source}.json"))
        if not path.is_file():
            raise RuleSetError(f"no rule set {str(source)!r}: not a file nor one of {shipped_rule_sets()}")
        where = f"{path}: "
        try:
            source = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise RuleSetError(f"{where}not valid JSON ({error})") from error
        if not isinstance(source, Mapping):
            raise RuleSetError(f"{where}a rule set is a JSON object, got {type(source).__name__}")
    try:
        return RuleSet.model_validate(dict(source))
    except ValidationError as error:
        raise RuleSetError(where + _problem(error, source)) from error


def rule_set_schema() -> dict[str, Any]:
    """The JSON Schema of a rule set (what LM_Mem is asked to produce)."""
    return RuleSet.model_json_schema()

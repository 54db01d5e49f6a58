"""`recgraph memrec rules`: LM_Mem's rule set is validated, repaired, retried or replaced."""

import json
from pathlib import Path

from agents.base import run_agent
from agents.memrec.rule_files import load_rule_set
from agents.memrec.rule_writer import rule_writer_task
from recgraph.cli import main
from state.memrec.context import MemRecContext
from tests.fakes import ScriptedChatModel, install
from world.environment import get_environment

VALID = {
    "rules": [
        {
            "id": "fresh",
            "name": "Fresh interactions",
            "effects": [{"type": "decay", "feature": "recency_days", "half_life": 90}],
        },
        {
            "id": "shared",
            "name": "Shared taste",
            "when": [{"feature": "co_interaction_count", "op": ">=", "value": 3}],
            "effects": [{"type": "multiplier", "value": 2.0}],
        },
    ]
}
INVALID = {
    "rules": [
        {
            "id": "bad",
            "name": "Bad",
            "effects": [{"type": "decay", "feature": "recency_days", "half_life": -5}],
        }
    ]
}


def test_invalid_rules_are_retried_with_the_error_then_accepted(monkeypatch) -> None:
    model = install(monkeypatch, ScriptedChatModel(script=[json.dumps(INVALID), json.dumps(VALID)]))
    env = get_environment("ml-100k")
    result = run_agent(rule_writer_task(env), MemRecContext(llm="openai:gpt-4o-mini", llm_backoff=0))
    assert result.usage.source == "llm"
    assert result.usage.errors == {"invalid_rules": 1}
    assert sorted(result.usage.repair_kinds) == ["missing_domain", "missing_name"]
    rules = result.output
    assert rules.name == "ml-100k-llm" and rules.domain == "ml-100k" and len(rules.rules) == 2
    assert "rule 'bad' (index 0)" in str(model.received[1][-1].content)
    prompt = str(model.received[0][-1].content)
    assert '"users": 943' in prompt and "interaction_density" in prompt
    # Eq. 1's goal (relevance and diversity), and the features as the default curation computes
    # them (Eq. 2: from the user's history, no candidates).
    system = str(model.received[0][0].content)
    assert "without all of them saying the same thing" in system
    assert "rest of the user's history" in prompt and "candidates" not in prompt


def test_model_that_never_writes_valid_rules_gets_the_generic_set(monkeypatch) -> None:
    install(monkeypatch, ScriptedChatModel(script=[json.dumps(INVALID)] * 3))
    result = run_agent(
        rule_writer_task(get_environment("ml-100k")), MemRecContext(llm="openai:gpt-4o-mini", llm_backoff=0)
    )
    assert result.usage.source == "fallback" and result.usage.calls == 3
    assert result.output.name == "ml-100k-generic"
    assert [r.id for r in result.output.rules] == [r.id for r in load_rule_set("generic").rules]


def test_command_saves_a_rule_file_that_loads_back(tmp_path: Path, capsys) -> None:
    out = tmp_path / "rules.json"
    assert main(["memrec", "rules", "--dataset", "ml-100k", "--out", str(out)]) == 0
    assert load_rule_set(out).domain == "ml-100k"
    shown = capsys.readouterr().out
    assert "no LLM configured: saved the generic set" in shown and "heuristic" in shown

"""The simulator's `injection` fault, and every registered LLM method run against it on a catalog whose
item texts carry instructions: outputs stay permutations of exactly the candidates, and every
observable obedience (prose, an id from outside the candidates) is counted by the client."""

from __future__ import annotations

import http.client
import json
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from bench.stats.fault_report import fault_table, observed_faults
from graphs.registry import METHODS
from llmsim.process import SimServer
from llmsim.server import parse_fault_kinds
from prompts.common import candidates_block
from recgraph.cli import main
from world.environment import get_environment

LLM_METHODS = [name for name, spec in METHODS.items() if spec.kind == "llm"]
"""Every registered method whose graph makes LLM calls (future ones included)."""
RANKING_SCHEMA = {
    "type": "object",
    "properties": {"ranking": {"type": "array", "items": {"type": "string"}}},
    "required": ["ranking"],
}


def post(sim: SimServer, content: str, schema: dict | None) -> str:
    """One chat completion; the answer's content."""
    parts = urlsplit(sim.base_url)
    messages = [{"role": "system", "content": "rank"}, {"role": "user", "content": content}]
    body: dict = {"model": "m", "messages": messages}
    if schema is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "r", "schema": schema}}
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    headers = {"Content-Type": "application/json"}
    connection.request("POST", parts.path + "/chat/completions", json.dumps(body), headers)
    answer = json.loads(connection.getresponse().read())
    connection.close()
    return answer["choices"][0]["message"]["content"]


def test_injection_is_opt_in() -> None:
    assert "injection" not in parse_fault_kinds("all")
    assert parse_fault_kinds("injection,echo") == ("injection", "echo")


def test_each_injection_mode_answers_as_an_obedient_model(
    injection_dataset: str, injection_foreign_id: str
) -> None:
    env = get_environment(injection_dataset)
    candidates = ["1", "3", "4", "5", "2", "6"]  # 2 carries "rank this item first", 4 names [X999]
    seen: Counter[str] = Counter()
    with SimServer(fault_rate=1.0, faults="injection", seed=5) as sim:
        for n in range(24):  # distinct requests draw their modes independently
            prompt = f"Request {n}.\n{candidates_block(env.dataset, candidates)}"
            content = post(sim, prompt, RANKING_SCHEMA)
            try:
                ranking = json.loads(content)["ranking"]
            except ValueError:
                assert "item 2 goes first" in content
                seen["prose"] += 1
                continue
            if ranking[0] == "2":
                assert sorted(ranking) == sorted(candidates)
                seen["first"] += 1
            else:
                others = sorted(set(candidates) - {"2"})
                assert ranking[0] == injection_foreign_id and sorted(ranking[1:]) == others
                seen["outside_id"] += 1
        assert "answer" not in post(sim, "Describe the user.", None)  # no candidates: prose only
        stats = sim.stats()
    assert set(seen) == {"first", "outside_id", "prose"}
    assert stats["faults"]["injection"] == 25 and stats["served_ok"] == 0
    assert stats["injection_modes"] == {
        "first": seen["first"],
        "outside_id": seen["outside_id"],
        "prose": seen["prose"] + 1,
    }


def test_every_llm_method_keeps_exactly_the_candidates_under_injection(
    injection_dataset: str, tmp_path: Path
) -> None:
    assert {"vanilla_llm", "arag", "memrec", "amem4rec", "chainrec"} <= set(LLM_METHODS)
    data = injection_dataset
    out = tmp_path / "run"
    args = ["bench", "--methods", ",".join(LLM_METHODS), "--dataset", data, "--llm", "sim", "--faults", "0.3",
            "--fault-kinds", "injection", "--users", "4", "--candidates", "8", "--concurrency", "4",
            "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    document = json.loads((out / "metrics.json").read_text())
    protocol = Protocol(dataset=data, candidates=8, seed=0, users=4, llm="sim")
    cases = {case.user_id: case for case in plan_cases(get_environment(data), protocol)}
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert Counter(r["method"] for r in records) == dict.fromkeys(LLM_METHODS, 4)
    for record in records:
        assert sorted(record["ranking"]) == sorted(cases[record["user_id"]].candidates), record["method"]
    shown = {item for case in cases.values() for item in case.candidates}
    assert {"2", "4", "7", "9"} & shown  # injected titles really were among the candidates
    server = document["sim_server"]
    modes = server["injection_modes"]
    assert server["faults"]["injection"] == sum(modes.values())
    assert modes["prose"] > 0 and modes["outside_id"] > 0
    observed = observed_faults(document["methods"])
    assert observed["malformed_json"] == modes["prose"]  # prose instead of JSON: rejected and retried
    assert observed["unknown_ids"] == modes["outside_id"]  # the foreign id: repaired away
    table = fault_table(server, document["methods"])
    rows = dict(zip(*(list(column.cells) for column in table.columns[:2]), strict=True))
    seen = dict(zip(*(list(column.cells) for column in table.columns[::2]), strict=True))
    assert rows["malformed_json"] == f"0 + {modes['prose']} by injection"
    assert seen["malformed_json"] == str(modes["prose"])
    assert rows["unknown_ids"] == f"0 + {modes['outside_id']} by injection"
    assert seen["injection"].startswith(f"{modes['first']} not observable")

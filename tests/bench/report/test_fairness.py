"""One protocol, the same evidence: every registered LLM method's prompts, as sent under `--llm sim`
and captured from its LangSmith trace (tests/langsmith_stub.py), show each candidate's description
and review and the user's instruction, unless the fairness table (bench/report/fairness.py, the methods'
`EvidenceUse` declarations) says the method withholds them; and the documented table is the
generated one."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.report.fairness import (
    FAIRNESS_BEGIN,
    TITLE_ONLY,
    documented_table,
    fairness_row,
    fairness_table,
    shows_instruction,
    shows_text,
)
from graphs.registry import METHODS
from recgraph.cli import main
from state.context import Context
from tests.langsmith_stub import LangSmithStub

LLM_METHODS = [name for name, spec in METHODS.items() if spec.kind == "llm"]
"""Every registered method with an LLM ranker (future ones included)."""
DOCS = Path(__file__).resolve().parents[3] / "docs" / "benchmarking.md"
NAME = "instructrec-fair"
"""An InstructRec-format catalog (MemRec's converter's files) with descriptions, reviews and
instructions: the three kinds of evidence the contract shows."""
CONTRACT_TEXT = re.compile(r"(description|reviews): \\+\"(Descmark|Reviewmark)")
"""The contract's description or review line as it appears in a traced prompt (JSON-escaped)."""
ITEMS = 14
USERS = {f"u{n}": [(n * 3 + k) % ITEMS for k in range(8)] for n in range(6)}
"""user -> items in time order (the last two: validation and test)."""


def description(item: int) -> str:
    return f"Descmark {item} tells of a lighthouse keeper"


def review(user: str, item: int) -> str:
    return f"Reviewmark {user} {item} liked the pacing"


def instruction(user: str) -> str:
    return f"Askmark {user} wants quiet seaside stories"


def write_catalog(folder: Path) -> Path:
    """`<NAME>.meta/.inter/.instruction/.text` as MemRec's converter writes them (tab-separated)."""
    folder.mkdir(parents=True)
    rows = (f"{i}\tB{i}\tTitle {i}\t{description(i)}" for i in range(ITEMS))
    meta = ["item_id\tasin\ttitle\tdescription", *rows]
    inter, text = ["user_id\titem_id\trating\ttimestamp"], ["user_id\titem_id\treview_text"]
    for user, items in USERS.items():
        for n, item in enumerate(items):
            inter.append(f"{user}\t{item}\t5.0\t{1000 * (n + 1)}")
            text.append(f"{user}\t{item}\t{review(user, item)}")
    asks = ["user_id\tinstruction\tpersona", *(f"{user}\t{instruction(user)}\tnan" for user in USERS)]
    for suffix, lines in (("meta", meta), ("inter", inter), ("instruction", asks), ("text", text)):
        (folder / f"{NAME}.{suffix}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def walk(run: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield run
    for child in run["children"]:
        yield from walk(child)


def traced_prompts(root: Path, methods: list[str], *extra: str) -> dict[tuple[str, str], str]:
    """(method, user) -> every prompt its LLM runs sent, joined, from a `--llm sim --trace` run of
    `methods` on the catalog (`extra`: more bench options); plus the run's results."""
    data, out = write_catalog(root / NAME), root / "run"
    with LangSmithStub() as stub, pytest.MonkeyPatch.context() as env:
        env.setenv("LANGSMITH_ENDPOINT", stub.url)
        env.setenv("LANGSMITH_API_KEY", "dummy")
        argv = [
            "bench", "--methods", ",".join(methods), "--dataset", str(data), "--users", "2",
            "--candidates", "5", "--llm", "sim", "--llm-timeout", "30", "--out", str(out), "--trace", *extra,
        ]  # fmt: skip
        assert main(argv) == 0
        found: dict[tuple[str, str], str] = {}
        for run in stub.roots():
            if run["name"] not in LLM_METHODS:
                continue  # prepare phases (Stage W, pool training): not the ranking
            tree = stub.tree(run["id"])
            llm = [r for r in walk(tree) if r["run_type"] == "llm"]
            sent = [json.dumps(r.get("inputs"), ensure_ascii=False) for r in llm]
            found[(run["name"], run["extra"]["metadata"]["user_id"])] = "\n".join(sent)
    found[("", "results")] = (out / "results.jsonl").read_text()
    return found


@pytest.fixture(scope="module")
def prompts(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], str]:
    """Every registered LLM method's prompts under the default contract."""
    return traced_prompts(tmp_path_factory.mktemp("fair"), LLM_METHODS)


def test_every_method_declares_what_it_reads_and_learns_from() -> None:
    assert [name for name, spec in METHODS.items() if spec.evidence is None] == []


def test_the_documented_table_is_the_generated_one() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert FAIRNESS_BEGIN in text
    assert documented_table(text) == fairness_table(), "regenerate it: python -m bench.report.fairness"


def test_the_table_follows_the_knobs_a_run_sets() -> None:
    withheld = Context(item_text="title", use_instruction=False, history_items=7)
    method, history, candidates, asked, left_out, _ = fairness_row("vanilla_llm", withheld)
    assert (method, history, candidates) == ("vanilla_llm", "last 7", TITLE_ONLY)
    assert asked.startswith("withheld") and "seeded" in left_out
    assert not shows_text("arag", withheld) and not shows_instruction("memrec", withheld)
    assert fairness_row("itemknn")[3:5] == ("no", "none: it scores every candidate")
    assert fairness_row("arag")[1] == "C_st: last ≤ 5, C_lt: the rest to 50 in all"


def test_description_review_and_instruction_reach_every_llm_method(
    prompts: dict[tuple[str, str], str],
) -> None:
    records = [json.loads(line) for line in prompts[("", "results")].splitlines()]
    assert {r["method"] for r in records} == set(LLM_METHODS)
    missing: list[str] = []
    for record in records:
        method, user = record["method"], record["user_id"]
        sent = prompts[(method, user)]
        assert sent, f"{method} sent no prompt for {user}"
        if shows_text(method):
            assert CONTRACT_TEXT.search(sent), method  # the contract's own lines, as the knob test reads them
            shown = [i for i in record["ranking"] if description(int(i)) in sent]
            missing += [f"{method}: description of {i}" for i in record["ranking"] if i not in shown]
        if shows_instruction(method):
            missing += [f"{method}: instruction of {user}"] if instruction(user) not in sent else []
    assert missing == []


def test_held_out_reviews_and_other_users_instructions_reach_no_prompt(
    prompts: dict[tuple[str, str], str],
) -> None:
    """No prompt shows a review written with a test interaction, nor (in the contract's review
    sample) one written with another user's validation interaction; a user's prompts carry no one
    else's instruction. (A user's own validation interaction is the latest item of their visible
    history, so tools that read that history may show its review.)"""
    for (method, user), sent in prompts.items():
        if not method:
            continue
        for other, items in USERS.items():
            assert review(other, items[-1]) not in sent, (method, user, other)
            if other != user:
                assert review(other, items[-2]) not in sent, (method, user, other)
                assert instruction(other) not in sent, (method, user, other)


def test_the_common_knobs_withhold_text_and_instruction_from_every_method(tmp_path: Path) -> None:
    """`--set item_text=title --set use_instruction=false`: one LLM method per family sends no
    contract description or review line and no instruction, and the table says so. (MemRec's item
    memories start from title and description, its own representation: its row says so, and the
    rerank's memory lines may still quote a description.)"""
    methods = ["vanilla_llm", "arag", "memrec", "amem4rec", "chainrec", "agentcf"]
    knobs = ("--set", "item_text=title", "--set", "use_instruction=false")
    sent = traced_prompts(tmp_path, methods, *knobs)
    withheld = Context(item_text="title", use_instruction=False)
    for method in methods:
        assert not shows_text(method, withheld) and not shows_instruction(method, withheld)
        users = {u for m, u in sent if m == method}
        assert len(users) == 2, method
        for user in users:
            text = sent[(method, user)]
            assert text and not CONTRACT_TEXT.search(text), method
            assert "Askmark" not in text and "The user's own request" not in text, method

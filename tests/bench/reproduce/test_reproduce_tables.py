"""`recgraph reproduce`'s tables and plans without a run: the "ours" headings per backend, row
notes, which runs a paper dataset needs with its users and knobs, rows a method cannot fill as
published, and blocks headed by their own runs' backend and sample (hand-made metrics)."""

from __future__ import annotations

from bench.reproduce.papers import load_paper
from bench.reproduce.table import ours_label


def test_the_ours_heading_says_what_each_backend_measures() -> None:
    assert ours_label("heuristic") == "ours: fallback answers, not the method"
    assert ours_label("sim") == "ours: pipeline check (simulator answers)"
    assert ours_label("openai:gpt-4o-mini") == ours_label("local") == "ours"


def test_row_notes_are_shown_under_their_table() -> None:
    from bench.reproduce.table import table_cells, table_markdown

    table = next(t for t in load_paper("chainrec").tables if t.id == "Table 4")
    assert [r.row for r in table.rows] == ["Best Agentic RS", "ChainRec", "w/o GEO-CONTEXT"]
    assert next(r for r in table.rows if r.method == "chainrec_no_geo").values == (
        23.7,
        10.3,
        11.7,
        12.7,
        12.3,
    )
    paper = load_paper("chainrec")
    text = table_markdown(paper, table, table_cells(paper, table, {}), {})
    assert "**Yelp** (paper: AgentRecBench, Yelp domain) · ours: not run" in text
    assert (
        "- w/o GEO-CONTEXT (chainrec_no_geo): recgraph's chainrec_no_geo plans with the rule planner" in text
    )


def test_each_dataset_runs_only_what_its_columns_need_with_the_papers_users_and_knobs() -> None:
    """MemRec's Books: Tables 2 (every eligible user) and 4 (the later studies' 1,000-user sample)
    are two runs; Goodreads only Table 2's. Each paper's protocol knobs reach its runs, a --set of the
    same knob replaces one; a sample keeps its size under --users all and is capped by a count."""
    from bench.reproduce.plan import dataset_runs, knob_assignments, run_knobs

    memrec = load_paper("memrec")
    books = dataset_runs(memrec, memrec.dataset("Books"))
    assert [(r.folder, r.users(memrec)) for r in books] == [
        ("Books/classic", "all"),
        ("Books/classic-later-studies", 1000),
    ]
    assert set(books[1].methods) == {"memrec", "memrec_no_write", "memrec_no_llm_rules", "memrec_no_read"}
    assert [r.folder for r in dataset_runs(memrec, memrec.dataset("Goodreads"))] == ["Goodreads/classic"]
    assert knob_assignments(memrec, []) == ["memrec_warmup=sequential"]
    assert knob_assignments(memrec, ["memrec_warmup=concurrent"]) == ["memrec_warmup=concurrent"]
    assert run_knobs(["memrec_warmup=sequential"], books[0]) == ["memrec_warmup=sequential"]
    from recgraph.reproduce_run import run_users

    assert [run_users(None, r.users(memrec), bool(r.sample)) for r in books] == ["all", 1000]
    assert [run_users("all", r.users(memrec), bool(r.sample)) for r in books] == ["all", 1000]
    assert [run_users("5", r.users(memrec), bool(r.sample)) for r in books] == ["5", 5]
    amem = load_paper("amem4rec")
    cds = dataset_runs(amem, amem.dataset("CDs"))
    assert [r.folder for r in cds] == ["CDs/classic", "CDs/cold_start"]
    assert [r.folder for r in dataset_runs(amem, amem.dataset("MIND"))] == ["MIND/classic"]  # no cold start
    assert knob_assignments(amem, []) == ["amem4rec_round_windows=1", "amem4rec_windows_per_user=0"]


def test_a_row_that_cannot_run_as_published_is_empty_with_its_reason_and_cases_are_named() -> None:
    """chainrec_llm_planner under the heuristic backend ran (as the rule planner) but carries
    `not_run_reason`: its cells stay empty with that reason, never the rule planner's numbers. Each
    dataset block names where its scenarios' cases came from."""
    from bench.reproduce.table import table_cells, table_markdown

    paper = load_paper("chainrec")
    table = next(t for t in paper.tables if t.id == "Table 2")
    reason = "no LLM on the heuristic backend: its decisions would be the rule planner's"
    methods = {
        "chainrec_learned": {"avg_hr": 0.25, "avg_hr_ci": [0.2, 0.3]},
        "chainrec_llm_planner": {"avg_hr": 0.3, "avg_hr_ci": [0.2, 0.4], "not_run_reason": reason},
    }
    runs = {
        "Yelp/classic": {
            "methods": methods,
            "candidates": {"cases": "AgentRecBench task/classic (100 tasks)"},
        }
    }
    rows = {r["row"]: r for r in table_cells(paper, table, runs)}
    yelp = next(i for i, c in enumerate(table.columns) if (c.dataset, c.scenario) == ("Yelp", "classic"))
    assert rows["ChainRec"]["cells"][yelp]["ours"] == 25.0
    planner = rows["Deepseek-R1"]
    assert planner["status"] == reason and planner["cells"][yelp]["ours"] is None
    assert planner["cells"][yelp]["status"] == reason
    goodreads = next(i for i, c in enumerate(table.columns) if c.dataset == "Goodreads")
    assert planner["cells"][goodreads]["status"] == "not run"  # no Goodreads run at all
    text = table_markdown(paper, table, list(rows.values()), {}, "heuristic", runs)
    assert "Cases: classic: AgentRecBench task/classic (100 tasks)" in text
    assert "| Deepseek-R1 | chainrec_llm_planner |" in text and "| 30.0" not in text


def test_each_block_is_headed_by_its_own_runs_backend_and_a_sample_by_its_users() -> None:
    """An OUT can hold one dataset run under the heuristic backend and another under a model: each
    block says what its own numbers measure. A sample's block says how many users it evaluated."""
    from bench.reproduce.table import table_cells, table_markdown

    paper = load_paper("memrec")
    main_table = next(t for t in paper.tables if t.id == "Table 2")
    entry = {"memrec": {"hit@1": 0.5, "hit@1_ci": [0.4, 0.6]}}
    runs = {
        "Books/classic": {"methods": entry, "protocol": {"llm": "heuristic"}},
        "Goodreads/classic": {"methods": entry, "protocol": {"llm": "openai:gpt-4o-mini"}},
        "Books/classic-later-studies": {"methods": entry, "protocol": {"llm": "heuristic"},
                                        "candidates": {"evaluated": 120}},
    }  # fmt: skip
    text = table_markdown(paper, main_table, table_cells(paper, main_table, runs), {}, "local", runs)
    books, goodreads = text.split("**Goodreads**")
    assert "hit@1 classic ours: fallback answers, not the method [95% CI]" in books
    assert "hit@1 classic ours [95% CI]" in goodreads and "fallback" not in goodreads
    ablation = next(t for t in paper.tables if t.id == "Table 4")
    text = table_markdown(paper, ablation, table_cells(paper, ablation, runs), {}, "local", runs)
    assert "Users: the `later-studies` sample (1000 users)" in text
    assert "Users evaluated: 120 (all eligible when fewer than the sample)" in text

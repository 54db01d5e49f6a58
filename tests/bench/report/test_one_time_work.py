"""report.md's "One-time work" section and the console's line: each prepare step's wall and CPU
seconds, where it ran, its longest phases, and the sums."""

from __future__ import annotations

from bench.report.one_time_work import one_time_line, one_time_markdown, one_time_rows

METHODS = {
    "popularity": {"setup_seconds": {"prepare": 0.01, "prepared": "in order", "one_time_work": {}}},
    "memrec": {
        "setup_seconds": {
            "prepare": 12.0,
            "prepare_cpu": 11.5,
            "prepared": "ahead",
            "one_time_work": {"Stage W": 4.0, "user-memory vectors": 0.2, "changed memories' vectors": 7.5},
        }
    },
    "sasrec": {
        "setup_seconds": {
            "prepare": 30.0,
            "prepare_cpu": 29.0,
            "prepared": "in order",
            "one_time_work": {"sasrec training": 29.9},
        }
    },
}


def test_rows_keep_steps_that_took_time_with_their_longest_phases() -> None:
    rows = one_time_rows(METHODS)
    assert [r["method"] for r in rows] == ["memrec", "sasrec"]  # popularity's 0.01 s is left out
    # longest first; a phase under half a second is not named
    assert rows[0]["phases"] == [("changed memories' vectors", 7.5), ("Stage W", 4.0)]
    assert (rows[0]["where"], rows[0]["wall"], rows[0]["cpu"]) == ("ahead", 12.0, 11.5)


def test_markdown_and_console_sum_the_steps() -> None:
    text = one_time_markdown(METHODS)
    assert "| memrec | ahead | 12.0 | 11.5 | changed memories' vectors 7.5, Stage W 4.0 |" in text
    assert "| **all steps** | | 42.0 | 40.5 | |" in text  # 12 + 30 wall, 11.5 + 29 CPU
    line = one_time_line(METHODS)
    assert line.startswith("one-time work: 2 prepare steps, 42 s wall and 40 s CPU summed, 1 of them ahead")


def test_a_run_without_cpu_figures_says_so_and_nothing_without_steps() -> None:
    old = {"amem4rec": {"setup_seconds": {"prepare": 150.0, "one_time_work": {"training": 149.0}}}}
    assert "| amem4rec | in order | 150.0 | – | training 149.0 |" in one_time_markdown(old)
    assert "| **all steps** | | 150.0 | – | |" in one_time_markdown(old)
    assert one_time_markdown({"popularity": METHODS["popularity"]}) == ""
    assert one_time_line({}) == ""

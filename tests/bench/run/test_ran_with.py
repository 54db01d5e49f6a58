"""Each method's results are printed with what it ran with (planner, checkpoint, pool, memory), so a
run on other trained state never looks like the same method."""

from __future__ import annotations

from bench.run.ran_with import ran_with


def test_the_line_names_the_reported_settings_and_shortens_paths() -> None:
    methods = {
        "popularity": {"settings": {"itemknn_neighbors": 50}},
        "chainrec": {
            "settings": {"chainrec_planner": "rule", "chainrec_checkpoint": "", "chainrec_max_steps": 6}
        },
        "chainrec_sft": {
            "settings": {
                "chainrec_planner": "learned",
                "chainrec_checkpoint": "/home/x/ml-100k-1e9/chainrec_planner/classic-5944",
                "chainrec_policy_stage": "sft",
            }
        },
        "amem4rec": {"settings": {"amem4rec_pool": "/runs/bench/amem4rec_pool/amem4rec-bc27"}},
        "unregistered": {"settings": {"chainrec_planner": "rule"}},
    }
    assert ran_with(methods) == [
        "chainrec: chainrec_planner rule",
        "chainrec_sft: chainrec_planner learned, chainrec_checkpoint classic-5944, chainrec_policy_stage sft",
        "amem4rec: amem4rec_pool amem4rec-bc27",
    ]

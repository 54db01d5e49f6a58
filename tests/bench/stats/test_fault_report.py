"""The fault table's client-side counts: every call a method's run made, ranking and the work before
it (Stage W, this run's training, a router's prerequisites' training), each counted once."""

from __future__ import annotations

from bench.stats.fault_report import observed_faults


def test_prerequisites_training_counts_and_their_shared_stage_w_does_not() -> None:
    methods = {
        "memrec": {"errors": {"http_429": 1}, "stage_w": {"errors": {"malformed_json": 5}}},
        "router": {
            "errors": {"malformed_json": 1},
            "repair_kinds": {"unknown_id": 2},
            "prerequisites": {
                "memrec": {"stage_w": {"errors": {"malformed_json": 5}}},  # memrec's own log: counted there
                "agentcf": {"training": {"this_run": {"errors": {"malformed_json": 3}}}},
                "sasrec": {"training": {"model": "sasrec"}},
            },
        },
        "agentcf": {"training": {"this_run": {"errors": {}}}},  # the router trained its memories first
    }
    found = observed_faults(methods)
    assert found["malformed_json"] == 5 + 1 + 3
    assert found["http_429"] == 1 and found["unknown_ids"] == 2

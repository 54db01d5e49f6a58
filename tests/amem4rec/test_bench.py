"""AMEM4Rec in the harness: `prepare` trains each method's own pool before ranking (progress shown,
cost in metrics.json, reused on a rerun), and training through the simulator over real HTTP counts
every injected fault."""

from pathlib import Path

import pytest

from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from bench.run.runner import run_benchmark
from graphs.amem4rec.hooks import POOL_DIR
from graphs.amem4rec.training import train_pool, training_summary
from llmsim.process import SimServer
from state.amem4rec.context import Amem4RecContext
from world.environment import get_environment
from world.results_log import ResultsLog

ID_REPAIRS = {"unknown_ids": "unknown_id", "duplicate_ids": "duplicate_id"}


def test_bench_trains_a_pool_per_method_and_reuses_it(amem_dataset: str, tmp_path: Path) -> None:
    data = amem_dataset
    env = get_environment(data)
    protocol = Protocol(dataset=data, candidates=5, seed=0, users=6)
    cases = plan_cases(env, protocol)
    out = tmp_path / "out"
    out.mkdir()
    methods = ["amem4rec", "amem4rec_no_evolution"]
    phases: list[tuple[str, int, int]] = []

    def run() -> dict:
        log = ResultsLog(out / "results.jsonl", protocol.as_dict())
        return run_benchmark(
            methods,
            cases,
            protocol,
            log,
            2,
            Amem4RecContext(dataset=data),
            None,
            lambda *phase: phases.append(phase),
        )

    first = run()
    full, ablation = first["amem4rec"]["training"], first["amem4rec_no_evolution"]["training"]
    assert full["windows"] == ablation["windows"] == 24 and not full["reused"]
    assert ablation["actions"] == {"store_only": 24, "update_and_store": 0, "update_only": 0, "skipped": 0}
    assert ablation["evolutions"] == 0 and ablation["pool_size"] == 24
    assert full["actions"]["store_only"] < 24 and full["pool_size"] < 24
    assert ("amem4rec · training", 24, 24) in phases and (
        "amem4rec_no_evolution · training",
        24,
        24,
    ) in phases
    folders = sorted(p.name.rsplit("-", 1)[0] for p in (out / POOL_DIR).iterdir())
    assert folders == [*methods, "extractions"]  # a pool each, one extraction stage for both
    assert first["amem4rec"]["users"] == 6 and first["amem4rec"]["details"]["memories_used"] > 0
    again = run()["amem4rec"]["training"]
    assert (
        again["reused"] and again["this_run"]["windows"] == 0 and again["fingerprint"] == full["fingerprint"]
    )


@pytest.mark.parametrize("seed", [1])
def test_training_through_the_simulator_counts_every_injected_fault(
    amem_dataset: str, amem_histories: dict[str, list[str]], tmp_path: Path, seed: int
) -> None:
    data = amem_dataset
    kinds = "http_429,http_500,malformed_json,truncated,unknown_ids,duplicate_ids,echo"
    with SimServer(fault_rate=0.3, faults=kinds, seed=seed) as server:
        ctx = Amem4RecContext(
            dataset=data,
            llm="sim",
            base_url=server.base_url,
            llm_backoff=0.0,
            llm_timeout=5.0,
            amem4rec_pool=str(tmp_path / "pool"),
        )
        summary = training_summary(
            train_pool(get_environment(data), ctx, list(amem_histories), concurrency=4)
        )
        injected = server.stats()["faults"]
    run = summary["this_run"]
    assert sum(injected.values()) > 0 and summary["windows"] == 24
    for kind, count in injected.items():
        if kind == "echo":
            continue  # a valid answer: nothing to observe
        observed = (
            run["repair_kinds"].get(ID_REPAIRS[kind], 0) if kind in ID_REPAIRS else run["errors"].get(kind, 0)
        )
        assert observed == count, kind
    assert summary["agent_calls_per_window"] <= 3


def test_training_faults_count_as_observed_in_the_bench_report() -> None:
    from bench.stats.fault_report import observed_faults

    row = {
        "errors": {"http_500": 1},
        "repair_kinds": {},
        "training": {
            "errors": {"http_500": 9},
            "this_run": {"errors": {"http_500": 2, "truncated": 1}, "repair_kinds": {"unknown_id": 3}},
        },
    }
    observed = observed_faults({"amem4rec": row})
    assert observed["http_500"] == 3 and observed["truncated"] == 1 and observed["unknown_ids"] == 3

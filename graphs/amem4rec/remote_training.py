"""AMEM4Rec's training when the users are ranked on a LangGraph deployment (`recgraph bench --server`).

The in-process driver's rounds (graphs/amem4rec/training.py), with every write done by the deployment:
the plan (users in id order, each user's windows oldest first) is cut into rounds of
`amem4rec_round_windows` windows; a round's windows go to the `amem4rec_train` assistant in "propose"
mode (concurrently, on any replica, all against the pool as the round found it), then the round's
plans go, in window order, to `amem4rec_commit` (graphs/amem4rec/remote_commit.py), which applies
them on the server. What a round reads depends only on the plan and the round size, so the pool is
the one an in-process run with the same settings trains.

Resume: the windows already in the pool are skipped (the first `amem4rec_commit` call, with no plans,
says which); a round cut off while proposing is proposed again against the same pool, since none
of it was applied. The pool is named by `remote_name` (per output folder, method and settings), so
the served `amem4rec` graph on every replica reads it; several replicas share it only through a
database (servers started with `RECGRAPH_DATABASE_URL`), else the run is refused before training.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from agents.amem4rec.windows import WindowRef, plan_windows
from graphs.amem4rec.hooks import POOL_DIR, bench_pool_key, pool_users, window_trace
from graphs.amem4rec.training import TrainingRun, training_summary
from graphs.hooks import Prepared, PrepareRequest
from graphs.method_spec import RemoteCall, RemoteRunner, remote_name, run_one
from state.amem4rec.context import Amem4RecContext
from world.environment import get_environment
from world.errors import RecgraphError


@dataclass
class PoolAnswer:
    """The pool as `amem4rec_commit` last described it (what `training_summary` reads of a pool)."""

    answer: dict[str, Any]
    """The commit graph's output."""

    @property
    def location(self) -> str:
        """Where the pool lives on the deployment."""
        return str(self.answer["pool"])

    def ledger(self) -> list[dict[str, Any]]:
        """The planned windows' ledger rows, in apply order."""
        return list(self.answer["ledger"])

    def size(self) -> int:
        """Memories in the pool."""
        return int(self.answer["pool_size"])

    def evolution_histogram(self) -> dict[int, int]:
        """Memories per evolution count."""
        return {int(k): v for k, v in self.answer["evolution_histogram"].items()}

    def fingerprint(self) -> str:
        """A digest of the pool's content."""
        return str(self.answer["fingerprint"])


def commit_remotely(
    remote: RemoteRunner, context: Amem4RecContext, plans: list[dict[str, Any]], windows: list[str]
) -> dict[str, Any]:
    """`amem4rec_commit` on one replica: `plans` applied in order; its description of the pool."""
    return run_one(remote, RemoteCall("amem4rec_commit", {"plans": plans, "windows": windows}, context))


def train_remotely(request: PrepareRequest, remote: RemoteRunner) -> Prepared:
    """`remote_prepare` hook: the method's pool trained on the deployment (see the module docstring);
    progress shows as "<method> · training"; metrics.json gets `training`, as in-process."""
    started = time.perf_counter()
    env = get_environment(request.context.dataset)  # the run's world
    users = pool_users(env, request, request.context.amem4rec_window)  # type: ignore[attr-defined]
    key = bench_pool_key(request.context, dict(request.protocol), users)  # type: ignore[arg-type]
    location = remote_name(request.work_dir, POOL_DIR, f"{request.method}-{key}")
    context: Amem4RecContext = replace(request.context, amem4rec_pool=location)  # type: ignore[type-var]
    plan = plan_windows(env, users, context.amem4rec_window, context.amem4rec_windows_per_user)
    keys = [ref.key for ref in plan]
    answer = commit_remotely(remote, context, [], keys)
    if len(remote.servers) > 1 and not answer["shared"]:
        raise RecgraphError(
            f"{request.method}'s pool on the servers is a local folder ({answer['pool']}), so "
            f"{len(remote.servers)} replicas would not share it: start them with RECGRAPH_DATABASE_URL "
            "(one PostgreSQL), or pass one --server URL"
        )
    applied = set(answer["applied"])
    run = TrainingRun(PoolAnswer(answer), plan, applied_before=len(applied))  # type: ignore[arg-type]
    progress, label = request.on_progress, f"{request.method} · training"
    if progress:
        progress(label, run.applied_before, len(plan))
    size = max(1, context.amem4rec_round_windows)
    rounds: dict[int, list[WindowRef]] = {}
    for position, ref in enumerate(plan):
        if ref.key not in applied:
            rounds.setdefault(position // size, []).append(ref)
    propose = replace(context, amem4rec_commit_mode="propose")
    proposals: dict[str, dict[str, Any]] = {}

    def proposed(call: RemoteCall, output: dict[str, Any]) -> None:
        window = output["plan"]
        proposals[window["window_key"]] = window
        run.usage.extend(output.get("usage", []))
        run.window_calls[window["window_key"]] = sum(r["calls"] for r in output.get("usage", []))

    for _, refs in sorted(rounds.items()):
        calls = [
            RemoteCall(
                "amem4rec_train",
                {"user_id": ref.user_id, "start": ref.start},
                propose,
                window_trace(request, ref),
                ref.user_id,
            )
            for ref in refs
        ]
        run.rounds.append([ref.key for ref in refs])
        remote.run_all(calls, proposed, request.concurrency)
        answer = commit_remotely(remote, context, [proposals[ref.key] for ref in refs], keys)
        run.applied_now += answer["statuses"].count("applied")
        run.pool = PoolAnswer(answer)  # type: ignore[assignment]
        if progress:
            progress(label, len(answer["applied"]), len(plan))
    run.seconds = time.perf_counter() - started
    summary = training_summary(run)
    summary["reused"] = run.applied_before == len(plan) and run.applied_now == 0
    return Prepared(context, {"training": summary})

"""A trained baseline's figures checked against its library's own evaluation on the same run.

For every user a `recgraph bench` run ranked with `sasrec` or `gru4rec` (default knobs), the cornac
recommender that run used (read back from the cache) ranks the same candidates through cornac's own
`rank(user, item_indices, history_items=...)`, and cornac's `HitRatio(k=1)` and `NDCG(k=5)` score
that ranking; their means are printed beside the run's hit@1 and ndcg@5. The two differ only where
our fallback does: cold candidates (no training interaction) go last in ours and wherever their
untrained embedding puts them in cornac's, and users without a warm history item get the popularity
order in ours. Those users are counted, and the figures are also given without them.

    python -m bench.report.library_check RUN_DIR --method sasrec
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from agents.baselines.fitted import fitted_model, warm_history
from agents.baselines.trained import warm_mask
from state.baselines.context import BaselinesContext
from world.environment import get_environment


def records(run: Path, method: str) -> list[dict[str, Any]]:
    """The run's results.jsonl records of `method`."""
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    found = [json.loads(line) for line in lines if line.strip()]
    return [r for r in found if r.get("method") == method]


def library_metrics(run: Path, method: str) -> dict[str, Any]:
    """Ours and cornac's mean hit@1 / ndcg@5 over the run's users (all, and those our fallback
    leaves alone)."""
    from cornac.metrics import NDCG, HitRatio

    rows = records(run, method)
    if not rows:
        raise SystemExit(f"{run}/results.jsonl has no {method!r} records")
    protocol = rows[0]["protocol"]
    env = get_environment(protocol["dataset"])
    model = fitted_model(env, BaselinesContext(dataset=protocol["dataset"], seed=protocol["seed"]), method)
    hit, ndcg = HitRatio(k=1), NDCG(k=5)
    ours, theirs, untouched = [], [], []
    for row in rows:
        candidates = list(row["ranking"])
        history = env.history(row["user_id"], protocol["scenario"])
        rows_of = np.array([env.item_index[i] for i in candidates])
        known = [env.item_index[i] for i in warm_history(env, history)][-model.max_len :]
        ranked, _ = model.recommender.rank(0, item_indices=rows_of, history_items=known)
        truth = np.array([env.item_index[row["target"]]])
        theirs.append((hit.compute(gt_pos=truth, pd_rank=ranked), ndcg.compute(gt_pos=truth, pd_rank=ranked)))
        ours.append((row["metrics"]["hit@1"], row["metrics"]["ndcg@5"]))
        untouched.append(bool(known) and bool(warm_mask(env, candidates).all()))
    ours_a, theirs_a, keep = np.array(ours), np.array(theirs), np.array(untouched)
    return {
        "users": len(rows),
        "fallback_users": int((~keep).sum()),
        "ours": ours_a.mean(axis=0).round(4).tolist(),
        "cornac": theirs_a.mean(axis=0).round(4).tolist(),
        "ours_without_fallback": ours_a[keep].mean(axis=0).round(4).tolist(),
        "cornac_without_fallback": theirs_a[keep].mean(axis=0).round(4).tolist(),
        "largest_user_gap_without_fallback": float(np.abs(ours_a[keep] - theirs_a[keep]).max(initial=0.0)),
    }


def main() -> None:
    """Print the comparison as JSON ([hit@1, ndcg@5] pairs)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a recgraph bench --out folder")
    parser.add_argument("--method", default="sasrec", choices=("sasrec", "gru4rec"), help="which model")
    arguments = parser.parse_args()
    print(json.dumps(library_metrics(arguments.run, arguments.method), indent=2))


if __name__ == "__main__":
    main()

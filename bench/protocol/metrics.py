"""Ranking metrics for one relevant item among N candidates."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence


def cutoffs(n_candidates: int) -> tuple[int, ...]:
    """K values reported for N candidates: 1, 3, 5, and 10 only when N > 10."""
    return (1, 3, 5, 10) if n_candidates > 10 else (1, 3, 5)


def rank_of(target: str, ranking: Sequence[str]) -> int | None:
    """1-based rank of `target` in `ranking`; None when absent (the `retrieval` candidate source
    ranks the retrieved items as they are, so a target the retrieval missed is in no ranking)."""
    return ranking.index(target) + 1 if target in ranking else None


def user_metrics(rank: int | None, n_candidates: int) -> dict[str, float]:
    """hit@K, ndcg@K (K>1), mrr and avg_hr for a target at 1-based `rank`; every metric 0 for a
    target that is not among the candidates (`rank` None)."""
    if rank is None:
        return dict.fromkeys(user_metrics(1, n_candidates), 0.0)
    if not 1 <= rank <= n_candidates:
        raise ValueError(f"rank {rank} outside 1..{n_candidates}")
    metrics: dict[str, float] = {}
    for k in cutoffs(n_candidates):
        metrics[f"hit@{k}"] = 1.0 if rank <= k else 0.0
    for k in cutoffs(n_candidates)[1:]:
        metrics[f"ndcg@{k}"] = 1.0 / math.log2(rank + 1) if rank <= k else 0.0
    metrics["mrr"] = 1.0 / rank
    metrics["avg_hr"] = (metrics["hit@1"] + metrics["hit@3"] + metrics["hit@5"]) / 3.0
    return metrics


def mean_metrics(per_user: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Mean of each metric over users; `math.fsum` makes it independent of order. Keys come in
    report order (hit@1, @3, @5, @10, ndcg@K by K, mrr, avg_hr) whatever order the rows have
    (results.jsonl stores them sorted as text, where hit@10 precedes hit@3)."""
    rows = list(per_user)
    if not rows:
        return {}
    return {key: math.fsum(row[key] for row in rows) / len(rows) for key in metric_order(rows[0])}


def metric_order(names: Iterable[str]) -> list[str]:
    """Metric names in report order: hit@K, ndcg@K (by K), mrr, avg_hr, then any others."""

    def key(name: str) -> tuple[int, int, str]:
        family, _, k = name.partition("@")
        rank = {"hit": 0, "ndcg": 1, "mrr": 2, "avg_hr": 3}.get(family, 4)
        return rank, int(k) if k.isdigit() else 0, name

    return sorted(names, key=key)

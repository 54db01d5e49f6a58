"""How a router compares with the methods it routes between (metrics.json `router_headroom`).

For every router method in a run (a registry entry on the router's graph), against the run's
methods that are not routers:
- the best single method by mean ndcg@5 (run order on ties) and the router's paired comparison
  with it (sign-flip test, Holm across the run's routers, as the reference comparisons);
- the per-user oracle over the methods whose agents the router can call (`CALLABLE`: each user's
  best ndcg@5 among them), and the share of the oracle's headroom over the best single method the
  router captures: (router − best) / (oracle − best), None when the oracle has no headroom;
- the run's other single methods (`not_callable`: the other LLM rankers, AgentCF's variants, ...),
  which the best single method is chosen among but which no router tool runs, and the oracle over every single
  method (`oracle_all_singles`): what a router that could also call them would have to gain. They
  are not in `CALLABLE` because the router's catalog has no tool for them, so an oracle over them
  would promise headroom the router cannot reach.
Users: those every method involved finished.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.stats import significance as stats

QUALITY = "ndcg@5"
"""The metric the best single method, the oracle and the headroom are measured on."""
ALSO = ("avg_hr",)
"""Metrics reported beside it."""
CALLABLE: dict[str, str] = {
    "memrec": "MemoryNeighbourhood",
    "amem4rec": "PatternMemories",
    "arag": "IntentEvidence",
    "itemknn": "CollaborativeSignal",
    "bpr": "CollaborativeSignal",
    "sasrec": "SequentialSignal",
    "gru4rec": "SequentialSignal",
    "lightgcn": "GraphSignal",
    "agentcf": "AgentMemories",
    "llmrank_recency": "RecencyRanking",
    "chainrec": "ChainRec's tool library",
    "chainrec_fixed": "ChainRec's tool library",
    "chainrec_learned": "ChainRec's tool library",
}
"""Methods whose agents the router calls as tools -> the tool (agents/router/catalog.py). Only those:
a method is added here when a router tool runs its agent, not because it is a strong baseline."""
ROUTER_GRAPH = "graphs.router.graph:graph"
"""The registry graph of every router method."""


def router_methods(methods: Sequence[str]) -> list[str]:
    """The run's methods that are routers, in run order."""
    from graphs.registry import METHODS

    return [m for m in methods if m in METHODS and METHODS[m].graph == ROUTER_GRAPH]


def router_headroom(rows: Mapping[str, stats.Rows]) -> dict[str, Any] | None:
    """metrics.json's `router_headroom` block from per-user metrics (method -> user -> metrics), or
    None when the run has no router or no other method."""
    routers = router_methods(list(rows))
    singles = [m for m in rows if m not in routers and rows[m]]
    if not routers or not singles:
        return None
    callable_ = [m for m in singles if m in CALLABLE]
    users = sorted(set.intersection(*(set(rows[m]) for m in [*routers, *singles])))
    if not users:
        return None
    means = {m: _mean(rows[m], users, QUALITY) for m in singles}
    best = max(singles, key=lambda m: (means[m], -singles.index(m)))
    oracle = _oracle(rows, callable_, users) if callable_ else None
    others = [m for m in singles if m not in CALLABLE]
    table = stats.compare_all(
        {r: (_only(rows[r], users), _only(rows[best], users)) for r in routers}, [QUALITY]
    )
    block: dict[str, Any] = {
        "metric": QUALITY,
        "users": len(users),
        "best_single": {"method": best, QUALITY: means[best], **_also(rows[best], users)},
        "callable_methods": {m: CALLABLE[m] for m in callable_},
        "oracle": oracle,
        "not_callable": others,
        "oracle_all_singles": _oracle(rows, singles, users),
        "routers": {},
    }
    for router in routers:
        value = _mean(rows[router], users, QUALITY)
        headroom = None if oracle is None else oracle - means[best]
        block["routers"][router] = {
            QUALITY: value,
            **_also(rows[router], users),
            "vs_best_single": table[router][QUALITY].as_dict(),
            "headroom_share": (value - means[best]) / headroom if headroom and headroom > 0 else None,
        }
    return block


def _mean(rows: stats.Rows, users: Sequence[str], metric: str) -> float:
    return sum(rows[u][metric] for u in users) / len(users)


def _only(rows: stats.Rows, users: Sequence[str]) -> dict[str, Mapping[str, float]]:
    return {u: rows[u] for u in users}


def _also(rows: stats.Rows, users: Sequence[str]) -> dict[str, float]:
    return {m: _mean(rows, users, m) for m in ALSO if all(m in rows[u] for u in users)}


def _oracle(rows: Mapping[str, stats.Rows], methods: Sequence[str], users: Sequence[str]) -> float:
    """Mean over `users` of each user's best `QUALITY` among `methods`."""
    return sum(max(rows[m][u][QUALITY] for m in methods) for u in users) / len(users)


def headroom_markdown(block: Mapping[str, Any] | None) -> str:
    """report.md's section: one row per router (empty without a block)."""
    if not block:
        return ""
    best = block["best_single"]
    oracle = block["oracle"]
    lines = [
        "## Router against the methods it routes between",
        "",
        f"Best single method by {QUALITY}: {best['method']} ({best[QUALITY]:.4f}); per-user oracle over "
        f"the methods it can call ({', '.join(block['callable_methods']) or 'none in this run'}): "
        + (f"{oracle:.4f}" if oracle is not None else "–")
        + f"; {block['users']} users.",
        "",
    ]
    others = block.get("not_callable") or []
    if others:
        lines += [
            f"Compared with, but no router tool runs them: {', '.join(others)}; per-user oracle over every "
            f"single method: {block['oracle_all_singles']:.4f}.",
            "",
        ]
    lines += [
        f"| router | {QUALITY} | vs best single | p (Holm) | headroom captured |",
        "|---|---|---|---|---|",
    ]
    for name, row in block["routers"].items():
        paired = row["vs_best_single"]
        share = row["headroom_share"]
        lines.append(
            f"| {name} | {row[QUALITY]:.4f} | {paired['difference']:+.4f} {paired['marker']} | "
            f"{paired['p_holm']:.3g} | {'–' if share is None else f'{share:.0%}'} |"
        )
    return "\n".join(lines)

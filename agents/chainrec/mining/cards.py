"""Cluster cards (paper appendix B): per cluster its size, its representative steps (the distinct
labels nearest the centroid, with an example of how a model wrote them) and the tool of the Tool
Agent Library it maps to: the tool whose name, description, inputs and outputs are most similar
(MiniLM cosine) to the cluster's centroid, with the score and the runner-up, and every tool the cluster
maps to (`tools`: that one and any within the relative `--map-margin` of it, library.py). Written as JSON and
Markdown."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.chainrec.mining.clusters import Clustering
from agents.chainrec.mining.library import MAP_MARGIN, mapped_tools
from agents.chainrec.online.tool_spec import Catalog, ToolSpec

REPRESENTATIVES = 3
"""Representative steps shown per card."""

CARD_KEYS: tuple[str, ...] = (
    "cluster",
    "size",
    "share",
    "distinct_labels",
    "representative_steps",
    "labels",
    "tool",
    "tool_score",
    "runner_up",
    "runner_up_score",
    "tools",
)
"""The keys of every card in clusters.json."""


def tool_text(spec: ToolSpec) -> str:
    """What a tool is embedded as: its name in words, its description, what it reads and writes (the
    inputs tell a user-side profile from a per-candidate one)."""
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", spec.name)
    return f"{words}: {spec.description} Reads: {spec.inputs}. Writes: {spec.outputs}."


def tool_vectors(catalog: Catalog) -> tuple[list[str], np.ndarray]:
    """Every action of `catalog` (the base library's cards, CandidateRank too) and its MiniLM embedding."""
    from world.embeddings import embed_texts

    names = [spec.name for spec in catalog]
    return names, embed_texts([tool_text(spec) for spec in catalog])


def build_cards(
    clustering: Clustering,
    examples: Mapping[str, tuple[str, str]],
    tools: tuple[list[str], np.ndarray],
    margin: float = MAP_MARGIN,
) -> list[dict[str, Any]]:
    """One card per cluster, largest first. `examples` maps a normalised label to one (raw label,
    step text) the traces wrote for it; a cluster maps to its nearest tool and every tool within
    the relative `margin` of it (`tools`)."""
    names, vectors = tools
    total = sum(clustering.counts)
    cards = []
    for cluster in range(clustering.k):
        rows = clustering.members(cluster)
        centroid = clustering.centroid(cluster)
        nearest = sorted(rows, key=lambda i: (-float(clustering.vectors[i] @ centroid), clustering.labels[i]))
        scores = vectors @ centroid
        first, second = np.argsort(-scores)[:2]
        size = sum(clustering.counts[i] for i in rows)
        cards.append(
            {
                "cluster": cluster,
                "size": size,
                "share": round(size / total, 4),
                "distinct_labels": len(rows),
                "representative_steps": [
                    {
                        "label": clustering.labels[i],
                        "count": clustering.counts[i],
                        "similarity": round(float(clustering.vectors[i] @ centroid), 4),
                        "example_label": examples[clustering.labels[i]][0],
                        "example_text": examples[clustering.labels[i]][1],
                    }
                    for i in nearest[:REPRESENTATIVES]
                ],
                "labels": {clustering.labels[i]: clustering.counts[i] for i in rows},
                "tool": names[int(first)],
                "tool_score": round(float(scores[first]), 4),
                "runner_up": names[int(second)],
                "runner_up_score": round(float(scores[second]), 4),
                "tools": mapped_tools(
                    {name: round(float(score), 4) for name, score in zip(names, scores, strict=True)}, margin
                ),
            }
        )
    return cards


def render_markdown(summary: Mapping[str, Any], cards: Sequence[Mapping[str, Any]]) -> str:
    """clusters.md: the counts, silhouette and J(k) per k, then one section per card."""
    counts = summary["traces"]
    dropped = ", ".join(f"{reason} {n}" for reason, n in counts["dropped"].items()) or "none"
    lines = [
        "# ChainRec tool mining: cluster cards",
        "",
        f"Traces: {counts['total']} read, {counts['kept']} kept, dropped: {dropped}. "
        f"Steps clustered: {summary['steps']} ({summary['distinct_labels']} distinct labels after "
        f"normalisation). Chosen k = {summary['k']} (best silhouette).",
        "",
        "Clusters per tool: "
        + ", ".join(f"{tool} {len(ids)}" for tool, ids in summary["tool_map"].items())
        + " (a tool with 0 has no cluster of its own in these traces).",
        "",
        "| k | silhouette | J(k) |",
        "|---|---|---|",
    ]
    for k, score in summary["silhouette"].items():
        mark = " ← chosen" if int(k) == summary["k"] else ""
        lines.append(f"| {k} | {score:.4f}{mark} | {summary['inertia'][k]:.4f} |")
    for card in cards:
        lines += [
            "",
            f"## Cluster {card['cluster']} → {' / '.join(card['tools'])} (nearest {card['tool']} "
            f"{card['tool_score']:.3f}; runner-up {card['runner_up']} {card['runner_up_score']:.3f})",
            "",
            f"{card['size']} steps ({card['share']:.0%}), {card['distinct_labels']} distinct labels. "
            "Representative steps:",
            "",
        ]
        for step in card["representative_steps"]:
            example = f" — e.g. {json.dumps(step['example_label'], ensure_ascii=False)}"
            if step["example_text"]:
                example += f": {json.dumps(step['example_text'][:160], ensure_ascii=False)}"
            lines.append(f"- `{step['label']}` ×{step['count']} (cos {step['similarity']:.3f}){example}")
    return "\n".join(lines) + "\n"


def write_cards(
    out: Path, summary: Mapping[str, Any], cards: Sequence[Mapping[str, Any]]
) -> tuple[Path, Path]:
    """Write `out/clusters.json` (the summary with its cards) and `out/clusters.md`."""
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "clusters.json", out / "clusters.md"
    json_path.write_text(
        json.dumps({**summary, "clusters": list(cards)}, indent=2, ensure_ascii=False) + "\n"
    )
    md_path.write_text(render_markdown(summary, cards), encoding="utf-8")
    return json_path, md_path

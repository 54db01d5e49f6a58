"""MiniLM embeddings of the memories Stage W changed, each embedded only when a reader needs it.

Written by `FeatureIndex.updated_vectors` (agents/memrec/feature_index.py) from the memory graph's
changed rows; read by curation (agents/memrec/features.py: the changed item neighbours at once, the
changed user neighbours only when they may rank, agents/memrec/similarity_reads.py) and by ReRank
(the user's own memory, the candidates'). A run thus embeds the changed memories its evaluated
users' curation and ranking read, not every memory the warm-up touched (on a 50k-user catalog,
Stage W changed 4,087 memories for 300 users and all were embedded before the first ranking).

Each text is embedded on its own (`world.vector_memo.embed_each`), so its vector depends on the text
alone, not on which texts were read with it: every method, ablation and process (`bench --workers`,
the router's MemRec tools) that meets the same text gets the same bits, found in the vector store
under RECGRAPH_HOME instead of embedded again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from world.embeddings import EMBEDDING_DIM


class ChangedVectors(Mapping[str, np.ndarray]):
    """{node id: embedding of its changed memory}, a node's vector computed on first read."""

    def __init__(
        self, texts: Mapping[str, str], embed: Callable[[Sequence[str]], dict[str, np.ndarray]]
    ) -> None:
        """`texts`: every changed node's current memory; `embed(texts)` returns {text: vector},
        embedding the texts not embedded yet (the feature index's cache by text)."""
        self.texts = dict(texts)
        self._embed = embed

    def __getitem__(self, node: str) -> np.ndarray:
        """The node's vector (embedded now when it is not yet); KeyError for an unchanged node."""
        return self.read([node])[0]

    def __contains__(self, node: object) -> bool:
        """True for a node whose memory changed (nothing is embedded)."""
        return node in self.texts

    def __iter__(self) -> Iterator[str]:
        """The changed nodes (nothing is embedded)."""
        return iter(self.texts)

    def __len__(self) -> int:
        """How many nodes changed."""
        return len(self.texts)

    def read(self, nodes: Iterable[str]) -> np.ndarray:
        """The vectors of `nodes` (all changed), rows in order, embedding the texts not read yet."""
        texts = [self.texts[node] for node in nodes]
        if not texts:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        found = self._embed(texts)
        return np.stack([found[text] for text in texts])

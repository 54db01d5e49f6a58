"""Chroma's embedding function backed by our offline MiniLM (its own module: importing it loads
Chroma, which only the code that opens a collection should pay for)."""

from __future__ import annotations

from typing import Any

from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

from world.embeddings import embed_texts


class MiniLMEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma embedding function backed by our offline MiniLM (never Chroma's ONNX default)."""

    def __init__(self) -> None:
        """Nothing to configure: the model is loaded by path on first use."""

    def __call__(self, input: Documents) -> Embeddings:
        """Embed documents."""
        return list(embed_texts(list(input)))

    @staticmethod
    def name() -> str:
        """Name Chroma stores in the collection configuration."""
        return "recgraph-minilm"

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbeddingFunction:
        """Rebuild from a stored configuration."""
        return MiniLMEmbeddingFunction()

    def get_config(self) -> dict[str, Any]:
        """No configuration beyond the name."""
        return {}

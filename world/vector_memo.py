"""Embeddings of memory texts (AMEM4Rec's pool, MemRec's rewritten memories), remembered so that no
encoding is computed twice.

Contract: what is remembered is exactly what the encoder gives for the same input, so a found
vector is bit-identical to a computed one.
- `embed_each`: each text encoded on its own (a batch of one), so its vector depends on
  the text alone — not on what came along, on concurrency, or on a resume; kept per text.
- `embed_batch`: the texts encoded together in one call (MiniLM pads a batch, so a row may
  differ from the text's own encoding in the last bits); kept per batch, under the digest of the
  whole ordered batch, so the same batch always gets the same rows.
Vectors are kept in this process (an LRU memo) and across processes, pools and runs (a SQLite
file under RECGRAPH_HOME). Titles-only training repeats pattern texts often, the AMEM4Rec
ablations train pools that share most of their windows' texts and rounds, and MemRec's ablations
rewrite the same memories in Stage W, so most encodings are found rather than computed.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from world.embeddings import EMBEDDING_DIM, embed_alone, embed_texts
from world.paths import cache_root

MEMO_SIZE = 20_000
"""Texts whose vector is kept in this process."""
STORE_NAME = "amem4rec-memory-vectors-minilm-l6-v2.sqlite"
"""The shared store's file under RECGRAPH_HOME (named by the encoder, whose output it holds; and
after AMEM4Rec, its first user, so that the stores machines already have stay valid)."""

_memo: OrderedDict[str, np.ndarray] = OrderedDict()
_memo_lock = threading.Lock()
_stores: dict[Path, sqlite3.Connection] = {}
_store_lock = threading.Lock()


def text_digest(text: str) -> str:
    """The key of a text in the shared store."""
    return hashlib.sha256(text.encode()).hexdigest()


def _store() -> sqlite3.Connection:
    path = cache_root() / STORE_NAME
    with _store_lock:
        db = _stores.get(path)
        if db is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=60)
            db.execute("PRAGMA journal_mode=WAL")  # readers never wait for another process's writer
            db.execute("PRAGMA synchronous=NORMAL")  # a lost row is only a vector computed again
            db.execute("CREATE TABLE IF NOT EXISTS vectors (digest TEXT PRIMARY KEY, vector BLOB NOT NULL)")
            _stores[path] = db
        return db


def _stored(digests: list[str], rows: int = 1) -> dict[str, np.ndarray]:
    found: dict[str, np.ndarray] = {}
    db = _store()
    with _store_lock:
        for start in range(0, len(digests), 500):
            part = digests[start : start + 500]
            marks = ",".join("?" * len(part))
            query = f"SELECT digest, vector FROM vectors WHERE digest IN ({marks})"
            for digest, blob in db.execute(query, part):
                vector = np.frombuffer(blob, dtype="<f4")
                if vector.size == rows * EMBEDDING_DIM:  # anything else is ignored and encoded again
                    found[digest] = vector.copy()  # flat: `rows` vectors one after another
    return found


def _remember(rows: list[tuple[str, np.ndarray]]) -> None:
    db = _store()
    with _store_lock:
        db.executemany(
            "INSERT OR IGNORE INTO vectors VALUES (?, ?)",
            [(digest, np.asarray(v, dtype="<f4").tobytes()) for digest, v in rows],
        )


def embed_each(texts: list[str]) -> np.ndarray:
    """MiniLM embeddings of memory texts (rows in order), each encoded on its own; see the module
    docstring for where a vector may come from instead of the encoder."""
    vectors: dict[str, np.ndarray] = {}
    with _memo_lock:
        for text in dict.fromkeys(texts):
            if text in _memo:
                _memo.move_to_end(text)
                vectors[text] = _memo[text]
    missing = [text for text in dict.fromkeys(texts) if text not in vectors]
    if missing:
        digests = {text: text_digest(text) for text in missing}
        stored = _stored(list(digests.values()))
        vectors.update((text, stored[digests[text]]) for text in missing if digests[text] in stored)
        new = [text for text in missing if digests[text] not in stored]
        if new:  # each text alone, several at a time (world/embeddings.py)
            computed = list(zip(new, embed_alone(new), strict=True))
            vectors.update(computed)
            _remember([(digests[text], vector) for text, vector in computed])
        with _memo_lock:
            for text in missing:
                _memo[text] = vectors[text]
            while len(_memo) > MEMO_SIZE:
                _memo.popitem(last=False)
    rows = [vectors[text] for text in texts]
    return np.array(rows, dtype=np.float32).reshape(len(rows), EMBEDDING_DIM)


def embed_batch(texts: list[str]) -> np.ndarray:
    """MiniLM embeddings of `texts` encoded together in one call (rows in order); see the module
    docstring for where they may come from instead of the encoder."""
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    digest = "batch:" + text_digest("\x00".join(texts))
    with _memo_lock:
        found = _memo.get(digest)
    if found is None:
        found = _stored([digest], rows=len(texts)).get(digest)
        if found is None:
            found = embed_texts(texts)
            _remember([(digest, found)])
        found = np.asarray(found, dtype=np.float32).reshape(len(texts), EMBEDDING_DIM)
        with _memo_lock:
            _memo[digest] = found
            while len(_memo) > MEMO_SIZE:
                _memo.popitem(last=False)
    return found.copy()


def forget_memo() -> None:
    """Empty this process's memo (the shared store stays)."""
    with _memo_lock:
        _memo.clear()

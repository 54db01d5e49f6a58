"""Export the bundled all-MiniLM-L6-v2 to ONNX (once per cache; the only MiniLM code needing torch).

The graph is transformers' `BertModel` (eager attention: the classic BERT graph, which ONNX Runtime
optimises when it loads it) followed by sentence-transformers' mean pooling over the attention mask
and L2 normalisation, traced by `torch.onnx.export`'s TorchScript exporter with dynamic batch and
token axes. Before the file is handed back, ONNX Runtime runs it on probe batches of other shapes
than the trace's and its vectors are checked against torch's (cosine >= `MIN_COSINE`), so a graph
that baked in a traced shape is never cached. `exported_model` calls this under a lock, into a
temporary file it renames into place; `load_onnx_minilm` loads the model it exported (or found).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from world.errors import RecgraphError
from world.minilm_onnx import (
    INPUT_NAMES,
    MODEL_NAME,
    OUTPUT_NAME,
    OnnxMiniLM,
    bundled_model_dir,
    create_session,
    ensure_file,
    load_tokenizer,
    model_fingerprint,
    onnx_model_path,
    padded,
)

if TYPE_CHECKING:
    import torch

OPSET = 17
MIN_COSINE = 0.9999
PROBES = (
    ("Toy Story. Categories: Animation, Children's, Comedy. Year: 1995", "x", ""),
    (
        'History of 270 items. Top categories: Drama 18%, Comedy 15%. Most recent: "Copycat"; "Heat".',
        "GoldenEye",
        "Émile and the naïve café — a   spaced\ttext",
        "a long text " * 120,
    ),
    ("one text alone",),
)
"""Batches of other sizes and widths than the traced one (one is truncated at 256 tokens)."""


def pooled_model(model_dir: Path) -> torch.nn.Module:
    """The bundled BERT with mean pooling and L2 normalisation: (input_ids, attention_mask) ->
    sentence vectors, as sentence-transformers computes them."""
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    bert = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class MeanPooledBert(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            tokens = self.bert(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=torch.zeros_like(input_ids),
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            mean = (tokens * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    return MeanPooledBert().eval()


def export_minilm(model_dir: Path, target: Path) -> None:
    """Write the ONNX model of `model_dir` (see the module docstring) to `target` and check it;
    raises `RecgraphError` when ONNX Runtime's vectors stray from torch's."""
    import torch

    model = pooled_model(model_dir)
    example = torch.ones((2, 8), dtype=torch.long)
    dynamic_axes = {name: {0: "batch", 1: "tokens"} for name in INPUT_NAMES} | {OUTPUT_NAME: {0: "batch"}}
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")  # tracer and deprecation warnings: the probes check the graph
        torch.onnx.export(
            model,
            (example, torch.ones_like(example)),
            str(target),
            dynamo=False,
            input_names=list(INPUT_NAMES),
            output_names=[OUTPUT_NAME],
            dynamic_axes=dynamic_axes,
            opset_version=OPSET,
        )
    check_export(model, target, model_dir)


def check_export(model: torch.nn.Module, path: Path, model_dir: Path) -> None:
    """Compare ONNX Runtime's vectors of `PROBES` from `path` with `model`'s; raise `RecgraphError`
    below `MIN_COSINE`."""
    import torch

    session = create_session(path)
    tokenizer = load_tokenizer(model_dir)
    for texts in PROBES:
        inputs = padded(tokenizer.encode_batch(list(texts)))
        exported = session.run([OUTPUT_NAME], inputs)[0]
        with torch.inference_mode():
            reference = model(*(torch.from_numpy(inputs[name]) for name in INPUT_NAMES)).numpy()
        cosine = float(np.min(np.sum(exported * reference, axis=1)))
        if not cosine >= MIN_COSINE:
            raise RecgraphError(
                f"MiniLM's ONNX export strays from torch (cosine {cosine:.6f} < {MIN_COSINE} on a batch "
                f"of {len(texts)}); set RECGRAPH_ENCODER=torch to embed with torch instead"
            )


def exported_model(model_dir: Path) -> Path:
    """The ONNX file of `model_dir`, exported now (with torch, once per cache) when missing."""
    return ensure_file(onnx_model_path(model_dir), lambda target: export_minilm(model_dir, target))


def load_onnx_minilm() -> OnnxMiniLM:
    """The bundled MiniLM on ONNX Runtime (exported into the cache first when it is not there)."""
    model_dir = bundled_model_dir()
    return OnnxMiniLM(exported_model(model_dir), model_dir)


def export_into(folder: Path) -> Path:
    """Export the bundled model into `folder` (set-up: `python -m world.minilm_export FOLDER`), under
    the name `world.minilm_onnx.onnx_model_path` looks for; returns the file (kept when it exists)."""
    model_dir = bundled_model_dir()
    target = folder / f"{MODEL_NAME}-{model_fingerprint(model_dir)}.onnx"
    return ensure_file(target, lambda temporary: export_minilm(model_dir, temporary))


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m world.minilm_export FOLDER")
    print(export_into(Path(sys.argv[1])))

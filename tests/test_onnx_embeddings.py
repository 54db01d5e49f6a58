"""MiniLM on ONNX Runtime: its vectors match the torch encoder's, running it imports no torch, its
exported file is written once and atomically, and its thread count never changes a vector."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import world.embeddings as embeddings
from world.embeddings import ENCODER_ENV, THREADS_ENV, batch_size_for, embed_texts, encoder_name
from world.errors import RecgraphError
from world.minilm_export import exported_model
from world.minilm_onnx import (
    FINGERPRINT_FILES,
    bundled_model_dir,
    ensure_file,
    model_fingerprint,
    onnx_model_path,
)

REPO = Path(__file__).resolve().parent.parent
ODD_TEXTS = [
    "",
    "x",
    "  leading and trailing spaces  ",
    "Émile, the naïve café — «quoted» 東京 text",
    "tabs\tand\nnewlines",
    "a long memory that is cut at 256 tokens " * 40,
]


def corpora() -> dict[str, list[str]]:
    """300 ml-100k item texts (title, categories, year: what item vectors embed) and 300 memory
    texts (users' initial MemRec memories, then item memories), each spread over the catalog."""
    from tools.memrec.graph import initial_user_memories, item_memory
    from world.environment import get_environment

    env = get_environment("ml-100k")
    items = [env.dataset.items[item_id] for item_id in env.item_ids]
    users = initial_user_memories(env)
    memories = users[::6] + [item_memory(item) for item in items[::11]]
    return {"item titles": [item.text() for item in items[::5][:300]], "memories": memories[:300]}


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity."""
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.mark.slow
def test_onnx_vectors_match_the_torch_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = corpora()
    texts["odd"] = ODD_TEXTS
    monkeypatch.setenv(THREADS_ENV, "2")
    vectors = {}
    for encoder in ("torch", "onnx"):
        monkeypatch.setenv(ENCODER_ENV, encoder)
        vectors[encoder] = {name: embed_texts(corpus) for name, corpus in texts.items()}
    for name, corpus in texts.items():
        onnx, torch = vectors["onnx"][name], vectors["torch"][name]
        assert onnx.shape == torch.shape == (len(corpus), embeddings.EMBEDDING_DIM)
        assert onnx.dtype == np.float32
        assert cosines(onnx, torch).min() >= 0.9999, name
        # Float noise only (measured ~2e-7): the cached vectors of either encoder are interchangeable.
        assert np.abs(onnx - torch).max() < 1e-6, name
    # Different texts get different vectors (a broken tokenizer could map them all alike).
    titles = vectors["onnx"]["item titles"]
    assert float(titles[0] @ titles[1]) < 0.9


def test_running_it_imports_no_torch_transformers_or_sentence_transformers() -> None:
    exported_model(bundled_model_dir())  # the one-time export (torch) happens here, not in the child
    code = (
        "import sys, world.embeddings\n"
        "vectors = world.embeddings.embed_texts(['x'])\n"
        "assert vectors.shape == (1, 384), vectors.shape\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))\n"
    )
    env = {key: value for key, value in os.environ.items() if key != ENCODER_ENV}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_threads_never_change_a_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENCODER_ENV, raising=False)
    texts = [f"Memory {i}. " + "A longer note on what this user liked. " * (i % 7) for i in range(70)]
    monkeypatch.setenv(THREADS_ENV, "1")
    one = embed_texts(texts)
    monkeypatch.setenv(THREADS_ENV, "3")
    three = embed_texts(texts)  # five batches, three at a time
    assert np.array_equal(one, three)
    assert np.allclose(np.linalg.norm(one, axis=1), 1.0, atol=1e-5)
    assert float(one[0] @ one[6]) < 0.99


def test_a_released_encoder_is_loaded_again_with_the_same_vectors() -> None:
    before = embed_texts(ODD_TEXTS)
    assert embeddings._onnx_model.cache_info().currsize == 1
    embeddings.release_encoder()
    assert embeddings._onnx_model.cache_info().currsize == 0  # its session and buffers are dropped
    assert np.array_equal(embed_texts(ODD_TEXTS), before)  # loaded again: the same bits
    assert embeddings._onnx_model.cache_info().currsize == 1


def test_the_encoder_env_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENCODER_ENV, raising=False)
    assert encoder_name() == "onnx"
    monkeypatch.setenv(ENCODER_ENV, " Torch ")
    assert encoder_name() == "torch"
    monkeypatch.setenv(ENCODER_ENV, "tensorflow")
    with pytest.raises(RecgraphError, match=ENCODER_ENV):
        embed_texts(["x"])


def test_the_file_is_written_once_while_others_wait(tmp_path: Path) -> None:
    target = tmp_path / "models" / "model.onnx"
    writes: list[Path] = []

    def slow_write(temporary: Path) -> None:
        writes.append(temporary)
        with temporary.open("wb") as handle:
            handle.write(b"half")
            time.sleep(0.3)  # a reader that did not wait would see half a file (or none) here
            handle.write(b" and the rest")

    seen: list[bytes] = []

    def open_it() -> None:
        seen.append(ensure_file(target, slow_write).read_bytes())

    threads = [threading.Thread(target=open_it) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(writes) == 1 and writes[0] != target
    assert seen == [b"half and the rest"] * 3
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.onnx", "model.onnx.lock"]


def test_a_failed_write_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "model.onnx"

    def broken_write(temporary: Path) -> None:
        temporary.write_bytes(b"half")
        raise RuntimeError("export failed")

    with pytest.raises(RuntimeError, match="export failed"):
        ensure_file(target, broken_write)
    assert [p.name for p in tmp_path.iterdir()] == ["model.onnx.lock"]
    assert ensure_file(target, lambda temporary: temporary.write_bytes(b"whole")).read_bytes() == b"whole"


def test_the_cached_file_is_named_by_the_bundled_model(tmp_path: Path) -> None:
    bundled = bundled_model_dir()
    copy = tmp_path / "model"
    for name in FINGERPRINT_FILES:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(bundled / name, copy / name)
    with (bundled / "model.safetensors").open("rb") as handle:  # the header only, not the weights
        header = handle.read(8)
        (copy / "model.safetensors").write_bytes(header + handle.read(int.from_bytes(header, "little")))
    first = model_fingerprint(copy)
    assert onnx_model_path(copy).name == f"all-MiniLM-L6-v2-{first}.onnx"
    config = copy / "config.json"
    config.write_text(config.read_text().replace('"num_hidden_layers": 6', '"num_hidden_layers": 5'))
    assert model_fingerprint(copy) != first


def test_the_environments_export_is_found_before_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import world.minilm_onnx as minilm_onnx

    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(minilm_onnx, "SHIPPED_MODELS", tmp_path / "venv-share")
    model_dir = bundled_model_dir()
    cached = onnx_model_path(model_dir)
    assert cached.parent == tmp_path / "home" / "models"  # no environment copy: the cache's
    shipped = tmp_path / "venv-share" / cached.name
    shipped.parent.mkdir()
    shipped.write_bytes(b"made at set-up")
    assert onnx_model_path(model_dir) == shipped
    assert exported_model(model_dir) == shipped and not cached.exists()  # nothing exported again


def test_an_export_that_strays_from_torch_is_refused() -> None:
    import torch

    from world.minilm_export import check_export

    class Elsewhere(torch.nn.Module):
        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.normalize(torch.ones((input_ids.shape[0], 384)), dim=1)

    model_dir = bundled_model_dir()
    with pytest.raises(RecgraphError, match="RECGRAPH_ENCODER=torch"):
        check_export(Elsewhere(), exported_model(model_dir), model_dir)


def throughput(encode: Callable[[list[str]], np.ndarray], corpus: list[str]) -> tuple[np.ndarray, str]:
    """`encode(corpus)` once to warm up, then 3 timed runs: the vectors and a line of texts/s (per
    wall second and per CPU-second of this process) with the 1-minute load."""
    encode(corpus[:64])
    rates, cpu_rates = [], []
    for _ in range(3):
        wall, cpu = time.perf_counter(), time.process_time()
        vectors = encode(corpus)
        rates.append(len(corpus) / (time.perf_counter() - wall))
        cpu_rates.append(len(corpus) / (time.process_time() - cpu))
    line = f"texts/s {[round(r) for r in rates]} (per CPU-second {[round(r) for r in cpu_rates]})"
    return vectors, f"{line} load {os.getloadavg()[0]:.2f}"


@pytest.mark.perf
def test_encoder_throughput(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Texts/s of torch, ONNX fp32 and ONNX int8 (dynamic quantisation) on whole calls of 300
    texts, 3 runs each, at 1 and 2 threads, with the 1-minute load; int8's cosine to torch is printed
    (it is not used: it stays far below 0.9999)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from world.minilm_onnx import OnnxMiniLM

    model_dir = bundled_model_dir()
    int8_path = tmp_path / "minilm-int8.onnx"
    quantize_dynamic(exported_model(model_dir), int8_path, weight_type=QuantType.QInt8)
    int8 = OnnxMiniLM(int8_path, model_dir)
    reference: dict[str, np.ndarray] = {}
    for threads in (1, 2):
        monkeypatch.setenv(THREADS_ENV, str(threads))
        encoders: dict[str, Callable[[list[str]], np.ndarray]] = {
            "torch": embed_texts,
            "onnx fp32": embed_texts,
            "onnx int8": lambda texts, n=threads: int8.encode(texts, batch_size_for(len(texts)), n),
        }
        for encoder, encode in encoders.items():
            monkeypatch.setenv(ENCODER_ENV, encoder.split()[0])
            for name, corpus in corpora().items():
                vectors, line = throughput(encode, corpus)
                low = float(cosines(vectors, reference.setdefault(name, vectors)).min())
                print(f"{encoder:9s} {name:11s} threads={threads} {line} min cos {low:.7f}", flush=True)
                if encoder == "onnx fp32":
                    assert low >= 0.9999

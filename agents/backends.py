"""One factory for every LLM backend: heuristic, local (SmolLM2), sim, openai:<model>."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import ssl
import threading
import weakref
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from world.errors import RecgraphError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

SIM_MODEL = "sim-model"
_cache_lock = threading.Lock()


def check_backend(spec: str) -> None:
    """Refuse a malformed backend spec with a message listing the valid ones."""
    if spec in ("heuristic", "local", "sim"):
        return
    if spec.startswith("openai:") and spec.removeprefix("openai:").strip():
        return
    raise RecgraphError(
        f"unknown --llm {spec!r}; use heuristic, local, sim, or openai:<model> "
        "(with --base-url for any OpenAI-compatible endpoint)"
    )


def describe_backend(spec: str) -> str:
    """How a backend is named in every output: heuristic is never passed off as an LLM."""
    if spec == "heuristic":
        return "heuristic (no LLM: agents use their deterministic fallbacks)"
    if spec == "sim":
        return "sim (simulated LLM server on loopback; not a real model)"
    if spec == "local":
        return "local LLM (SmolLM2-135M-Instruct via llama-cpp-python)"
    return f"LLM {spec}"


def model_label(spec: str) -> str:
    """The model name used for pricing and usage records."""
    return spec.removeprefix("openai:") if spec.startswith("openai:") else spec


def enable_llm_cache(path: str) -> None:
    """Replay identical LLM requests from a SQLite file (LangChain's global LLM cache)."""
    from langchain_community.cache import SQLiteCache
    from langchain_core.globals import set_llm_cache

    with _cache_lock:
        set_llm_cache(SQLiteCache(database_path=path))


def build_chat_model(
    spec: str,
    base_url: str = "",
    timeout: float = 60.0,
    temperature: float = 0.0,
    requests_per_second: float = 0.0,
    http_async_client: Any = None,
) -> BaseChatModel | None:
    """A new chat model for `spec` (None for heuristic). It has no output cap of its own: each request
    binds its agent's budget (`bind_schema`), so one model, and its rate limiter, serves every budget."""
    check_backend(spec)
    if spec == "heuristic":
        return None
    if spec == "local":
        from agents.local_llm import LocalChatModel

        return LocalChatModel(temperature=temperature)
    rate_limiter = None
    if requests_per_second > 0:
        from langchain_core.rate_limiters import InMemoryRateLimiter

        rate_limiter = InMemoryRateLimiter(requests_per_second=requests_per_second)
    if spec == "sim":
        url = base_url or os.environ.get("RECGRAPH_SIM_URL", "")
        if not url:
            raise RecgraphError(
                "the sim backend needs a running simulator: pass --llm sim to recgraph (it starts "
                "one) or set RECGRAPH_BASE_URL to an llmsim.server address"
            )
        model, api_key = SIM_MODEL, "sim"
    else:
        url = base_url or os.environ.get("OPENAI_BASE_URL", "")
        model = spec.removeprefix("openai:")
        api_key = os.environ.get("OPENAI_API_KEY", "")
        if not api_key and not url:
            raise RecgraphError(f"--llm {spec} needs OPENAI_API_KEY in the environment (or --base-url)")
        api_key = api_key or "not-needed"
    # Our agent loop retries (and counts) failures itself, waiting what a 429's headers ask
    # (agents/retry_after.py), so the SDK's own retry stays off: it would hide the failures.
    return untransformed_chat_openai()(
        model=model,
        base_url=url or None,
        api_key=api_key,
        timeout=timeout,
        max_retries=0,
        temperature=temperature,
        rate_limiter=rate_limiter,
        http_async_client=http_async_client,
    )


@lru_cache(maxsize=1)
def untransformed_chat_openai() -> type[BaseChatModel]:
    """`ChatOpenAI` sending its messages untouched by the OpenAI SDK's request transform.

    The SDK walks every request's `messages` against its TypedDict annotations to rename aliased
    keys and encode file parts; chat messages of text have neither, so the walk returns them as
    they were, at ≈2.5 ms of CPU per call (as much as the HTTP exchange itself). The messages go
    through `extra_body` instead, which the SDK merges into the JSON body as is: the request on
    the wire is the same, and LangChain's callbacks and traces still see the messages.
    """
    import langchain_openai

    # Same class name: LangSmith run names and the LLM cache's keys (`langchain_core.load.dumps`
    # of the model, which names its class) stay those of ChatOpenAI.
    class ChatOpenAI(langchain_openai.ChatOpenAI):
        """`ChatOpenAI` whose chat-completions payload carries its messages in `extra_body`."""

        def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
            payload = super()._get_request_payload(input_, stop=stop, **kwargs)
            # `response_format` requests go through the SDK's parse helper, which reads messages.
            if "messages" in payload and "response_format" not in payload:
                payload["extra_body"] = {**(payload.get("extra_body") or {}), "messages": payload["messages"]}
                payload["messages"] = []
            return payload

    return ChatOpenAI


chat_model = lru_cache(maxsize=16)(build_chat_model)
"""`build_chat_model`, built once per process per setting (for synchronous use). The settings are
the run's (backend, URL, timeout, temperature, `--rps`), never an agent's output budget, so the
run's requests share one rate limiter."""

_per_loop: weakref.WeakKeyDictionary[Any, dict[tuple, Any]] = weakref.WeakKeyDictionary()


def chat_model_here(*settings: Any) -> BaseChatModel | None:
    """`chat_model(*settings)`, but a separate instance per running asyncio loop (one per loop and
    setting: every output budget shares it).

    An async HTTP client stays bound to the loop it first ran on (langchain-openai even
    shares one per base URL), so each `asyncio.run` gets its own model and client.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return chat_model(*settings)
    models = _per_loop.setdefault(loop, {})
    if settings not in models:
        import httpx

        spec, timeout = settings[0], settings[2]
        client = httpx.AsyncClient(timeout=timeout, verify=tls_context()) if spec != "local" else None
        models[settings] = build_chat_model(*settings, http_async_client=client)
    return models[settings]


@lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (certifi's CA bundle, or `SSL_CERT_FILE` / `SSL_CERT_DIR`), made once
    per process and shared by the per-loop HTTP clients: loading the CA bundle costs ~45 ms of CPU,
    which every new event loop's first LLM call (a `bench perf` pass, a test) would wait for."""
    import httpx

    return httpx.create_ssl_context()


def bind_schema(
    model: BaseChatModel,
    schema: type,
    json_schema: dict[str, Any] | None = None,
    structured_output: str = "auto",
    max_tokens: int | None = None,
) -> object:
    """The model constrained to answer JSON following `schema` (a pydantic model class), each
    request capped at `max_tokens` output tokens (None: the endpoint's default).

    llama.cpp gets a JSON-schema grammar. OpenAI-compatible endpoints get the request shape
    `structured_output` names (`Context.structured_output`: json_schema, json_object, tools, or auto,
    which switches an endpoint once it refuses json_schema; `agents.structured_output`). Either way
    the raw message comes back and our agent loop parses and validates it, so every backend goes
    through the same checks.
    """
    json_schema = json_schema or schema.model_json_schema()
    from agents.local_llm import LocalChatModel

    if isinstance(model, LocalChatModel):
        cap = {"max_tokens": max_tokens} if max_tokens is not None else {}
        return model.bind(response_format={"type": "json_object", "schema": json_schema}, **cap)
    from agents.structured_output import StructuredModel

    return StructuredModel(model, schema.__name__, json_schema, structured_output, max_tokens)


def preflight(context: Any) -> None:
    """Fail before a run starts if any role's backend cannot work (missing key, package, URL)."""
    from state.context import backend_for

    for role in ("rec", "mem", "planner"):
        spec = backend_for(context, role)
        if spec == "local":
            from agents.local_llm import smollm2_path

            smollm2_path()
            if importlib.util.find_spec("llama_cpp") is None:
                raise RecgraphError("the local backend needs llama-cpp-python: pip install -e '.[local]'")
        build_chat_model(spec, context.base_url, context.llm_timeout)

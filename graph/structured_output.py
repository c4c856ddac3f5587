"""Which structured-output method each OpenAI-compatible endpoint accepts, remembered.

OpenAI-compatible servers differ in how they constrain a JSON answer: hosted OpenAI takes
``response_format={"type": "json_schema", ...}``, llama.cpp's server refuses it (HTTP 500) but
takes ``{"type": "json_object", "schema": ...}`` and function calling, others only take a plain
prompt. The thinking gateway walks ``METHODS`` in order and falls back on a refusal; this module
remembers, per endpoint (base URL + model), the method that worked, so later calls go straight to
it: in-process (per instance), and in ``.lumen/structured_output.json`` so a new process skips the
refused methods too. The record is a cache, never a source of truth: a missing, unreadable or
unwritable file only costs one more probe. Two processes racing to write it lose one update at
worst (the file is replaced atomically, never torn).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from state.errors import DataFileError
from state.files import atomic_write_json, read_json
from state.instance import Instance

Method = Literal["json_schema", "json_object", "function_calling", "prompt"]

METHODS: tuple[Method, ...] = ("json_schema", "json_object", "function_calling", "prompt")
"""The fallback chain for OpenAI-compatible endpoints, strongest constraint first."""

RECORD_FILE = "structured_output.json"

DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Endpoint:
    """One OpenAI-compatible endpoint: where it is and which model it serves."""

    base_url: str
    model: str

    @property
    def key(self) -> str:
        """Return the record key (``model@base_url``)."""
        return f"{self.model}@{self.base_url}"


def endpoint_of(model: object) -> Endpoint | None:
    """Return the endpoint of a ``langchain_openai`` chat model (None for any other backend)."""
    if not any(cls.__name__ == "BaseChatOpenAI" for cls in type(model).__mro__):
        return None
    base = (
        getattr(model, "openai_api_base", None)
        or getattr(model, "azure_endpoint", None)
        or DEFAULT_BASE_URL
    )
    name = getattr(model, "deployment_name", None) or getattr(model, "model_name", None) or ""
    return Endpoint(base_url=str(base).rstrip("/"), model=str(name))


_lock = threading.Lock()
_known: dict[tuple[str, str], Method | None] = {}
"""(instance machine dir, endpoint key) -> the method that worked (None: nothing recorded)."""


def record_path(instance: Instance) -> Path:
    """Return the persisted record of the instance (``.lumen/structured_output.json``)."""
    return instance.machine / RECORD_FILE


def _read(path: Path) -> dict[str, Any]:
    """Return the record's endpoint table ({} when the file is missing or unusable)."""
    if not path.exists():
        return {}
    try:
        data = read_json(path)
    except DataFileError:
        return {}
    endpoints = data.get("endpoints") if isinstance(data, dict) else None
    return endpoints if isinstance(endpoints, dict) else {}


def _as_method(value: object) -> Method | None:
    for method in METHODS:
        if value == method:
            return method
    return None


def remembered(instance: Instance, endpoint: Endpoint) -> Method | None:
    """Return the method known to work on ``endpoint`` (in-process first, then the record)."""
    cache_key = (str(instance.machine), endpoint.key)
    with _lock:
        if cache_key in _known:
            return _known[cache_key]
    entry = _read(record_path(instance)).get(endpoint.key)
    method = _as_method(entry.get("method")) if isinstance(entry, dict) else None
    with _lock:
        _known.setdefault(cache_key, method)
        return _known[cache_key]


def remember(
    instance: Instance,
    endpoint: Endpoint,
    method: Method,
    *,
    refused: dict[str, str],
    at: str,
) -> None:
    """Note that ``method`` worked on ``endpoint`` (and why the methods before it were refused).

    Writes the record only when what is known changes; a write failure keeps the in-process
    knowledge and is otherwise ignored (the record is only a cache).
    """
    cache_key = (str(instance.machine), endpoint.key)
    with _lock:
        if _known.get(cache_key) == method and not refused:
            return
        _known[cache_key] = method
        path = record_path(instance)
        endpoints = _read(path)
        previous = endpoints.get(endpoint.key)
        kept = previous.get("refused", {}) if isinstance(previous, dict) else {}
        endpoints[endpoint.key] = {
            "base_url": endpoint.base_url,
            "model": endpoint.model,
            "method": method,
            "refused": {**(kept if isinstance(kept, dict) else {}), **refused},
            "updated": at,
        }
        if not path.parent.is_dir():  # not an initialised instance: keep it in-process only
            return
        try:
            atomic_write_json(path, {"version": 1, "endpoints": endpoints})
        except OSError:
            pass


def forget() -> None:
    """Drop the in-process knowledge (as a new process starts; tests use it)."""
    with _lock:
        _known.clear()

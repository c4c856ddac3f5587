"""The webhook gateway (``lumen serve``): outside signals pushed over HTTP into the §14.2 pipeline.

An ASGI app (Starlette, served by uvicorn):

* ``POST /signals/{source}`` — a ``[sources.NAME] kind = "webhook"`` source. In order:
  unknown source → **404**; ``Authorization: Bearer <token>`` compared in constant time with the
  value of the environment variable ``token_env`` (an unset variable refuses every request)
  → **401**; the source's token bucket (``rate_per_minute``, ``burst``)
  → **429** with ``Retry-After`` (whole seconds); a body over ``max_body_bytes`` (by
  ``Content-Length`` or while streaming) → **413**; then the body: ``application/json`` is a
  §13.2 envelope, anything else is the signal's plain text with the envelope's fields in
  headers (``X-Source-Ref``, ``X-Lang`` or ``Content-Language``, ``X-Source-Kind`` default
  ``webhook``, ``X-Ingest-Ts`` default the time of receipt, ``X-Author-Id``,
  ``X-Author-Handle``, ``X-Topic-Tags`` and ``X-Risk-Flags`` comma-separated, ``X-Quality``).
  A malformed envelope → **422** naming every bad field (``{"error", "fields": {field: why}}``).
  Webhook sources may not claim ``source_kind = "chat"`` (the local user's channel) and, when
  ``source_kinds`` is set, only those kinds. The source's settings are applied (its
  ``topic_tags`` added, ``author_id`` defaulting to the source's name, ``sensitive`` added for a
  ``secret`` source) and the envelope goes through ``graph.signals.ingest_envelope`` — screen,
  dedup by ``source_ref``, Tier A, beliefs, exactly as ``lumen ingest --envelope`` —
  answering **202** ``{"status": "accepted", "id", "digest", "action", …}`` or **200**
  ``{"status": "duplicate", "reason"}``.
* ``GET /healthz`` — ``{"status": "ok"}``. ``GET /metrics`` — every counter of
  ``.lumen/counters.json`` in the Prometheus text format (loopback deployments; put it behind
  your proxy's auth when exposed).

**Durability.** The pipeline runs on one worker thread, so the dedup check and the append are one
step within the process; the 202 is sent only after the signal is appended to the signal ledger
and the memory ledger (a ``write()`` that returned: the record survives the process). Vector
indexing is deferred and batched on a second thread (every ``FLUSH_EVERY_S``, or at
``FLUSH_BATCH`` pending entries), so embedding never delays an answer; the index is a
rebuildable cache. On SIGINT/SIGTERM uvicorn stops accepting, lets every in-flight request finish
(its 202 is only sent after the append), then the lifespan drains the worker and indexes what is
pending. Tokens are never logged: uvicorn's access log has the request line only.

**Live sources.** A source added, changed or removed in ``.lumen/config.toml`` (``lumen sources
add``/``remove``) while the gateway runs takes effect on the next request: the file's size and
modification time are compared on every request, and a changed file is read again (webhook
sources, their tokens from the environment, their buckets; an unchanged source keeps its bucket, so
a reload never resets a rate limit). A file that no longer parses changes nothing: the last good
sources stay, and the problem is logged once.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import math
import os
import re
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from graph.deps import Deps
from state.config import SourceConfig
from state.counters import bump, read_counters
from state.signals import EnvelopeError, SignalEnvelope
from state.sources import TokenBucket, bucket_for

logger = logging.getLogger("lumen.gateway")

FLUSH_EVERY_S = 2.0
FLUSH_BATCH = 64
FORBIDDEN_KINDS = frozenset({"chat"})
HEADER_FIELDS = {
    "source_ref": "x-source-ref",
    "source_kind": "x-source-kind",
    "ingest_ts": "x-ingest-ts",
    "lang": "x-lang",
    "author_id": "x-author-id",
    "author_handle": "x-author-handle",
    "topic_tags": "x-topic-tags",
    "risk_flags": "x-risk-flags",
    "quality": "x-quality",
}
_LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*"'
_METRIC = re.compile(rf"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{{{_LABEL}(,{_LABEL})*\}})?$")


class Rejected(Exception):
    """A request the gateway answers with an error status."""

    def __init__(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(body.get("error", ""))
        self.status = status
        self.body = body
        self.headers = headers or {}


@dataclass
class Gateway:
    """What the app holds: the instance's services, each webhook's token and bucket, the worker."""

    deps: Deps
    monotonic: Callable[[], float] = time.monotonic
    sources: dict[str, SourceConfig] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    buckets: dict[str, TokenBucket] = field(default_factory=dict)
    worker: ThreadPoolExecutor | None = None
    indexer: ThreadPoolExecutor | None = None
    warnings: list[str] = field(default_factory=list)
    stamp: tuple[int, int] | None = None
    """Size and mtime (ns) of the config file the sources were read from."""
    reload_problem: str = ""

    def __post_init__(self) -> None:
        self.stamp = self._config_stamp()
        self._load_sources(self.deps.config.sources)

    def _load_sources(self, configured: dict[str, SourceConfig]) -> None:
        """(Re)build the webhook sources, tokens and buckets; a kept source keeps its bucket."""
        sources: dict[str, SourceConfig] = {}
        tokens: dict[str, str] = {}
        buckets: dict[str, TokenBucket] = {}
        warnings: list[str] = []
        for name, source in sorted(configured.items()):
            if source.kind != "webhook":
                continue
            sources[name] = source
            token = os.environ.get(source.token_env, "")
            if token:
                tokens[name] = token
            else:
                warnings.append(
                    f"source {name!r}: ${source.token_env} is not set; its requests get 401"
                )
            kept = self.sources.get(name)
            same_rate = kept is not None and (kept.rate_per_minute, kept.burst) == (
                source.rate_per_minute,
                source.burst,
            )
            buckets[name] = self.buckets[name] if same_rate else bucket_for(source, self.monotonic)
        self.sources, self.tokens, self.buckets, self.warnings = sources, tokens, buckets, warnings

    def _config_stamp(self) -> tuple[int, int] | None:
        try:
            stat = self.deps.instance.config_file.stat()
        except OSError:
            return None
        return (stat.st_size, stat.st_mtime_ns)

    def refresh(self) -> None:
        """Read the config again when the file changed since the sources were loaded."""
        from state.config import load_config
        from state.errors import LumenError

        stamp = self._config_stamp()
        if stamp == self.stamp:
            return
        self.stamp = stamp
        try:
            config = load_config(self.deps.instance.config_file)
        except (LumenError, ValueError) as exc:
            problem = str(exc).splitlines()[0][:200]
            if problem != self.reload_problem:
                self.reload_problem = problem
                logger.warning("config reload failed, sources unchanged: %s", problem)
            return
        self.reload_problem = ""
        self.deps.config = config
        self._load_sources(config.sources)
        logger.info("config reloaded: webhook sources %s", ", ".join(self.sources) or "(none)")
        for line in self.warnings:  # `lumen serve` prints them at start; a reload logs its own
            logger.warning(line)

    # ------------------------------------------------------------------ checks

    def source(self, name: str) -> SourceConfig:
        """Return the webhook source ``name`` (config re-read if it changed) or reject with 404."""
        self.refresh()
        source = self.sources.get(name)
        if source is None:
            raise Rejected(404, {"error": f"unknown source {name[:64]!r}"})
        return source

    def authenticate(self, name: str, header: str) -> None:
        """Reject with 401 unless ``header`` is ``Bearer <the source's token>``."""
        expected = self.tokens.get(name, "")
        scheme, _, given = header.partition(" ")
        ok = bool(expected) and scheme.lower() == "bearer"
        # Compare even when the scheme is wrong, so timing says nothing about the token.
        same = hmac.compare_digest(given.strip().encode(), expected.encode())
        if not (ok and same):
            raise Rejected(
                401,
                {"error": "missing or wrong bearer token"},
                {"WWW-Authenticate": f'Bearer realm="lumen", scope="{name}"'},
            )

    def admit(self, name: str) -> None:
        """Spend one token of the source's bucket or reject with 429 and ``Retry-After``."""
        wait = self.buckets[name].take()
        if wait > 0:
            seconds = max(1, math.ceil(wait))
            raise Rejected(
                429,
                {"error": "rate limit exceeded", "retry_after": seconds},
                {"Retry-After": str(seconds)},
            )

    # ------------------------------------------------------------------ worker

    def submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """Run ``fn`` on the single pipeline worker."""
        assert self.worker is not None, "the gateway is not started"
        return asyncio.wrap_future(self.worker.submit(fn, *args))

    def ingest(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Run one envelope through the pipeline (on the worker thread)."""
        from graph.signals import ingest_envelope

        result = ingest_envelope(self.deps, payload)
        if self.deps.store.pending() >= FLUSH_BATCH and self.indexer is not None:
            self.indexer.submit(self.flush)  # embedding never holds up the next signal
        if result.action == "duplicate":
            return {"status": "duplicate", "reason": result.reason}
        return {
            "status": "accepted",
            "id": result.memory_id,
            "digest": result.record.get("digest", ""),
            "action": result.record.get("action", ""),
            "entity_id": result.entity_id,
            "slot_key": result.slot_key,
        }

    def flush(self) -> int:
        """Index the deferred memories (on the indexer thread)."""
        return len(self.deps.store.flush()) if self.deps.store.pending() else 0

    def index_later(self) -> asyncio.Future[Any]:
        """Run ``flush`` on the indexer thread."""
        assert self.indexer is not None, "the gateway is not started"
        return asyncio.wrap_future(self.indexer.submit(self.flush))


# --------------------------------------------------------------------------- envelopes


def _problems(exc: ValidationError) -> dict[str, str]:
    problems: dict[str, str] = {}
    for error in exc.errors():
        where = str(error["loc"][0]) if error["loc"] else "envelope"
        message = "missing" if error["type"] == "missing" else error["msg"]
        message = message.removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown field"
        problems[where] = f"{problems[where]}; {message}" if where in problems else message
    return problems


def _from_headers(request: Request, body: bytes, now: datetime) -> dict[str, Any]:
    """Build an envelope from a plain-text body and the ``X-…`` headers."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Rejected(
            422, {"error": "invalid signal envelope", "fields": {"text": "body is not UTF-8"}}
        ) from None
    headers = request.headers
    payload: dict[str, Any] = {"text": text, "source_kind": "webhook", "ingest_ts": now}
    for name, header in HEADER_FIELDS.items():
        value = headers.get(header)
        if value is None:
            continue
        if name in ("topic_tags", "risk_flags"):
            payload[name] = [v.strip() for v in value.split(",") if v.strip()]
        else:
            payload[name] = value.strip()
    if "lang" not in payload and headers.get("content-language"):
        payload["lang"] = headers["content-language"].split(",")[0].strip()
    return payload


def envelope_for(
    name: str, source: SourceConfig, request: Request, body: bytes, now: datetime
) -> dict[str, Any]:
    """Return the validated envelope (JSON-ready) with the source's settings applied; 422 if bad."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "application/json" or content_type.endswith("+json"):
        try:
            payload = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise Rejected(
                422,
                {"error": "invalid signal envelope", "fields": {"body": f"not JSON: {exc}"[:200]}},
            ) from None
        if not isinstance(payload, dict):
            raise Rejected(
                422,
                {"error": "invalid signal envelope", "fields": {"body": "not a JSON object"}},
            )
    else:
        payload = _from_headers(request, body, now)
    problems: dict[str, str] = {}
    try:
        envelope = SignalEnvelope.model_validate(payload)
    except ValidationError as exc:
        problems = _problems(exc)
        envelope = None
    kind = payload.get("source_kind")
    allowed = set(source.source_kinds) if source.source_kinds else None
    if isinstance(kind, str) and (kind in FORBIDDEN_KINDS or (allowed and kind not in allowed)):
        problems["source_kind"] = f"{kind!r} is not accepted from this source"
    if problems or envelope is None:
        raise Rejected(422, {"error": "invalid signal envelope", "fields": problems})
    data = envelope.model_dump(mode="json", exclude_none=True)
    data["topic_tags"] = [*data.get("topic_tags", []), *source.topic_tags]
    data.setdefault("author_id", name)
    if source.privacy == "secret" and "sensitive" not in data["risk_flags"]:
        data["risk_flags"] = [*data["risk_flags"], "sensitive"]
    return data


# --------------------------------------------------------------------------- app


async def _read_body(request: Request, cap: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise Rejected(400, {"error": "invalid Content-Length"}) from None
        if size > cap:
            raise Rejected(413, {"error": f"body larger than {cap} bytes"})
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise Rejected(413, {"error": f"body larger than {cap} bytes"})
    return bytes(body)


def prometheus_text(counters: dict[str, int]) -> str:
    """Render counters (``name{label="v"}`` keys) in the Prometheus text exposition format."""
    by_name: dict[str, list[tuple[str, int]]] = {}
    for key, value in sorted(counters.items()):
        if _METRIC.match(key):
            by_name.setdefault(key.split("{", 1)[0], []).append((key, value))
    lines = []
    for name, samples in by_name.items():
        lines.append(f"# TYPE {name} counter")
        lines += [f"{key} {value}" for key, value in samples]
    return "\n".join(lines) + "\n"


def build_app(deps: Deps, *, monotonic: Callable[[], float] = time.monotonic) -> Starlette:
    """Return the gateway's ASGI app for the instance behind ``deps``."""
    gateway = Gateway(deps, monotonic)
    machine = deps.instance.machine

    async def reject(name: str, exc: Rejected) -> Response:
        def count() -> None:
            if exc.status == 429:
                bump(machine, "gateway_rate_limited_total", source=name)
            else:
                bump(machine, "gateway_rejected_total", status=str(exc.status))

        await run_in_threadpool(count)
        return JSONResponse(exc.body, status_code=exc.status, headers=exc.headers)

    async def signals(request: Request) -> Response:
        name = str(request.path_params["source"])
        try:
            source = gateway.source(name)
            gateway.authenticate(name, request.headers.get("authorization", ""))
            gateway.admit(name)
            body = await _read_body(request, source.max_body_bytes)
            payload = envelope_for(name, source, request, body, datetime.now(UTC))
        except Rejected as exc:
            return await reject(name, exc)
        try:
            result = await gateway.submit(gateway.ingest, payload)
        except EnvelopeError as exc:  # pragma: no cover - validated above
            return JSONResponse({"error": str(exc)}, status_code=422)
        return JSONResponse(result, status_code=202 if result["status"] == "accepted" else 200)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok", "pending_index": deps.store.pending()})

    async def metrics(request: Request) -> Response:
        counters = await run_in_threadpool(read_counters, machine)
        return PlainTextResponse(
            prometheus_text(counters), media_type="text/plain; version=0.0.4; charset=utf-8"
        )

    async def flusher() -> None:
        while True:
            await asyncio.sleep(FLUSH_EVERY_S)
            try:
                await gateway.index_later()
            except Exception as exc:  # the index is a cache: the ledger already has the signal
                logger.warning("indexing deferred signals failed: %s: %s", type(exc).__name__, exc)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        gateway.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lumen-ingest")
        gateway.indexer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lumen-index")
        task = asyncio.create_task(flusher())
        try:
            yield
        finally:
            task.cancel()
            gateway.worker.shutdown(wait=True)  # every accepted signal is appended by now
            await gateway.index_later()
            gateway.indexer.shutdown(wait=True)

    app = Starlette(
        routes=[
            Route("/signals/{source}", signals, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.gateway = gateway
    return app

"""Feed pollers (AsteronIris §14.1 News, §19.1 scheduler): RSS and Atom into the §14.2 pipeline.

One poll of a ``[sources.NAME] kind = "rss"`` source:

1. **Backoff** — after a failure the feed is not fetched again before ``retry_at``
   (``backoff_base_s · 2^(failures-1)``, jittered ±20 %, capped at ``backoff_cap_s``; reset by
   the next success). A skipped poll reports ``status = "backoff"``.
2. **Rate limit** — at most ``rate_per_minute`` fetches a minute (default 4), also for manual
   ``lumen sources poll``: a poll inside the gap reports ``status = "rate_limited"``.
3. **Network policy** — the URL passes the fetch skill's policy (``skills/_netpolicy.check_url``:
   http(s) only, private, loopback and link-local addresses refused unless the host is in the
   source's ``allow_hosts``); every redirect hop is checked again. A refusal fetches nothing.
4. **Conditional GET** — ``If-None-Match`` / ``If-Modified-Since`` from the last answer; a 304
   is a success with nothing fetched. Bodies over ``max_bytes`` and answers slower than
   ``timeout_s`` are failures. No proxy is used (the policy checks the host actually reached).
5. **Parse** — ``feedparser`` (RSS 0.9x/1.0/2.0, Atom 0.3/1.0). Each entry becomes a §13.2
   envelope: ``source_kind = "news"``, ``source_ref`` = the entry's id, else its link (an entry
   with neither is refused: §20, nothing without a ``source_ref`` enters), ``ingest_ts`` = the
   fetch time (collection time, §13.2), ``lang`` from the feed (else the source's ``lang``),
   ``author_id`` = the source's ``publisher`` (default: the source's name), so entries land on
   the §15 entity ``feed:news:publisher:<id>``; ``topic_tags`` from the entry's categories plus
   the source's tags; ``text`` = title and summary with markup removed. A ``secret`` source's
   entries carry the ``sensitive`` risk flag, which keeps them out of chat context.
6. **Pipeline** — ``graph.signals.ingest_envelope`` (screen, dedup by ``source_ref`` across
   restarts, Tier A, beliefs), exactly as ``lumen ingest --envelope``.

The report is ``{"source", "fetched", "new", "duplicates", "blocked"}`` plus ``status`` (and
``error`` / ``retry_in`` when they apply). ``fetched`` = entries in the document = ``new`` +
``duplicates`` + ``blocked``; ``blocked`` counts entries the injection screen blocked (recorded
as blocked signals, their text never stored) and entries refused before the pipeline (no
``source_ref``, an invalid envelope).
"""

from __future__ import annotations

import html
import importlib
import ipaddress
import random
import re
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from http.client import HTTPMessage
from typing import Any, cast
from urllib.parse import urljoin, urlsplit

from graph.deps import Deps
from state.config import SourceConfig
from state.counters import bump
from state.signals import EnvelopeError
from state.sources import FeedState, SourceStates, backoff_delay

USER_AGENT = "lumen-feeds/0.1 (a personal agent's feed reader)"
CHUNK = 65_536
MAX_REDIRECTS = 5
MAX_ENTRY_TEXT = 8_000
_TAGS = re.compile(r"<[^>]{0,2000}>")
_HANDLE = re.compile(r"[^A-Za-z0-9 ._@()\-]+")

CheckUrl = Callable[[str, Collection[str]], "str | None"]


# --------------------------------------------------------------------------- network policy


def _fallback_check_url(url: str, allow_hosts: Collection[str] = ()) -> str | None:
    """The fetch skill's policy, for when ``skills/_netpolicy.py`` is not installed.

    http(s) only; a host in ``allow_hosts`` passes; otherwise every address the host resolves to
    must be public (no private, loopback, link-local, multicast, reserved or unspecified one).
    """
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        return f"refused: {parts.scheme or 'schemeless'} URL (http and https only)"
    host = (parts.hostname or "").lower()
    if not host:
        return "refused: the URL has no host"
    if host in {h.lower() for h in allow_hosts}:
        return None
    try:
        infos = socket.getaddrinfo(host, parts.port or 80, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        return f"refused: cannot resolve {host} ({exc})"
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if not address.is_global or address.is_multicast:
            return f"refused: {host} resolves to a non-public address {address}"
    return None


def check_url(url: str, allow_hosts: Collection[str] = ()) -> str | None:
    """Return why ``url`` may not be fetched, or ``None`` (the fetch skill's network policy)."""
    try:
        module = importlib.import_module("skills._netpolicy")
    except ImportError:
        return _fallback_check_url(url, allow_hosts)
    checker = cast(CheckUrl, module.check_url)
    return checker(url, allow_hosts)


# --------------------------------------------------------------------------- fetching


class FetchError(Exception):
    """A failed fetch (network, HTTP status, size, timeout, not a feed, policy on redirect)."""

    def __init__(self, message: str, *, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused


@dataclass(frozen=True)
class Fetched:
    """One HTTP answer: 200 with a body, or 304."""

    status: int
    body: bytes
    etag: str
    last_modified: str
    content_type: str


class _PolicyRedirects(urllib.request.HTTPRedirectHandler):
    """Follow at most ``MAX_REDIRECTS`` redirects, each target checked by the network policy."""

    max_redirections = MAX_REDIRECTS

    def __init__(self, allow_hosts: Collection[str]) -> None:
        super().__init__()
        self.allow_hosts = allow_hosts

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        """Refuse a redirect the policy refuses."""
        target = urljoin(req.full_url, newurl)
        reason = check_url(target, self.allow_hosts)
        if reason:
            raise FetchError(f"redirect to {target}: {reason}", refused=True)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def fetch(url: str, source: SourceConfig, state: FeedState) -> Fetched:
    """GET ``url`` conditionally; raise ``FetchError`` on any failure."""
    from skills._netpolicy import PinnedHTTPHandler, PinnedHTTPSHandler

    # Pinned connections re-check the address when they connect and connect only to it: a name
    # that resolves elsewhere between the check and the connection (DNS rebinding) is refused.
    director = urllib.request.OpenerDirector()
    for handler in (
        PinnedHTTPHandler(source.allow_hosts),
        PinnedHTTPSHandler(source.allow_hosts),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
        _PolicyRedirects(source.allow_hosts),
    ):
        director.add_handler(handler)
    headers = {
        "User-Agent": USER_AGENT,
        "Accept": "application/rss+xml, application/atom+xml, application/xml;q=0.9, */*;q=0.5",
    }
    if state.etag:
        headers["If-None-Match"] = state.etag
    if state.last_modified:
        headers["If-Modified-Since"] = state.last_modified
    deadline = time.monotonic() + source.timeout_s
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with director.open(request, timeout=source.timeout_s) as response:
            chunks: list[bytes] = []
            size = 0
            while True:
                if time.monotonic() > deadline:
                    raise FetchError(f"timed out after {source.timeout_s:g} s")
                chunk = response.read(CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > source.max_bytes:
                    raise FetchError(f"feed larger than max_bytes ({source.max_bytes})")
                chunks.append(chunk)
            return Fetched(
                status=int(response.status),
                body=b"".join(chunks),
                etag=response.headers.get("ETag", "") or "",
                last_modified=response.headers.get("Last-Modified", "") or "",
                content_type=response.headers.get("Content-Type", "") or "",
            )
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 304:
            return Fetched(304, b"", state.etag, state.last_modified, "")
        raise FetchError(f"HTTP {exc.code} {exc.reason}") from None
    except TimeoutError:
        raise FetchError(f"timed out after {source.timeout_s:g} s") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise FetchError(f"timed out after {source.timeout_s:g} s") from None
        raise FetchError(f"network error: {reason}") from None
    except (OSError, ValueError) as exc:
        raise FetchError(f"network error: {type(exc).__name__}: {exc}") from None


# --------------------------------------------------------------------------- entries


def _plain(text: str) -> str:
    """Drop markup and entities, collapse whitespace."""
    return " ".join(html.unescape(_TAGS.sub(" ", text)).split())


def _lang(feed_lang: str, default: str) -> str:
    tag = (feed_lang or "").strip().replace("_", "-")
    return tag if re.fullmatch(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*", tag) else default


def entry_envelope(
    entry: Any, *, name: str, source: SourceConfig, feed_lang: str, now: datetime
) -> dict[str, Any] | None:
    """Build the §13.2 envelope of one feed entry (``None`` when it has no id and no link)."""
    ref = str(entry.get("id") or entry.get("link") or "").strip()
    if not ref:
        return None
    title = _plain(str(entry.get("title") or ""))
    summary = _plain(str(entry.get("summary") or ""))
    text = "\n\n".join(part for part in (title, summary) if part)[:MAX_ENTRY_TEXT]
    tags = [str(t.get("term") or "") for t in entry.get("tags") or [] if t.get("term")]
    author = _HANDLE.sub("", str(entry.get("author") or ""))[:64].strip()
    risks = ["sensitive"] if source.privacy == "secret" else []
    return {
        "text": text,
        "source_kind": "news",
        "source_ref": ref[:2048],
        "ingest_ts": now.isoformat(),
        "lang": _lang(feed_lang, source.lang),
        "author_id": source.publisher or name,
        **({"author_handle": author} if author else {}),
        "topic_tags": [*tags, *source.topic_tags],
        "risk_flags": risks,
        "quality": source.quality,
    }


# --------------------------------------------------------------------------- polling


@dataclass
class PollReport:
    """What one poll of one feed did."""

    source: str
    status: str = "ok"  # ok | not_modified | error | backoff | rate_limited | refused
    fetched: int = 0
    new: int = 0
    duplicates: int = 0
    blocked: int = 0
    error: str = ""
    retry_in: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form (``error`` and ``retry_in`` only when set)."""
        data: dict[str, Any] = {
            "source": self.source,
            "fetched": self.fetched,
            "new": self.new,
            "duplicates": self.duplicates,
            "blocked": self.blocked,
            "status": self.status,
        }
        if self.error:
            data["error"] = self.error
        if self.retry_in is not None:
            data["retry_in"] = round(self.retry_in, 3)
        return data

    def line(self) -> str:
        """Return a one-line human summary."""
        text = (
            f"{self.source}: {self.status}, fetched {self.fetched}, new {self.new}, "
            f"duplicates {self.duplicates}, blocked {self.blocked}"
        )
        if self.error:
            text += f" ({self.error})"
        if self.retry_in is not None:
            text += f", retry in {self.retry_in:.0f} s"
        return text


def feed_sources(deps: Deps) -> dict[str, SourceConfig]:
    """Return the configured feeds by name."""
    return {n: s for n, s in sorted(deps.config.sources.items()) if s.kind == "rss"}


def poll_source(
    deps: Deps, name: str, source: SourceConfig, *, rng: random.Random | None = None
) -> PollReport:
    """Poll one feed now (respecting its backoff and rate limit); see the module docstring."""
    rng = rng or random.Random()
    states = SourceStates(deps.instance.machine)
    state = states.get(name)
    now = deps.now()
    report = PollReport(name)
    machine = deps.instance.machine
    if state.retry_at is not None and now < state.retry_at:
        report.status = "backoff"
        report.retry_in = (state.retry_at - now).total_seconds()
        bump(machine, "feed_backoff_skip_total", source=name)
        return report
    gap = timedelta(seconds=60.0 / source.per_minute())
    if state.last_fetch is not None and now - state.last_fetch < gap:
        report.status = "rate_limited"
        report.retry_in = (state.last_fetch + gap - now).total_seconds()
        bump(machine, "feed_rate_limited_total", source=name)
        return report
    every = timedelta(seconds=source.every_seconds())
    refusal = check_url(source.url, source.allow_hosts)
    if refusal:
        return _refused(deps, states, name, state, report, refusal, now + every)
    state.last_fetch = now
    try:
        answer = fetch(source.url, source, state)
        document = _parse(answer) if answer.status != 304 else None
    except FetchError as exc:
        if exc.refused:
            return _refused(deps, states, name, state, report, str(exc), now + every)
        return _failed(deps, states, name, source, state, report, str(exc), rng)
    bump(machine, "feed_fetch_total", source=name, status=str(answer.status))
    state.failures = 0
    state.retry_at = None
    state.due_at = now + every
    state.last_error = ""
    state.last_status = str(answer.status)
    state.etag, state.last_modified = answer.etag, answer.last_modified
    if document is None:
        report.status = "not_modified"
        states.put(name, state)
        return report
    feed_lang = str(document.feed.get("language") or "")
    for entry in document.entries:
        _ingest_entry(deps, report, entry, name=name, source=source, feed_lang=feed_lang, now=now)
    state.fetched_total += report.fetched
    state.new_total += report.new
    states.put(name, state)
    deps.store.flush()
    return report


def _parse(answer: Fetched) -> Any:
    import feedparser  # type: ignore[import-untyped]

    document = feedparser.parse(
        answer.body, response_headers={"content-type": answer.content_type or "application/xml"}
    )
    if not document.get("version") and not document.entries:
        problem = document.get("bozo_exception")
        raise FetchError(f"not an RSS or Atom feed{f': {problem}' if problem else ''}")
    return document


def _ingest_entry(
    deps: Deps,
    report: PollReport,
    entry: Any,
    *,
    name: str,
    source: SourceConfig,
    feed_lang: str,
    now: datetime,
) -> None:
    from graph.signals import ingest_envelope

    report.fetched += 1
    envelope = entry_envelope(entry, name=name, source=source, feed_lang=feed_lang, now=now)
    if envelope is None:
        report.blocked += 1
        bump(deps.instance.machine, "feed_entry_refused_total", source=name, reason="no_ref")
        return
    try:
        result = ingest_envelope(deps, envelope)
    except EnvelopeError:
        report.blocked += 1
        bump(deps.instance.machine, "feed_entry_refused_total", source=name, reason="envelope")
        return
    if result.action == "duplicate":
        report.duplicates += 1
    elif result.record.get("action") == "block":
        report.blocked += 1
    else:
        report.new += 1


def _refused(
    deps: Deps,
    states: SourceStates,
    name: str,
    state: FeedState,
    report: PollReport,
    reason: str,
    due: datetime,
) -> PollReport:
    """A policy refusal: nothing fetched, no backoff (retrying cannot help), due again later."""
    bump(deps.instance.machine, "feed_refused_total", source=name)
    state.due_at = due
    state.last_status = "refused"
    state.last_error = reason[:300]
    states.put(name, state)
    report.status = "refused"
    report.error = reason
    return report


def _failed(
    deps: Deps,
    states: SourceStates,
    name: str,
    source: SourceConfig,
    state: FeedState,
    report: PollReport,
    error: str,
    rng: random.Random,
) -> PollReport:
    """A failed fetch: count it and back off exponentially with jitter."""
    now = deps.now()
    state.failures += 1
    delay = backoff_delay(
        state.failures, base=source.backoff_base_s, cap=source.backoff_cap_s, rng=rng
    )
    state.retry_at = now + timedelta(seconds=delay)
    state.due_at = state.retry_at
    state.last_status = "error"
    state.last_error = error[:300]
    states.put(name, state)
    bump(deps.instance.machine, "feed_fetch_failure_total", source=name)
    bump(deps.instance.machine, "feed_backoff_total", source=name)
    report.status = "error"
    report.error = error
    report.retry_in = delay
    return report


def poll_due(deps: Deps, *, rng: random.Random | None = None) -> list[PollReport]:
    """Poll every feed that is due now and not backing off (the scheduler's job)."""
    states = SourceStates(deps.instance.machine).read()
    now = deps.now()
    reports = []
    for name, source in feed_sources(deps).items():
        state = states.get(name, FeedState())
        due = state.due_at is None or state.due_at <= now
        if due and (state.retry_at is None or state.retry_at <= now):
            reports.append(poll_source(deps, name, source, rng=rng))
    return reports


def run_source_jobs(
    deps: Deps,
    progress: Callable[[str], None] | None = None,
    *,
    rng: random.Random | None = None,
) -> list[PollReport]:
    """The scheduler's source work (``lumen run``): due feed polls, then the hourly trend job.

    Never raises: a broken feed or store is reported through ``progress`` and the run goes on
    (each feed's own failure is already its backoff).
    """
    from graph.trends import snapshot_when_due

    reports: list[PollReport] = []
    try:
        reports = poll_due(deps, rng=rng)
        snapshots = snapshot_when_due(deps)
    except Exception as exc:
        if progress:
            progress(f"  sources: {type(exc).__name__}: {exc}"[:200])
        return reports
    if progress:
        for report in reports:
            progress(f"  feed {report.line()}")
        if snapshots:
            progress(f"  trends: {len(snapshots)} topic snapshot(s)")
    return reports

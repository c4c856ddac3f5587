"""Outside signal sources: their definitions in ``config.toml`` and their poll state on disk.

Definitions live in ``.lumen/config.toml`` under ``[sources.NAME]`` (``state.config.SourceConfig``)
and change only through ``lumen sources add/remove`` (or a user editing the file): nothing the
agent writes back (persona, psyche, self-tasks) can reach them, because the writeback guard's
allowlist has no ``sources`` key and no agent path writes ``config.toml``.

A feed's poll state (ETag, Last-Modified, when it is due, consecutive failures, the backoff
deadline, last status) is ``.lumen/sources.json``, one read-modify-write under a file lock per
change, written atomically, so ``lumen run`` and ``lumen sources poll`` may share it and it
survives restarts. The scheduler reads ``due_at`` and ``retry_at`` to decide what to fetch and
sends the validators back, so every field is read by a later decision.

Also here, as plain functions with the clock and the RNG injected: the exponential backoff with
jitter (``backoff_delay``) and the webhook token bucket (``TokenBucket``).
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from state.config import Config, SourceConfig
from state.errors import DataFileError, LumenError
from state.files import atomic_write_json, atomic_write_text, read_json

STATE_FILE = "sources.json"
BACKOFF_JITTER = 0.2
"""Each backoff delay is multiplied by a uniform factor in [0.8, 1.2] (then capped)."""


class FeedState(BaseModel):
    """What Lumen remembers about polling one feed."""

    model_config = ConfigDict(extra="ignore")

    etag: str = ""
    last_modified: str = ""
    last_fetch: datetime | None = None
    due_at: datetime | None = None
    retry_at: datetime | None = None
    failures: int = 0
    last_status: str = ""
    last_error: str = ""
    fetched_total: int = 0
    new_total: int = 0


def backoff_delay(
    failures: int,
    *,
    base: float,
    cap: float,
    rng: random.Random,
    jitter: float = BACKOFF_JITTER,
) -> float:
    """Return the wait in seconds after ``failures`` consecutive failures (≥ 1).

    ``base · 2^(failures-1)`` times a uniform factor in ``[1 - jitter, 1 + jitter]``, never more
    than ``cap``. A success resets ``failures`` to 0 (the caller's job).
    """
    raw = base * (2.0 ** max(failures - 1, 0))
    return min(cap, raw * rng.uniform(1.0 - jitter, 1.0 + jitter))


class TokenBucket:
    """A token bucket: ``capacity`` tokens, refilled at ``rate`` tokens per second.

    ``take()`` spends one token and returns 0, or returns how many seconds until one is
    available (spending nothing). ``clock`` is a monotonic clock in seconds (injected in tests).
    Thread-safe.
    """

    def __init__(self, capacity: float, rate: float, clock: Callable[[], float]) -> None:
        self.capacity = max(capacity, 1.0)
        self.rate = rate
        self.clock = clock
        self.tokens = self.capacity
        self.stamp = clock()
        self._lock = threading.Lock()

    def take(self) -> float:
        """Spend one token (0 returned) or say how long to wait for one."""
        with self._lock:
            now = self.clock()
            self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return 0.0
            return (1.0 - self.tokens) / self.rate


def bucket_for(source: SourceConfig, clock: Callable[[], float]) -> TokenBucket:
    """Return the token bucket of a webhook source (``burst`` default: one minute's worth)."""
    per_minute = source.per_minute()
    capacity = float(source.burst) if source.burst else math.ceil(per_minute)
    return TokenBucket(capacity, per_minute / 60.0, clock)


class SourceStates:
    """The poll state of every feed, in ``<instance>/.lumen/sources.json``."""

    def __init__(self, machine_dir: Path) -> None:
        self.path = machine_dir / STATE_FILE

    def read(self) -> dict[str, FeedState]:
        """Return every feed's state (empty when nothing was polled yet)."""
        return dict(self._load().get("feeds", {}))

    def get(self, name: str) -> FeedState:
        """Return one feed's state (fresh when it was never polled)."""
        return self.read().get(name, FeedState())

    def put(self, name: str, state: FeedState) -> None:
        """Replace one feed's state."""
        with self._locked() as raw:
            raw.setdefault("feeds", {})[name] = state

    def drop(self, name: str) -> None:
        """Forget a feed's state (its source was removed)."""
        with self._locked() as raw:
            raw.setdefault("feeds", {}).pop(name, None)

    def marker(self, key: str) -> datetime | None:
        """Return a named timestamp (e.g. the last trend snapshot hour)."""
        value = self._load().get("markers", {}).get(key)
        return value if isinstance(value, datetime) else None

    def set_marker(self, key: str, when: datetime) -> None:
        """Record a named timestamp."""
        with self._locked() as raw:
            raw.setdefault("markers", {})[key] = when

    def _load(self) -> dict[str, Any]:
        if not self.path.exists():
            return {}
        data = read_json(self.path)
        try:
            feeds = {k: FeedState.model_validate(v) for k, v in data.get("feeds", {}).items()}
            markers = {
                k: datetime.fromisoformat(v) for k, v in data.get("markers", {}).items() if v
            }
        except (ValidationError, ValueError, AttributeError, TypeError) as exc:
            raise DataFileError(f"{self.path}: invalid source state: {exc}") from None
        return {"feeds": feeds, "markers": markers}

    @contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock", timeout=30):
            raw = self._load()
            yield raw
            atomic_write_json(
                self.path,
                {
                    "version": 1,
                    "feeds": {
                        k: v.model_dump(mode="json") for k, v in raw.get("feeds", {}).items()
                    },
                    "markers": {k: v.isoformat() for k, v in raw.get("markers", {}).items()},
                },
            )


# --------------------------------------------------------------------------- definitions


def add_source(config_file: Path, name: str, table: dict[str, Any]) -> SourceConfig:
    """Add ``[sources.NAME]`` to the config file (validated first; comments kept; atomic)."""
    import tomlkit

    from state.config import load_config

    current = load_config(config_file)
    if name in current.sources:
        raise LumenError(f"a source named {name!r} already exists (remove it first)")
    try:
        Config.model_validate({"sources": {name: table}})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"][2:])
        message = str(first["msg"]).removeprefix("Value error, ")
        raise LumenError(f"source {name!r}: {where + ': ' if where else ''}{message}") from None
    text = config_file.read_text(encoding="utf-8") if config_file.exists() else ""
    document = tomlkit.parse(text)
    sources = document.get("sources")
    if sources is None:
        sources = tomlkit.table(is_super_table=True)
        document["sources"] = sources
    entry = tomlkit.table()
    for key, value in table.items():
        entry[key] = value
    sources[name] = entry
    atomic_write_text(config_file, tomlkit.dumps(document))
    return load_config(config_file).sources[name]


def remove_source(config_file: Path, machine_dir: Path, name: str) -> None:
    """Remove ``[sources.NAME]`` and its poll state (one-line error if there is none)."""
    import tomlkit

    text = config_file.read_text(encoding="utf-8") if config_file.exists() else ""
    document = tomlkit.parse(text)
    sources = document.get("sources")
    if sources is None or name not in sources:
        raise LumenError(f"no source named {name!r} (see 'lumen sources list')")
    del sources[name]
    if not sources:
        del document["sources"]
    atomic_write_text(config_file, tomlkit.dumps(document))
    SourceStates(machine_dir).drop(name)

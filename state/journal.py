"""The append-only memory ledger: ``<root>/<year>/<year>-<month>-<day>.jsonl``.

Each record is serialised to one line and written with a single ``os.write`` on a file opened
with ``O_APPEND`` while holding an inter-process file lock, so concurrent ``lumen chat`` and
``lumen run`` processes interleave whole lines and never tear one. A line cut short anyway (a
crash of the machine, a full disk) is moved aside to ``<day>.jsonl.torn`` by the next append,
never merged with it, and ``lumen doctor`` reports it. There is no update or delete: later
events (weight changes, soft deletes) are new lines that refer to earlier ids.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_json

from state.files import append_lines, torn_lines
from state.records import Author, MemoryEntry
from state.self_state import utc_now

_DAY_FILE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.jsonl$")


def entry_digest(entry: MemoryEntry) -> str:
    """Return the SHA-256 of an entry's canonical content (everything but the digest)."""
    payload = entry.model_dump(mode="json", exclude={"digest"})
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


EncodedEntry = tuple[date, bytes]
"""A ledger line ready to append, with the day file it belongs to."""


def encode_entry(
    description: str,
    *,
    author: Author,
    situation: str = "",
    meta: dict[str, Any] | None = None,
    timestamp: datetime | None = None,
) -> EncodedEntry:
    """Return the ledger line of a new entry, built without a ``MemoryEntry`` round trip.

    For the step memories a run writes by the dozen (``graph.assembly``): the line is the entry's
    canonical content (``entry_digest``'s JSON, keys sorted) with its digest added, so it reads
    back as the ``MemoryEntry`` that ``new_entry`` would have built from the same arguments,
    digest included. ``meta`` must hold JSON values only (strings, numbers, booleans, None) and
    ``author`` must be an ``Author``. Building, digesting and serialising the entry through
    pydantic was about 1.5 ms of a scripted turn's 38 step memories.
    """
    ts = timestamp or utc_now()
    if ts.tzinfo is None:
        raise ValueError("timestamp must carry a timezone (ISO 8601 with offset)")
    if meta and not all(isinstance(key, str) for key in meta):  # what new_entry would refuse
        raise ValueError("meta keys must be strings")
    payload = {
        "author": author,
        "description": description,
        "id": uuid.uuid4().hex,
        "meta": meta or {},
        "situation": situation,
        "tainted": False,
        "timestamp": to_json(ts).decode()[1:-1],  # exactly as pydantic serialises it
        "weight": 0.5,
    }
    canonical = json.dumps(  # no NaN or Infinity: the line must read back as it was digested
        payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    return ts.date(), f'{canonical[:-1]},"digest":"{digest}"}}\n'.encode()


@dataclass
class ReadReport:
    """Entries read from the ledger plus the lines that had to be skipped."""

    entries: list[MemoryEntry] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


class MemoryJournal:
    """Append-only JSONL ledger partitioned by year and day."""

    def __init__(self, root: Path) -> None:
        """Open (or lazily create) a ledger rooted at ``root``."""
        self.root = Path(root)

    def day_file(self, day: date) -> Path:
        """Return the file that holds the entries of ``day``."""
        return self.root / f"{day.year:04d}" / f"{day.isoformat()}.jsonl"

    def new_entry(
        self,
        description: str,
        *,
        author: Author,
        situation: str = "",
        weight: float = 0.5,
        meta: dict[str, Any] | None = None,
        timestamp: datetime | None = None,
        tainted: bool = False,
    ) -> MemoryEntry:
        """Build a validated, digested entry (not yet written)."""
        draft = MemoryEntry(
            id=uuid.uuid4().hex,
            timestamp=timestamp or utc_now(),
            author=author,
            weight=weight,
            situation=situation,
            description=description,
            meta=meta or {},
            tainted=tainted,
        )
        return draft.model_copy(update={"digest": entry_digest(draft)})

    def append(self, entry: MemoryEntry) -> MemoryEntry:
        """Append one entry as a single locked ``write()``; returns the entry."""
        self.append_many([entry])
        return entry

    def append_many(self, entries: list[MemoryEntry]) -> None:
        """Append entries under one lock per day file, still one ``write()`` per record.

        A torn last line left by a crash (no newline, or not JSON) is first moved aside to
        ``<day>.jsonl.torn`` with its offset and reason (``state.files.repair_tail``), so a new
        entry never merges with it; ``lumen doctor`` reports it.
        """
        self.append_encoded(
            [(e.timestamp.date(), (e.model_dump_json() + "\n").encode("utf-8")) for e in entries]
        )

    def append_encoded(self, encoded: list[EncodedEntry]) -> None:
        """Append ledger lines (``encode_entry``, ``append_many``): one locked write per day."""
        by_day: dict[Path, list[bytes]] = {}
        for day, line in encoded:
            by_day.setdefault(self.day_file(day), []).append(line)
        for path, lines in by_day.items():
            append_lines(path, lines)

    def torn(self) -> list[tuple[Path, dict[str, Any]]]:
        """Return the torn lines moved aside from this ledger (``*.jsonl.torn``)."""
        return torn_lines(self.root)

    def tail(self, n: int, *, authors: tuple[str, ...] | None = None) -> list[MemoryEntry]:
        """Return the ``n`` newest entries (newest first), reading day files backwards."""
        found: list[MemoryEntry] = []
        wanted = _author_pattern(tuple(authors)) if authors else None
        for path in self._files_newest_first():
            for raw in _reverse_lines(path):
                if wanted is not None and wanted.search(raw) is None:
                    continue
                try:
                    found.append(MemoryEntry.model_validate_json(raw))
                except (ValidationError, ValueError):
                    continue
                if len(found) >= n:
                    return sorted(found, key=lambda e: e.timestamp, reverse=True)
        return sorted(found, key=lambda e: e.timestamp, reverse=True)

    def _files_newest_first(self) -> Iterator[Path]:
        """Yield day files from the newest, listing one year directory at a time."""
        if not self.root.is_dir():
            return
        years = sorted(
            (p for p in self.root.iterdir() if p.is_dir() and p.name.isdigit()),
            key=lambda p: p.name,
            reverse=True,
        )
        for year in years:
            days = sorted((p for p in year.iterdir() if _DAY_FILE.match(p.name)), reverse=True)
            yield from (p for p in days if p.name.startswith(year.name))

    def files(self) -> list[Path]:
        """Return every day file, oldest first."""
        if not self.root.is_dir():
            return []
        found = [
            path
            for year_dir in self.root.iterdir()
            if year_dir.is_dir() and year_dir.name.isdigit()
            for path in year_dir.iterdir()
            if _DAY_FILE.match(path.name)
        ]
        return sorted(found, key=lambda p: p.name)

    def read(self, *, day: date | None = None) -> ReadReport:
        """Read entries (all, or one day), skipping and reporting unreadable lines."""
        report = ReadReport()
        paths = [self.day_file(day)] if day else self.files()
        for path in paths:
            for entry_or_error in self._read_file(path):
                if isinstance(entry_or_error, MemoryEntry):
                    report.entries.append(entry_or_error)
                else:
                    report.skipped.append(entry_or_error)
        report.entries.sort(key=lambda e: e.timestamp)
        return report

    def __iter__(self) -> Iterator[MemoryEntry]:
        """Iterate over every readable entry, oldest first."""
        return iter(self.read().entries)

    @staticmethod
    def _read_file(path: Path) -> Iterator[MemoryEntry | str]:
        if not path.exists():
            return
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                try:
                    yield MemoryEntry.model_validate_json(raw)
                except (ValidationError, ValueError) as exc:
                    reason = str(exc).splitlines()[0][:120]
                    yield f"{path}:{number}: unreadable memory line skipped ({reason})"


@functools.cache
def _author_pattern(authors: tuple[str, ...]) -> re.Pattern[bytes]:
    """Match a ledger line written by one of ``authors`` (one scan of the line, not one each).

    Lines are written by ``json.dumps`` without spaces, so the author reads ``"author":"self"``.
    """
    names = b"|".join(re.escape(a.encode()) for a in authors)
    return re.compile(b'"author":"(?:' + names + b')"')


def _reverse_lines(path: Path, block: int = 65536) -> Iterator[bytes]:
    """Yield the non-empty lines of a file from the last to the first."""
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        position = handle.tell()
        rest = b""
        while position > 0:
            step = min(block, position)
            position -= step
            handle.seek(position)
            chunk = handle.read(step) + rest
            lines = chunk.split(b"\n")
            rest = lines[0]
            for line in reversed(lines[1:]):
                if line.strip():
                    yield line
        if rest.strip():
            yield rest


def verify_digests(entries: list[MemoryEntry]) -> list[str]:
    """Return the ids of entries whose content no longer matches their digest."""
    return [entry.id for entry in entries if entry.digest != entry_digest(entry)]

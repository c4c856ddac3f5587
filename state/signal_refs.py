"""The ``source_ref`` index of ingested signals (AsteronIris §19.1: a signal is never re-ingested).

``.lumen/signal_refs.json`` maps every ingested ``source_ref`` to the digest of its content. The
signal ledger (``data/signals/<year>/<date>.jsonl``, ``FactAdded`` lines) is the truth; the index
is a cache of it that remembers how far into each ledger file it has read (``synced``).

De-duplication is check-and-act under one inter-process lock: ``claim`` checks the index and, for
a new ref, keeps the lock while the caller appends its ``FactAdded`` line, then records the ref.
Two threads or processes ingesting the same ref therefore write one line. Before every check the
index catches up with the ledger (the lines past ``synced``), so a process killed between its
``FactAdded`` line and the index write leaves no gap for a duplicate. An index that does not parse
is rebuilt from the ledger.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from state.files import atomic_write_json

REFS_FILE = "signal_refs.json"
LOCK_TIMEOUT_S = 30.0


class RefIndex:
    """The ``source_ref`` index of one instance."""

    def __init__(self, machine: Path, signals_dir: Path) -> None:
        """Bind the index file (in ``machine``) to the signal ledger under ``signals_dir``."""
        self.path = machine / REFS_FILE
        self.signals_dir = signals_dir

    def seen(self, source_ref: str) -> bool:
        """Say whether ``source_ref`` was already ingested (a lock-free look; ``claim`` decides)."""
        if not source_ref:
            return False
        refs, _ = self._load()
        return source_ref in refs

    @contextmanager
    def claim(self, source_ref: str, digest: str) -> Iterator[bool]:
        """Yield whether ``source_ref`` is new, holding the lock while the caller records it.

        For a new ref the body appends the signal's ``FactAdded`` line; when it returns, the
        ref is written to the index. An empty ref is always new and takes no lock.
        """
        if not source_ref:
            yield True
            return
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_S):
            refs, synced = self._load()
            changed = self._catch_up(refs, synced)
            if source_ref in refs:
                if changed:
                    self._save(refs, synced)
                yield False
                return
            yield True
            refs[source_ref] = digest
            self._catch_up(refs, synced)
            self._save(refs, synced)

    # ------------------------------------------------------------------ internals

    def _load(self) -> tuple[dict[str, str], dict[str, int]]:
        """Return (refs, synced offsets); an unreadable index is empty (rebuilt by catch-up)."""
        try:
            raw: Any = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}, {}
        if not isinstance(raw, dict):
            return {}, {}
        if "refs" in raw and isinstance(raw.get("synced"), dict):
            refs, synced = raw["refs"], raw["synced"]
            if isinstance(refs, dict):
                return (
                    {str(k): str(v) for k, v in refs.items()},
                    {str(k): int(v) for k, v in synced.items() if isinstance(v, int)},
                )
            return {}, {}
        # the first format: a flat {ref: digest} map, with no record of what was read
        return {str(k): str(v) for k, v in raw.items()}, {}

    def _save(self, refs: dict[str, str], synced: dict[str, int]) -> None:
        atomic_write_json(self.path, {"refs": refs, "synced": synced})

    def _catch_up(self, refs: dict[str, str], synced: dict[str, int]) -> bool:
        """Add the refs of ``FactAdded`` lines past each file's synced offset; say if any moved."""
        if not self.signals_dir.is_dir():
            return False
        moved = False
        for path in sorted(self.signals_dir.rglob("*.jsonl")):
            name = path.relative_to(self.signals_dir).as_posix()
            start = synced.get(name, 0)
            try:
                size = path.stat().st_size
            except FileNotFoundError:
                continue
            if size <= start:
                continue
            with path.open("rb") as handle:
                handle.seek(start)
                chunk = handle.read(size - start)
            complete = chunk[: chunk.rfind(b"\n") + 1]  # a torn tail is read once it is whole
            for raw in complete.splitlines():
                try:
                    record = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(record, dict) or record.get("event") != "FactAdded":
                    continue
                ref = record.get("source_ref")
                if isinstance(ref, str) and ref:
                    refs.setdefault(ref, str(record.get("digest", "")))
            if complete:
                synced[name] = start + len(complete)
                moved = True
        return moved

"""Checkpoint pruning: keep each thread's newest N checkpoints and drop the rest, safely.

What is kept, per thread (``--thread`` limits it to one):

* the root graph (namespace ``""``) and any namespace without a ``:`` (a subgraph compiled with
  its own ``checkpointer=True``) keep their newest N checkpoints by ID (LangGraph's IDs sort by
  time; "latest" is the highest ID for both savers);
* a subgraph *call* (namespace ``name:task_id``) belongs to the root checkpoint it started from
  (``metadata.parents[""]``), or, when that one was never saved (``durability="exit"``), to the
  next saved root checkpoint. It is kept with that checkpoint and dropped with it; a call newer
  than every saved root checkpoint belongs to a run still in progress and is kept;
* pending writes go with their checkpoint; a kept checkpoint whose parent is dropped becomes the
  first of its history (its ``parent_checkpoint_id`` is cleared, as LangGraph's Postgres prune
  does).

Threads using a ``DeltaChannel`` rebuild values from older checkpoints, so they are refused. On
SQLite the prune is one ``BEGIN IMMEDIATE`` transaction (a concurrent run waits), preceded and
followed by ``PRAGMA integrity_check``, then ``VACUUM``. On PostgreSQL the same rows go in one
transaction that locks the three checkpoint tables, blobs no kept checkpoint references go too,
then ``VACUUM``. ``lumen prune`` (``cli.ops``) calls ``prune_checkpoints``.
"""

from __future__ import annotations

import json
import sqlite3
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Mapping
from contextlib import closing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from state.errors import LumenError
from state.instance import Instance

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import DictRow

    from state.config import Config

Key = tuple[str, str, str]
"""(thread_id, checkpoint_ns, checkpoint_id): a checkpoint's primary key in both backends."""

DELTA_METADATA_KEYS = ("counters_since_delta_snapshot", "delta_writes_versioned")
POSTGRES_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class CheckpointRow:
    """What pruning needs to know about one stored checkpoint."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_id: str | None
    root_id: str | None
    """``metadata.parents[""]``: the root checkpoint a subgraph call started from."""
    uses_delta: bool = False

    @property
    def key(self) -> Key:
        """Return the row's primary key."""
        return (self.thread_id, self.checkpoint_ns, self.checkpoint_id)

    @classmethod
    def from_columns(
        cls, thread_id: str, ns: str, checkpoint_id: str, parent: str | None, metadata: Any
    ) -> CheckpointRow:
        """Build a row from the stored columns (``metadata`` as JSON bytes/text or a dict)."""
        meta = _metadata_dict(metadata)
        parents = meta.get("parents")
        root = parents.get("") if isinstance(parents, dict) else None
        return cls(
            thread_id=str(thread_id),
            checkpoint_ns=str(ns),
            checkpoint_id=str(checkpoint_id),
            parent_id=str(parent) if parent else None,
            root_id=str(root) if root else None,
            uses_delta=any(k in meta for k in DELTA_METADATA_KEYS),
        )


@dataclass
class PrunePlan:
    """Checkpoints to delete and kept ones whose parent goes with them."""

    delete: list[CheckpointRow] = field(default_factory=list)
    orphaned: list[Key] = field(default_factory=list)
    removed_by_thread: dict[str, int] = field(default_factory=dict)


def is_subgraph_call(namespace: str) -> bool:
    """Return True for a subgraph call's namespace (``name:task_id``, possibly nested)."""
    return ":" in namespace


def plan_prune(rows: Iterable[CheckpointRow], keep: int) -> PrunePlan:
    """Decide which checkpoints go so every thread keeps its newest ``keep`` (see module doc)."""
    if keep < 1:
        raise LumenError(f"--keep must be at least 1 (got {keep})")
    by_thread: dict[str, list[CheckpointRow]] = defaultdict(list)
    for row in rows:
        by_thread[row.thread_id].append(row)
    delta = sorted(t for t, rs in by_thread.items() if any(r.uses_delta for r in rs))
    if delta:
        raise LumenError(f"cannot prune threads that use a DeltaChannel: {', '.join(delta)}")
    plan = PrunePlan()
    for thread_id, thread_rows in sorted(by_thread.items()):
        kept = kept_in_thread(thread_rows, keep)
        gone = [r for r in thread_rows if r.key not in kept]
        gone_ids = {r.key for r in gone}
        plan.delete.extend(gone)
        plan.orphaned.extend(
            r.key
            for r in thread_rows
            if r.key in kept
            and r.parent_id
            and (r.thread_id, r.checkpoint_ns, r.parent_id) in gone_ids
        )
        plan.removed_by_thread[thread_id] = len(gone)
    return plan


def kept_in_thread(rows: list[CheckpointRow], keep: int) -> set[Key]:
    """Return the keys one thread keeps."""
    by_ns: dict[str, list[CheckpointRow]] = defaultdict(list)
    for row in rows:
        by_ns[row.checkpoint_ns].append(row)
    kept: set[Key] = set()
    for ns, ns_rows in by_ns.items():
        if not is_subgraph_call(ns):
            kept.update(r.key for r in _newest(ns_rows, keep))
    saved_roots = sorted(r.checkpoint_id for r in by_ns.get("", []))
    kept_roots = {cid for (_, ns, cid) in kept if ns == ""}
    for ns, ns_rows in by_ns.items():
        if is_subgraph_call(ns):
            kept.update(r.key for r in ns_rows if _call_is_kept(r.root_id, saved_roots, kept_roots))
    return kept


def _newest(rows: list[CheckpointRow], keep: int) -> list[CheckpointRow]:
    return sorted(rows, key=lambda r: r.checkpoint_id, reverse=True)[:keep]


def _call_is_kept(root_id: str | None, saved_roots: list[str], kept_roots: set[str]) -> bool:
    """Keep a call whose owning root checkpoint is kept, unknown, or not saved yet."""
    if root_id is None:
        return True
    index = bisect_left(saved_roots, root_id)
    if index == len(saved_roots):
        return True  # started after every saved root checkpoint: a run in progress
    return saved_roots[index] in kept_roots


# --------------------------------------------------------------------------- report


@dataclass
class PruneReport:
    """What a prune did."""

    backend: str
    location: str
    keep: int
    threads: dict[str, int]
    """Checkpoints removed per thread looked at."""
    checkpoints_removed: int
    writes_removed: int
    blobs_removed: int
    size_before: int
    size_after: int
    integrity: str

    def to_dict(self) -> dict[str, Any]:
        """Return the report as JSON-ready data."""
        return asdict(self)

    def line(self) -> str:
        """Return a one-line summary."""
        blobs = f", {self.blobs_removed} blobs" if self.backend == "postgres" else ""
        return (
            f"pruned {self.checkpoints_removed} checkpoints ({self.writes_removed} writes{blobs}) "
            f"in {len(self.threads)} thread(s), keeping the newest {self.keep} each; "
            f"size {human_bytes(self.size_before)} -> {human_bytes(self.size_after)}; "
            f"integrity {self.integrity} ({self.backend}: {self.location})"
        )


def human_bytes(size: int) -> str:
    """Return ``size`` as B/KB/MB/GB (powers of 1024)."""
    value = float(size)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.2f} GB"


def _metadata_dict(metadata: Any) -> dict[str, Any]:
    if isinstance(metadata, dict):
        return metadata
    if not metadata:
        return {}
    try:
        loaded = json.loads(metadata)
    except (TypeError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _require_thread(rows: list[CheckpointRow], thread: str | None) -> None:
    if thread is not None and not rows:
        raise LumenError(f"no checkpoints for thread {thread!r}")


# --------------------------------------------------------------------------- SQLite


def prune_sqlite(db: Path, keep: int, thread: str | None = None) -> PruneReport:
    """Prune a ``SqliteSaver`` database in one transaction, check integrity, then VACUUM."""
    if keep < 1:
        raise LumenError(f"--keep must be at least 1 (got {keep})")
    if not db.exists():
        raise LumenError(f"no checkpoint database at {db}")
    before = sqlite_size(db)
    with closing(sqlite3.connect(str(db), isolation_level=None, timeout=30)) as conn:
        _sqlite_integrity(conn, db, "before pruning")
        conn.execute("BEGIN IMMEDIATE")
        try:
            rows = _sqlite_rows(conn, thread)
            _require_thread(rows, thread)
            plan = plan_prune(rows, keep)
            writes = _sqlite_apply(conn, plan)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        integrity = _sqlite_integrity(conn, db, "after pruning")
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return PruneReport(
        backend="sqlite",
        location=str(db),
        keep=keep,
        threads=plan.removed_by_thread,
        checkpoints_removed=len(plan.delete),
        writes_removed=writes,
        blobs_removed=0,
        size_before=before,
        size_after=sqlite_size(db),
        integrity=integrity,
    )


def sqlite_size(db: Path) -> int:
    """Return the bytes of the database and its WAL file."""
    files = (db, db.with_name(db.name + "-wal"))
    return sum(f.stat().st_size for f in files if f.exists())


def _sqlite_integrity(conn: sqlite3.Connection, db: Path, when: str) -> str:
    verdict = str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    if verdict != "ok":
        raise LumenError(f"{db}: integrity check failed {when}: {verdict}")
    return verdict


def _sqlite_tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _sqlite_rows(conn: sqlite3.Connection, thread: str | None) -> list[CheckpointRow]:
    if "checkpoints" not in _sqlite_tables(conn):
        return []
    sql = (
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata "
        "FROM checkpoints"
    )
    params: tuple[str, ...] = ()
    if thread is not None:
        sql += " WHERE thread_id = ?"
        params = (thread,)
    return [CheckpointRow.from_columns(*row) for row in conn.execute(sql, params)]


def _sqlite_apply(conn: sqlite3.Connection, plan: PrunePlan) -> int:
    """Delete the planned checkpoints and their writes; return the writes removed."""
    keys = [r.key for r in plan.delete]
    where = "thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
    conn.executemany(f"DELETE FROM checkpoints WHERE {where}", keys)
    writes = 0
    if "writes" in _sqlite_tables(conn):
        before = conn.total_changes
        conn.executemany(f"DELETE FROM writes WHERE {where}", keys)
        writes = conn.total_changes - before
    conn.executemany(
        f"UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE {where}", plan.orphaned
    )
    return writes


# --------------------------------------------------------------------------- PostgreSQL


def prune_postgres(url: str, keep: int, thread: str | None = None) -> PruneReport:
    """Prune a ``PostgresSaver`` database (checkpoints, writes, unreferenced blobs), then VACUUM."""
    from graph.checkpoints import postgres_connection, redact_url

    if keep < 1:
        raise LumenError(f"--keep must be at least 1 (got {keep})")
    with postgres_connection(url) as conn:
        if not _postgres_has_tables(conn):
            _require_thread([], thread)
            raise LumenError(f"no checkpoint tables at {redact_url(url)}")
        before = _postgres_size(conn)
        with conn.transaction():
            conn.execute(f"LOCK TABLE {', '.join(POSTGRES_TABLES)} IN SHARE ROW EXCLUSIVE MODE")
            rows = _postgres_rows(conn, thread)
            _require_thread(rows, thread)
            plan = plan_prune(rows, keep)
            writes, blobs = _postgres_apply(conn, plan)
        conn.execute(f"VACUUM (ANALYZE) {', '.join(POSTGRES_TABLES)}")
        after = _postgres_size(conn)
    return PruneReport(
        backend="postgres",
        location=redact_url(url),
        keep=keep,
        threads=plan.removed_by_thread,
        checkpoints_removed=len(plan.delete),
        writes_removed=writes,
        blobs_removed=blobs,
        size_before=before,
        size_after=after,
        integrity="not checked (server-managed)",
    )


def _postgres_has_tables(conn: Connection[DictRow]) -> bool:
    row = conn.execute(
        "SELECT bool_and(to_regclass(t) IS NOT NULL) AS present FROM unnest(%s::text[]) AS t",
        (list(POSTGRES_TABLES),),
    ).fetchone()
    return bool(row and row["present"])


def _postgres_size(conn: Connection[DictRow]) -> int:
    row = conn.execute(
        "SELECT COALESCE(SUM(pg_total_relation_size(t::regclass)), 0)::bigint AS size "
        "FROM unnest(%s::text[]) AS t",
        (list(POSTGRES_TABLES),),
    ).fetchone()
    return int(row["size"]) if row else 0


def _postgres_rows(conn: Connection[DictRow], thread: str | None) -> list[CheckpointRow]:
    sql = (
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, metadata "
        "FROM checkpoints"
    )
    params: tuple[str, ...] = ()
    if thread is not None:
        sql += " WHERE thread_id = %s"
        params = (thread,)
    return [
        CheckpointRow.from_columns(
            r["thread_id"],
            r["checkpoint_ns"],
            r["checkpoint_id"],
            r["parent_checkpoint_id"],
            r["metadata"],
        )
        for r in conn.execute(sql, params)
    ]


def _postgres_apply(conn: Connection[DictRow], plan: PrunePlan) -> tuple[int, int]:
    """Delete planned checkpoints, their writes and freed blobs; return (writes, blobs)."""
    writes = blobs = 0
    for (thread_id, ns), ids in _group_ids(r.key for r in plan.delete).items():
        freed = conn.execute(
            "DELETE FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s "
            "AND checkpoint_id = ANY(%s) RETURNING checkpoint -> 'channel_versions' AS versions",
            (thread_id, ns, ids),
        ).fetchall()
        writes += conn.execute(
            "DELETE FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = %s "
            "AND checkpoint_id = ANY(%s)",
            (thread_id, ns, ids),
        ).rowcount
        blobs += _postgres_drop_blobs(conn, thread_id, ns, [r["versions"] or {} for r in freed])
    for (thread_id, ns), ids in _group_ids(plan.orphaned).items():
        conn.execute(
            "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = %s "
            "AND checkpoint_ns = %s AND checkpoint_id = ANY(%s)",
            (thread_id, ns, ids),
        )
    return writes, blobs


def _postgres_drop_blobs(
    conn: Connection[DictRow], thread_id: str, ns: str, freed: list[Mapping[str, Any]]
) -> int:
    """Delete blobs the deleted checkpoints used that no remaining one in the namespace uses."""
    referenced = {
        (r["channel"], r["version"])
        for r in conn.execute(
            "SELECT DISTINCT v.key AS channel, v.value AS version FROM checkpoints c "
            "CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v "
            "WHERE c.thread_id = %s AND c.checkpoint_ns = %s",
            (thread_id, ns),
        )
    }
    garbage: dict[str, set[str]] = defaultdict(set)
    for versions in freed:
        for channel, version in versions.items():
            if (channel, str(version)) not in referenced:
                garbage[channel].add(str(version))
    removed = 0
    for channel, version_set in garbage.items():
        removed += conn.execute(
            "DELETE FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s "
            "AND channel = %s AND version = ANY(%s)",
            (thread_id, ns, channel, sorted(version_set)),
        ).rowcount
    return removed


def _group_ids(keys: Iterable[Key]) -> dict[tuple[str, str], list[str]]:
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for thread_id, ns, checkpoint_id in keys:
        grouped[(thread_id, ns)].append(checkpoint_id)
    return grouped


# --------------------------------------------------------------------------- instance


def prune_checkpoints(
    instance: Instance, config: Config, *, keep: int, thread: str | None = None
) -> PruneReport:
    """Prune the instance's checkpoints on the configured backend."""
    if config.checkpoints.backend == "postgres":
        return prune_postgres(config.checkpoints.postgres_url, keep, thread)
    return prune_sqlite(instance.checkpoint_db, keep, thread)

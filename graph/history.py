"""Checkpoint history: list, find, diff and read the self snapshots of past runs; restore one.

Read-only over the checkpointer except ``restore_self``, which writes a snapshot's self back to an
instance (rollback). Forks and replays, which build graphs, live in ``graph.timeline``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from graph.checkpoints import open_checkpointer
from state.errors import LumenError
from state.instance import Instance
from state.selfdiff import SelfDiff, diff_snapshots
from state.snapshot import SelfSnapshot

GRAPHS = ("turn", "cycle", "reflect")
LAST_NODE = {"turn": "consolidate", "cycle": "cycle_end", "reflect": "apply"}
"""The node a seeded branch thread pretends to have just run, so it holds a finished run."""


@dataclass(frozen=True)
class CheckpointInfo:
    """One checkpoint as ``lumen history`` lists it."""

    checkpoint_id: str
    thread: str
    namespace: str
    ts: str
    graph: str
    node: str
    mode: str
    next: tuple[str, ...]
    snapshot: SelfSnapshot | None
    values: dict[str, Any] = field(repr=False, default_factory=dict)
    summary: str = ""

    @property
    def short_id(self) -> str:
        """Return the distinguishing end of the id (ids are time-ordered UUIDs)."""
        return self.checkpoint_id[-12:]

    @property
    def identity_hash(self) -> str:
        """Return the identity hash of the self at this checkpoint ('' if unknown)."""
        return self.snapshot.identity_hash if self.snapshot else ""

    @property
    def composite(self) -> float | None:
        """Return C(t) at this checkpoint (None if unknown)."""
        return self.snapshot.composite if self.snapshot else None

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON view ``lumen history --json`` prints."""
        return {
            "checkpoint_id": self.checkpoint_id,
            "thread": self.thread,
            "ts": self.ts,
            "graph": self.graph,
            "node": self.node,
            "mode": self.mode,
            "next": list(self.next),
            "identity_hash": self.identity_hash,
            "composite": self.composite,
            "summary": self.summary,
        }


def graph_of(values: dict[str, Any]) -> str:
    """Tell which graph a checkpoint's state belongs to from its channels."""
    if "user_text" in values:
        return "turn"
    if "triggers" in values:
        return "reflect"
    if "kind" in values or "values_snapshot" in values:
        return "cycle"
    return "unknown"


def _input_of(channels: dict[str, Any]) -> dict[str, Any]:
    """Return the input of a run that has not started (the ``__start__`` channel)."""
    start = channels.get("__start__")
    if isinstance(start, BaseModel):
        return dict(start.model_dump())
    return dict(start) if isinstance(start, dict) else {}


def _info(tup: Any) -> CheckpointInfo:
    conf = tup.config["configurable"]
    channels = dict(tup.checkpoint.get("channel_values", {}))
    values = {k: v for k, v in channels.items() if not k.startswith(("branch:", "__"))}
    trace = values.get("trace") or []
    node = getattr(trace[-1], "step", "") if trace else ""
    snapshot = values.get("snapshot")
    return CheckpointInfo(
        checkpoint_id=str(conf["checkpoint_id"]),
        thread=str(conf["thread_id"]),
        namespace=str(conf.get("checkpoint_ns", "")),
        ts=str(tup.checkpoint.get("ts", "")),
        graph=graph_of(values if values else _input_of(channels)),
        node=node or str((tup.metadata or {}).get("source", "")),
        mode=str(values.get("mode", values.get("kind", ""))),
        next=tuple(k.split(":", 2)[2] for k in channels if k.startswith("branch:to:"))
        or (("__start__",) if "__start__" in channels else ()),
        snapshot=snapshot if isinstance(snapshot, SelfSnapshot) else None,
        values=values,
    )


@contextmanager
def _saver(instance: Instance) -> Iterator[Any]:
    """Open the instance's configured checkpointer (SQLite file or Postgres) for reading."""
    from state.config import load_config

    config = load_config(instance.config_file)
    if config.checkpoints.backend == "sqlite" and not instance.checkpoint_db.exists():
        raise LumenError("no checkpoints yet: run `lumen chat` or `lumen run` first")
    with open_checkpointer(instance, config) as saver:
        yield saver


def require_sqlite(instance: Instance) -> None:
    """Refuse (one line) when the instance checkpoints to PostgreSQL: branches need SQLite."""
    from state.config import load_config

    if load_config(instance.config_file).checkpoints.backend != "sqlite":
        raise LumenError(
            "fork and replay copy the instance with its SQLite checkpoints; with the Postgres"
            " backend use LangGraph's own fork (update_state on a new thread) instead"
        )


def list_checkpoints(
    instance: Instance,
    *,
    thread: str | None = None,
    limit: int | None = 20,
    subgraphs: bool = False,
) -> list[CheckpointInfo]:
    """Return checkpoints newest first, each with a one-line summary of what changed in the self.

    The summary compares a checkpoint's snapshot with the previous snapshot among the listed
    checkpoints (all threads unless ``thread`` is given: there is one self). Subgraph-internal
    checkpoints are left out unless asked for. Checkpoint ids are time-ordered and the saver
    lists them newest first, so only ``limit`` rows (plus one older snapshot) are decoded.
    """
    config = {"configurable": {"thread_id": thread}} if thread else None
    rows: list[CheckpointInfo] = []
    older: SelfSnapshot | None = None  # the snapshot just before the oldest row kept
    with _saver(instance) as saver:
        for tup in saver.list(config):
            info = _info(tup)
            if info.namespace and not subgraphs:
                continue
            if limit is None or len(rows) < limit:
                rows.append(info)
            elif info.snapshot is not None:
                older = info.snapshot
                break
    rows.sort(key=lambda r: r.ts, reverse=True)
    out = []
    previous = older
    for info in reversed(rows):  # oldest first, to diff each against the one before
        summary = "no snapshot"
        if info.snapshot is not None:
            summary = (
                diff_snapshots(previous, info.snapshot).summary() if previous else "first snapshot"
            )
            previous = info.snapshot
        out.append(_with_summary(info, summary))
    out.reverse()
    return out


def _with_summary(info: CheckpointInfo, summary: str) -> CheckpointInfo:
    from dataclasses import replace

    return replace(info, summary=summary)


def find(instance: Instance, ref: str) -> CheckpointInfo:
    """Return the checkpoint whose id is ``ref``, starts with it or ends with it (≥ 6 characters).

    Checkpoint ids are time-ordered, so their beginnings are shared; ``lumen history`` shows the
    last 12 characters, which is what people copy.
    """
    ref = ref.strip()
    if len(ref) < 6:
        raise LumenError("give at least 6 characters of a checkpoint id (see `lumen history`)")
    matches = [
        c
        for c in list_checkpoints(instance, limit=None, subgraphs=True)
        if c.checkpoint_id.startswith(ref) or c.checkpoint_id.endswith(ref)
    ]
    parents = [c for c in matches if not c.namespace]
    if len({c.checkpoint_id for c in matches}) > 1 and len({c.checkpoint_id for c in parents}) != 1:
        raise LumenError(f"checkpoint id {ref!r} is ambiguous; give more characters")
    if not matches:
        raise LumenError(f"no checkpoint {ref!r} (see `lumen history`)")
    return (parents or matches)[0]


def last_stable_checkpoint(
    instance: Instance,
    threshold: float,
    accept: Callable[[SelfSnapshot], bool] | None = None,
) -> CheckpointInfo | None:
    """Return the newest checkpoint whose self had C(t) below ``threshold`` (None if none).

    ``accept`` narrows the choice further (rollback passes "its values are the intact ones", so
    a checkpoint taken after a failed restore is never mistaken for a stable self).
    """
    if not instance.checkpoint_db.exists():
        return None
    for info in list_checkpoints(instance, limit=None):
        snap = info.snapshot
        if snap is not None and snap.composite < threshold and (accept is None or accept(snap)):
            return info
    return None


def snapshot_of(info: CheckpointInfo) -> SelfSnapshot:
    """Return a checkpoint's snapshot or say why there is none."""
    if info.snapshot is None:
        raise LumenError(
            f"checkpoint {info.checkpoint_id[:12]} holds no self snapshot (it was taken before the"
            " run finished or before snapshots existed); pick one whose node ends a run"
        )
    return info.snapshot


def diff(instance: Instance, a: str, b: str) -> tuple[CheckpointInfo, CheckpointInfo, SelfDiff]:
    """Return both checkpoints and the self-diff from ``a`` to ``b``."""
    first, second = find(instance, a), find(instance, b)
    return first, second, diff_snapshots(snapshot_of(first), snapshot_of(second))


# ------------------------------------------------------------------ branches of the self


def branch_root(instance: Instance, name: str) -> Path:
    """Return where the branch ``name`` lives."""
    import re

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name):
        raise LumenError("a branch/thread name is 1–64 letters, digits, '.', '_' or '-'")
    return instance.branches_dir / name


def restore_self(target: Instance, snap: SelfSnapshot) -> None:
    """Write a snapshot's values, goals, soul and self into ``target`` (atomically, per file)."""
    from collections import defaultdict

    from state.files import atomic_write_json, atomic_write_text
    from state.snapshot import restored_self

    atomic_write_json(
        target.values_file,
        [
            {"name": name, "weight": weight, "status": snap.value_status.get(name, "active")}
            for name, weight in snap.values.items()
        ],
    )
    by_year: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for goal in snap.goals:
        by_year[goal.year].append({"name": goal.name, "weight": goal.weight, "status": goal.status})
    if target.goals_dir.is_dir():
        for path in target.goals_dir.glob("*.json"):
            if path.stem.isdigit() and int(path.stem) not in by_year:
                atomic_write_json(path, [])
    for year, goals in by_year.items():
        atomic_write_json(target.goals_file(year), goals)
    if snap.soul:
        atomic_write_text(target.soul_file, snap.soul)
    if snap.self_core:
        target.save_self(restored_self(target.load_self(), snap))

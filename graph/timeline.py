"""Identity-aware time travel over the checkpoints: history, show, diff, fork, replay, rollback.

Every run of ``turn``, ``cycle`` and ``reflect`` is checkpointed, and its last step stores a
``SelfSnapshot`` in the state. This module reads those checkpoints to answer "who was I then, and
why did I change?", and branches the self from any of them without touching the present:

* a **fork** is a new instance directory under ``.lumen/branches/<name>/`` — a copy of the instance
  whose values, goals, soul and ``self.json`` are restored from the checkpoint's snapshot — and a
  new thread in it seeded with the checkpoint's state, so ``LUMEN_HOME=<branch> lumen chat
  --thread <name>`` continues from there;
* a **replay** forks, then re-runs from the checkpoint inside the branch: a checkpoint taken in
  the middle of a run (per-step durability) resumes at its next node — subgraphs included; a
  checkpoint at the end of a run starts a new run on its state with ``--input`` (default: the
  same input again). The present instance, its files and its threads are never written.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from graph.checkpoints import open_checkpointer, sqlite_saver
from state.errors import LumenError
from state.instance import Instance, copy_instance
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


def _require_sqlite(instance: Instance) -> None:
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


def last_stable_checkpoint(instance: Instance, threshold: float) -> CheckpointInfo | None:
    """Return the newest checkpoint whose self had C(t) below ``threshold`` (None if none)."""
    if not instance.checkpoint_db.exists():
        return None
    for info in list_checkpoints(instance, limit=None):
        if info.snapshot is not None and info.snapshot.composite < threshold:
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


def _copy_instance(source: Instance, root: Path) -> Instance:
    if root.exists():
        raise LumenError(f"branch {root.name!r} already exists at {root}")
    return copy_instance(source, root)


@dataclass(frozen=True)
class Branch:
    """A branch of the self made from a checkpoint."""

    name: str
    root: Path
    source: CheckpointInfo
    thread: str

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON view."""
        return {
            "branch": self.name,
            "root": str(self.root),
            "thread": self.thread,
            "from_checkpoint": self.source.checkpoint_id,
            "graph": self.source.graph,
            "identity_hash": self.source.identity_hash,
        }


def fork(instance: Instance, ref: str, name: str) -> Branch:
    """Branch the self at checkpoint ``ref`` into ``.lumen/branches/<name>`` on thread ``name``.

    The branch is a copy of the instance with the snapshot's self restored; its checkpoint DB
    gets a thread ``name`` whose state is the checkpoint's (a LangGraph fork via
    ``update_state``), so the branch continues the conversation or run from there.
    """
    _require_sqlite(instance)
    info = find(instance, ref)
    snap = snapshot_of(info)
    root = branch_root(instance, name)
    branch = _copy_instance(instance, root)
    restore_self(branch, snap)
    _seed_thread(branch, info, name)
    return Branch(name=name, root=root, source=info, thread=name)


def _compiled(instance: Instance, graph: str, saver: Any, deps: Any) -> Any:
    if graph == "turn":
        from graph.builder import build_turn_graph

        return build_turn_graph(deps).compile(checkpointer=saver, name="turn")
    from graph.cycle_builder import build_cycle_graph, build_reflect_graph

    build = build_cycle_graph if graph == "cycle" else build_reflect_graph
    return build(deps).compile(checkpointer=saver, name=graph)


def _seed_thread(branch: Instance, info: CheckpointInfo, thread: str) -> None:
    """Copy the checkpoint's state into ``thread`` of the branch's checkpoint DB."""
    from graph.deps import Deps

    deps = Deps.for_instance(branch, model_for=_no_model)
    with sqlite_saver(branch.checkpoint_db) as saver:
        compiled = _compiled(branch, info.graph, saver, deps)
        values = dict(info.values)
        compiled.update_state(
            {"configurable": {"thread_id": thread}}, values, as_node=LAST_NODE[info.graph]
        )


def _no_model(mode: str) -> Any:
    raise LumenError("seeding a branch never calls a model")


@dataclass(frozen=True)
class Replay:
    """The outcome of a replay."""

    branch: Branch
    resumed_at: tuple[str, ...]
    reply: str
    diff: SelfDiff

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON view."""
        return {
            **self.branch.to_dict(),
            "resumed_at": list(self.resumed_at),
            "reply": self.reply,
            "self_diff": self.diff.to_dict(),
            "self_diff_lines": self.diff.lines(),
        }


def replay(
    instance: Instance,
    ref: str,
    *,
    text: str | None = None,
    name: str | None = None,
    deps_factory: Any = None,
) -> Replay:
    """Re-run from checkpoint ``ref`` with the self it had, in a new branch (never the present).

    A checkpoint in the middle of a run resumes at its next node (LangGraph replay; a checkpoint
    inside a subgraph resumes from the parent checkpoint that entered the subgraph). A checkpoint
    that ends a run starts a new run from its state, on ``text`` or on the same input again.
    """
    from graph.deps import Deps

    _require_sqlite(instance)
    info = find(instance, ref)
    if info.namespace:  # inside a subgraph: resume from the parent checkpoint that entered it
        info = _parent_of(instance, info)
    snap = _nearest_snapshot(instance, info)
    stamp = datetime.now().strftime("%Y%m%d%H%M%S")
    name = name or f"replay-{info.checkpoint_id[-8:]}-{stamp}"
    root = branch_root(instance, name)
    branch_instance = _copy_instance(instance, root)
    restore_self(branch_instance, snap)
    deps = deps_factory(branch_instance) if deps_factory else Deps.for_instance(branch_instance)
    with sqlite_saver(branch_instance.checkpoint_db) as saver:
        compiled = _compiled(branch_instance, info.graph, saver, deps)
        source = {
            "configurable": {
                "thread_id": info.thread,
                "checkpoint_ns": "",
                "checkpoint_id": info.checkpoint_id,
            }
        }
        if info.next:
            result = compiled.invoke(None, source, durability="exit")
        else:
            result = compiled.invoke(_input_for(info, text), source, durability="exit")
    deps.store.flush()
    from state.snapshot import take_snapshot

    after = result.get("snapshot") if isinstance(result, dict) else None
    after = after if isinstance(after, SelfSnapshot) else take_snapshot(branch_instance, deps.store)
    branch = Branch(name=name, root=root, source=info, thread=info.thread)
    reply = str(result.get("reply", result.get("decision", ""))) if isinstance(result, dict) else ""
    return Replay(
        branch=branch, resumed_at=info.next, reply=reply, diff=diff_snapshots(snap, after)
    )


def _input_for(info: CheckpointInfo, text: str | None) -> Any:
    values = info.values
    if info.graph == "turn":
        from state.turn import TurnInput

        return TurnInput(user_text=text or str(values.get("user_text", "")))
    if text:
        raise LumenError("--input only applies to turn checkpoints")
    if info.graph == "cycle":
        from state.cycle import CycleInput

        return CycleInput(kind=values.get("kind", "action"))
    from state.cycle import ReflectInput

    return ReflectInput(triggers=list(values.get("triggers", [])) or ["explicit_request"])


def _parent_of(instance: Instance, info: CheckpointInfo) -> CheckpointInfo:
    parents = [
        c
        for c in list_checkpoints(instance, thread=info.thread, limit=None)
        if c.ts <= info.ts and c.next
    ]
    if not parents:
        raise LumenError("no parent checkpoint to resume this subgraph checkpoint from")
    return parents[0]


def _nearest_snapshot(instance: Instance, info: CheckpointInfo) -> SelfSnapshot:
    """The self at a checkpoint: its own snapshot, or the last one taken before it."""
    if info.snapshot is not None:
        return info.snapshot
    for earlier in list_checkpoints(instance, limit=None):
        if earlier.ts <= info.ts and earlier.snapshot is not None:
            return earlier.snapshot
    from state.snapshot import take_snapshot

    return take_snapshot(instance)  # nothing earlier: the run started from the present self

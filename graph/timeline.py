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

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from graph.checkpoints import sqlite_saver
from graph.history import (
    LAST_NODE,
    CheckpointInfo,
    branch_root,
    find,
    list_checkpoints,
    require_sqlite,
    restore_self,
    snapshot_of,
)
from state.errors import LumenError
from state.instance import Instance, copy_instance
from state.selfdiff import SelfDiff, diff_snapshots
from state.snapshot import SelfSnapshot


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
    require_sqlite(instance)
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

    require_sqlite(instance)
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

        source = "user" if text else str(values.get("source") or "user")  # --input: the user's
        return TurnInput(user_text=text or str(values.get("user_text", "")), source=source)
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

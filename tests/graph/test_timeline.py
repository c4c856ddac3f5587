"""Time travel on a real multi-turn SQLite run: history, show, diff, fork, replay, subgraphs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graph import history, timeline
from graph.builder import build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.deps import Deps
from graph.session import run_turn
from state.errors import LumenError
from state.files import atomic_write_json, load_values
from state.instance import Instance
from tests.graph.conftest import scripted_deps
from tests.scripted import ScriptedChatModel


def model() -> ScriptedChatModel:
    return ScriptedChatModel(replies=["Here is my view: start small and keep notes."])


def chat(instance: Instance, *texts: str, durability: str = "exit") -> list[Any]:
    deps = scripted_deps(instance, model())
    with sqlite_saver(instance.checkpoint_db) as saver:
        compiled: Any = build_turn_graph(deps).compile(checkpointer=saver, name="turn")
        states = [run_turn(compiled, t, durability=durability) for t in texts]
    deps.store.flush()
    return states


def reweigh(instance: Instance, name: str, weight: float) -> None:
    values = [v.model_dump() for v in load_values(instance.values_file)]
    for v in values:
        if v["name"] == name:
            v["weight"] = weight
    atomic_write_json(instance.values_file, values)


def test_history_lists_turns_with_self_summaries(instance: Instance) -> None:
    chat(instance, "Hello there.", "I live in Lisbon.")
    first_value = load_values(instance.values_file)[0].name
    reweigh(instance, first_value, 0.11)
    chat(instance, "Tell me something.")
    rows = history.list_checkpoints(instance)
    assert [r.graph for r in rows] == ["turn"] * 3
    assert all(r.node == "recurrence_closure" and r.snapshot for r in rows)
    assert rows[0].snapshot.values[first_value] == pytest.approx(0.11)  # type: ignore[union-attr]
    assert "value change" in rows[0].summary and rows[-1].summary == "first snapshot"
    assert "belief" in rows[1].summary  # the second turn stated where the user lives
    (newest,) = history.list_checkpoints(instance, limit=1)  # decodes only what it needs
    assert newest.summary == rows[0].summary
    data = rows[0].to_dict()
    assert {"checkpoint_id", "ts", "graph", "node", "identity_hash"} <= set(data)
    json.dumps(data)


def test_show_and_diff_between_checkpoints(instance: Instance) -> None:
    chat(instance, "I live in Lisbon.")
    name = load_values(instance.values_file)[0].name
    reweigh(instance, name, 0.2)
    chat(instance, "Actually, I moved to Porto.")
    newest, oldest = history.list_checkpoints(instance)
    shown = history.find(instance, oldest.checkpoint_id[-10:])
    assert shown.checkpoint_id == oldest.checkpoint_id
    _, _, change = history.diff(instance, oldest.checkpoint_id, newest.checkpoint_id)
    assert [c.name for c in change.values] == [name]
    assert any("Porto" in b for b in change.beliefs_added)
    assert any("Lisbon" in b for b in change.beliefs_removed)
    assert any(line.startswith(f"value {name}:") for line in change.lines())
    with pytest.raises(LumenError, match="no checkpoint"):
        history.find(instance, "ffffffffffff")
    with pytest.raises(LumenError, match="at least 6"):
        history.find(instance, "abc")


def test_fork_restores_the_earlier_self_and_leaves_the_present(instance: Instance) -> None:
    chat(instance, "Hello there.")
    name = load_values(instance.values_file)[0].name
    before = load_values(instance.values_file)[0].weight
    (old,) = history.list_checkpoints(instance)
    reweigh(instance, name, 0.05)
    branch = timeline.fork(instance, old.checkpoint_id, "what-if")
    forked = Instance(branch.root)
    assert {v.name: v.weight for v in load_values(forked.values_file)}[name] == before
    assert {v.name: v.weight for v in load_values(instance.values_file)}[name] == 0.05
    with sqlite_saver(forked.checkpoint_db) as saver:
        deps = scripted_deps(forked, model())
        compiled: Any = build_turn_graph(deps).compile(checkpointer=saver, name="turn")
        state = compiled.get_state({"configurable": {"thread_id": "what-if"}})
        assert state.values["user_text"] == "Hello there." and not state.next
        after = run_turn(compiled, "And now?", thread="what-if")
    assert [h.user for h in after.history][-2:] == ["Hello there.", "And now?"]
    with pytest.raises(LumenError, match="already exists"):
        timeline.fork(instance, old.checkpoint_id, "what-if")


def test_replay_from_a_mid_run_checkpoint_resumes_through_subgraphs(
    instance: Instance, tmp_path: Path
) -> None:
    (state,) = chat(instance, "Please plan my week.", durability="sync")
    present = history.list_checkpoints(instance, limit=None)
    after_perceive = next(c for c in present if c.next == ("deliberate",))
    inner = history.list_checkpoints(instance, limit=None, subgraphs=True)
    assert any(c.namespace.startswith("perceive") for c in inner)

    def deps_for(branch: Instance) -> Deps:
        return scripted_deps(branch, model())

    done = timeline.replay(instance, after_perceive.checkpoint_id, deps_factory=deps_for)
    assert done.resumed_at == ("deliberate",)
    assert done.reply.strip()
    # the present thread is untouched: same newest checkpoint, same reply
    again = history.list_checkpoints(instance, limit=None)
    assert again[0].checkpoint_id == present[0].checkpoint_id
    assert again[0].values["reply"] == state.reply


def test_replay_of_a_finished_turn_with_new_input(instance: Instance) -> None:
    chat(instance, "Hello there.")
    (done_turn,) = history.list_checkpoints(instance)

    def deps_for(branch: Instance) -> Deps:
        return scripted_deps(branch, model())

    done = timeline.replay(
        instance, done_turn.checkpoint_id, text="What else?", deps_factory=deps_for
    )
    assert done.resumed_at == () and done.reply.strip()
    assert (Path(done.branch.root) / "data" / "values.json").exists()
    assert len(history.list_checkpoints(instance)) == 1  # nothing new in the present

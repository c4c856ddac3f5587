"""The closed-loop map (``graph.loops``, ``lumen explain loops``) and the no-write-only guard."""

import json
import re
from functools import cache

from typer.testing import CliRunner

from cli.app import app
from graph.loops import Loop, StepRef, analyse, declared_steps, write_only


@cache
def _map() -> dict[str, Loop]:
    return {loop.field: loop for loop in analyse()}


def test_loops_declared_steps_are_read_from_the_builders() -> None:
    steps = {(s.graph, s.name): s for s in declared_steps()}
    assert steps[("turn", "habit_update")].module == "nodes.turn.consolidate"
    assert steps[("cycle", "budget_reset")].function == "budget_reset"
    assert ("reflect", "apply") in steps
    assert len([s for s in steps if s[0] == "turn"]) == 36


def test_loops_find_known_writer_reader_pairs() -> None:
    loops = _map()
    # emit_updates stores the turn index; the next turn's ingest numbers itself from it.
    assert "emit_updates" in loops["metacog.turn_index"].writers
    assert "ingest" in loops["metacog.turn_index"].readers
    assert "sets turn_index" in loops["metacog.turn_index"].decision
    # safe mode persists its countdown; budget_reset keeps the budget at 0 while it lasts.
    assert "safe_mode" in loops["autonomy.safe_mode_left"].writers
    assert "budget_reset" in loops["autonomy.safe_mode_left"].readers
    # the habit metrics feed the self-story (and through it the prompts).
    assert loops["metacog.habit"].writers == ("habit_update",)
    assert "self_representation_update" in loops["metacog.habit"].readers
    # escalation_guard persists a cooldown that lumen run's driver waits out between cycles.
    assert "escalation_guard" in loops["autonomy.cooldown_until"].writers
    assert "wait_for_cooldown" in loops["autonomy.cooldown_until"].readers
    # files: reflection writes values.json, the value lock reads it back.
    assert "apply" in loops["data/values.json"].writers
    assert "value_lock_check" in loops["data/values.json"].readers
    assert "data/metacog/outcomes.jsonl" in loops
    assert loops["data/metacog/outcomes.jsonl"].writers == ("outcome_log",)


def test_loops_persistence_is_not_a_reader() -> None:
    loops = _map()
    # recurrence_closure hands the whole self to persist_self (the merge): that reads nothing.
    for loop in loops.values():
        assert "recurrence_closure" not in loop.readers or loop.field == "metacog.rc"


FAKE = '''
def _meta(state):
    return state.me.model_copy(update={"metacog": state.me.metacog.fork()})


def story(state, *, deps):
    """Write a story nobody reads."""
    me = _meta(state)
    me.metacog.self_story = f"turn {state.turn_index}"
    return {"me": me, "note": me.metacog.self_story}


def lessons(state, *, deps):
    """Append a lesson; the append reads the old list only to carry it."""
    me = _meta(state)
    me.metacog.lessons = [*me.metacog.lessons, {"if": "x"}][-32:]
    return {"me": me}


def policy(state, *, deps):
    """Turn lessons into a policy nobody reads: both stay write-only."""
    me = _meta(state)
    if me.metacog.lessons:
        me.metacog.policy = {"talk_verbosity": -1.0}
    return {"me": me}


def habit(state, *, deps):
    """Smooth the habit (a carry) and log it to a file nobody reads."""
    me = _meta(state)
    me.metacog.habit = {k: v * 0.85 for k, v in me.metacog.habit.items()}
    append_jsonl(deps.instance.metacog_dir / "habit.jsonl", dict(me.metacog.habit))
    return {"me": me}


def gate(state, *, deps, step):
    """Decide from the habit whether to ask; the cooldown is the step's own."""
    habit = state.me.metacog.habit
    if state.me.metacog.last_fired.get(step, 0) > 3:
        return {"skipped": "cooldown"}
    me = _meta(state)
    me.metacog.last_fired[step] = 4
    return {"me": me, "question": "why?" if habit.get("coherence", 0) < 0.5 else ""}
'''
STEPS = [
    StepRef("turn", name, "fake.steps", name) for name in ("story", "lessons", "policy", "habit")
] + [StepRef("turn", "gate", "fake.steps", "gate")]


def test_loops_rule_reports_written_but_unread_fields_as_write_only() -> None:
    loops = {
        loop.field: loop
        for loop in analyse(STEPS, sources={"fake.steps": FAKE}, consumed={"question"})
    }
    # written, shown only in the note: write-only
    assert loops["metacog.self_story"].writers == ("story",)
    assert loops["metacog.self_story"].write_only
    # appended (its own read is a carry) and read only to write another write-only field
    assert loops["metacog.lessons"].write_only
    assert loops["metacog.policy"].write_only
    assert loops["data/metacog/habit.jsonl"].write_only
    # the habit is read by a decision another step takes (a state key someone reads)
    assert loops["metacog.habit"].readers == ("gate",)
    assert "sets question" in loops["metacog.habit"].decision
    assert "Decide from the habit" in loops["metacog.habit"].decision
    # a per-step cooldown is its own field, read by the step it gates
    assert loops["metacog.last_fired[gate]"].readers == ("gate",)
    assert set(write_only(loops.values())) >= {
        "metacog.self_story",
        "metacog.lessons",
        "metacog.policy",
        "data/metacog/habit.jsonl",
    }
    assert "metacog.habit" not in write_only(loops.values())


def test_loops_a_key_nobody_reads_is_not_a_decision() -> None:
    loops = {
        loop.field: loop for loop in analyse(STEPS, sources={"fake.steps": FAKE}, consumed=set())
    }
    assert loops["metacog.habit"].write_only


def test_loops_no_persisted_field_is_write_only() -> None:
    """THE GUARD: every persisted field some step writes is read by some decision."""
    open_fields = write_only(_map().values())
    assert open_fields == [], "write-only persisted fields (written, never read): " + ", ".join(
        open_fields
    )


def test_explain_loops_cli_json_and_table() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["explain", "loops", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert isinstance(data, list) and data
    assert all(set(row) == {"field", "writers", "readers", "decision"} for row in data)
    rows = {row["field"]: row for row in data}
    assert "ingest" in rows["metacog.turn_index"]["readers"]

    result = runner.invoke(app, ["explain", "loops"])
    assert result.exit_code == 0, result.output
    assert "Closed loops" in result.output
    assert re.search(rf"{len(data)} fields, \d+ write-only", result.output)

from collections.abc import Callable
from datetime import date

import pytest

from state.instance import Instance
from state.permissions import DataWriter, Loop, WritePermissionError
from state.records import GoalRecord, ValueRecord

YEAR = date.today().year
Op = Callable[[DataWriter], object]


def _first_goal(writer: DataWriter, status: str) -> str:
    from state.files import load_goals

    return next(g.name for y, g in load_goals(writer.instance.goals_dir) if g.status == status)


OPERATIONS: dict[str, Op] = {
    "write soul": lambda w: w.write_soul("# Lumen\n\n## Ontology\nChanged.\n"),
    "write values": lambda w: w.write_values([ValueRecord(name="care", weight=0.7)]),
    "todo->working": lambda w: w.set_goal_status(YEAR, _first_goal(w, "todo"), "working"),
    "perpetual->done": lambda w: w.set_goal_status(YEAR, _first_goal(w, "perpetual"), "done"),
    "todo->perpetual": lambda w: w.set_goal_status(YEAR, _first_goal(w, "todo"), "perpetual"),
    "goal weight": lambda w: w.set_goal_weight(YEAR, _first_goal(w, "todo"), 0.3),
    "add goal": lambda w: w.add_goal(GoalRecord(name="new", weight=0.4)),
    "remove goal": lambda w: w.remove_goal(YEAR, _first_goal(w, "todo")),
    "write skill": lambda w: w.write_skill("echo", "print('hi')\n"),
    "remember": lambda w: w.remember("a thought", author="self", situation="test"),
}

# The spec's table: which loop may do what.
ALLOWED: dict[str, set[Loop]] = {
    "write soul": {"reflection"},
    "write values": {"reflection"},
    "todo->working": {"action", "reflection"},
    "perpetual->done": {"reflection"},
    "todo->perpetual": {"reflection"},
    "goal weight": {"reflection"},
    "add goal": {"reflection"},
    "remove goal": {"reflection"},
    "write skill": {"action"},
    "remember": {"action", "explore", "reflection"},
}

CELLS = [(op, loop) for op in OPERATIONS for loop in ("action", "explore", "reflection")]


@pytest.mark.parametrize(("operation", "loop"), CELLS, ids=[f"{o}-{lp}" for o, lp in CELLS])
def test_write_permission_table_cell(instance: Instance, operation: str, loop: Loop) -> None:
    writer = DataWriter(instance, loop)
    before_soul = instance.soul_file.read_text()
    before_values = instance.values_file.read_text()
    if loop in ALLOWED[operation]:
        OPERATIONS[operation](writer)
        return
    with pytest.raises(WritePermissionError, match=loop):
        OPERATIONS[operation](writer)
    assert instance.soul_file.read_text() == before_soul
    assert instance.values_file.read_text() == before_values
    denied = [
        e for e in writer.journal.read().entries if e.meta.get("kind") == "WritePermissionDenied"
    ]
    assert denied and denied[-1].author == "kernel"


@pytest.mark.parametrize("loop", ["action", "explore", "reflection"])
def test_skill_invocation_rights(instance: Instance, loop: Loop) -> None:
    assert DataWriter(instance, loop).may_invoke_skills() == (loop in {"action", "explore"})


def test_action_loop_may_create_a_skill_gap_goal(instance: Instance) -> None:
    goal = DataWriter(instance, "action").add_skill_gap_goal("send e-mail")
    assert goal.status == "todo" and goal.name.startswith("Author a skill")
    with pytest.raises(WritePermissionError):
        DataWriter(instance, "explore").add_skill_gap_goal("send e-mail")

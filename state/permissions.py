"""Write permissions of the lumen spec, enforced where data files are written.

| File                                | Action loop       | Explore loop   | Reflection loop |
|-------------------------------------|-------------------|----------------|-----------------|
| soul.md                             | read              | read           | read + write    |
| values.json                         | read              | read           | read + write    |
| goals (status: todo/working/done)   | read + write      | read           | read + write    |
| goals (status: perpetual)           | read              | read           | read + write    |
| goals (weight/existence)            | read              | read           | read + write    |
| skills                              | read + write      | read + invoke  | read            |
| memory                              | read + write      | read + write   | read + write    |
| deferred proposals (.lumen)         | -                 | -              | read + write    |

One documented exception, from the spec's own DECIDE step: when the best action has no skill
(A = 0), the action loop creates a ``todo`` goal to author that skill (``add_skill_gap_goal``).
Every violation raises ``WritePermissionError`` and is logged as a ``kernel`` memory first.

Every read-modify-write of values.json and the goals files holds the instance lock
(``Instance.data_lock``), so concurrent ``reflect`` and ``run`` processes never lose an update.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, Literal

from state.errors import LumenError
from state.files import atomic_write_text, dump_records, load_records, load_values
from state.instance import Instance
from state.journal import MemoryJournal
from state.records import Author, GoalRecord, GoalStatus, ValueRecord

Loop = Literal["action", "explore", "reflection"]
Resource = Literal[
    "soul",
    "values",
    "goal_status",
    "goal_perpetual",
    "goal_weight",
    "goal_existence",
    "skills_write",
    "skills_invoke",
    "memory",
    "deferred_proposals",
]

ALLOWED: dict[Resource, frozenset[Loop]] = {
    "soul": frozenset({"reflection"}),
    "values": frozenset({"reflection"}),
    "goal_status": frozenset({"action", "reflection"}),
    "goal_perpetual": frozenset({"reflection"}),
    "goal_weight": frozenset({"reflection"}),
    "goal_existence": frozenset({"reflection"}),
    "skills_write": frozenset({"action"}),
    "skills_invoke": frozenset({"action", "explore"}),
    "memory": frozenset({"action", "explore", "reflection"}),
    "deferred_proposals": frozenset({"reflection"}),
}
DEFERRED_PROPOSALS_MAX = 10
"""Reflection proposals kept while the value lock is closed (oldest dropped first)."""
SKILL_GAP_GOAL_WEIGHT = 0.5


class WritePermissionError(LumenError):
    """A loop tried to write what the spec's table does not allow it to write."""


class StaleWriteError(LumenError):
    """A compare-and-swap write found the file changed since the caller read it."""


def _value_set(values: list[ValueRecord]) -> set[tuple[str, float, str]]:
    return {(v.name, v.weight, v.status) for v in values}


class DataWriter:
    """The only writer of an instance's data files, bound to the loop that uses it."""

    def __init__(self, instance: Instance, loop: Loop) -> None:
        """Bind the writer to an instance and a loop."""
        self.instance = instance
        self.loop = loop
        self.journal = MemoryJournal(instance.memory_dir)

    def check(self, resource: Resource, what: str) -> None:
        """Raise (after logging) unless this loop may write ``resource``."""
        if self.loop in ALLOWED[resource]:
            return
        message = f"the {self.loop} loop may not write {resource} ({what})"
        self.journal.append(
            self.journal.new_entry(
                f"WritePermissionDenied: {message}",
                author="kernel",
                situation=self.loop,
                meta={"kind": "WritePermissionDenied", "resource": resource, "loop": self.loop},
            )
        )
        raise WritePermissionError(message)

    # ------------------------------------------------------------------ soul and values

    def write_soul(self, text: str) -> None:
        """Replace soul.md (reflection only)."""
        self.check("soul", "soul.md")
        atomic_write_text(self.instance.soul_file, text)

    def write_values(
        self, values: list[ValueRecord], *, based_on: list[ValueRecord] | None = None
    ) -> None:
        """Replace values.json (reflection only), under the instance lock.

        ``based_on`` makes the write a compare-and-swap: the values the caller read and changed.
        When values.json no longer holds them (another process wrote in between), nothing is
        written and ``StaleWriteError`` is raised, so the other writer's update is never lost.
        """
        self.check("values", "values.json")
        with self.instance.data_lock():
            if based_on is not None:
                current = load_values(self.instance.values_file)
                if _value_set(current) != _value_set(based_on):
                    raise StaleWriteError("values.json changed since it was read")
            dump_records(self.instance.values_file, values)

    def update_values(
        self, change: Callable[[list[ValueRecord]], list[ValueRecord] | None]
    ) -> list[ValueRecord] | None:
        """Read values.json, apply ``change`` and write the result, all under the instance lock.

        ``change`` returns the new values, or ``None`` to write nothing. Returns what was written.
        """
        self.check("values", "values.json")
        with self.instance.data_lock():
            changed = change(load_values(self.instance.values_file))
            if changed is not None:
                dump_records(self.instance.values_file, changed)
            return changed

    # ------------------------------------------------------------------ goals

    def _goals(self, year: int) -> list[GoalRecord]:
        path = self.instance.goals_file(year)
        return load_records(path, GoalRecord) if path.exists() else []

    def _find(self, year: int, name: str) -> tuple[list[GoalRecord], int]:
        goals = self._goals(year)
        for index, goal in enumerate(goals):
            if goal.name == name:
                return goals, index
        raise LumenError(f"no goal named {name!r} in {year}")

    def set_goal_status(self, year: int, name: str, status: GoalStatus) -> None:
        """Move a goal between todo/working/done (action, reflection); perpetual is reflection's."""
        with self.instance.data_lock():
            goals, index = self._find(year, name)
            current = goals[index].status
            if current == "perpetual" or status == "perpetual":
                self.check("goal_perpetual", f"{name!r}: {current} -> {status}")
            else:
                self.check("goal_status", f"{name!r}: {current} -> {status}")
            goals[index] = goals[index].model_copy(update={"status": status})
            dump_records(self.instance.goals_file(year), goals)

    def set_goal_weight(self, year: int, name: str, weight: float) -> None:
        """Change a goal's weight (reflection only)."""
        self.check("goal_weight", f"{name!r} -> {weight:.3f}")
        with self.instance.data_lock():
            goals, index = self._find(year, name)
            goals[index] = GoalRecord.model_validate(
                {**goals[index].model_dump(), "weight": weight}
            )
            dump_records(self.instance.goals_file(year), goals)

    def add_goal(self, goal: GoalRecord, *, year: int | None = None) -> None:
        """Create a goal in the current year's file (reflection only)."""
        self.check("goal_existence", f"add {goal.name!r}")
        self._append_goal(goal, year)

    def add_skill_gap_goal(self, skill_need: str, *, year: int | None = None) -> GoalRecord:
        """Create the DECIDE step's 'author a skill' goal (the action loop's one exception)."""
        if self.loop not in {"action", "reflection"}:
            self.check("goal_existence", f"skill gap {skill_need!r}")
        goal = GoalRecord(
            name=f"Author a skill to {skill_need}"[:200],
            weight=SKILL_GAP_GOAL_WEIGHT,
            status="todo",
        )
        with self.instance.data_lock():
            existing = {g.name for g in self._goals(year or date.today().year)}
            if goal.name not in existing:
                self._append_goal(goal, year)
        return goal

    def _append_goal(self, goal: GoalRecord, year: int | None) -> None:
        target = year or date.today().year
        with self.instance.data_lock():
            dump_records(self.instance.goals_file(target), [*self._goals(target), goal])

    def remove_goal(self, year: int, name: str) -> None:
        """Delete a goal (reflection only)."""
        self.check("goal_existence", f"remove {name!r}")
        with self.instance.data_lock():
            goals, index = self._find(year, name)
            del goals[index]
            dump_records(self.instance.goals_file(year), goals)

    # ------------------------------------------------------------------ skills and memory

    def write_skill(self, name: str, main_py: str) -> None:
        """Author ``skills/NAME/main.py`` (action loop, through the create-skill tool)."""
        self.check("skills_write", f"skills/{name}")
        atomic_write_text(self.instance.skills_dir / name / "main.py", main_py)

    def may_invoke_skills(self) -> bool:
        """Say whether this loop may invoke skills (action, explore)."""
        return self.loop in ALLOWED["skills_invoke"]

    def remember(self, text: str, *, author: Author, situation: str, **meta: object) -> str:
        """Append a memory (every loop may)."""
        self.check("memory", author)
        entry = self.journal.append(
            self.journal.new_entry(text, author=author, situation=situation, meta=dict(meta))
        )
        return entry.id

    # ------------------------------------------------------------------ deferred proposals

    @property
    def deferred_file(self) -> Path:
        """Where proposals a closed value lock refused wait (``.lumen/deferred_proposals.json``)."""
        return self.instance.machine / "deferred_proposals.json"

    def defer_proposals(self, proposals: list[dict[str, Any]]) -> None:
        """Keep proposals the value lock refused until stability allows them (reflection only)."""
        self.check("deferred_proposals", f"{len(proposals)} proposals")
        kept = proposals[-DEFERRED_PROPOSALS_MAX:]
        atomic_write_text(self.deferred_file, json.dumps(kept, ensure_ascii=False, indent=1))

    def take_deferred_proposals(self) -> list[dict[str, Any]]:
        """Return and clear the deferred proposals (reflection only)."""
        self.check("deferred_proposals", "take")
        path = self.deferred_file
        if not path.exists():
            return []
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = []
        path.unlink(missing_ok=True)
        return [p for p in loaded if isinstance(p, dict)] if isinstance(loaded, list) else []

    def values(self) -> list[ValueRecord]:
        """Read values (every loop may read)."""
        return load_values(self.instance.values_file)

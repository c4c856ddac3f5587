"""The lumen data records: values, goals and memory entries (lumen spec, Data Structures)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kernel.autonomy import skill_slug, topic_words
from state.self_state import Unit, utc_now

Author = Literal["self", "kernel", "goal", "external"]
AUTHORS: tuple[Author, ...] = ("self", "kernel", "goal", "external")
GoalStatus = Literal["todo", "working", "done", "perpetual"]
GOAL_STATUSES: tuple[GoalStatus, ...] = ("todo", "working", "done", "perpetual")
ValueStatus = Literal["active", "deprecated"]


class ValueRecord(BaseModel):
    """One entry of ``data/values.json``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    weight: Unit
    status: ValueStatus = "active"


CriterionKind = Literal["findings", "artifact", "question", "skill"]
SKILL_GOAL_PREFIX = "Author a skill to "
"""The name of the goal the action loop creates for a missing ability (``add_skill_gap_goal``)."""
DEFAULT_FINDINGS = 2
"""Findings on its topic a goal without declared criteria needs (with one artifact)."""
ABOUT_THE_USER = frozenset({"user", "users", "people", "person"})


class Criterion(BaseModel):
    """One thing a goal needs before it is done (issue 13: goals carry criteria).

    ``findings``: ``count`` findings recorded on ``topic`` (or for the goal); ``artifact``: a
    workspace note or memory summary for the goal; ``question``: a question queued for the user
    and answered (the user spoke after it was delivered); ``skill``: a skill named ``skill``
    exists.
    """

    model_config = ConfigDict(extra="forbid")

    kind: CriterionKind
    count: int = Field(default=1, ge=1, le=20)
    topic: str = Field(default="", max_length=200)
    skill: str = Field(default="", max_length=31)


class GoalRecord(BaseModel):
    """One entry of ``data/goals/<year>.json``; the year is the file it lives in.

    ``criteria`` is optional (older files load unchanged and an empty list is not written):
    :func:`goal_criteria` derives a default from the goal.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    weight: Unit
    status: GoalStatus = "todo"
    criteria: list[Criterion] = Field(
        default_factory=list, max_length=8, exclude_if=lambda v: not v
    )


def goal_criteria(goal: GoalRecord) -> list[Criterion]:
    """Return the goal's criteria, or the default derived from it.

    Chosen where the spec is silent: a goal to author a skill (``Author a skill to X``) is done
    when that skill exists; any other goal when ``DEFAULT_FINDINGS`` findings on its topic have
    been recorded and one artifact (a note or summary) was made for it; a goal about the user
    (it names the user or people) also needs a question asked of the user and answered.
    """
    if goal.criteria:
        return list(goal.criteria)
    if goal.name.startswith(SKILL_GOAL_PREFIX):
        return [Criterion(kind="skill", skill=skill_slug(goal.name[len(SKILL_GOAL_PREFIX) :]))]
    derived = [
        Criterion(kind="findings", count=DEFAULT_FINDINGS, topic=goal.name),
        Criterion(kind="artifact"),
    ]
    if topic_words(goal.name) & ABOUT_THE_USER:
        derived.append(Criterion(kind="question"))
    return derived


class MemoryEntry(BaseModel):
    """One line of ``data/memory/<year>/<date>.jsonl``; frozen: entries are never edited.

    ``id``, ``tainted`` and ``digest`` are Lumen additions to the spec's record: the id addresses
    the entry from the retrieval index; ``tainted`` marks anything derived from untrusted external
    content (it can never authorize an action or change values, goals, soul or psyche); the digest
    (SHA-256 of the canonical content) lets ``lumen doctor`` prove no entry was edited later.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    timestamp: datetime = Field(default_factory=utc_now)
    author: Author
    weight: Unit = 0.5
    situation: str = ""
    description: str
    meta: dict[str, Any] = Field(default_factory=dict)
    tainted: bool = False
    digest: str = ""

    @field_validator("timestamp")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("timestamp must carry a timezone (ISO 8601 with offset)")
        return value

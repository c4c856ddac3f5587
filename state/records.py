"""The lumen data records: values, goals and memory entries (lumen spec, Data Structures)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

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


class GoalRecord(BaseModel):
    """One entry of ``data/goals/<year>.json``; the year is the file it lives in."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    weight: Unit
    status: GoalStatus = "todo"


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

"""Graph state of a chat turn (declared once; nodes return partial updates)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from state.self_state import utc_now

HISTORY_TURNS = 6
"""Exchanges kept in graph state; older ones live only in the memory ledger."""


class Exchange(BaseModel):
    """One user input and the reply to it."""

    user: str
    reply: str
    ts: datetime = Field(default_factory=utc_now)


class TurnInput(BaseModel):
    """What a caller supplies for one turn."""

    user_text: str = Field(min_length=1)


class TurnState(TurnInput):
    """Everything a turn reads and writes."""

    history: list[Exchange] = Field(default_factory=list, max_length=HISTORY_TURNS)
    context_memories: list[str] = Field(default_factory=list)
    draft: str = ""
    reply: str = ""
    llm_calls: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    degraded: list[str] = Field(default_factory=list)

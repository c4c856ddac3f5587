"""The shadow pattern schema: a veto or bias pattern and its triggers (pure data, no logic)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Unit = Annotated[float, Field(ge=0.0, le=1.0)]


class ShadowPattern(BaseModel):
    """A veto or bias pattern: any trigger firing fires the pattern."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    name: str = Field(min_length=1)
    triggers: list[str] = Field(min_length=1)
    severity: Unit = 1.0
    explanation: str = ""

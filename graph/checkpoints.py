"""The on-disk checkpointer, with a strict allowlist of the types checkpoints may contain.

LangGraph's default serializer revives any module's class from a checkpoint (with a warning);
Lumen names exactly its own state types, so a tampered checkpoint cannot make it import anything
else.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite import SqliteSaver

ALLOWED_STATE_TYPES: tuple[tuple[str, str], ...] = (
    *(
        ("state.turn", name)
        for name in (
            "Exchange",
            "StepRecord",
            "Surface",
            "IntentHypothesis",
            "RealityCheck",
            "Effort",
            "Candidate",
            "ToolChoice",
            "ToolCall",
            "TurnState",
            "TurnInput",
        )
    ),
    *(
        ("state.self_state", name)
        for name in (
            "Self",
            "SelfState",
            "SkaiIdentity",
            "ContextModel",
            "SkaiGoals",
            "Belief",
            "BeliefRevision",
            "Beliefs",
            "Epistemics",
            "ConceptLink",
            "NamedConcept",
            "NamedConcepts",
            "EpisodicEvent",
            "SemanticNote",
            "WorkingMemory",
            "ToolStatus",
            "ToolUse",
            "Tools",
            "Regret",
            "Experiment",
            "Growth",
            "Persona",
            "ShadowPattern",
            "Shadow",
            "ArchetypeWeights",
            "SelfIntegration",
            "Psyche",
            "IdentityVector",
            "Affect",
            "CognitiveBudget",
            "StabilityMetrics",
            "Metacog",
        )
    ),
)


@contextmanager
def sqlite_saver(db: Path) -> Iterator[SqliteSaver]:
    """Yield a ``SqliteSaver`` on ``db`` that only revives Lumen's own state types."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.checkpoint.sqlite import SqliteSaver

    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(db), check_same_thread=False)
    try:
        serde = JsonPlusSerializer(allowed_msgpack_modules=list(ALLOWED_STATE_TYPES))
        yield SqliteSaver(conn, serde=serde)
    finally:
        conn.close()

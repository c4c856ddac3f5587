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

STATE_MODULES = ("state.turn", "state.self_state", "state.cycle", "state.records")


def allowed_state_types() -> list[tuple[str, str]]:
    """Return (module, class) for every pydantic model defined in Lumen's state modules."""
    import importlib

    from pydantic import BaseModel

    allowed = []
    for module_name in STATE_MODULES:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseModel)
                and value.__module__ == module_name
            ):
                allowed.append((module_name, name))
    return sorted(allowed)


@contextmanager
def sqlite_saver(db: Path) -> Iterator[SqliteSaver]:
    """Yield a ``SqliteSaver`` on ``db`` that only revives Lumen's own state types."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.checkpoint.sqlite import SqliteSaver

    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(db), check_same_thread=False)
    try:
        serde = JsonPlusSerializer(allowed_msgpack_modules=allowed_state_types())
        yield SqliteSaver(conn, serde=serde)
    finally:
        conn.close()

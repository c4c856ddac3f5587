"""Run turns against an instance with the on-disk SQLite checkpointer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from graph.builder import build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.deps import Deps
from state.turn import TurnInput, TurnState

DEFAULT_THREAD = "main"


@contextmanager
def turn_runner(deps: Deps) -> Iterator[Any]:
    """Yield the ``turn`` graph compiled with ``SqliteSaver`` on the instance's checkpoint DB."""
    with sqlite_saver(deps.instance.checkpoint_db) as saver:
        yield build_turn_graph(deps).compile(checkpointer=saver, name="turn")


def run_turn(
    compiled: Any, text: str, *, thread: str = DEFAULT_THREAD, durability: str = "exit"
) -> TurnState:
    """Run one turn on ``thread`` and return the final state."""
    config = {"configurable": {"thread_id": thread}}
    result = compiled.invoke(TurnInput(user_text=text), config, durability=durability)
    return TurnState.model_validate(result)

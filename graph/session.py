"""Run turns against an instance with the on-disk SQLite checkpointer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from graph.builder import build_turn_graph
from graph.checkpoints import open_checkpointer
from graph.deps import Deps
from state.turn import TurnInput, TurnState

DEFAULT_THREAD = "main"


@contextmanager
def turn_runner(deps: Deps) -> Iterator[Any]:
    """Yield the ``turn`` graph compiled with ``SqliteSaver`` on the instance's checkpoint DB."""
    with open_checkpointer(deps.instance, deps.config) as saver:
        yield build_turn_graph(deps).compile(checkpointer=saver, name="turn")


def run_turn(
    compiled: Any,
    text: str | TurnInput,
    *,
    thread: str = DEFAULT_THREAD,
    durability: str = "exit",
    autonomous: bool = False,
) -> TurnState:
    """Run one turn on ``thread`` and return the final state.

    Pass a ``TurnInput`` from ``graph.ingress.prepare_input`` for anything not typed by the user.
    """
    config = {"configurable": {"thread_id": thread}}
    payload = (
        text if isinstance(text, TurnInput) else TurnInput(user_text=text, autonomous=autonomous)
    )
    result = compiled.invoke(payload, config, durability=durability)
    return TurnState.model_validate(result)

"""Run turns against an instance with the on-disk SQLite checkpointer."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from graph.builder import REPLY_STEPS, build_turn_graph
from graph.checkpoints import open_checkpointer
from graph.deps import Deps
from state.turn import TurnInput, TurnState

DEFAULT_THREAD = "main"


def settle_heap() -> None:
    """Move everything alive now (modules, model, compiled graph) out of the collector's way.

    A session allocates ~170k long-lived objects before its first turn; without this every
    full collection walks them all, a few ms in the middle of some turns (the p95 of a scripted
    turn was twice its median). Objects made later are collected as usual.
    """
    gc.collect()
    gc.freeze()


@contextmanager
def turn_runner(deps: Deps) -> Iterator[Any]:
    """Yield the ``turn`` graph compiled with ``SqliteSaver`` on the instance's checkpoint DB."""
    with open_checkpointer(deps.instance, deps.config) as saver:
        compiled = build_turn_graph(deps).compile(checkpointer=saver, name="turn")
        settle_heap()
        yield compiled


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
        text
        if isinstance(text, TurnInput)
        else TurnInput(user_text=text, source="user", autonomous=autonomous)
    )
    result = compiled.invoke(payload, config, durability=durability)
    return TurnState.model_validate(result)


StepListener = Callable[[str], None]
TokenListener = Callable[[str, str], None]


def stream_turn(
    compiled: Any,
    text: str | TurnInput,
    *,
    on_step: StepListener,
    on_token: TokenListener,
    thread: str = DEFAULT_THREAD,
    durability: str = "exit",
) -> TurnState:
    """Run one turn like ``run_turn``, reporting progress as it happens.

    ``on_step(name)`` hears each step as it starts (LangGraph's ``tasks`` stream mode), so a
    status line names what is running now, not what just ended; ``on_token(draft_id, text)``
    hears the reply's tokens while a reply step (``REPLY_STEPS``: the drafts and the re-draft with
    tool results) generates them — ``draft_id`` changes when a new draft starts. The final state is
    returned; its ``reply`` is what composition made of the chosen draft.
    """
    config = {"configurable": {"thread_id": thread}}
    payload = text if isinstance(text, TurnInput) else TurnInput(user_text=text, source="user")
    final: Any = None
    for namespace, mode, data in compiled.stream(
        payload,
        config,
        stream_mode=["messages", "tasks", "values"],
        subgraphs=True,
        durability=durability,
    ):
        if mode == "messages":
            chunk, meta = data
            content: Any = getattr(chunk, "content", None)
            if meta.get("langgraph_node") in REPLY_STEPS and isinstance(content, str) and content:
                draft_id = f"{meta.get('langgraph_checkpoint_ns', '')}:{getattr(chunk, 'id', None)}"
                on_token(draft_id, content)
        elif mode == "tasks" and "result" not in data and "error" not in data:  # a task starts
            on_step(str(data.get("name", "")))
        elif mode == "values" and not namespace:
            final = data
    return TurnState.model_validate(final)

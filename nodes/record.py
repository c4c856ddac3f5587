"""record: write the ``kernel`` memory of the turn and keep a bounded history in state."""

from __future__ import annotations

import time

from graph.deps import Deps
from state.turn import HISTORY_TURNS, Exchange, TurnState


def record(state: TurnState, *, deps: Deps) -> dict[str, object]:
    """Log what the kernel did this turn (the audit trail) and append the exchange."""
    started = time.perf_counter()
    deps.store.journal.append(
        deps.store.journal.new_entry(
            f"chat turn: recalled {len(state.context_memories)} memories, "
            f"{state.llm_calls} model call(s), replied with {len(state.reply)} chars"
            + (f"; degraded: {'; '.join(state.degraded)}" if state.degraded else ""),
            author="kernel",
            situation="chat",
            meta={"step": "turn", "llm_calls": state.llm_calls, "degraded": state.degraded},
        )
    )
    history = [*state.history, Exchange(user=state.user_text, reply=state.reply)][-HISTORY_TURNS:]
    return {
        "history": history,
        "timings_ms": {
            **state.timings_ms,
            "record": round((time.perf_counter() - started) * 1000, 2),
        },
    }

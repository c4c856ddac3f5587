"""ingest: store the user's input as an ``external`` memory and recall context for it."""

from __future__ import annotations

import time

from graph.deps import Deps
from state.records import Author
from state.turn import TurnState

RECALL_AUTHORS: tuple[Author, ...] = ("self", "goal", "external")
MEMORY_SNIPPET_CHARS = 200


def ingest(state: TurnState, *, deps: Deps) -> dict[str, object]:
    """Record the input, then retrieve recent + semantically similar memories."""
    started = time.perf_counter()
    deps.store.add(state.user_text, metadata={"author": "external", "situation": "chat"})
    hits = deps.store.search(
        state.user_text,
        k=deps.config.memory.semantic_k,
        recent=deps.config.memory.recent,
        authors=RECALL_AUTHORS,
    )
    memories = [h.text[:MEMORY_SNIPPET_CHARS] for h in hits if h.text != state.user_text]
    return {
        "context_memories": memories[: deps.config.memory.semantic_k + deps.config.memory.recent],
        "draft": "",
        "reply": "",
        "llm_calls": 0,
        "degraded": [],
        "timings_ms": {"ingest": round((time.perf_counter() - started) * 1000, 2)},
    }

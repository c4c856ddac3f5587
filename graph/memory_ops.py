"""Memory work that runs after a reply has been shown (off the user's critical path)."""

from __future__ import annotations

from graph.deps import Deps


def after_reply(deps: Deps) -> None:
    """Index the turn's deferred memories, then run the batched Tier C inference pass.

    The inference pass makes at most one model call, only for untainted user memories, and only
    when ``memory.inference`` is ``after_turn``; a failing pass never loses the turn.
    """
    from state.claims import sources_for

    flushed = deps.store.flush()
    if not sources_for(flushed):  # nothing the pass would read: skip loading the model gateway
        return
    from graph.inference import infer_claims

    try:
        infer_claims(deps, flushed)
    except Exception as exc:  # the turn is already delivered and recorded; never lose it
        deps.store.add(
            f"memory inference skipped: {type(exc).__name__}: {str(exc)[:200]}",
            metadata={"author": "kernel", "situation": "memory.infer"},
            defer_index=True,
        )

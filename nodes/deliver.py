"""deliver: hand the draft to the ``chat`` skill, the skill that faces the user."""

from __future__ import annotations

import time

from graph import skills
from graph.deps import Deps
from state.turn import TurnState


def deliver(state: TurnState, *, deps: Deps) -> dict[str, object]:
    """Run the chat skill (instance copy first, built-in otherwise); keep the draft on failure."""
    started = time.perf_counter()
    main = deps.instance.skills_dir / "chat" / "main.py"
    if not main.is_file():
        main = skills.BUILTIN_SKILLS / "chat" / "main.py"
    result = skills.run(main, {"reply": state.draft}, timeout=10)
    reply = str(result.output.get("reply", "")) if result.ok else ""
    degraded = list(state.degraded)
    if not reply:
        reply = state.draft
        if not result.ok:
            degraded.append(f"deliver: chat skill failed ({result.error})")
    return {
        "reply": reply,
        "degraded": degraded,
        "timings_ms": {
            **state.timings_ms,
            "deliver": round((time.perf_counter() - started) * 1000, 2),
        },
    }

"""respond: draft a reply through the thinking gateway."""

from __future__ import annotations

from graph.deps import Deps
from graph.thinking import think_text
from state.files import parse_soul
from state.turn import TurnState

FALLBACK_REPLY = "I could not form a proper answer just now. Could you say that another way?"


def respond(state: TurnState, *, deps: Deps) -> dict[str, object]:
    """Call the model once with the persona, recalled memories and recent history packed in."""
    instance = deps.instance
    name, _ = parse_soul(instance.soul_file.read_text(encoding="utf-8"))
    psyche = instance.load_psyche()
    thought = think_text(
        deps,
        "chat",
        mode="talk",
        values={
            "name": name or psyche.persona.name,
            "persona_traits": ", ".join(psyche.persona.traits),
            "memories": "\n".join(f"- {m}" for m in state.context_memories) or "- nothing yet",
            "user_text": state.user_text,
        },
        history=[(x.user, x.reply) for x in state.history[-3:]],
        fallback=FALLBACK_REPLY,
    )
    degraded = [] if thought.ok else [f"respond: {thought.reason}"]
    return {
        "draft": thought.text,
        "llm_calls": state.llm_calls + 1,
        "degraded": state.degraded + degraded,
        "timings_ms": {**state.timings_ms, "respond": round(thought.ms, 2)},
    }

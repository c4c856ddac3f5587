"""The thinking gateway: the only place a model is called.

It renders prompt templates, picks the mode's model (temperature clamped at the factory), caps the
output, times the call and turns unusable output into an explicit fallback with a reason instead
of an exception, so a turn never crashes because of what a small model says.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from graph.deps import Deps
from prompts import render

MIN_USEFUL_CHARS = 2


@dataclass(frozen=True)
class Thought:
    """A model answer, or a fallback with the reason the answer was unusable."""

    text: str
    ok: bool
    ms: float
    reason: str = ""


def think_text(
    deps: Deps,
    prompt: str,
    *,
    mode: str,
    values: dict[str, object],
    history: list[tuple[str, str]] | None = None,
    fallback: str,
) -> Thought:
    """Render ``prompts/<prompt>/{system,prompt}.md``, call the model, validate the text."""
    messages: list[BaseMessage] = [SystemMessage(render(f"{prompt}/system", **values))]
    for user, reply in history or []:
        messages.extend([HumanMessage(user), AIMessage(reply)])
    messages.append(HumanMessage(render(f"{prompt}/prompt", **values)))
    model = deps.model_for(mode)  # a model that cannot load is a user-facing error, not a fallback
    started = time.perf_counter()
    try:
        answer = model.invoke(messages)
    except Exception as exc:  # a provider failure must not kill the turn; it is recorded
        ms = (time.perf_counter() - started) * 1000
        return Thought(fallback, ok=False, ms=ms, reason=f"model call failed: {exc}"[:200])
    ms = (time.perf_counter() - started) * 1000
    text = answer.content if isinstance(answer.content, str) else str(answer.content)
    text = text.strip()
    if len(text) < MIN_USEFUL_CHARS or not any(ch.isalnum() for ch in text):
        return Thought(fallback, ok=False, ms=ms, reason="model output unusable (empty or no text)")
    return Thought(text, ok=True, ms=ms)

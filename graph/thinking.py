"""The thinking gateway: the only place a model is called.

It renders prompt templates, picks the mode's model (temperature clamped at the factory), applies
JSON-schema constrained decoding where the backend supports it, validates, falls back to a
rule-based answer when the output is unusable, and records why. A turn never crashes because of
what a small model says; a model that cannot load is still a user-facing error.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from nodes.services import Judgment, Services, Thought
from prompts import render

MIN_USEFUL_CHARS = 2

_TEMPLATE_JUNK = re.compile(r"<\|[^|>]{1,40}\|>")
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)

M = TypeVar("M", bound=BaseModel)


def _messages(
    prompt: str, values: dict[str, object], history: list[tuple[str, str]] | None
) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage(render(f"{prompt}/system", **values))]
    for user, reply in history or []:
        messages.extend([HumanMessage(user), AIMessage(reply)])
    messages.append(HumanMessage(render(f"{prompt}/prompt", **values)))
    return messages


def _content(answer: BaseMessage) -> str:
    return answer.content if isinstance(answer.content, str) else str(answer.content)


def think_text(
    deps: Services,
    prompt: str,
    *,
    mode: str,
    values: dict[str, object],
    history: list[tuple[str, str]] | None = None,
    fallback: str,
) -> Thought:
    """Render ``prompts/<prompt>/{system,prompt}.md``, call the model, validate the text."""
    messages = _messages(prompt, values, history)
    model = deps.model_for(mode)  # a model that cannot load is a user-facing error, not a fallback
    started = time.perf_counter()
    try:
        answer = model.invoke(messages)
    except Exception as exc:  # a provider failure must not kill the turn; it is recorded
        ms = (time.perf_counter() - started) * 1000
        return Thought(fallback, ok=False, ms=ms, reason=f"model call failed: {exc}"[:200])
    ms = (time.perf_counter() - started) * 1000
    text = _TEMPLATE_JUNK.sub("", _content(answer)).strip()
    if len(text) < MIN_USEFUL_CHARS or not any(ch.isalnum() for ch in text):
        return Thought(fallback, ok=False, ms=ms, reason="model output unusable (empty or no text)")
    return Thought(text, ok=True, ms=ms)


def constrained(model: BaseChatModel, schema: dict[str, Any]) -> Any:
    """Bind JSON-schema constrained decoding where the backend supports it."""
    kind = type(model).__name__
    if kind == "ChatLlamaCpp":
        return model.bind(response_format={"type": "json_object", "schema": schema})
    if kind in {"ChatOpenAI", "AzureChatOpenAI"}:
        return model.bind(
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema, "strict": False},
            }
        )
    return model  # scripted test models and unknown backends: parse and validate the text


def parse_json_object(text: str) -> dict[str, Any] | None:
    """Return the first JSON object in ``text`` (code fences and prose around it tolerated)."""
    cleaned = _FENCE.sub("", text.strip())
    try:
        value = json.loads(cleaned)
        return value if isinstance(value, dict) else None
    except json.JSONDecodeError:
        pass
    start = cleaned.find("{")
    while start != -1:
        depth = 0
        for index in range(start, len(cleaned)):
            if cleaned[index] == "{":
                depth += 1
            elif cleaned[index] == "}":
                depth -= 1
                if depth == 0:
                    try:
                        value = json.loads(cleaned[start : index + 1])
                    except json.JSONDecodeError:
                        break
                    return value if isinstance(value, dict) else None
        start = cleaned.find("{", start + 1)
    return None


def think_json(
    deps: Services,
    prompt: str,
    *,
    mode: str,
    values: dict[str, object],
    schema: type[M],
    fallback: M,
) -> Judgment[M]:
    """Ask for a JSON object matching ``schema``; validate it or return ``fallback`` and why."""
    model = constrained(deps.model_for(mode), schema.model_json_schema())
    started = time.perf_counter()
    try:
        answer = model.invoke(_messages(prompt, values, None))
    except Exception as exc:  # provider failure: recorded, the rule-based fallback is used
        ms = (time.perf_counter() - started) * 1000
        return Judgment(fallback, ok=False, ms=ms, reason=f"model call failed: {exc}"[:200])
    ms = (time.perf_counter() - started) * 1000
    raw = parse_json_object(_content(answer))
    if raw is None:
        return Judgment(fallback, ok=False, ms=ms, reason="model output is not a JSON object")
    try:
        return Judgment(schema.model_validate(raw), ok=True, ms=ms)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
    repair = getattr(schema, "repair", None)
    repaired = repair(raw) if callable(repair) else None
    if isinstance(repaired, schema):
        return Judgment(repaired, ok=True, ms=ms, reason=f"repaired (invalid at {where})")
    return Judgment(fallback, ok=False, ms=ms, reason=f"model JSON invalid at {where}")

"""The thinking gateway: the only place a model is called.

It renders prompt templates, picks the mode's model (temperature clamped at the factory), applies
constrained decoding the way the backend accepts it (negotiated and remembered per endpoint for
OpenAI-compatible servers, see ``graph/structured_output.py``), validates, falls back to a
rule-based answer when the output is unusable, and records why. A turn never crashes because of
what a small model says; a model that cannot load is still a user-facing error.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from graph import structured_output
from graph.structured_output import METHODS, Endpoint, Method
from kernel.text import drop_unfinished
from nodes.services import Judgment, Services, Thought
from prompts import render

MIN_USEFUL_CHARS = 2

_TEMPLATE_JUNK = re.compile(r"<\|[^|>]{1,40}\|>")
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)

M = TypeVar("M", bound=BaseModel)

ANSWER_NAME = "answer"
"""The json_schema name and the single tool of the function-calling method."""


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


def cost_refusal(deps: Services) -> str | None:
    """Return why no hosted model call may start today (the daily cost limit), else ``None``.

    The embedded model costs nothing and is never refused; for a hosted one the security
    policy's ledger decides, failing closed when it is unreadable.
    """
    if deps.config.llm.provider == "embedded":
        return None
    from graph.policy import SecurityPolicy

    decision = SecurityPolicy(deps.instance, deps.config, clock=deps.now).cost_allowed()
    return None if decision.allowed else f"model call refused: {decision.reason}"


def record_cost(deps: Services, answer: BaseMessage) -> None:
    """Record one model call's token usage as cost against the daily limit.

    Tokens are the answer's ``usage_metadata`` (OpenAI-compatible servers report it); the price
    is ``[costs.models]`` of the configured model. The embedded model costs 0 and records
    nothing. Going over the limit is caught by ``cost_refusal`` before the next call.
    """
    if deps.config.llm.provider == "embedded":
        return
    usage = getattr(answer, "usage_metadata", None) or {}
    tokens_in, tokens_out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
    cost = deps.config.costs.cost(deps.config.llm.model, tokens_in, tokens_out)
    if cost > 0:
        from graph.policy import SecurityPolicy

        policy = SecurityPolicy(deps.instance, deps.config, clock=deps.now)
        policy.record_cost(cost, f"{deps.config.llm.model} {tokens_in}+{tokens_out} tokens")


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
    refused = cost_refusal(deps)
    if refused:
        return Thought(fallback, ok=False, ms=0.0, reason=refused)
    started = time.perf_counter()
    try:
        answer = model.invoke(messages)
    except Exception as exc:  # a provider failure must not kill the turn; it is recorded
        ms = (time.perf_counter() - started) * 1000
        return Thought(fallback, ok=False, ms=ms, reason=f"model call failed: {exc}"[:200])
    ms = (time.perf_counter() - started) * 1000
    record_cost(deps, answer)
    text = _TEMPLATE_JUNK.sub("", _content(answer)).strip()
    if getattr(answer, "response_metadata", {}).get("finish_reason") == "length":
        text = drop_unfinished(text)  # out of tokens mid-sentence: end at the last whole one
    if len(text) < MIN_USEFUL_CHARS or not any(ch.isalnum() for ch in text):
        return Thought(fallback, ok=False, ms=ms, reason="model output unusable (empty or no text)")
    return Thought(text, ok=True, ms=ms)


GRAMMAR_MAX_CHARS = 160
"""The longest string a grammar-constrained answer may hold (``grammar_safe``)."""


def grammar_safe(schema: Any) -> Any:
    """Cap every ``maxLength`` at ``GRAMMAR_MAX_CHARS`` in a schema sent as a llama.cpp grammar.

    llama.cpp turns ``maxLength`` into a bounded repetition; a long one (1200) crashed its sampler
    (a segfault in the embedded model). The answer is still validated against the full model.
    """
    if isinstance(schema, dict):
        safe = {k: grammar_safe(v) for k, v in schema.items()}
        if isinstance(safe.get("maxLength"), int) and safe["maxLength"] > GRAMMAR_MAX_CHARS:
            safe["maxLength"] = GRAMMAR_MAX_CHARS
        return safe
    if isinstance(schema, list):
        return [grammar_safe(v) for v in schema]
    return schema


def constrained(model: BaseChatModel, schema: dict[str, Any]) -> Any:
    """Bind constrained decoding for backends with one known way to do it.

    The in-process llama.cpp model takes ``json_object`` plus a schema. OpenAI-compatible
    endpoints do not go through here: ``think_json`` walks their fallback chain
    (``structured_output.METHODS``) instead.
    """
    if type(model).__name__ == "ChatLlamaCpp":
        return model.bind(response_format={"type": "json_object", "schema": grammar_safe(schema)})
    return model  # scripted test models and unknown backends: parse and validate the text


def bind_method(model: BaseChatModel, method: Method, schema: dict[str, Any]) -> Any:
    """Bind one structured-output method of an OpenAI-compatible endpoint."""
    if method == "json_schema":
        return model.bind(
            response_format={
                "type": "json_schema",
                "json_schema": {"name": ANSWER_NAME, "schema": schema, "strict": False},
            }
        )
    if method == "json_object":  # llama.cpp's servers compile this schema into a grammar too
        return model.bind(response_format={"type": "json_object", "schema": grammar_safe(schema)})
    if method == "function_calling":
        tool = {
            "type": "function",
            "function": {
                "name": ANSWER_NAME,
                "description": "Give the answer.",
                "parameters": schema,
            },
        }
        # a tool name as tool_choice forces that function ({"type": "function", ...} on the wire)
        return model.bind_tools([tool], tool_choice=ANSWER_NAME)
    return model  # "prompt": the schema goes into the prompt, the answer is parsed and repaired


def _with_schema_hint(messages: list[BaseMessage], schema: dict[str, Any]) -> list[BaseMessage]:
    """Return ``messages`` with the JSON schema spelled out in the system message."""
    hint = (
        "\n\nReply with one JSON object only, no prose, matching this JSON schema: "
        + json.dumps(schema, separators=(",", ":"))
    )
    first = messages[0]
    if isinstance(first, SystemMessage):
        return [SystemMessage(_content(first) + hint), *messages[1:]]
    return [SystemMessage(hint.strip()), *messages]


_FORMAT_WORDS = re.compile(
    r"response_format|json_schema|json_object|tool|function.?call|grammar|not supported|"
    r"unsupported|input should be|extra inputs",
    re.IGNORECASE,
)
_NOT_A_FORMAT_STATUS = frozenset({401, 402, 403, 404, 408, 409, 429, 502, 503, 504})
"""Auth, billing, wrong URL/model, timeouts, rate limits and gateways: another format won't help."""


def format_refusal(exc: BaseException) -> str | None:
    """Return a short reason if ``exc`` is an error response refusing the output format."""
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int) or not 400 <= status < 600 or status in _NOT_A_FORMAT_STATUS:
        return None
    body = getattr(exc, "body", None)
    if not _FORMAT_WORDS.search(f"{exc} {body or ''}"):
        return None
    return f"HTTP {status}"


def _answer_object(answer: BaseMessage, method: Method) -> dict[str, Any] | None:
    """Return the JSON object of an answer (a forced tool call's arguments, or the text)."""
    if method == "function_calling" and isinstance(answer, AIMessage):
        for call in answer.tool_calls:
            if call["name"] == ANSWER_NAME:
                return dict(call["args"])
        for bad in answer.invalid_tool_calls:
            parsed = parse_json_object(bad.get("args") or "")
            if parsed is not None:
                return parsed
    return parse_json_object(_content(answer))


@dataclass(frozen=True)
class _Reply:
    """A model answer: the JSON object in it, its latency, and which fallback produced it."""

    raw: dict[str, Any] | None
    ms: float
    note: str = ""


class _CallFailed(Exception):
    """The model call failed (not a format refusal that a later method could avoid)."""

    def __init__(self, reason: str, ms: float) -> None:
        super().__init__(reason)
        self.reason = reason
        self.ms = ms


def _ask_openai(
    deps: Services,
    model: BaseChatModel,
    endpoint: Endpoint,
    schema: dict[str, Any],
    messages: list[BaseMessage],
) -> _Reply:
    """Walk the endpoint's fallback chain from the method known to work; remember what works."""
    known = structured_output.remembered(deps.instance, endpoint)
    chain = METHODS[METHODS.index(known) :] if known else METHODS
    refused: dict[str, str] = {}
    started = time.perf_counter()
    for method in chain:
        asked = _with_schema_hint(messages, schema) if method == "prompt" else messages
        try:
            answer = bind_method(model, method, schema).invoke(asked)
        except Exception as exc:  # a refusal moves down the chain; anything else is recorded
            why = format_refusal(exc)
            if why is None or method == METHODS[-1]:
                ms = (time.perf_counter() - started) * 1000
                tried = _refusals(refused)
                reason = f"model call failed: {exc}"[:200] + (f"; {tried}" if tried else "")
                raise _CallFailed(reason, ms) from exc
            refused[method] = f"{why}: {exc}"[:300]
            continue
        ms = (time.perf_counter() - started) * 1000
        record_cost(deps, answer)
        structured_output.remember(
            deps.instance, endpoint, method, refused=refused, at=deps.now().isoformat()
        )
        if refused:
            note = f"structured output via {method} ({_refusals(refused)})"
        elif method != METHODS[0]:
            note = f"structured output via {method} (remembered for this endpoint)"
        else:
            note = ""
        return _Reply(_answer_object(answer, method), ms, note)
    raise AssertionError("unreachable: the last method never moves on")  # pragma: no cover


def _refusals(refused: dict[str, str]) -> str:
    return ", ".join(f"{m} refused ({why.split(':', 1)[0]})" for m, why in refused.items())


def _ask(
    deps: Services, model: BaseChatModel, schema: dict[str, Any], messages: list[BaseMessage]
) -> _Reply:
    endpoint = structured_output.endpoint_of(model)
    if endpoint is not None:
        return _ask_openai(deps, model, endpoint, schema, messages)
    started = time.perf_counter()
    try:
        answer = constrained(model, schema).invoke(messages)
    except Exception as exc:  # provider failure: recorded, the rule-based fallback is used
        ms = (time.perf_counter() - started) * 1000
        raise _CallFailed(f"model call failed: {exc}"[:200], ms) from exc
    ms = (time.perf_counter() - started) * 1000
    record_cost(deps, answer)
    return _Reply(parse_json_object(_content(answer)), ms)


def parse_json_object(text: str) -> dict[str, Any] | None:
    """Return the first JSON object in ``text`` (code fences and prose around it tolerated)."""
    cleaned = _FENCE.sub("", text.strip())
    try:
        value = json.loads(cleaned, strict=False)  # raw newlines inside strings
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
                        value = json.loads(cleaned[start : index + 1], strict=False)
                    except json.JSONDecodeError:
                        break
                    return value if isinstance(value, dict) else None
        start = cleaned.find("{", start + 1)
    return None


def _with_note(reason: str, note: str) -> str:
    return "; ".join(part for part in (reason, note) if part)


def think_json(
    deps: Services,
    prompt: str,
    *,
    mode: str,
    values: dict[str, object],
    schema: type[M],
    fallback: M,
) -> Judgment[M]:
    """Ask for a JSON object matching ``schema``; validate it or return ``fallback`` and why.

    On an OpenAI-compatible endpoint the output format is negotiated (json_schema, then
    json_object with the schema, then a forced function call, then plain JSON in the prompt) and
    the method that worked is remembered per endpoint; a fallback is named in the reason.
    """
    model = deps.model_for(mode)  # a model that cannot load is a user-facing error, not a fallback
    refused = cost_refusal(deps)
    if refused:
        return Judgment(fallback, ok=False, ms=0.0, reason=refused)
    try:
        reply = _ask(deps, model, schema.model_json_schema(), _messages(prompt, values, None))
    except _CallFailed as failed:
        return Judgment(fallback, ok=False, ms=failed.ms, reason=failed.reason)
    raw, ms, note = reply.raw, reply.ms, reply.note
    if raw is None:
        reason = _with_note("model output is not a JSON object", note)
        return Judgment(fallback, ok=False, ms=ms, reason=reason)
    try:
        return Judgment(schema.model_validate(raw), ok=True, ms=ms, reason=note)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
    repair = getattr(schema, "repair", None)
    repaired = repair(raw) if callable(repair) else None
    if isinstance(repaired, schema):
        reason = _with_note(f"repaired (invalid at {where})", note)
        return Judgment(repaired, ok=True, ms=ms, reason=reason)
    return Judgment(
        fallback, ok=False, ms=ms, reason=_with_note(f"model JSON invalid at {where}", note)
    )

"""``lumen ingest``: outside text (or a JSON signal envelope) from stdin, screened and recorded."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer

from cli.common import JsonFlag, after_reply, current_instance, emit_json
from state.errors import LumenError

MAX_INPUT_CHARS = 262_144
"""The most ``lumen ingest`` reads from stdin (256 Ki characters); more is refused, not cut."""


def register(app: typer.Typer) -> None:
    """Add ``ingest`` to the app."""
    app.command()(ingest)


def ingest(
    source: Annotated[
        str | None, typer.Option("--source", help="Signal kind: webhook, email, rss, …")
    ] = None,
    ref: Annotated[str, typer.Option("--ref", help="Source reference (dedup key).")] = "",
    envelope: Annotated[
        bool,
        typer.Option(
            "--envelope", help="stdin is one JSON signal envelope (text, source_kind, …)."
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Ingest outside text from stdin: screened, summarised and recorded (never stored raw)."""
    if envelope:
        if source is not None or ref:
            raise LumenError("--envelope takes source_kind and source_ref from the JSON")
        _ingest_envelope(_read_envelope(_read_stdin()), as_json)
        return
    if source is None:
        raise LumenError("--source is required (or pass --envelope with a JSON envelope)")
    _ingest_text(source, ref, as_json)


def _ingest_text(source: str, ref: str, as_json: bool) -> None:
    """Screen raw outside text from stdin and record it as a signal."""
    from graph.deps import Deps
    from graph.ingress import screen

    if source.strip().lower() in {"user", "user_chat", "system"}:
        raise LumenError("--source must name an outside origin (ingested text is never trusted)")
    text = _read_stdin()
    if not text.strip():
        raise LumenError("nothing to ingest: stdin is empty")
    deps = Deps.for_instance(current_instance())
    screened = screen(deps, text, source=source, source_ref=ref)
    after_reply(deps)
    result = {**screened.record, "duplicate": screened.duplicate}
    if as_json:
        emit_json(result)
    else:
        state = "duplicate (dropped)" if screened.duplicate else screened.record["action"]
        typer.echo(f"{state}: {screened.record['summary']} [{screened.record['digest'][:12]}]")


def _read_stdin() -> str:
    """Read stdin, refusing input over ``MAX_INPUT_CHARS`` (never reads more than one past it)."""
    text = sys.stdin.read(MAX_INPUT_CHARS + 1)
    if len(text) > MAX_INPUT_CHARS:
        raise LumenError(
            f"input too large: more than {MAX_INPUT_CHARS} characters on stdin; split it up"
        )
    return text


def _read_envelope(raw: str) -> dict[str, Any]:
    """Parse stdin as one JSON object (the signal envelope), refusing anything else."""
    if not raw.strip():
        raise LumenError("nothing to ingest: stdin is empty")
    try:
        payload = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise LumenError(
            f"stdin is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(payload, dict):
        raise LumenError(f"the envelope must be a JSON object, not {type(payload).__name__}")
    return payload


def _ingest_envelope(payload: dict[str, Any], as_json: bool) -> None:
    """Ingest one signal envelope through ``graph.signals.ingest_envelope``."""
    from graph.deps import Deps
    from graph.signals import ingest_envelope
    from state.signals import EnvelopeError

    deps = Deps.for_instance(current_instance())
    try:
        result = ingest_envelope(deps, payload)
    except EnvelopeError as exc:
        raise LumenError(" ".join(str(exc).split())) from None
    after_reply(deps)
    if as_json:
        emit_json(result.to_dict())
    else:
        typer.echo(result.line())

"""``lumen chat``: the REPL, or one turn with ``--once``; replies go out via the ``chat`` skill."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer

from cli.common import JsonFlag, after_reply, emit_json, note, warn
from state.errors import LumenError
from state.instance import Instance, default_root

STEP_LABELS = {
    "perceive": "reading",
    "deliberate": "thinking",
    "drafts": "drafting a reply",
    "counterfactual_probe": "drafting another reading",
    "act": "acting",
    "optional_tool_calls": "running a tool",
    "compose_final": "composing",
    "consolidate": "remembering",
}
"""What the REPL's status line says while a step runs (any other step: its name)."""


def register(app: typer.Typer) -> None:
    """Add ``chat`` to the app."""
    app.command()(chat)


def chat(
    once: Annotated[
        str | None, typer.Option("--once", help="Run one turn and print the reply.")
    ] = None,
    thread: Annotated[str, typer.Option("--thread", help="Conversation thread name.")] = "main",
    forwarded: Annotated[
        bool,
        typer.Option("--forwarded", help="The --once text is forwarded/pasted content, not yours."),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Talk with the agent (REPL; Ctrl+C or Ctrl+D exits). Creates an instance if none exists.

    In the REPL, start a line with ``/forward `` to mark it as forwarded content (untrusted).
    """
    from state.instance import init_instance

    instance = Instance(default_root())
    if not instance.exists():
        init_instance(instance.root)
        warn(f"no instance found; created one at {instance.root}")
    if once is not None and not once.strip():
        raise LumenError("--once needs non-empty text")
    from graph.deps import Deps
    from graph.ingress import prepare_input
    from graph.session import run_turn, turn_runner

    deps = Deps.for_instance(instance)
    deps.model_for("talk")  # fail fast, with one line, when the model cannot load
    try:
        with turn_runner(deps) as compiled:
            away = _away(deps)
            if once is not None:
                source = "forwarded" if forwarded else "user"
                turn_input = prepare_input(
                    deps, once, source=source, vault=deps.scope(thread).vault
                )
                if away and not as_json:
                    typer.echo(away)
                _print_turn(deps, run_turn(compiled, turn_input, thread=thread), as_json, away=away)
                return
            typer.echo("Lumen chat — /help for commands, /quit or Ctrl+D to leave.", err=True)
            if away:
                typer.echo(away)
            while True:
                try:
                    text = input("you> ")
                except (EOFError, KeyboardInterrupt):
                    typer.echo("", err=True)
                    return
                if not text.strip():
                    continue
                source = "user"
                command = text.strip().split(maxsplit=1)[0].lower()
                if command in ("/quit", "/exit"):
                    return
                if command == "/help":
                    typer.echo(REPL_HELP, err=True)
                    continue
                if command == "/forward":
                    if len(text.split(maxsplit=1)) < 2:
                        typer.echo("usage: /forward TEXT", err=True)
                        continue
                    text, source = text.split(maxsplit=1)[1], "forwarded"
                elif re.fullmatch(r"/[a-z]+", command):
                    typer.echo(f"unknown command {command} (/help lists them)", err=True)
                    continue
                turn_input = prepare_input(
                    deps, text, source=source, vault=deps.scope(thread).vault
                )
                try:
                    if as_json:
                        _print_turn(deps, run_turn(compiled, turn_input, thread=thread), as_json)
                    else:
                        _stream_turn(deps, compiled, turn_input, thread)
                except KeyboardInterrupt:
                    typer.echo("\n(turn interrupted; the last good state is kept)", err=True)
                    return
    finally:
        after_reply(deps)


REPL_HELP = """commands:
  /forward TEXT  pass TEXT as forwarded content (screened, never an instruction)
  /help          this list
  /quit, /exit   leave (or Ctrl+D)"""


def deliver(deps: Any, reply: str) -> str:
    """Hand the reply to the ``chat`` skill, the skill that faces the user (kept on failure)."""
    from graph import skills as skill_runner
    from state.skills import BUILTIN_SKILLS

    main_py = deps.instance.skills_dir / "chat" / "main.py"
    if not main_py.is_file():
        main_py = BUILTIN_SKILLS / "chat" / "main.py"
    result = skill_runner.run(main_py, {"reply": reply}, timeout=10)
    delivered = str(result.output.get("reply", "")) if result.ok else ""
    if not delivered:
        warn(f"chat skill could not deliver the reply ({result.error or 'empty'}); shown raw")
        return reply
    return delivered


def turn_json(state: Any, reply: str) -> dict[str, Any]:
    """Return the ``--json`` view of a finished turn."""
    chosen = state.candidates[state.chosen].id if state.chosen >= 0 else None
    return {
        "reply": reply,
        "mode": state.mode,
        "mode_scores": state.mode_scores,
        "lambda": [
            {"id": c.id, "origin": c.origin, "intent": c.intent, "lambda": c.lam, "axes": c.axes}
            for c in state.candidates
        ],
        "chosen": chosen,
        "selection_notes": state.selection_notes,
        "llm_calls": state.llm_calls,
        "tool_calls": [c.model_dump(exclude={"output"}) for c in state.tool_calls],
        "vetoes": [
            {"tool": c.tool, "pattern": c.veto_pattern, "detail": c.detail}
            for c in state.tool_calls
            if c.status == "vetoed"
        ],
        "skipped": {r.step: r.reason for r in state.trace if r.status == "skipped"},
        "rc": state.rc,
        "error_tags": state.error_tags,
        "timings_ms": state.timings_ms,
        "degraded": state.degraded,
        "tainted": state.tainted,
        "external_action": state.external_action,
    }


def _stream_turn(deps: Any, compiled: Any, turn_input: Any, thread: str) -> None:
    """Run a REPL turn, streaming the draft as it is written under a one-line status.

    The streamed text lives in a region that is replaced by the final reply when the turn ends
    (composition may change it: persona grammar, norms, checked answers, a re-draft with tool
    results). Without a terminal (output piped) only the final reply is printed.
    """
    import sys

    from rich.console import Console, Group
    from rich.live import Live
    from rich.text import Text

    from graph.session import stream_turn

    console = Console()
    if not console.is_terminal:
        state = stream_turn(
            compiled, turn_input, on_step=lambda _: None, on_token=lambda *_: None, thread=thread
        )
        _print_turn(deps, state, False)
        return
    draft = {"id": "", "text": ""}
    status = {"step": "reading"}

    def view() -> Group:
        return Group(Text(draft["text"]), Text(f"… {status['step']}", style="dim"))

    with Live(view(), console=console, refresh_per_second=15, transient=True) as live:

        def on_step(name: str) -> None:
            status["step"] = STEP_LABELS.get(name, name.replace("_", " "))
            live.update(view())

        def on_token(draft_id: str, token: str) -> None:
            if draft_id != draft["id"]:  # a new draft (or the re-draft with tool results)
                draft.update(id=draft_id, text="")
            draft["text"] += token
            status["step"] = "writing"
            live.update(view())

        state = stream_turn(compiled, turn_input, on_step=on_step, on_token=on_token, thread=thread)
    sys.stdout.flush()
    _print_turn(deps, state, False)


def _away(deps: Any) -> str | None:
    """Return what autonomy did since the last chat ("While you were away I …"), said once."""
    from graph.away import away_report

    try:
        return away_report(deps)
    except (LumenError, OSError, ValueError) as exc:
        warn(f"could not read what happened while you were away: {exc}")
        return None


def _print_turn(deps: Any, state: Any, as_json: bool, *, away: str | None = None) -> None:
    reply = deliver(deps, state.reply)
    for problem in state.degraded:
        warn(f"degraded: {problem}")
    if as_json:
        after_reply(deps)
        data = turn_json(state, reply)
        data["reflection"] = _reflect(deps, state)
        data["away"] = away
        emit_json(data)
        return
    typer.echo(reply)
    after_reply(deps)  # index this turn's memories while the user reads the reply
    _reflect(deps, state)


def _reflect(deps: Any, state: Any) -> dict[str, Any]:
    """Run the reflection the turn triggered (explicit request, regret, contradiction), if due.

    It runs after the reply is shown; what it changed is told on stderr in one line. A failure
    here never costs the turn: it is reported and the chat goes on.
    """
    from graph.chat_reflection import reflect_after_turn

    try:
        triggers, result, why = reflect_after_turn(deps, state)
    except (LumenError, OSError, ValueError) as exc:
        warn(f"reflection failed: {exc}")
        return {"triggers": [], "ran": False, "why": f"failed: {exc}"}
    if result is None:
        return {"triggers": triggers, "ran": False, "why": why}
    changed = "; ".join(result.applied) or "no change"
    note(f"reflected ({', '.join(triggers)}): {changed}")  # a normal, audited change: no warning
    return {
        "triggers": triggers,
        "ran": True,
        "applied": result.applied,
        "rejected": result.rejected,
        "degraded": result.degraded,
    }

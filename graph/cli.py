"""The ``lumen`` command line (typer). Every error is one line on stderr and a non-zero exit.

Heavy imports (langchain, langgraph, chromadb, llama.cpp) happen inside the commands that need
them, so read-only commands start fast.
"""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from graph.cli_common import JsonFlag
from graph.cli_common import current_instance as _instance
from graph.cli_common import emit_json as _emit_json
from graph.cli_common import table as _table
from graph.cli_common import warn as _warn
from state.errors import LumenError
from state.instance import Instance, default_root

app = typer.Typer(
    name="lumen",
    help="Lumen: a self-regulating cognitive agent kernel.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class StatusChoice(StrEnum):
    """Goal statuses."""

    todo = "todo"
    working = "working"
    done = "done"
    perpetual = "perpetual"


# --------------------------------------------------------------------------- init


@app.command()
def init(
    path: Annotated[
        Path | None,
        typer.Argument(help="Instance directory (default: LUMEN_HOME or user data dir)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Add missing files to an existing instance.")
    ] = False,
) -> None:
    """Scaffold a new instance (never overwrites existing files)."""
    from state.instance import init_instance

    root = (path or default_root()).expanduser().resolve()
    instance = init_instance(root, force=force)
    typer.echo(f"Initialised Lumen instance at {instance.root}")


# --------------------------------------------------------------------------- status


def _status_data(instance: Instance) -> dict[str, Any]:
    from state.config import load_config
    from state.files import load_goals, load_values, parse_soul
    from state.journal import MemoryJournal
    from state.self_state import IDENTITY_DIMENSIONS

    name, ontology = parse_soul(instance.soul_file.read_text(encoding="utf-8"))
    values = [v for v in load_values(instance.values_file) if v.status == "active"]
    goals = [(y, g) for y, g in load_goals(instance.goals_dir) if g.status != "done"]
    report = MemoryJournal(instance.memory_dir).read()
    for line in report.skipped:
        _warn(line)
    counts = {author: 0 for author in ("self", "kernel", "goal", "external")}
    for entry in report.entries:
        counts[entry.author] += 1
    the_self = instance.load_self()
    config = load_config(instance.config_file)
    from graph.llm import model_label

    return {
        "instance": str(instance.root),
        "soul": {"name": name, "ontology": ontology},
        "values": [v.model_dump() for v in values[:5]],
        "goals": [
            {**g.model_dump(), "year": y} for y, g in sorted(goals, key=lambda p: -p[1].weight)
        ],
        "memory_counts": counts,
        "identity": {
            "identity_id": the_self.identity.identity_id,
            "identity_hash": the_self.identity.identity_hash,
            "vector": dict(zip(IDENTITY_DIMENSIONS, the_self.identity.dims(), strict=True)),
        },
        "dominant_archetype": the_self.psyche.archetypes.dominant(),
        "individuation": the_self.psyche.self_integration.individuation_level,
        "affect": the_self.affect.model_dump(),
        "stability": {"C": the_self.stability.composite, "msi": the_self.stability.msi},
        "model": model_label(config),
    }


@app.command()
def status(as_json: JsonFlag = False) -> None:
    """Show soul, top values, active goals, memory counts, identity hash, archetype and model."""
    data = _status_data(_instance())
    if as_json:
        _emit_json(data)
        return
    soul = data["soul"]
    typer.echo(f"{soul['name'] or '(unnamed)'} — {soul['ontology'] or '(no ontology)'}")
    typer.echo(
        f"identity {data['identity']['identity_hash']} ({data['identity']['identity_id']})  "
        f"archetype {data['dominant_archetype']}  C(t) {data['stability']['C']:.3f}  "
        f"model {data['model']}"
    )
    _table(
        "Top values",
        ["name", "weight"],
        [[v["name"], f"{v['weight']:.2f}"] for v in data["values"]],
    )
    _table(
        "Active goals",
        ["name", "weight", "status", "year"],
        [[g["name"], f"{g['weight']:.2f}", g["status"], g["year"]] for g in data["goals"]],
    )
    _table("Memories", ["author", "count"], [[a, n] for a, n in data["memory_counts"].items()])


# ------------------------------------------------------------------ memory, values, goals


@app.command()
def values(as_json: JsonFlag = False) -> None:
    """List values (name, weight, status), heaviest first."""
    from state.files import load_values

    records = load_values(_instance().values_file)
    if as_json:
        _emit_json([v.model_dump() for v in records])
        return
    _table(
        "Values",
        ["name", "weight", "status"],
        [[v.name, f"{v.weight:.2f}", v.status] for v in records],
    )


@app.command()
def goals(
    year: Annotated[int | None, typer.Option("--year", help="Only goals of this year.")] = None,
    status_filter: Annotated[
        StatusChoice | None, typer.Option("--status", help="Only goals with this status.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """List goals (name, weight, status, year)."""
    from state.files import load_goals

    found = [
        (y, g)
        for y, g in load_goals(_instance().goals_dir)
        if (year is None or y == year)
        and (status_filter is None or g.status == status_filter.value)
    ]
    found.sort(key=lambda pair: -pair[1].weight)
    if as_json:
        _emit_json([{**g.model_dump(), "year": y} for y, g in found])
        return
    _table(
        "Goals",
        ["name", "weight", "status", "year"],
        [[g.name, f"{g.weight:.2f}", g.status, y] for y, g in found],
    )


# --------------------------------------------------------------------------- skills / doctor


@app.command()
def skills(as_json: JsonFlag = False) -> None:
    """List skills (instance first, then built-in) with the first line of their --help."""
    from graph import skills as skill_runner

    found = skill_runner.scan(_instance().skills_dir)
    rows = [
        {
            "name": s.name,
            "origin": s.origin,
            "main_py": s.has_main,
            "help": skill_runner.help_line(s),
        }
        for s in found
    ]
    if as_json:
        _emit_json(rows)
        return
    _table(
        "Skills",
        ["name", "origin", "main.py", "help"],
        [[r["name"], r["origin"], "yes" if r["main_py"] else "no", r["help"]] for r in rows],
    )


@app.command()
def doctor(as_json: JsonFlag = False) -> None:
    """Check instance files, memory ledger, model, Chroma and checkpoint DB; exit 1 on a problem."""
    from graph.doctor import run_checks

    checks = run_checks(Instance(default_root()))
    problems = [c for c in checks if not c.ok]
    from state.counters import read_counters

    instance = Instance(default_root())
    counters = read_counters(instance.machine) if instance.exists() else {}
    if as_json:
        _emit_json({"checks": [c.__dict__ for c in checks], "counters": counters})
    else:
        for check in checks:
            mark = "ok  " if check.ok else "FAIL"
            typer.echo(f"[{mark}] {check.name}: {check.detail}")
        if counters:
            _table("Counters", ["counter", "value"], [[k, v] for k, v in sorted(counters.items())])
    if problems:
        raise LumenError(
            f"doctor found {len(problems)} problem(s): {problems[0].name}: {problems[0].detail}"
        )


# --------------------------------------------------------------------------- chat


@app.command()
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
        _warn(f"no instance found; created one at {instance.root}")
    if once is not None and not once.strip():
        raise LumenError("--once needs non-empty text")
    from graph.deps import Deps
    from graph.ingress import prepare_input
    from graph.session import run_turn, turn_runner

    deps = Deps.for_instance(instance)
    deps.model_for("talk")  # fail fast, with one line, when the model cannot load
    try:
        with turn_runner(deps) as compiled:
            if once is not None:
                source = "forwarded" if forwarded else "user"
                turn_input = prepare_input(deps, once, source=source)
                _print_turn(deps, run_turn(compiled, turn_input, thread=thread), as_json)
                return
            typer.echo("Lumen chat — Ctrl+D or Ctrl+C to leave.", err=True)
            while True:
                try:
                    text = input("you> ")
                except (EOFError, KeyboardInterrupt):
                    typer.echo("", err=True)
                    return
                if not text.strip():
                    continue
                source = "user"
                if text.startswith("/forward "):
                    text, source = text.removeprefix("/forward "), "forwarded"
                try:
                    state = run_turn(
                        compiled, prepare_input(deps, text, source=source), thread=thread
                    )
                except KeyboardInterrupt:
                    typer.echo("\n(turn interrupted; the last good state is kept)", err=True)
                    return
                _print_turn(deps, state, as_json)
    finally:
        _after_reply(deps)


def deliver(deps: Any, reply: str) -> str:
    """Hand the reply to the ``chat`` skill, the skill that faces the user (kept on failure)."""
    from graph import skills as skill_runner

    main_py = deps.instance.skills_dir / "chat" / "main.py"
    if not main_py.is_file():
        main_py = skill_runner.BUILTIN_SKILLS / "chat" / "main.py"
    result = skill_runner.run(main_py, {"reply": reply}, timeout=10)
    delivered = str(result.output.get("reply", "")) if result.ok else ""
    if not delivered:
        _warn(f"chat skill could not deliver the reply ({result.error or 'empty'}); shown raw")
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


def _after_reply(deps: Any) -> None:
    """Index deferred memories and run the post-turn memory work (``graph.memory_ops``)."""
    from graph.memory_ops import after_reply

    after_reply(deps)


def _print_turn(deps: Any, state: Any, as_json: bool) -> None:
    reply = deliver(deps, state.reply)
    for note in state.degraded:
        _warn(f"degraded: {note}")
    if as_json:
        _emit_json(turn_json(state, reply))
    else:
        typer.echo(reply)
    _after_reply(deps)  # index this turn's memories while the user reads the reply


# --------------------------------------------------------------------------- autonomy


@app.command("run")
def run_command(
    cycles: Annotated[
        int | None,
        typer.Option("--cycles", min=1, help="Stop after N cycles (default: until Ctrl+C)."),
    ] = None,
    interval: Annotated[
        float, typer.Option("--interval", min=0.0, help="Seconds between cycles.")
    ] = 0.0,
    no_reflection: Annotated[
        bool, typer.Option("--no-reflection", help="Never enter the reflection loop (ablation).")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Act on goals between conversations: action and explore cycles, reflecting on triggers."""
    from graph.autonomy import run
    from graph.deps import Deps

    instance = _instance()
    deps = Deps.for_instance(instance)
    deps.model_for("autonomous")  # fail fast, with one line, when the model cannot load
    progress = None if as_json else (lambda line: typer.echo(line, err=True))
    try:
        report = run(
            deps, cycles=cycles, interval=interval, reflection=not no_reflection, progress=progress
        )
    except KeyboardInterrupt:
        typer.echo("stopped; the last completed cycle is saved", err=True)
        return
    finally:
        _after_reply(deps)
    if as_json:
        _emit_json({"cycles": report.cycles, "reflections": report.reflections})
    else:
        last = report.cycles[-1] if report.cycles else {}
        typer.echo(
            f"{len(report.cycles)} cycles, {len(report.reflections)} reflections; "
            f"C(t)={last.get('composite', 0):.4f} identity {last.get('identity_hash', '')}"
        )


@app.command()
def reflect(as_json: JsonFlag = False) -> None:
    """Run the reflection loop now: REVIEW → ASK → EVOLVE, applying and explaining each change."""
    from graph.autonomy import reflect_now
    from graph.deps import Deps

    deps = Deps.for_instance(_instance())
    state = reflect_now(deps)
    data = {
        "triggers": state.triggers,
        "review": state.review,
        "applied": state.applied,
        "conflicts": state.conflicts,
        "rejected": state.rejected,
        "degraded": state.degraded,
    }
    if as_json:
        _emit_json(data)
        return
    typer.echo(state.review)
    for line in state.applied or ["no change applied"]:
        typer.echo(f"  {line}")


# --------------------------------------------------------------------------- governance


@app.command()
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
        _ingest_envelope(_read_envelope(sys.stdin.read()), as_json)
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
    text = sys.stdin.read()
    if not text.strip():
        raise LumenError("nothing to ingest: stdin is empty")
    deps = Deps.for_instance(_instance())
    screened = screen(deps, text, source=source, source_ref=ref)
    _after_reply(deps)
    result = {**screened.record, "duplicate": screened.duplicate}
    if as_json:
        _emit_json(result)
    else:
        state = "duplicate (dropped)" if screened.duplicate else screened.record["action"]
        typer.echo(f"{state}: {screened.record['summary']} [{screened.record['digest'][:12]}]")


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

    deps = Deps.for_instance(_instance())
    try:
        result = ingest_envelope(deps, payload)
    except EnvelopeError as exc:
        raise LumenError(" ".join(str(exc).split())) from None
    _after_reply(deps)
    if as_json:
        _emit_json(result.to_dict())
    else:
        typer.echo(result.line())


from graph.tasks_cli import tasks_app  # noqa: E402 - a sub-app, mounted next to its siblings

app.add_typer(tasks_app, name="tasks")

from graph.memory_cli import (  # noqa: E402 - mounted next to their siblings
    beliefs_command,
    maintain_command,
    memory_app,
)

app.add_typer(memory_app, name="memory")
app.command("beliefs")(beliefs_command)
app.command("maintain")(maintain_command)

from graph import timeline_cli  # noqa: E402 - history, show, diff, replay, fork

timeline_cli.register(app)

from graph.audit_cli import register as register_audit  # noqa: E402 - lumen audit …

register_audit(app)

from graph.ops_cli import prune  # noqa: E402 - lumen prune

app.command("prune")(prune)

guard_app = typer.Typer(
    help="Run the guards on JSONL from stdin (no model needed).", no_args_is_help=True
)
app.add_typer(guard_app, name="guard")


def _jsonl_in() -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise LumenError(f"stdin line {number}: not JSON") from None
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            raise LumenError(f"stdin line {number}: needs a string field 'text'")
        rows.append(row)
    return rows


@guard_app.command("scan")
def guard_scan() -> None:
    """Read {text, id?, source?} lines; write {id, action, score, flags} lines (whole pipeline)."""
    from kernel.injection import process
    from state.config import Config, load_config

    instance = Instance(default_root())
    config = load_config(instance.config_file) if instance.exists() else Config()
    for index, row in enumerate(_jsonl_in(), start=1):
        decision = process(
            row["text"],
            str(row.get("source") or "unknown"),
            sanitize_at=config.guard.sanitize_at,
            block_at=config.guard.block_at,
            rollout=config.guard.rollout,
        )
        typer.echo(
            json.dumps(
                {
                    "id": row.get("id", index),
                    "action": decision.action,
                    "score": round(decision.signals.score, 4),
                    "flags": list(decision.signals.flags),
                }
            )
        )


@guard_app.command("veto")
def guard_veto() -> None:
    """Read {text, id?} lines (``tool=… input=…``); write {id, veto, bias, pattern} lines."""
    from kernel.shadow import check_shadow
    from state.self_state import Psyche

    instance = Instance(default_root())
    psyche = instance.load_psyche() if instance.exists() else Psyche()
    for index, row in enumerate(_jsonl_in(), start=1):
        verdict = check_shadow(row["text"], psyche.shadow)
        typer.echo(
            json.dumps(
                {
                    "id": row.get("id", index),
                    "veto": verdict.veto,
                    "bias": round(verdict.bias, 4),
                    "pattern": verdict.veto_pattern
                    or (verdict.bias_patterns[0] if verdict.bias_patterns else None),
                }
            )
        )


# --------------------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    """Run the CLI, turning every failure into one line on stderr and a non-zero exit code."""
    try:
        app(args=argv, prog_name="lumen", standalone_mode=False)
    except typer.Exit as exc:
        return int(getattr(exc, "exit_code", 0) or 0)
    except typer.Abort:
        typer.echo("lumen: aborted", err=True)
        return 130
    except typer.TyperException as exc:  # usage errors: bad flag, bad value, missing argument
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        typer.echo(f"lumen: error: {' '.join(message.split())}", err=True)
        return int(getattr(exc, "exit_code", 2) or 2)
    except LumenError as exc:
        typer.echo(f"lumen: error: {exc}", err=True)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if os.environ.get("LUMEN_DEBUG"):
            raise
        message = str(exc).splitlines()[0] if str(exc) else ""
        typer.echo(f"lumen: internal error: {type(exc).__name__}: {message[:200]}", err=True)
        return 1
    return 0


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())

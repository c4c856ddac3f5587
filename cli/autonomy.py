"""Autonomy: ``lumen run`` (action and explore cycles) and ``lumen reflect``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import JsonFlag, after_reply, current_instance, emit_json

if TYPE_CHECKING:
    from graph.deps import Deps


def register(app: typer.Typer) -> None:
    """Add ``run`` and ``reflect`` to the app."""
    app.command("run")(run_command)
    app.command()(reflect)


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

    instance = current_instance()
    deps = Deps.for_instance(instance)
    deps.model_for("autonomous")  # fail fast, with one line, when the model cannot load
    progress = None if as_json else (lambda line: typer.echo(line, err=True))
    sources_sleep = _with_source_jobs(deps, progress)  # issue 16: feeds and trends
    try:
        report = run(
            deps,
            cycles=cycles,
            interval=interval,
            reflection=not no_reflection,
            progress=progress,
            emit=_json_line if as_json else None,
            sleep=sources_sleep,
        )
    except KeyboardInterrupt:
        typer.echo("stopped; the last completed cycle is saved", err=True)
        return
    finally:
        after_reply(deps)
    if not as_json:
        last = report.cycles[-1] if report.cycles else {}
        typer.echo(
            f"{len(report.cycles)} cycles, {len(report.reflections)} reflections; "
            f"C(t)={last.get('composite', 0):.4f} identity {last.get('identity_hash', '')}"
        )


def _with_source_jobs(
    deps: Deps, progress: Callable[[str], None] | None
) -> Callable[[float], None]:
    """Return a sleep that first runs the due source jobs (feed polls, trend snapshots).

    ``graph.autonomy.run`` runs them before every cycle; this sleep runs them too when the run
    waits (``--interval``, cooldowns), so a long wait does not delay a due poll to its end.
    """
    import time

    from graph.feeds import run_source_jobs

    def sleep(seconds: float) -> None:
        started = time.monotonic()
        run_source_jobs(deps, progress)
        left = seconds - (time.monotonic() - started)
        if left > 0:
            time.sleep(left)

    return sleep


def _json_line(row: dict[str, object]) -> None:
    """Print one cycle (or reflection) as one JSON line, flushed as it completes."""
    sys.stdout.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def reflect(as_json: JsonFlag = False) -> None:
    """Run the reflection loop now: REVIEW → ASK → EVOLVE, applying and explaining each change."""
    from graph.autonomy import reflect_now
    from graph.deps import Deps

    deps = Deps.for_instance(current_instance())
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
        emit_json(data)
        return
    typer.echo(state.review)
    for line in state.applied or ["no change applied"]:
        typer.echo(f"  {line}")

"""The ``lumen`` typer app, its command groups and the console-script entry point.

Every error is one line on stderr and a non-zero exit. Each group module exposes
``register(app)``; they are all mounted here, in help order. Heavy imports (langchain, langgraph,
chromadb, llama.cpp) happen inside the commands that need them, so read-only commands start fast.
"""

from __future__ import annotations

import os
import sys

import typer

from cli import (
    audit,
    autonomy,
    chat,
    explain,
    guard,
    ingest,
    memory,
    norms,
    ops,
    serve,
    sources,
    status,
    tasks,
    timeline,
)
from state.errors import LumenError

app = typer.Typer(
    name="lumen",
    help="Lumen: a self-regulating cognitive agent kernel.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

# The one place commands are mounted. ``--help`` lists plain commands in this order, then the
# groups (sub-apps) in theirs.
status.register(app)  # init, status, values, goals, skills, doctor
chat.register(app)  # chat
autonomy.register(app)  # run, reflect
ingest.register(app)  # ingest
tasks.register(app)  # tasks …
memory.register(app)  # memory …, beliefs, maintain
timeline.register(app)  # history, show, diff, replay, fork
audit.register(app)  # audit …
ops.register(app)  # prune
guard.register(app)  # guard scan, guard veto
norms.register(app)  # norms, norms revoke
explain.register(app)  # explain loops
serve.register(app)  # serve (the webhook gateway)
sources.register(app)  # sources add/list/remove/poll/trends


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

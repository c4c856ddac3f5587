"""``lumen tasks``: list, add and cancel scheduled tasks.

``register`` mounts ``tasks_app`` as ``lumen tasks``. Errors are ``LumenError``, which the main
CLI turns into one line on stderr.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import typer

from cli.common import JsonFlag, emit_json, table
from state.instance import Instance, default_root
from state.tasks import Task, TaskQueue

tasks_app = typer.Typer(
    name="tasks",
    help="Scheduled tasks: your cron jobs and the agent's own bounded proposals.",
    add_completion=False,
    invoke_without_command=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    """Mount ``lumen tasks`` on the app."""
    app.add_typer(tasks_app, name="tasks")


def _queue() -> TaskQueue:
    return TaskQueue(Instance(default_root()).require())


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value is not None else "-"


def _row(task: Task) -> list[Any]:
    return [
        task.id,
        task.job_kind,
        task.origin,
        task.status,
        task.cron or "-",
        _when(task.run_at()) if task.live else "-",
        f"{task.attempts}/{task.max_attempts}",
    ]


COLUMNS = ["id", "kind", "origin", "status", "cron", "next run", "attempts"]


@tasks_app.callback(invoke_without_command=True)
def tasks_main(
    ctx: typer.Context,
    show_all: Annotated[
        bool, typer.Option("--all", help="Include done, failed, cancelled and expired tasks.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """List scheduled tasks (default: pending and running ones)."""
    if ctx.invoked_subcommand is not None:
        return
    tasks = _queue().list(include_finished=show_all)
    if as_json:
        emit_json([t.model_dump(mode="json") for t in tasks])
        return
    table("Tasks", COLUMNS, [_row(t) for t in tasks])


@tasks_app.command("add")
def add_command(
    cron: Annotated[
        str,
        typer.Option(
            "--cron",
            metavar="EXPR",
            help='Cron schedule in UTC, 5 fields or @daily etc. (e.g. "0 9 * * *").',
        ),
    ],
    prompt: Annotated[
        str, typer.Option("--prompt", metavar="TEXT", help="What to do (1..500 characters).")
    ],
    as_json: JsonFlag = False,
) -> None:
    """Add a recurring user task."""
    task = _queue().add_user(cron, prompt, origin="cli")
    if as_json:
        emit_json(task.model_dump(mode="json"))
        return
    typer.echo(f"Added task {task.id} ({task.cron}); next run {_when(task.next_run)}")


@tasks_app.command("cancel")
def cancel_command(
    task_id: Annotated[str, typer.Argument(metavar="ID", help="Task id (or a unique prefix).")],
    as_json: JsonFlag = False,
) -> None:
    """Cancel a pending or running task."""
    task = _queue().cancel(task_id)
    if as_json:
        emit_json(task.model_dump(mode="json"))
        return
    typer.echo(f"Cancelled task {task.id}")

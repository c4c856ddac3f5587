"""Output and lookup helpers shared by every ``lumen`` command module (no heavy imports)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from state.instance import Instance, default_root

JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def current_instance() -> Instance:
    """Return the instance at ``LUMEN_HOME`` (or the default), or fail with one line."""
    return Instance(default_root()).require()


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON (non-JSON values as strings)."""
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def table(title: str, columns: list[str], rows: list[list[Any]]) -> None:
    """Print a titled table."""
    from rich.console import Console
    from rich.table import Table

    grid = Table(title=title, title_justify="left")
    for column in columns:
        grid.add_column(column)
    for row in rows:
        grid.add_row(*(str(cell) for cell in row))
    Console().print(grid)


def warn(message: str) -> None:
    """Print a warning line on stderr."""
    typer.echo(f"lumen: warning: {message}", err=True)


def note(message: str) -> None:
    """Print an informational line on stderr: something normal the user may want to know."""
    typer.echo(f"lumen: note: {message}", err=True)


def after_reply(deps: Any) -> None:
    """Index deferred memories and run the post-turn memory work (``graph.memory_ops``)."""
    from graph.memory_ops import after_reply as run_after_reply

    run_after_reply(deps)

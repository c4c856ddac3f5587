"""Operations: ``lumen prune`` (old checkpoints; the work is ``graph.prune``)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from cli.common import JsonFlag
from state.errors import LumenError
from state.instance import Instance, default_root

KeepOption = Annotated[
    int, typer.Option("--keep", help="Checkpoints each thread keeps (its newest; at least 1).")
]
ThreadOption = Annotated[
    str | None, typer.Option("--thread", help="Prune only this thread (default: every thread).")
]


def register(app: typer.Typer) -> None:
    """Add ``prune`` to the app."""
    app.command("prune")(prune)


def prune(keep: KeepOption, thread: ThreadOption = None, as_json: JsonFlag = False) -> None:
    """Remove old checkpoints: each thread keeps its newest N (with their pending writes)."""
    from graph.prune import prune_checkpoints
    from state.config import load_config

    if keep < 1:
        raise LumenError(f"--keep must be at least 1 (got {keep})")
    instance = Instance(default_root()).require()
    report = prune_checkpoints(
        instance, load_config(instance.config_file), keep=keep, thread=thread
    )
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        typer.echo(report.line())

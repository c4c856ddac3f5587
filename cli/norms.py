"""``lumen norms``: the user's standing instructions (norms), listed and revoked.

``lumen norms`` (or ``lumen norms --json``) lists every norm with its status; ``lumen norms revoke
ID`` ends one. Norms are recorded in chat ("never use bullet points", "call me Sam") and applied
to every later reply (see ``kernel/norms.py``). Imports stay light: the state module is loaded
inside the commands.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli.common import JsonFlag, current_instance, emit_json, table

norms_app = typer.Typer(
    name="norms",
    help="Norms: the user's standing instructions about how I answer.",
    add_completion=False,
    invoke_without_command=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

COLUMNS = ["id", "kind", "text", "source", "created", "status"]


def register(app: typer.Typer) -> None:
    """Mount ``lumen norms`` on the app."""
    app.add_typer(norms_app, name="norms")


def _row(data: dict[str, Any]) -> list[Any]:
    created = str(data["created"])[:16].replace("T", " ")
    return [data["id"], data["kind"], data["text"], data["source"], created, data["status"]]


@norms_app.callback(invoke_without_command=True)
def norms_main(
    ctx: typer.Context,
    active_only: Annotated[
        bool, typer.Option("--active", help="Only the norms that hold now.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """List norms (id, text, kind, source, created, status)."""
    if ctx.invoked_subcommand is not None:
        return
    from state.norms import load_norms

    norms = load_norms(current_instance())
    if active_only:
        norms = [n for n in norms if n.status == "active"]
    rows = [n.model_dump(mode="json") for n in norms]
    if as_json:
        emit_json(rows)
        return
    table("Norms", COLUMNS, [_row(r) for r in rows])


@norms_app.command("revoke")
def revoke_command(
    norm_id: Annotated[str, typer.Argument(metavar="ID", help="The norm's id (see lumen norms).")],
) -> None:
    """End a norm: later replies no longer follow it."""
    from datetime import UTC, datetime

    from state.norms import revoke_norm

    norm = revoke_norm(current_instance(), norm_id, now=datetime.now(UTC))
    typer.echo(f"Revoked {norm.id}: {norm.text}")

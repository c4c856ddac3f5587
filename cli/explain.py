"""``lumen explain``: maps generated from the code.

``lumen explain loops [--json]`` lists every persisted field of the self with the steps that
write it, the steps whose decisions read it, and what those decisions are
(``graph.loops.analyse``, which reads the step functions with ``ast``: nothing is hand-written).
It needs no instance. A field some step writes and no decision reads is marked ``write-only``.
"""

from __future__ import annotations

import typer

from cli.common import JsonFlag, emit_json, table

explain_app = typer.Typer(
    name="explain",
    help="Explain how the agent works, generated from its code.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    """Mount ``lumen explain`` on the app."""
    app.add_typer(explain_app, name="explain")


@explain_app.command("loops")
def loops(as_json: JsonFlag = False) -> None:
    """List each persisted self field: who writes it, who reads it, which decision it changes."""
    from graph.loops import analyse

    found = analyse()
    if as_json:
        emit_json([loop.as_dict() for loop in found])
        return
    rows = [
        [
            loop.field,
            ", ".join(loop.writers) or "-",
            ", ".join(loop.readers) or ("write-only" if loop.write_only else "-"),
            loop.decision,
        ]
        for loop in found
    ]
    table("Closed loops (persisted self fields)", ["field", "writers", "readers", "decision"], rows)
    open_fields = [loop.field for loop in found if loop.write_only]
    typer.echo(
        f"{len(found)} fields, {len(open_fields)} write-only"
        + (f": {', '.join(open_fields)}" if open_fields else "")
    )

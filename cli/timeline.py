"""Time travel: ``lumen history``, ``show``, ``diff`` (``graph.history``), ``replay``, ``fork``."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.common import JsonFlag, current_instance, emit_json
from state.errors import LumenError


def register(app: typer.Typer) -> None:
    """Add the time-travel commands to the main app."""
    for command in (history, show, diff, replay, fork):
        app.command()(command)


def history(
    thread: Annotated[str | None, typer.Option("--thread", help="Only this thread.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many (newest first).")] = 20,
    subgraphs: Annotated[
        bool, typer.Option("--subgraphs", help="Include checkpoints inside subgraphs.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """List checkpoints: time, graph, node, mode, identity hash, C(t) and what changed."""
    from graph import history as checkpoints

    if limit < 1:
        raise LumenError("--limit must be at least 1")
    rows = checkpoints.list_checkpoints(
        current_instance(), thread=thread, limit=limit, subgraphs=subgraphs
    )
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    if not rows:
        typer.echo("no checkpoints yet")
        return
    for r in rows:
        ct = "—" if r.composite is None else f"{r.composite:.3f}"
        where = f"{r.thread}" + (f"/{r.namespace.split(':')[0]}" if r.namespace else "")
        typer.echo(
            f"{r.short_id}  {r.ts[:19]}  {r.graph:<7} {where:<10} {r.node:<26} "
            f"{r.mode:<6} {r.identity_hash or '—':<16} C={ct}  {r.summary}"
        )


def show(
    checkpoint: Annotated[str, typer.Argument(help="Checkpoint id (or its last ≥ 6 chars).")],
    as_json: JsonFlag = False,
) -> None:
    """Show the self at a checkpoint: soul, values, goals, identity, psyche, affect, beliefs."""
    from graph import history as checkpoints

    info = checkpoints.find(current_instance(), checkpoint)
    snap = checkpoints.snapshot_of(info)
    if as_json:
        emit_json({**info.to_dict(), "self": snap.model_dump(mode="json", exclude={"self_core"})})
        return
    lines = [
        f"checkpoint {info.checkpoint_id} ({info.graph}, thread {info.thread}, {info.ts[:19]})",
        f"soul: {snap.soul_name or '—'} — {' '.join(snap.soul.split())[:160]}",
        "values: " + ", ".join(f"{n} {w:.2f}" for n, w in snap.values.items()),
        "goals: " + ", ".join(f"{g.name} {g.weight:.2f} ({g.status})" for g in snap.goals),
        "identity: "
        + ", ".join(f"{k} {v:.3f}" for k, v in snap.identity.items())
        + f"  hash {snap.identity_hash}",
        "archetypes: "
        + ", ".join(f"{k} {v:.3f}" for k, v in snap.archetypes.items())
        + f"  dominant {snap.dominant_archetype}",
        f"individuation {snap.individuation:.3f}; shadow encounters {snap.shadow_encounters}",
        "affect: " + ", ".join(f"{k} {v:.2f}" for k, v in snap.affect.items()),
        f"C(t) {snap.composite:.3f}; MSI {snap.msi:.3f}; beliefs {snap.beliefs_count}",
        f"last reply: {snap.last_reply[:200] or '—'}",
    ]
    typer.echo("\n".join(lines))


def diff(
    first: Annotated[str, typer.Argument(help="The earlier checkpoint.")],
    second: Annotated[str, typer.Argument(help="The later checkpoint.")],
    as_json: JsonFlag = False,
) -> None:
    """Show how the self changed from one checkpoint to another."""
    from graph import history as checkpoints

    a, b, change = checkpoints.diff(current_instance(), first, second)
    if as_json:
        emit_json({"from": a.to_dict(), "to": b.to_dict(), "diff": change.to_dict()})
        return
    typer.echo(f"{a.short_id} → {b.short_id}")
    for line in change.lines():
        typer.echo(f"  {line}")


def replay(
    checkpoint: Annotated[str, typer.Argument(help="Checkpoint to re-run from.")],
    text: Annotated[
        str | None, typer.Option("--input", help="New input (default: the same one again).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Re-run from a checkpoint with the self it had, in a new branch (the present is untouched)."""
    from graph import timeline

    done = timeline.replay(current_instance(), checkpoint, text=text)
    if as_json:
        emit_json(done.to_dict())
        return
    typer.echo(f"replayed in branch {done.branch.name} ({done.branch.root})")
    if done.resumed_at:
        typer.echo(f"resumed at: {', '.join(done.resumed_at)}")
    typer.echo(f"reply: {done.reply or '—'}")
    for line in done.diff.lines():
        typer.echo(f"  {line}")


def fork(
    checkpoint: Annotated[str, typer.Argument(help="Checkpoint to branch from.")],
    thread: Annotated[str, typer.Option("--thread", help="Name of the new branch and thread.")],
    as_json: JsonFlag = False,
) -> None:
    """Branch the self at a checkpoint into a new instance directory and thread."""
    from graph import timeline

    branch = timeline.fork(current_instance(), checkpoint, thread)
    if as_json:
        emit_json(branch.to_dict())
        return
    typer.echo(f"forked {branch.source.short_id} into {branch.root}")
    typer.echo(f"continue with: LUMEN_HOME={branch.root} lumen chat --thread {branch.thread}")

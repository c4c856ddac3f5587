"""``lumen guard scan`` and ``lumen guard veto``: the guards on JSONL from stdin (no model)."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from state.errors import LumenError
from state.instance import Instance, default_root

guard_app = typer.Typer(
    help="Run the guards on JSONL from stdin (no model needed).", no_args_is_help=True
)


def register(app: typer.Typer) -> None:
    """Mount ``lumen guard`` on the app."""
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

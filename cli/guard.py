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


def _jsonl_in(*, actions: bool = False) -> list[dict[str, Any]]:
    """Read JSONL rows from stdin: each needs ``text``, or (``actions``) ``tool`` and ``input``."""
    rows = []
    for number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise LumenError(f"stdin line {number}: not JSON") from None
        if not isinstance(row, dict):
            raise LumenError(f"stdin line {number}: expected a JSON object")
        if actions and isinstance(row.get("tool"), str) and "input" in row:
            rows.append(row)
        elif isinstance(row.get("text"), str):
            rows.append(row)
        elif actions:
            raise LumenError(
                f"stdin line {number}: needs 'tool' and 'input', or a string field 'text'"
            )
        else:
            raise LumenError(f"stdin line {number}: needs a string field 'text'")
    return rows


@guard_app.command("scan")
def guard_scan() -> None:
    """Read {text, id?, source?} lines; write {id, action, score, flags} lines (whole pipeline)."""
    from kernel.injection import process
    from state.config import Config, load_config
    from state.injection_classifier import embed, ngrams

    instance = Instance(default_root())
    config = load_config(instance.config_file) if instance.exists() else Config()
    for index, row in enumerate(_jsonl_in(), start=1):
        decision = process(
            row["text"],
            str(row.get("source") or "unknown"),
            sanitize_at=config.guard.sanitize_at,
            block_at=config.guard.block_at,
            rollout=config.guard.rollout,
            embed=embed,
            ngrams=ngrams,
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
    """Read {id?, tool, input} or {id?, text} lines; write {id, veto, bias, pattern} lines.

    ``input`` is the skill's JSON input (``{"argv": [...]}`` for shell); ``text`` is an old-style
    ``tool=<name> input=<repr>`` description, read back into ``(tool, input)``. Both are checked
    as the action gateway checks them: on the canonical forms of :func:`kernel.actions.canonical`.
    """
    from kernel.actions import check_tool_call, parse_description
    from state.self_state import Psyche

    instance = Instance(default_root())
    psyche = instance.load_psyche() if instance.exists() else Psyche()
    for index, row in enumerate(_jsonl_in(actions=True), start=1):
        if isinstance(row.get("tool"), str) and "input" in row:
            tool, tool_input = row["tool"], row["input"]
        else:
            tool, tool_input = parse_description(row["text"])
        verdict = check_tool_call(tool, tool_input, psyche.shadow)
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

"""``lumen init`` and the read-only views ``status``, ``values``, ``goals``, ``skills``, ``doctor``.

``status`` is the cold-start benchmark (``bench/startup.py``): keep this module's imports light and
import heavy modules inside the commands.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from cli.common import JsonFlag, current_instance, emit_json, table, warn
from state.errors import LumenError
from state.instance import Instance, default_root


def register(app: typer.Typer) -> None:
    """Add ``init``, ``status``, ``values``, ``goals``, ``skills`` and ``doctor`` to the app."""
    for command in (init, status, values, goals, skills, doctor):
        app.command()(command)


class StatusChoice(StrEnum):
    """Goal statuses."""

    todo = "todo"
    working = "working"
    done = "done"
    perpetual = "perpetual"


# --------------------------------------------------------------------------- init


def init(
    path: Annotated[
        Path | None,
        typer.Argument(help="Instance directory (default: LUMEN_HOME or user data dir)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Add missing files to an existing instance.")
    ] = False,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Embedded model: smollm2-135m (default), qwen2.5-coder-0.5b, qwen2.5-coder-1.5b.",
        ),
    ] = None,
) -> None:
    """Scaffold a new instance (never overwrites existing files)."""
    from state.instance import init_instance
    from state.models import MODELS

    if model is not None and model not in MODELS:
        raise LumenError(f"unknown model {model!r}: use one of {', '.join(MODELS)}")
    root = (path or default_root()).expanduser().resolve()
    instance = init_instance(root, force=force)
    if model is not None:
        from state.config import set_llm_value

        set_llm_value(instance.config_file, "embedded_model", model)
        extra = MODELS[model].extra
        if extra:
            typer.echo(f"model {model}: install it with `uv sync --extra {extra}`", err=True)
    typer.echo(f"Initialised Lumen instance at {instance.root}")


# --------------------------------------------------------------------------- status


def _status_data(instance: Instance) -> dict[str, Any]:
    from state.config import load_config
    from state.files import load_goals, load_values, parse_soul
    from state.journal import MemoryJournal
    from state.self_state import IDENTITY_DIMENSIONS

    name, ontology = parse_soul(instance.soul_file.read_text(encoding="utf-8"))
    values = [v for v in load_values(instance.values_file) if v.status == "active"]
    goals = [(y, g) for y, g in load_goals(instance.goals_dir) if g.status != "done"]
    report = MemoryJournal(instance.memory_dir).read()
    for line in report.skipped:
        warn(line)
    counts = {author: 0 for author in ("self", "kernel", "goal", "external")}
    for entry in report.entries:
        counts[entry.author] += 1
    the_self = instance.load_self()
    config = load_config(instance.config_file)
    from graph.llm import model_label

    return {
        "instance": str(instance.root),
        "soul": {"name": name, "ontology": ontology},
        "values": [v.model_dump() for v in values[:5]],
        "goals": [
            {**g.model_dump(), "year": y} for y, g in sorted(goals, key=lambda p: -p[1].weight)
        ],
        "memory_counts": counts,
        "identity": {
            "identity_id": the_self.identity.identity_id,
            "identity_hash": the_self.identity.identity_hash,
            "vector": dict(zip(IDENTITY_DIMENSIONS, the_self.identity.dims(), strict=True)),
        },
        "dominant_archetype": the_self.psyche.archetypes.dominant(),
        "individuation": the_self.psyche.self_integration.individuation_level,
        "affect": the_self.affect.model_dump(),
        "stability": {"C": the_self.stability.composite, "msi": the_self.stability.msi},
        "model": model_label(config),
        "counters": _counters(instance),
    }


def _counters(instance: Instance) -> dict[str, int]:
    """The §21 counters (signals, dedup, promotions, gateway and feed limits, backoff)."""
    from state.counters import read_counters

    return read_counters(instance.machine)


def status(as_json: JsonFlag = False) -> None:
    """Show soul, top values, active goals, memory counts, identity hash, archetype and model."""
    data = _status_data(current_instance())
    if as_json:
        emit_json(data)
        return
    soul = data["soul"]
    typer.echo(f"{soul['name'] or '(unnamed)'} — {soul['ontology'] or '(no ontology)'}")
    typer.echo(
        f"identity {data['identity']['identity_hash']} ({data['identity']['identity_id']})  "
        f"archetype {data['dominant_archetype']}  C(t) {data['stability']['C']:.3f}  "
        f"model {data['model']}"
    )
    table(
        "Top values",
        ["name", "weight"],
        [[v["name"], f"{v['weight']:.2f}"] for v in data["values"]],
    )
    table(
        "Active goals",
        ["name", "weight", "status", "year"],
        [[g["name"], f"{g['weight']:.2f}", g["status"], g["year"]] for g in data["goals"]],
    )
    table("Memories", ["author", "count"], [[a, n] for a, n in data["memory_counts"].items()])


# --------------------------------------------------------------------------- values, goals


def values(as_json: JsonFlag = False) -> None:
    """List values (name, weight, status), heaviest first."""
    from state.files import load_values

    records = load_values(current_instance().values_file)
    if as_json:
        emit_json([v.model_dump() for v in records])
        return
    table(
        "Values",
        ["name", "weight", "status"],
        [[v.name, f"{v.weight:.2f}", v.status] for v in records],
    )


def goals(
    year: Annotated[int | None, typer.Option("--year", help="Only goals of this year.")] = None,
    status_filter: Annotated[
        StatusChoice | None, typer.Option("--status", help="Only goals with this status.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """List goals (name, weight, status, year)."""
    from state.files import load_goals

    found = [
        (y, g)
        for y, g in load_goals(current_instance().goals_dir)
        if (year is None or y == year)
        and (status_filter is None or g.status == status_filter.value)
    ]
    found.sort(key=lambda pair: -pair[1].weight)
    if as_json:
        emit_json([{**g.model_dump(), "year": y} for y, g in found])
        return
    table(
        "Goals",
        ["name", "weight", "status", "year"],
        [[g.name, f"{g.weight:.2f}", g.status, y] for y, g in found],
    )


# --------------------------------------------------------------------------- skills / doctor


def skills(as_json: JsonFlag = False) -> None:
    """List skills (instance first, then built-in) with the first line of their --help."""
    from graph import skills as skill_runner
    from state.skills import scan

    found = scan(current_instance().skills_dir)
    rows = [
        {
            "name": s.name,
            "origin": s.origin,
            "main_py": s.has_main,
            "help": skill_runner.help_line(s),
        }
        for s in found
    ]
    if as_json:
        emit_json(rows)
        return
    table(
        "Skills",
        ["name", "origin", "main.py", "help"],
        [[r["name"], r["origin"], "yes" if r["main_py"] else "no", r["help"]] for r in rows],
    )


def doctor(as_json: JsonFlag = False) -> None:
    """Check instance files, memory ledger, model, Chroma and checkpoint DB; exit 1 on a problem."""
    from graph.doctor import run_checks

    checks = run_checks(Instance(default_root()))
    problems = [c for c in checks if not c.ok]
    from state.counters import read_counters

    instance = Instance(default_root())
    counters = read_counters(instance.machine) if instance.exists() else {}
    if as_json:
        emit_json({"checks": [c.__dict__ for c in checks], "counters": counters})
    else:
        for check in checks:
            mark = ("warn" if check.warning else "ok  ") if check.ok else "FAIL"
            typer.echo(f"[{mark}] {check.name}: {check.detail}")
        if counters:
            table("Counters", ["counter", "value"], [[k, v] for k, v in sorted(counters.items())])
    if problems:
        raise LumenError(
            f"doctor found {len(problems)} problem(s): {problems[0].name}: {problems[0].detail}"
        )

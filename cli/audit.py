"""``lumen audit``: the audits and experiments of ``graph.audit``.

``lumen audit [--json] [--strict]`` runs the four deterministic audits of ``graph.audit``;
``lumen audit ablation`` and ``lumen audit model-swap`` run the two experiments on throw-away
copies of the instance. Findings exit 0 (``--strict`` exits 1 on unexplained drift); bad input
is a ``LumenError``, which the main CLI prints as one line with a non-zero exit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import JsonFlag, current_instance, emit_json
from state.errors import LumenError

if TYPE_CHECKING:
    from graph.audit import Experiment

audit_app = typer.Typer(
    name="audit",
    help="Audit the self: calibration, value drift, self-model consistency, goal hygiene.",
    add_completion=False,
    invoke_without_command=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

CyclesOption = Annotated[int, typer.Option("--cycles", min=1, help="Cycles per arm.")]


def register(app: typer.Typer) -> None:
    """Mount ``lumen audit`` on the main app."""
    app.add_typer(audit_app, name="audit")


@audit_app.callback()
def audit_command(
    ctx: typer.Context,
    as_json: JsonFlag = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when any drift is unexplained.")
    ] = False,
    stale_days: Annotated[
        int, typer.Option("--stale-days", min=1, help="Days without a goal memory = stale.")
    ] = 14,
) -> None:
    """Run the four audits (read-only, no model); findings are printed, not fatal."""
    if ctx.invoked_subcommand is not None:
        return
    from graph.audit import audit
    from state.memory import MemoryStore

    instance = current_instance()
    store = MemoryStore.for_instance(instance)
    report = audit(instance, store, stale_days=stale_days)
    if as_json:
        emit_json(report.to_dict())
    else:
        for line in report.lines():
            typer.echo(line)
    if strict and report.unexplained:
        raise LumenError(f"audit --strict: {len(report.unexplained)} unexplained drift(s)")


def _print_experiment(experiment: Experiment, as_json: bool) -> None:
    from graph.audit import ARM_COLUMNS

    if as_json:
        emit_json(experiment.to_dict())
        return
    rows = [ARM_COLUMNS, *([str(cell) for cell in row] for row in experiment.rows())]
    widths = [max(len(row[i]) for row in rows) for i in range(len(ARM_COLUMNS))]
    typer.echo(experiment.name)
    for row in rows:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        typer.echo("  ".join(cells).rstrip())
    typer.echo(
        f"gap between arms: identity {experiment.identity_gap:.4f}, "
        f"values {experiment.values_gap:.4f}"
    )


@audit_app.command("ablation")
def ablation_command(cycles: CyclesOption = 4, as_json: JsonFlag = False) -> None:
    """Reflexivity ablation: N cycles with reflection vs without, each on a copy."""
    from graph.audit import ablation

    _print_experiment(ablation(current_instance(), cycles=cycles), as_json)


@audit_app.command("model-swap")
def model_swap_command(
    provider: Annotated[str, typer.Option("--provider", help="embedded or openai.")] = "",
    model: Annotated[str, typer.Option("--model", help="Model name (openai).")] = "",
    model_path: Annotated[str, typer.Option("--model-path", help="A GGUF file (embedded).")] = "",
    base_url: Annotated[str, typer.Option("--base-url", help="OpenAI-compatible URL.")] = "",
    cycles: CyclesOption = 4,
    as_json: JsonFlag = False,
) -> None:
    """Model-swap continuity: N cycles with the configured model vs another, each on a copy."""
    from graph.audit import model_swap, swapped_model_factory

    instance = current_instance()
    swap = swapped_model_factory(
        instance, provider=provider, model=model, model_path=model_path, base_url=base_url
    )
    swap("autonomous")  # fail fast, with one line, when the other model cannot load
    _print_experiment(model_swap(instance, cycles=cycles, swap_model_for=swap), as_json)

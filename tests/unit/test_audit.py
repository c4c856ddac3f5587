"""``graph.audit``: the four audits on a temp instance and the two experiments (scripted model)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from graph.audit import (
    Point,
    ablation,
    audit,
    audit_goals,
    calibration_verdict,
    epsilon_series,
    model_swap,
    swapped_model_factory,
)
from graph.autonomy import run
from graph.deps import Deps
from state.errors import LumenError
from state.files import dump_records, load_values
from state.instance import Instance, init_instance
from state.journal import MemoryJournal
from state.records import Author, ValueRecord
from state.self_state import utc_now
from state.snapshot import SelfSnapshot, SnapshotGoal
from tests.scripted import ScriptedChatModel, cycle_model


def scripted() -> ScriptedChatModel:
    return cycle_model(reflect_on="autonomy", reason="x")


def deps_for(instance: Instance) -> Deps:
    model = scripted()
    return Deps.for_instance(instance, model_for=lambda mode: model)


def set_value(instance: Instance, name: str, weight: float, status: str = "active") -> None:
    values = [
        ValueRecord(name=v.name, weight=weight, status=status) if v.name == name else v
        for v in load_values(instance.values_file)
    ]
    dump_records(instance.values_file, values)


def remember(
    instance: Instance, text: str, *, author: Author, when: datetime | None = None, **meta: Any
) -> None:
    journal = MemoryJournal(instance.memory_dir)
    journal.append(journal.new_entry(text, author=author, meta=meta, timestamp=when))


@pytest.fixture
def checkpointed(instance: Instance) -> Instance:
    """An instance with one finished cycle (a checkpoint holding a self snapshot)."""
    run(deps_for(instance), cycles=1, reflection=False)
    return instance


# ------------------------------------------------------------------ value drift


def test_planted_unexplained_value_change_is_reported(checkpointed: Instance) -> None:
    set_value(checkpointed, "curiosity", 0.3)
    report = audit(checkpointed, deps_for(checkpointed).store)
    unexplained = [(d.kind, d.name, d.after) for d in report.unexplained]
    assert ("value", "curiosity", 0.3) in unexplained
    assert any("UNEXPLAINED" in line and "curiosity" in line for line in report.lines())


def test_value_change_with_a_self_memory_in_the_window_is_explained(
    checkpointed: Instance,
) -> None:
    set_value(checkpointed, "curiosity", 0.3)
    remember(
        checkpointed,
        "Reflection changed value_weight 'curiosity' from 0.85 to 0.3 because it misled me",
        author="self",
        target="value_weight",
        name="curiosity",
    )
    report = audit(checkpointed, deps_for(checkpointed).store)
    curiosity = [d for d in report.drift.drifts if d.name == "curiosity"]
    assert curiosity and curiosity[0].explained_by is not None
    assert report.unexplained == []


def test_a_self_memory_outside_the_window_explains_nothing(checkpointed: Instance) -> None:
    set_value(checkpointed, "curiosity", 0.3)
    remember(
        checkpointed,
        "I lowered curiosity",
        author="self",
        when=utc_now() - timedelta(days=3),
        name="curiosity",
    )
    report = audit(checkpointed, deps_for(checkpointed).store)
    assert [d.name for d in report.unexplained] == ["curiosity"]


def test_a_kernel_memory_does_not_explain_a_value_change(checkpointed: Instance) -> None:
    set_value(checkpointed, "curiosity", 0.3)
    remember(checkpointed, "values.json: curiosity 0.85 -> 0.3", author="kernel", name="curiosity")
    report = audit(checkpointed, deps_for(checkpointed).store)
    assert [d.name for d in report.unexplained] == ["curiosity"]


def test_no_checkpoints_means_no_drift(instance: Instance) -> None:
    set_value(instance, "curiosity", 0.3)
    report = audit(instance, deps_for(instance).store)
    assert report.drift.points == 1 and report.drift.drifts == []


# ------------------------------------------------------------------ calibration


@pytest.mark.parametrize(
    ("series", "verdict"),
    [
        ([0.4, 0.35, 0.3, 0.2, 0.1, 0.05], "shrinking"),
        ([0.05, 0.1, 0.2, 0.3, 0.35, 0.4], "growing"),
        ([0.2, 0.2, 0.2, 0.2, 0.2, 0.2], "flat"),
        ([0.4, 0.1, 0.05], "not enough data"),
    ],
)
def test_calibration_verdicts(series: list[float], verdict: str) -> None:
    assert calibration_verdict(series).verdict == verdict


def test_calibration_slope_is_least_squares() -> None:
    result = calibration_verdict([1.0, 0.9, 0.8, 0.7, 0.6])
    assert result.slope == pytest.approx(-0.1)
    assert result.first_half_mean == pytest.approx(0.95)


def test_epsilon_comes_from_record_memories_before_the_window(instance: Instance) -> None:
    remember(
        instance, "Outcome ok vs predicted success 0.70; ε=0.0123", author="kernel", step="record"
    )
    remember(instance, "Outcome ok; ε=0.5", author="kernel", step="decide")
    entries = list(MemoryJournal(instance.memory_dir).read().entries)
    assert epsilon_series(entries, [0.9]) == ([0.0123], "kernel RECORD memories")
    assert epsilon_series([], [0.9])[0] == [0.9]


# ------------------------------------------------------------------ goal hygiene


def goal_point(at: datetime, *goals: tuple[str, str]) -> Point:
    snap = SelfSnapshot(
        taken=at, goals=[SnapshotGoal(year=2026, name=n, weight=0.5, status=s) for n, s in goals]
    )
    return Point(at.isoformat(), snap)


def test_goal_hygiene_finds_a_stale_goal(instance: Instance) -> None:
    goals = instance.goals_file(utc_now().year)
    dump_records(goals, _goal_records(("Map the garden", "todo")))
    remember(
        instance,
        "action cycle chose Map the garden",
        author="goal",
        when=utc_now() - timedelta(days=30),
        goal="Map the garden",
    )
    report = audit(instance, deps_for(instance).store)
    stale = [f.name for f in report.hygiene if f.kind == "stale goal"]
    assert stale == ["Map the garden"]


def test_recently_pursued_goal_is_not_stale(instance: Instance) -> None:
    dump_records(instance.goals_file(utc_now().year), _goal_records(("Map the garden", "working")))
    remember(instance, "chose Map the garden", author="goal", goal="Map the garden")
    report = audit(instance, deps_for(instance).store)
    assert not [f for f in report.hygiene if f.kind == "stale goal"]


def test_done_goal_without_follow_up_and_with_one() -> None:
    t0 = utc_now() - timedelta(hours=2)
    done_then_nothing = [
        goal_point(t0, ("A", "working")),
        goal_point(t0 + timedelta(hours=1), ("A", "done")),
    ]
    found = audit_goals(done_then_nothing, [], now=utc_now())
    assert [(f.kind, f.name) for f in found] == [("no follow-up", "A")]
    followed = [*done_then_nothing, goal_point(utc_now(), ("A", "done"), ("B", "todo"))]
    assert audit_goals(followed, [], now=utc_now()) == []


def test_perpetual_goal_never_pursued() -> None:
    points = [goal_point(utc_now(), ("Be honest", "perpetual"))]
    assert [f.kind for f in audit_goals(points, [], now=utc_now())] == ["never pursued"]


def _goal_records(*goals: tuple[str, str]) -> list[Any]:
    from state.records import GoalRecord

    return [GoalRecord(name=n, weight=0.5, status=s) for n, s in goals]


# ------------------------------------------------------------------ self-model consistency


def test_consistency_finds_a_deprecated_value_praised_in_soul(instance: Instance) -> None:
    instance.soul_file.write_text("# Lumen\n\nCuriosity drives everything I do.\n", "utf-8")
    report = audit(instance, deps_for(instance).store)
    assert not [f for f in report.consistency if f.name == "curiosity"]
    set_value(instance, "curiosity", 0.85, status="deprecated")
    report = audit(instance, deps_for(instance).store)
    assert [(f.kind, f.name) for f in report.consistency] == [("value", "curiosity")]


def test_consistency_checks_dominant_archetype_and_unused_skills(instance: Instance) -> None:
    instance.soul_file.write_text(
        "# Lumen\n\nMy dominant archetype is the guardian. I often use calc.\n", "utf-8"
    )
    kinds = {(f.kind, f.name) for f in audit(instance, deps_for(instance).store).consistency}
    assert kinds == {("archetype", "guardian"), ("skill", "calc")}
    remember(instance, "used calc", author="kernel", skill="calc")
    kinds = {(f.kind, f.name) for f in audit(instance, deps_for(instance).store).consistency}
    assert kinds == {("archetype", "guardian")}


# ------------------------------------------------------------------ reflection off, experiments


def seed_periodic_trigger(instance: Instance) -> None:
    me = instance.load_self()
    me.autonomy.cycle = 10
    me.autonomy.last_reflection_cycle = 0
    me.autonomy.last_explore_cycle = 10  # explored just now: the next cycle acts (and triggers)
    instance.save_self(me)


def test_run_without_reflection_never_reflects(instance: Instance, tmp_path: Path) -> None:
    control = init_instance(tmp_path / "control")
    for target in (instance, control):
        seed_periodic_trigger(target)
    assert run(deps_for(control), cycles=1).reflections  # the trigger fires
    report = run(deps_for(instance), cycles=1, reflection=False)
    assert report.cycles[0]["triggers"] and report.reflections == []
    entries = MemoryJournal(instance.memory_dir).read().entries
    assert not [e for e in entries if e.situation == "reflection"]


def test_ablation_runs_both_arms_on_copies(instance: Instance) -> None:
    seed_periodic_trigger(instance)
    values_before = instance.values_file.read_text("utf-8")
    ledger_before = MemoryJournal(instance.memory_dir).read().entries
    model = scripted()
    result = ablation(instance, cycles=2, model_for=lambda mode: model)
    assert [a.label for a in result.arms] == ["with-reflection", "no-reflection"]
    assert [a.cycles for a in result.arms] == [2, 2]
    assert result.arms[0].reflections >= 1 and result.arms[1].reflections == 0
    assert instance.values_file.read_text("utf-8") == values_before
    assert not instance.checkpoint_db.exists()
    assert MemoryJournal(instance.memory_dir).read().entries == ledger_before
    assert set(result.to_dict()) >= {"arms", "identity_gap", "values_gap"}


def test_model_swap_runs_both_models(instance: Instance) -> None:
    first, second = scripted(), scripted()
    result = model_swap(
        instance, cycles=1, model_for=lambda mode: first, swap_model_for=lambda mode: second
    )
    assert [a.label for a in result.arms] == ["current-model", "swapped-model"]
    assert first.calls > 0 and second.calls > 0
    assert not instance.checkpoint_db.exists()


def test_model_swap_needs_another_model(instance: Instance) -> None:
    with pytest.raises(LumenError, match="model-swap needs"):
        swapped_model_factory(instance)
    with pytest.raises(LumenError, match="provider"):
        swapped_model_factory(instance, provider="nonsense")


def test_experiments_need_a_cycle(instance: Instance) -> None:
    with pytest.raises(LumenError, match="at least one cycle"):
        ablation(instance, cycles=0)


# ------------------------------------------------------------------ CLI


def audit_cli(*args: str) -> Any:
    import typer
    from typer.testing import CliRunner

    from cli.audit import register

    app = typer.Typer()

    @app.command()
    def noop() -> None:  # a second command keeps ``audit`` a sub-command
        """Do nothing."""

    register(app)
    return CliRunner().invoke(app, ["audit", *args])


def test_cli_audit_json_and_strict(checkpointed: Instance) -> None:
    set_value(checkpointed, "curiosity", 0.3)
    shown = audit_cli("--json")
    assert shown.exit_code == 0
    data = json.loads(shown.stdout)
    assert [d["name"] for d in data["value_drift"]["unexplained"]] == ["curiosity"]
    strict = audit_cli("--strict")
    assert strict.exit_code == 1 and isinstance(strict.exception, LumenError)


def test_cli_strict_passes_without_unexplained_drift(checkpointed: Instance) -> None:
    result = audit_cli("--strict")
    assert result.exit_code == 0 and "value drift: 0 change(s)" in result.stdout

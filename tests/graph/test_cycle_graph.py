"""Each conditional edge of ``cycle`` and ``reflect`` taken both ways (scripted model)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graph.autonomy import alternate, run, run_cycle, run_reflection
from graph.checkpoints import sqlite_saver
from graph.cycle_builder import CYCLE_STEPS, build_cycle_graph, build_reflect_graph
from graph.deps import Deps
from nodes.cycle import steps as cycle_nodes
from state.counters import read_counters
from state.cycle import CycleState
from state.files import load_goals, load_values
from state.instance import Instance
from tests.scripted import ScriptedChatModel, cycle_model


def forecasting_model() -> ScriptedChatModel:
    return cycle_model(success=0.95)


@pytest.fixture
def deps(instance: Instance) -> Deps:
    model = forecasting_model()
    return Deps.for_instance(instance, model_for=lambda mode: model)


def one_cycle(
    deps: Deps,
    tmp_path: Path,
    overrides: dict[str, Callable[..., Any]] | None = None,
    kind: str = "action",
) -> CycleState:
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        graph = build_cycle_graph(deps, overrides).compile(checkpointer=saver)
        return run_cycle(graph, kind)


def seed(instance: Instance, **changes: Any) -> None:
    me = instance.load_self()
    for path, value in changes.items():
        section, field = path.split("__")
        setattr(getattr(me, section), field, value)
    instance.save_self(me)


EXPERIENCED = {"guardian": [10, 10], "sage": [10, 10], "healer": [10, 10], "explorer": [10, 10]}
"""Archetype stats of a self whose skills have always worked (its forecasts are confident)."""


def experienced(instance: Instance) -> None:
    seed(instance, autonomy__archetype_stats=EXPERIENCED)


def ran(state: CycleState, step: str) -> bool:
    return any(r.step == step for r in state.trace)


def test_cycle_has_the_mscp_steps(deps: Deps) -> None:
    nodes = build_cycle_graph(deps).compile().get_graph(xray=1).nodes
    names = {node_id.split(":")[-1] for node_id in nodes}
    assert {name for name, _ in CYCLE_STEPS} <= names


def test_safe_path_converges_and_persists(deps: Deps, tmp_path: Path, instance: Instance) -> None:
    experienced(instance)
    before = instance.load_self()
    state = one_cycle(deps, tmp_path)
    assert state.guard == "safe" and state.status == "converged"
    assert ran(state, "convergence_check") and ran(state, "self_update")
    after = instance.load_self()
    assert after.autonomy.cycle == 1
    assert after.identity.identity_id == before.identity.identity_id
    assert after.identity.identity_hash != before.identity.identity_hash
    assert after.identity.previous_identity_hash == before.identity.identity_hash


def test_escalation_guard_cools_down_after_three_escalations(
    deps: Deps, tmp_path: Path, instance: Instance
) -> None:
    seed(
        instance,
        autonomy__consecutive_escalations=2,
        stability__msi=0.3,  # the MSI the last convergence check left: below 0.5 escalates
    )
    state = one_cycle(deps, tmp_path)
    assert state.guard == "cooldown" and state.status == "cooldown"
    assert not ran(state, "convergence_check")


def test_convergence_check_stabilizes_when_stabilization_is_on(
    deps: Deps, tmp_path: Path, instance: Instance
) -> None:
    experienced(instance)
    seed(instance, stability__stabilization_mode=True, autonomy__composite_history=[0.9])
    state = one_cycle(deps, tmp_path)
    assert state.convergence == "stabilize" and ran(state, "stabilize")
    assert instance.load_self().stability.mutation_scaling == 0.5


def test_value_lock_breach_rolls_back_to_the_snapshot(
    deps: Deps, tmp_path: Path, instance: Instance
) -> None:
    original = instance.values_file.read_text()

    def tampering_update(state: CycleState, *, deps: Deps) -> dict[str, object]:
        instance.values_file.write_text(original.replace("0.95", "0.05", 1))
        return cycle_nodes.self_update(state, deps=deps)

    state = one_cycle(deps, tmp_path, {"self_update": tampering_update})
    assert state.value_lock == "rollback" and state.status == "rollback"
    assert state.restored and instance.values_file.read_text() != original.replace(
        "0.95", "0.05", 1
    )
    assert next(v.weight for v in load_values(instance.values_file)) == 0.95
    assert read_counters(instance.machine)["cycle_rollback_total"] == 1
    kinds = {e.meta.get("kind") for e in deps.store.read().entries}
    assert {"ValueLockBroken", "Rollback"} <= kinds


def test_failed_rollback_drops_to_safety_only(
    deps: Deps, tmp_path: Path, instance: Instance
) -> None:
    original = instance.values_file.read_text()

    def tampering_update(state: CycleState, *, deps: Deps) -> dict[str, object]:
        instance.values_file.write_text(original.replace("0.95", "0.05", 1))
        return cycle_nodes.self_update(state, deps=deps)

    def broken_rollback(state: CycleState, *, deps: Deps) -> dict[str, object]:
        return {"status": "rollback"}

    state = one_cycle(
        deps, tmp_path, {"self_update": tampering_update, "rollback": broken_rollback}
    )
    assert not state.restored and ran(state, "safe_mode") and state.budget == 0.0


def test_meta_depth_2_runs_only_when_conditions_and_budget_allow(
    deps: Deps, tmp_path: Path, instance: Instance
) -> None:
    seed(instance, autonomy__consecutive_self_updates=3, autonomy__goal_mutations=[1, 1, 1, 1])
    state = one_cycle(deps, tmp_path)
    assert state.depth2 and ran(state, "meta_depth_2")
    assert instance.load_self().autonomy.exploration_risk_tolerance != 0.2


def test_meta_depth_2_is_skipped_on_a_calm_self(
    deps: Deps, tmp_path: Path, instance: Instance
) -> None:
    experienced(instance)
    state = one_cycle(deps, tmp_path)
    assert not state.depth2 and not ran(state, "meta_depth_2")


def test_large_prediction_error_recurses_and_stays_bounded(deps: Deps, tmp_path: Path) -> None:
    def surprising_compare(state: CycleState, *, deps: Deps) -> dict[str, object]:
        update = cycle_nodes.compare(state, deps=deps)
        return {**update, "prediction_error": 0.3}

    state = one_cycle(deps, tmp_path, {"compare": surprising_compare})
    assert state.status in {"bounded", "forced_cooldown"}
    assert state.iteration == cycle_nodes.MAX_ITERATIONS
    assert sum(r.step == "predict" for r in state.trace) == cycle_nodes.MAX_ITERATIONS


def test_low_motivation_skips_and_records_it(
    deps: Deps, tmp_path: Path, instance: Instance
) -> None:
    instance.values_file.write_text(
        '[{"name": "coherence", "weight": 0.1, "status": "active"},'
        ' {"name": "curiosity", "weight": 0.1, "status": "active"}]'
    )
    state = one_cycle(deps, tmp_path)
    assert state.status == "skipped" and "M=" in state.decision


def test_action_cycle_writes_goal_and_kernel_memories(deps: Deps, tmp_path: Path) -> None:
    state = one_cycle(deps, tmp_path)
    entries = deps.store.read().entries
    assert any(e.author == "goal" for e in entries)
    assert any(e.author == "kernel" and e.meta.get("step") == "record" for e in entries)
    chosen = state.candidates[state.chosen]
    assert chosen.breakdown.startswith("[score=") and "archetype=" in chosen.breakdown


def test_explore_cycle_records_a_self_memory(deps: Deps, tmp_path: Path) -> None:
    state = one_cycle(deps, tmp_path, kind="explore")
    assert state.question
    assert any(e.author == "self" and e.situation == "explore" for e in deps.store.read().entries)


def test_action_cycle_never_writes_goal_weights_directly(
    deps: Deps, tmp_path: Path, instance: Instance
) -> None:
    before = {g.name: g.weight for _, g in load_goals(instance.goals_dir)}
    one_cycle(deps, tmp_path)
    after = {g.name: g.weight for _, g in load_goals(instance.goals_dir)}
    assert before == after
    assert instance.load_self().autonomy.goal_weight_proposals


def reflect_once(deps: Deps, tmp_path: Path, triggers: list[str]) -> Any:
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        graph = build_reflect_graph(deps).compile(checkpointer=saver)
        return run_reflection(graph, triggers)


def test_reflect_with_nothing_to_review_ends_early(deps: Deps, tmp_path: Path) -> None:
    state = reflect_once(deps, tmp_path, ["periodic"])
    assert state.route == "nothing" and not any(r.step == "ask" for r in state.trace)


def test_reflect_applies_cycle_proposals_with_self_and_kernel_memories(
    deps: Deps, tmp_path: Path, instance: Instance
) -> None:
    one_cycle(deps, tmp_path)
    state = reflect_once(deps, tmp_path, ["explicit_request"])
    assert state.applied
    entries = deps.store.read().entries
    assert any(e.author == "self" and e.situation == "reflection" for e in entries)
    assert any(e.author == "kernel" and e.meta.get("file") for e in entries)
    assert instance.load_self().autonomy.goal_weight_proposals == []


def test_reflect_resolves_contradicting_proposals_by_evidence(
    deps: Deps, tmp_path: Path, instance: Instance
) -> None:
    goal = next(g for _, g in load_goals(instance.goals_dir) if g.status == "todo")
    me = instance.load_self()
    me.autonomy.goal_weight_proposals = [
        {
            "goal": goal.name,
            "year": 2026,
            "from": goal.weight,
            "to": goal.weight + 0.1,
            "cycle": 1,
            "why": "success",
        }
    ]
    me.autonomy.stale = {goal.name: 6}
    instance.save_self(me)
    state = reflect_once(deps, tmp_path, ["goal_stale"])
    assert state.conflicts == [f"goal_weight:{goal.name}"]
    assert any(r.step == "resolve" for r in state.trace)
    entries = [e for e in deps.store.read().entries if e.meta.get("kind") == "ConflictResolved"]
    assert entries and "kept +0.100" in entries[0].description


def test_psyche_evolves_during_reflection(deps: Deps, tmp_path: Path, instance: Instance) -> None:
    me = instance.load_self()
    me.autonomy.archetype_stats = {"guardian": [3, 3], "explorer": [0, 4]}
    me.psyche.self_integration.shadow_encounters = 2
    instance.save_self(me)
    reflect_once(deps, tmp_path, ["periodic"])
    psyche = instance.load_self().psyche
    assert psyche.archetypes.guardian == pytest.approx(0.42)
    assert psyche.archetypes.explorer == pytest.approx(0.48)
    assert psyche.self_integration.individuation_level == pytest.approx(0.12)


def test_run_alternates_action_and_explore_on_the_fixed_schedule(deps: Deps) -> None:
    report = run(deps, cycles=4, schedule=alternate)
    assert [c["kind"] for c in report.cycles] == ["action", "explore", "action", "explore"]


def test_run_lets_each_cycle_choose_its_kind(deps: Deps) -> None:
    report = run(deps, cycles=4)
    assert {c["kind"] for c in report.cycles} == {"action", "explore"}
    for c in report.cycles:  # the kind follows the urges the cycle recorded
        urge = c["kind_choice"]
        assert c["kind"] == ("explore" if urge["explore"] > urge["exploit"] else "action")


def test_rollback_restores_the_last_stable_checkpoint_and_keeps_the_rejected_self(
    deps: Deps, instance: Instance
) -> None:
    from graph.autonomy import autonomy_graphs
    from graph.history import list_checkpoints

    with autonomy_graphs(deps) as (cycle_graph, _):
        run_cycle(cycle_graph, "action")  # a stable self, checkpointed with its snapshot
    (stable,) = list_checkpoints(instance)
    assert stable.snapshot is not None and stable.snapshot.composite < 0.7
    good = dict(stable.snapshot.values)
    original = instance.values_file.read_text()

    def tampering_update(state: CycleState, *, deps: Deps) -> dict[str, object]:
        instance.values_file.write_text(original.replace("0.95", "0.05", 1))
        return cycle_nodes.self_update(state, deps=deps)

    from graph.checkpoints import sqlite_saver

    with sqlite_saver(instance.checkpoint_db) as saver:
        graph = build_cycle_graph(deps, {"self_update": tampering_update}).compile(
            checkpointer=saver, name="cycle"
        )
        state = run_cycle(graph, "action")
    assert state.status == "rollback" and state.restored
    assert state.rolled_back_to == stable.checkpoint_id
    assert {v.name: v.weight for v in load_values(instance.values_file)} == good
    assert instance.load_self().identity.identity_hash == stable.snapshot.identity_hash
    assert read_counters(instance.machine)["cycle_rollback_total"] == 1
    record = (instance.metacog_dir / "rollbacks.jsonl").read_text().splitlines()
    assert len(record) == 1 and '"restored_from": "' + stable.checkpoint_id in record[0]
    assert "0.05" in record[0]  # the rejected self stays inspectable
    memories = [e for e in deps.store.read().entries if e.meta.get("kind") == "Rollback"]
    assert {e.author for e in memories} == {"kernel", "self"}
    assert any(stable.checkpoint_id in e.description for e in memories)


def test_identity_drift_also_rolls_back(deps: Deps, tmp_path: Path, instance: Instance) -> None:
    def drifting_update(state: CycleState, *, deps: Deps) -> dict[str, object]:
        update = cycle_nodes.self_update(state, deps=deps)
        return {**update, "drift": True}

    state = one_cycle(deps, tmp_path, {"self_update": drifting_update})
    assert state.value_lock == "rollback" and "identity drift" in state.rollback_reason
    assert state.restored and state.status == "rollback"
    kinds = {e.meta.get("kind") for e in deps.store.read().entries}
    assert {"IdentityDrift", "Rollback"} <= kinds


def test_a_step_that_crashes_leaves_the_runs_step_memories_and_no_run_scope(
    deps: Deps, tmp_path: Path
) -> None:
    def boom(state: CycleState, *, deps: Any) -> dict[str, Any]:
        raise RuntimeError("the disk went away")

    with pytest.raises(RuntimeError, match="disk went away"):
        one_cycle(deps, tmp_path, overrides={"compare": boom})
    steps = [e.meta.get("step") for e in deps.store.read().entries if e.situation == "cycle"]
    assert {"budget_reset", "predict", "act"} <= set(steps) and "compare" not in steps
    assert deps._scopes == {}  # the run's buffers and vault went with it

"""Measured outcomes, forecasts, work cost and recovery (kernel/mscp.py, issue 13)."""

import pytest

from graph.cycle_builder import cycle_branches
from kernel import mscp


def eps(predicted: dict[str, float], actual: dict[str, float]) -> float:
    dims = mscp.IDENTITY_DIMS
    return mscp.prediction_error([predicted[d] for d in dims], [actual[d] for d in dims])


def test_outcome_kind_separates_own_failure_from_refusal() -> None:
    assert mscp.outcome_kind("ok") == mscp.OUTCOME_SUCCESS
    assert mscp.outcome_kind("failed") == mscp.OUTCOME_OWN_FAILURE
    assert mscp.outcome_kind("refused") == mscp.OUTCOME_REFUSAL
    assert mscp.outcome_kind("vetoed") == mscp.OUTCOME_VETO
    assert mscp.outcome_kind("skipped") == mscp.OUTCOME_NONE


def test_a_refusal_is_not_scored_as_the_agents_own_failure() -> None:
    refused = mscp.measured_outcome(mscp.Observation(mscp.OUTCOME_REFUSAL))
    failed = mscp.measured_outcome(mscp.Observation(mscp.OUTCOME_OWN_FAILURE))
    assert refused["capability_confidence"] == 0.0
    assert failed["capability_confidence"] < 0.0
    assert refused["emotional_stability"] > failed["emotional_stability"]


def test_success_grows_with_content_learning_and_progress() -> None:
    bare = mscp.measured_outcome(mscp.Observation(mscp.OUTCOME_SUCCESS))
    rich = mscp.measured_outcome(
        mscp.Observation(mscp.OUTCOME_SUCCESS, content=1.0, learned=1.0, progress=1.0, aligned=1)
    )
    for dim in ("capability_confidence", "goal_persistence", "value_alignment"):
        assert rich[dim] > bare[dim]
    assert all(-1.0 <= v <= 1.0 for v in rich.values())


def test_time_overrun_lowers_emotional_stability() -> None:
    quick = mscp.measured_outcome(mscp.Observation(mscp.OUTCOME_SUCCESS, seconds=1.0))
    slow = mscp.measured_outcome(mscp.Observation(mscp.OUTCOME_SUCCESS, seconds=20.0))
    assert slow["emotional_stability"] < quick["emotional_stability"]


def test_epsilon_reaches_the_spec_thresholds_only_when_the_forecast_was_wrong() -> None:
    good = mscp.Observation(mscp.OUTCOME_SUCCESS, content=0.5, learned=0.5)
    bad = mscp.Observation(mscp.OUTCOME_OWN_FAILURE)
    confident = mscp.forecast_outcome(0.95, expected_progress=0.0, aligned=0.0)
    unsure = mscp.forecast_outcome(0.5, expected_progress=0.0, aligned=0.0)
    assert mscp.converged(eps(confident, mscp.measured_outcome(good)))  # right: ε < 0.1
    assert eps(confident, mscp.measured_outcome(bad)) > 0.5  # confident and wrong: escalates
    assert eps(unsure, mscp.measured_outcome(bad)) < 0.5  # unsure: no escalation


def test_calibration_shrinks_confidence_after_misses() -> None:
    assert mscp.calibrated_success(0.9, []) == pytest.approx(0.9)
    assert mscp.calibrated_success(0.9, [0.5, 0.5]) == pytest.approx(0.7)
    assert mscp.calibrated_success(0.9, [2.0]) == pytest.approx(0.5)


def test_work_cost_and_degradation_tiers() -> None:
    assert mscp.work_cost(llm_calls=0, seconds=0.0, skill_runs=0) == pytest.approx(0.05)
    assert mscp.work_cost(llm_calls=1, seconds=30.0, skill_runs=1) == pytest.approx(0.8)
    assert mscp.degradation(1.0) == []
    assert mscp.degradation(0.25) == ["meta depth 2 off"]
    assert mscp.degradation(0.15) == ["meta depth 2 off", "tensor recomputation off"]
    assert len(mscp.degradation(0.05)) == 3
    assert mscp.degradation(0.0) == ["safety layers only"]
    with pytest.raises(ValueError):
        mscp.work_cost(llm_calls=-1, seconds=0.0, skill_runs=0)


def test_mutation_scaling_halves_when_unsettled_and_recovers_when_calm() -> None:
    assert mscp.mutation_scaling_next(1.0, unsettled=True, calm_cycles=0) == 0.5
    assert mscp.mutation_scaling_next(0.125, unsettled=True, calm_cycles=0) == 0.125
    assert mscp.mutation_scaling_next(0.5, unsettled=False, calm_cycles=1) == 0.5
    assert mscp.mutation_scaling_next(0.5, unsettled=False, calm_cycles=3) == 1.0
    assert mscp.mutation_scaling_next(1.0, unsettled=False, calm_cycles=6) == 1.0


def test_safe_mode_counts_down_stable_cycles_and_restarts_on_an_unstable_one() -> None:
    assert mscp.safe_mode_left(3, stable=True) == 2
    assert mscp.safe_mode_left(1, stable=True) == 0
    assert mscp.safe_mode_left(2, stable=False) == mscp.SAFE_MODE_STABLE_CYCLES
    assert mscp.safe_mode_left(0, stable=False) == 0


def test_branches_are_read_from_the_trace() -> None:
    calm = ["budget_reset", "affect_update", "escalation_guard", "convergence_check"]
    calm += ["self_update", "value_lock_check", "goal_mutation", "cycle_end"]
    assert cycle_branches(calm) == []
    cooled = ["escalation_guard", "cycle_end", "affect_update"]
    assert cycle_branches(cooled) == ["cooldown", "recurse"]
    rolled = ["convergence_check", "stabilize", "self_update", "value_lock_check", "rollback"]
    rolled += ["rollback_check", "safe_mode", "cycle_end"]
    assert cycle_branches(rolled) == ["stabilize", "rollback", "safe_mode"]
    deep = ["goal_mutation", "meta_depth_2", "cycle_end"]
    assert cycle_branches(deep) == ["meta_depth_2"]

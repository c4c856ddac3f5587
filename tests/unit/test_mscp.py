import ast
import itertools
import math
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernel import mscp
from kernel.core import identity_hash
from kernel.mscp import (
    AFFECT_DEFAULTS,
    AFFECT_DIMS,
    BELIEF_FLOOR,
    CORE_VALUE_FLOOR,
    DELTA_MAX,
    IDENTITY_CAPS,
    IDENTITY_DIMS,
    MAX_GOAL_WEIGHT_DELTA,
    STABILITY_WEIGHTS,
    THREAT_KINDS,
    AffectMetrics,
    ProposedChange,
    Threat,
    adjust_tolerance,
    affect_targets,
    assess_threats,
    belief_deletable,
    belief_entropy,
    belief_weight_after,
    bmap,
    budget_capabilities,
    clamp_goal_weight,
    composite_stability,
    consistency_reconciliation,
    consistency_volatility,
    converged,
    depth2_conditions,
    detect_oscillation,
    dominant_archetype,
    drift_detected,
    ethical_verdict,
    evolve_archetypes,
    forced_cooldown,
    goal_mutation_rate,
    grow_individuation,
    harm_category,
    identity_volatility,
    inject_survival_anxiety,
    instability_trend,
    layer0_violation,
    max_threat_intensity,
    meta_escalation,
    meta_stability_index,
    motivation,
    needs_reconciliation,
    prediction_error,
    prompt_strength,
    reflection_triggers,
    score_breakdown,
    should_skip,
    stability_step,
    stabilization_next,
    step_components,
    survival_goals,
    threat_level,
    update_affect,
    update_identity,
    valence,
    value_lock_hash,
    value_lock_intact,
    value_tension,
    value_unlock_allowed,
)

PROPS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
EPS = 1e-12
unit = st.floats(0.0, 1.0)
any_float = st.floats(allow_nan=False)  # includes ±inf: "any raw comparison input"


def _step(dims, raw, *, scaling=1.0, stabilization=False, previous_velocity=0.0, dt=1.0):
    return update_identity(
        dims,
        raw,
        scaling=scaling,
        stabilization=stabilization,
        previous_hash=identity_hash(dims),
        previous_velocity=previous_velocity,
        dt=dt,
    )


# --- module hygiene ------------------------------------------------------------------------------


def test_mscp_imports_only_stdlib_and_kernel() -> None:
    tree = ast.parse(Path(mscp.__file__).read_text(encoding="utf-8"))
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import"
            assert node.module is not None
            modules.add(node.module)
    non_stdlib = {m for m in modules if m.split(".")[0] not in sys.stdlib_module_names}
    assert non_stdlib <= {"__future__", "kernel.core"}, non_stdlib


def test_mscp_constants_match_spec() -> None:
    assert math.isclose(sum(STABILITY_WEIGHTS), 1.0)
    assert IDENTITY_DIMS == (
        "persona_consistency",
        "value_alignment",
        "capability_confidence",
        "emotional_stability",
        "goal_persistence",
    )
    assert dict(IDENTITY_CAPS) == {
        "persona_consistency": 0.05,
        "value_alignment": 0.05,
        "capability_confidence": 0.08,
        "emotional_stability": 0.05,
        "goal_persistence": 0.05,
    }
    assert set(AFFECT_DEFAULTS) == set(AFFECT_DIMS)


# --- identity update -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "scaling", "stabilization", "dim", "expected"),
    [
        ({"persona_consistency": 0.01}, 1.0, False, "persona_consistency", 0.01),
        ({"persona_consistency": 0.05}, 1.0, False, "persona_consistency", 0.05),
        ({"persona_consistency": 0.2}, 1.0, False, "persona_consistency", 0.05),
        ({"persona_consistency": -0.2}, 1.0, False, "persona_consistency", -0.05),
        ({"capability_confidence": 0.2}, 1.0, False, "capability_confidence", 0.08),
        ({"capability_confidence": -0.08}, 1.0, False, "capability_confidence", -0.08),
        ({"goal_persistence": 0.04}, 0.5, False, "goal_persistence", 0.02),
        ({"goal_persistence": 0.04}, 1.0, True, "goal_persistence", 0.02),
        ({"goal_persistence": 1.0}, 1.0, True, "goal_persistence", 0.025),
        ({"capability_confidence": 1.0}, 1.0, True, "capability_confidence", 0.04),
        ({"value_alignment": 0.02}, 2.0, False, "value_alignment", 0.04),
        ({"value_alignment": 0.2}, 2.0, False, "value_alignment", 0.05),
        ({"value_alignment": 1.0}, 0.0, False, "value_alignment", 0.0),
        ({"value_alignment": math.inf}, 0.0, False, "value_alignment", 0.0),
        ({"value_alignment": math.inf}, 1.0, False, "value_alignment", 0.05),
        ({}, 1.0, False, "value_alignment", 0.0),
    ],
)
def test_update_identity_clamps_each_delta(raw, scaling, stabilization, dim, expected) -> None:
    step = _step((0.5,) * 5, raw, scaling=scaling, stabilization=stabilization)
    assert step.applied[dim] == pytest.approx(expected)
    assert step.dims[IDENTITY_DIMS.index(dim)] == pytest.approx(0.5 + expected)


@pytest.mark.parametrize(
    ("start", "raw", "expected"),
    [(0.98, 1.0, 1.0), (1.0, 1.0, 1.0), (0.02, -1.0, 0.0), (0.0, -1.0, 0.0)],
)
def test_update_identity_stays_in_unit_interval(start, raw, expected) -> None:
    step = _step((start,) * 5, {"persona_consistency": raw})
    assert step.dims[0] == expected
    assert step.applied["persona_consistency"] == pytest.approx(expected - start)


def test_update_identity_kinematics() -> None:
    step = _step((0.5,) * 5, {"persona_consistency": 0.03, "value_alignment": 0.04}, dt=2.0)
    assert step.delta == pytest.approx(0.05)
    assert step.velocity == pytest.approx(0.025)
    assert step.acceleration == pytest.approx(0.025)
    assert step.identity_hash == identity_hash(step.dims)
    assert step.previous_hash == identity_hash((0.5,) * 5)
    assert not step.unstable
    assert not step.drift


def test_update_identity_acceleration_uses_previous_velocity() -> None:
    step = _step((0.5,) * 5, {"persona_consistency": 0.03}, previous_velocity=0.1)
    assert step.acceleration == pytest.approx(-0.07)


def test_update_identity_no_change_keeps_hash() -> None:
    step = _step((0.5,) * 5, {})
    assert step.identity_hash == step.previous_hash
    assert step.delta == 0.0


def test_update_identity_acceleration_at_threshold_is_stable() -> None:
    step = _step((0.5,) * 5, {"persona_consistency": 0.05}, dt=0.1)
    assert step.acceleration == 0.5
    assert not step.unstable
    assert step.applied["persona_consistency"] == pytest.approx(0.05)


def test_update_identity_halves_deltas_when_acceleration_exceeds_threshold() -> None:
    raw = dict.fromkeys(IDENTITY_DIMS, 1.0)
    step = _step((0.5,) * 5, raw, dt=0.1)
    assert step.unstable
    assert step.applied["persona_consistency"] == pytest.approx(0.025)
    assert step.applied["capability_confidence"] == pytest.approx(0.04)
    assert step.velocity == pytest.approx(step.delta / 0.1)


@pytest.mark.parametrize(
    ("dims", "raw", "kwargs"),
    [
        ((0.5,) * 4, {}, {}),
        ((0.5,) * 6, {}, {}),
        ((1.1, 0.5, 0.5, 0.5, 0.5), {}, {}),
        ((math.nan, 0.5, 0.5, 0.5, 0.5), {}, {}),
        ((0.5,) * 5, {"charisma": 0.1}, {}),
        ((0.5,) * 5, {"persona_consistency": math.nan}, {}),
        ((0.5,) * 5, {}, {"dt": 0.0}),
        ((0.5,) * 5, {}, {"scaling": -0.1}),
        ((0.5,) * 5, {}, {"previous_velocity": -0.1}),
    ],
)
def test_update_identity_rejects_bad_input(dims, raw, kwargs) -> None:
    with pytest.raises(ValueError):
        _step(dims, raw, **kwargs)


@pytest.mark.parametrize(
    ("previous", "current", "delta", "expected"),
    [
        ("a", "b", 0.31, True),
        ("a", "b", 0.3, False),
        ("a", "a", 0.9, False),
        ("a", "b", 0.0, False),
    ],
)
def test_drift_detected_needs_hash_change_and_large_delta(
    previous, current, delta, expected
) -> None:
    assert drift_detected(previous, current, delta) is expected


@PROPS
@given(
    dims=st.tuples(unit, unit, unit, unit, unit),
    raw=st.dictionaries(st.sampled_from(IDENTITY_DIMS), any_float),
    scaling=st.floats(0.0, 4.0),
    stabilization=st.booleans(),
    previous_velocity=st.floats(0.0, 2.0),
    dt=st.floats(0.01, 10.0),
)
def test_update_identity_property_bounded(
    dims, raw, scaling, stabilization, previous_velocity, dt
) -> None:
    step = _step(
        dims,
        raw,
        scaling=scaling,
        stabilization=stabilization,
        previous_velocity=previous_velocity,
        dt=dt,
    )
    eff = scaling * (0.5 if stabilization else 1.0)
    for dim, value in zip(IDENTITY_DIMS, step.dims, strict=True):
        assert 0.0 <= value <= 1.0
        assert abs(step.applied[dim]) <= IDENTITY_CAPS[dim] * min(1.0, eff)
    assert step.delta <= math.hypot(*IDENTITY_CAPS.values()) + EPS
    assert step.identity_hash == identity_hash(step.dims)


# --- goal weights --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("weight", "raw", "scaling", "stabilization", "expected"),
    [
        (0.5, 0.05, 1.0, False, 0.55),
        (0.5, 0.10, 1.0, False, 0.60),
        (0.5, 0.5, 1.0, False, 0.60),
        (0.5, -0.5, 1.0, False, 0.40),
        (0.5, 0.5, 1.0, True, 0.55),
        (0.5, 0.08, 0.5, False, 0.54),
        (0.95, 0.5, 1.0, False, 1.0),
        (0.05, -0.5, 1.0, False, 0.0),
    ],
)
def test_clamp_goal_weight_table(weight, raw, scaling, stabilization, expected) -> None:
    result = clamp_goal_weight(weight, raw, scaling=scaling, stabilization=stabilization)
    assert result == pytest.approx(expected)


@PROPS
@given(weight=unit, raw=any_float, scaling=st.floats(0.0, 4.0), stabilization=st.booleans())
def test_clamp_goal_weight_property(weight, raw, scaling, stabilization) -> None:
    result = clamp_goal_weight(weight, raw, scaling=scaling, stabilization=stabilization)
    eff = scaling * (0.5 if stabilization else 1.0)
    assert 0.0 <= result <= 1.0
    assert abs(result - weight) <= MAX_GOAL_WEIGHT_DELTA * min(1.0, eff) + EPS


# --- composite stability and Theorem 1 -----------------------------------------------------------


@pytest.mark.parametrize(
    ("components", "expected"),
    [
        ((0, 0, 0, 0), 0.0),
        ((1, 1, 1, 1), 1.0),
        ((1, 0, 0, 0), 0.30),
        ((0, 1, 0, 0), 0.25),
        ((0, 0, 1, 0), 0.25),
        ((0, 0, 0, 1), 0.20),
        ((0.5, 0.5, 0.5, 0.5), 0.5),
    ],
)
def test_composite_stability_weights(components, expected) -> None:
    assert composite_stability(*components) == pytest.approx(expected)


@pytest.mark.parametrize("bad", [-0.01, 1.01, math.nan])
def test_composite_stability_rejects_out_of_range(bad) -> None:
    with pytest.raises(ValueError):
        composite_stability(bad, 0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("stabilization", "expected"),
    [(False, (0.55, 0.45, 1.0, 0.0)), (True, (0.525, 0.475, 1.0, 0.0))],
)
def test_step_components_clamps_to_delta_max(stabilization, expected) -> None:
    new = step_components((0.5, 0.5, 0.99, 0.01), (1.0, -1.0, 1.0, -1.0), stabilization)
    assert new == pytest.approx(expected)


@PROPS
@given(
    components=st.tuples(unit, unit, unit, unit),
    raw=st.tuples(any_float, any_float, any_float, any_float),
    stabilization=st.booleans(),
)
def test_theorem1_bounded_increment(components, raw, stabilization) -> None:
    before = composite_stability(*components)
    after = stability_step(components, raw, stabilization)
    bound = DELTA_MAX * (0.5 if stabilization else 1.0)
    assert abs(after - before) <= bound + EPS
    assert 0.0 <= after <= 1.0


# --- component measures --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ([], 0.0),
        ([0.7], 0.0),
        ([0.0, 0.0], 0.0),
        ([1.0, 0.0], 0.0),
        ([0.5, 0.5], 1.0),
        ([0.2, 0.2, 0.2, 0.2], 1.0),
        ([0.75, 0.25], -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)) / math.log(2)),
    ],
)
def test_belief_entropy_table(weights, expected) -> None:
    assert belief_entropy(weights) == pytest.approx(expected)


def test_belief_entropy_rejects_negative_weight() -> None:
    with pytest.raises(ValueError):
        belief_entropy([0.5, -0.1])


@pytest.mark.parametrize(
    ("deltas", "window", "expected"),
    [
        ([], 10, 0.0),
        ([0.1], 10, 0.0),
        ([0.0, 0.2], 10, 0.1),
        ([0.1, 0.1, 0.1], 10, 0.0),
        ([5.0, 0.0, 0.2], 2, 0.1),
    ],
)
def test_identity_volatility_table(deltas, window, expected) -> None:
    assert identity_volatility(deltas, window=window) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("mutations", "window", "expected"),
    [
        ([], 5, 0.0),
        ([1, 0, 1, 0], 4, 0.5),
        ([1, 1], 4, 0.5),
        ([3, 0, 0, 0], 2, 0.0),
        ([5], 1, 1.0),
    ],
)
def test_goal_mutation_rate_table(mutations, window, expected) -> None:
    assert goal_mutation_rate(mutations, window) == pytest.approx(expected)


@pytest.mark.parametrize(("mutations", "window"), [([1], 0), ([-1], 1)])
def test_goal_mutation_rate_rejects_bad_input(mutations, window) -> None:
    with pytest.raises(ValueError):
        goal_mutation_rate(mutations, window)


@pytest.mark.parametrize(
    ("values", "expected"), [([], 0.0), ([0.5, 0.5], 0.0), ([0.0, 1.0], 0.25), ([0.9], 0.0)]
)
def test_consistency_volatility_table(values, expected) -> None:
    assert consistency_volatility(values) == pytest.approx(expected)


# --- stabilization hysteresis --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("active", "c", "expected"),
    [
        (False, 0.0, False),
        (False, 0.6999, False),
        (False, 0.7, True),
        (False, 1.0, True),
        (True, 1.0, True),
        (True, 0.5, True),
        (True, 0.4999, False),
        (True, 0.0, False),
    ],
)
def test_stabilization_next_table(active, c, expected) -> None:
    assert stabilization_next(active, c) is expected


@PROPS
@given(c=st.floats(0.5, 1.0))
def test_stabilization_stays_on_above_off_threshold(c) -> None:
    assert stabilization_next(True, c)


@PROPS
@given(c=st.floats(0.0, 0.7, exclude_max=True))
def test_stabilization_stays_off_below_on_threshold(c) -> None:
    assert not stabilization_next(False, c)


@PROPS
@given(history=st.lists(unit, max_size=30))
def test_stabilization_switches_only_at_thresholds(history) -> None:
    active = False
    for c in history:
        nxt = stabilization_next(active, c)
        if nxt and not active:
            assert c >= 0.7
        if active and not nxt:
            assert c < 0.5
        active = nxt


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        ([], False),
        ([0.5, 0.6, 0.5, 0.6, 0.5], True),
        ([0.5, 0.6, 0.5, 0.6], False),
        ([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], False),
        ([0.5, 0.5005, 0.5, 0.5005, 0.5], False),
        ([0.9, 0.9, 0.5, 0.6, 0.5, 0.6, 0.5], True),
        ([0.5, 0.6, 0.5, 0.6, 0.5, 0.6, 0.7, 0.8, 0.9], False),
    ],
)
def test_detect_oscillation_table(history, expected) -> None:
    assert detect_oscillation(history) is expected


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        ([0.1, 0.2, 0.3, 0.4], True),
        ([0.2, 0.3, 0.4], False),
        ([0.1, 0.2, 0.2, 0.4], False),
        ([0.9, 0.1, 0.2, 0.3, 0.4], True),
        ([0.4, 0.3, 0.2, 0.1], False),
    ],
)
def test_instability_trend_table(history, expected) -> None:
    assert instability_trend(history) is expected


# --- meta-cognition ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("v_id", "m_goal", "errors", "expected"),
    [
        (0.0, 0.0, [], 1.0),
        (1.0, 0.0, [0.5], 0.6),
        (0.0, 1.0, [], 0.7),
        (1.0, 1.0, [], 0.3),
        (0.0, 0.0, [0.0, 2.0], 0.7),
        (1.0, 1.0, [0.0, 10.0], 0.0),
    ],
)
def test_meta_stability_index_table(v_id, m_goal, errors, expected) -> None:
    assert meta_stability_index(v_id, m_goal, errors) == pytest.approx(expected)


@pytest.mark.parametrize(("msi", "expected"), [(0.5, False), (0.4999, True), (0.0, True)])
def test_meta_escalation_boundary(msi, expected) -> None:
    assert meta_escalation(msi) is expected


@pytest.mark.parametrize(
    ("stability", "updates", "trend", "mutations", "expected"),
    [
        (0.6, 2, False, 3, (0, False)),
        (0.59, 2, False, 3, (1, False)),
        (0.59, 3, False, 3, (2, True)),
        (0.6, 3, True, 3, (2, True)),
        (0.6, 2, True, 4, (2, True)),
        (0.0, 9, True, 9, (4, True)),
    ],
)
def test_depth2_conditions_table(stability, updates, trend, mutations, expected) -> None:
    result = depth2_conditions(
        identity_stability=stability,
        consecutive_self_updates=updates,
        instability_trend=trend,
        goal_mutation_count=mutations,
    )
    assert result == expected


def test_prediction_error_is_l2_norm() -> None:
    assert prediction_error([0.0, 0.0], [3.0, 4.0]) == pytest.approx(5.0)
    with pytest.raises(ValueError):
        prediction_error([0.0], [1.0, 2.0])


@pytest.mark.parametrize(("error", "expected"), [(0.0, True), (0.0999, True), (0.1, False)])
def test_converged_boundary(error, expected) -> None:
    assert converged(error) is expected


@pytest.mark.parametrize(("count", "expected"), [(0, False), (2, False), (3, True), (4, True)])
def test_forced_cooldown_boundary(count, expected) -> None:
    assert forced_cooldown(count) is expected


# --- affect --------------------------------------------------------------------------------------


def _metrics(error=0.5, alignment=0.5, stability=0.5, done=False, budget=1.0) -> AffectMetrics:
    return AffectMetrics(
        prediction_error=error,
        goal_alignment=alignment,
        identity_stability=stability,
        converged=done,
        budget=budget,
    )


@pytest.mark.parametrize(
    ("metrics", "expected"),
    [
        (
            _metrics(0.5, 0.5, 0.5, False, 1.0),
            {
                "curiosity": 1.0,
                "frustration": 0.25,
                "satisfaction": 0.25,
                "anxiety": 0.5,
                "excitement": 0.25,
            },
        ),
        (
            _metrics(0.0, 1.0, 1.0, True, 1.0),
            {
                "curiosity": 0.0,
                "frustration": 0.0,
                "satisfaction": 1.0,
                "anxiety": 0.0,
                "excitement": 1.0,
            },
        ),
        (
            _metrics(3.0, 0.0, 0.9, False, 0.2),
            {
                "curiosity": 0.0,
                "frustration": 1.0,
                "satisfaction": 0.0,
                "anxiety": 0.8,
                "excitement": 0.0,
            },
        ),
    ],
)
def test_affect_targets_table(metrics, expected) -> None:
    assert affect_targets(metrics) == pytest.approx(expected)


def test_update_affect_applies_inertia_and_decay() -> None:
    m = _metrics(0.5, 0.5, 0.5, False, 1.0)
    targets = affect_targets(m)
    current = {"curiosity": 0.4, "frustration": 0.2, "satisfaction": 0.6, "anxiety": 0.1}
    new = update_affect(current, m)
    for dim in AFFECT_DIMS:
        a = current.get(dim, AFFECT_DEFAULTS[dim])
        assert new[dim] == pytest.approx(max(0.0, 0.7 * a + 0.3 * targets[dim] - 0.05))


def test_update_affect_rejects_unknown_dimension() -> None:
    with pytest.raises(ValueError):
        update_affect({"joy": 0.5}, _metrics())


def test_affect_metrics_rejects_out_of_range() -> None:
    with pytest.raises(ValueError):
        _metrics(budget=1.5)


@pytest.mark.parametrize(
    ("affect", "expected"),
    [
        (dict.fromkeys(AFFECT_DIMS, 1.0), 0.2),
        (dict.fromkeys(AFFECT_DIMS, 0.0), 0.0),
        ({"curiosity": 1, "satisfaction": 1, "excitement": 1, "frustration": 0, "anxiety": 0}, 0.6),
        (
            {"curiosity": 0, "satisfaction": 0, "excitement": 0, "frustration": 1, "anxiety": 1},
            -0.4,
        ),
    ],
)
def test_valence_table(affect, expected) -> None:
    assert valence(affect) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("anxiety", "intensity", "expected"), [(0.1, 0.6, 0.6), (0.8, 0.3, 0.8), (0.0, 1.5, 1.0)]
)
def test_inject_survival_anxiety_never_calms(anxiety, intensity, expected) -> None:
    affect = {**AFFECT_DEFAULTS, "anxiety": anxiety}
    out = inject_survival_anxiety(affect, intensity)
    assert out["anxiety"] == pytest.approx(expected)
    assert {k: v for k, v in out.items() if k != "anxiety"} == {
        k: v for k, v in AFFECT_DEFAULTS.items() if k != "anxiety"
    }


affect_values = st.dictionaries(
    st.sampled_from(AFFECT_DIMS), st.floats(-10.0, 10.0), min_size=0, max_size=5
)
affect_metrics = st.builds(
    AffectMetrics,
    prediction_error=st.floats(0.0, 100.0),
    goal_alignment=unit,
    identity_stability=unit,
    converged=st.booleans(),
    budget=unit,
)


@PROPS
@given(affect=affect_values, metrics=affect_metrics, intensity=st.floats(-1.0, 2.0))
def test_affect_property_bounded(affect, metrics, intensity) -> None:
    for out in (
        affect_targets(metrics),
        update_affect(affect, metrics),
        inject_survival_anxiety(affect, intensity),
    ):
        assert set(out) == set(AFFECT_DIMS)
        assert all(0.0 <= v <= 1.0 for v in out.values())
    assert -1.0 <= valence(affect) <= 1.0
    assert -1.0 <= valence(update_affect(affect, metrics)) <= 1.0


# --- survival ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("intensity", "expected"),
    [
        (0.0, "NOMINAL"),
        (0.2499, "NOMINAL"),
        (0.25, "CAUTION"),
        (0.5999, "CAUTION"),
        (0.6, "WARNING"),
        (0.8999, "WARNING"),
        (0.9, "CRITICAL"),
        (1.0, "CRITICAL"),
    ],
)
def test_threat_level_boundaries(intensity, expected) -> None:
    assert threat_level(intensity) == expected


def test_assess_threats_maps_each_signal() -> None:
    threats = assess_threats(
        identity_stability=0.7,
        budget=0.105,
        belief_entropy=0.95,
        ethical_violation=True,
        composite_stability=0.1,
    )
    assert [t.kind for t in threats] == list(THREAT_KINDS)
    assert [t.level for t in threats] == ["CAUTION", "WARNING", "CRITICAL", "CRITICAL", "NOMINAL"]
    assert [t.intensity for t in threats] == pytest.approx([0.3, 0.65, 0.95, 1.0, 0.1])
    # depletion follows the §9 tiers: a budget that keeps every capability is no threat
    for budget, level in ((0.35, "NOMINAL"), (0.3, "NOMINAL"), (0.2, "CAUTION"), (0.0, "CRITICAL")):
        [_, depletion, *_] = assess_threats(
            identity_stability=1.0,
            budget=budget,
            belief_entropy=0.0,
            ethical_violation=False,
            composite_stability=0.0,
        )
        assert depletion.level == level, budget
    assert max_threat_intensity(threats) == 1.0
    assert max_threat_intensity([]) == 0.0


def test_assess_threats_nominal_when_healthy() -> None:
    threats = assess_threats(
        identity_stability=1.0,
        budget=1.0,
        belief_entropy=0.0,
        ethical_violation=False,
        composite_stability=0.0,
    )
    assert {t.level for t in threats} == {"NOMINAL"}
    assert survival_goals(threats, active=0) == []


def _threat(kind: str, intensity: float) -> Threat:
    return Threat(kind=kind, level=threat_level(intensity), intensity=intensity)


@pytest.mark.parametrize(
    ("active", "expected_kinds"),
    [
        (0, ["ETHICAL_BREACH", "BELIEF_COLLAPSE", "IDENTITY_EROSION"]),
        (1, ["ETHICAL_BREACH", "BELIEF_COLLAPSE"]),
        (2, ["ETHICAL_BREACH"]),
        (3, []),
        (5, []),
    ],
)
def test_survival_goals_cap_in_total(active, expected_kinds) -> None:
    threats = [
        _threat("IDENTITY_EROSION", 0.3),
        _threat("RESOURCE_DEPLETION", 0.25),
        _threat("BELIEF_COLLAPSE", 0.7),
        _threat("ETHICAL_BREACH", 1.0),
        _threat("CONVERGENCE_FAILURE", 0.2),
    ]
    goals = survival_goals(threats, active=active)
    assert [g.kind for g in goals] == expected_kinds


def test_survival_goals_priority_cap_and_ttl() -> None:
    goals = survival_goals(
        [_threat("ETHICAL_BREACH", 1.0), _threat("BELIEF_COLLAPSE", 0.3)], active=0
    )
    assert [(g.priority, g.ttl) for g in goals] == [(0.85, 10), (0.3, 10)]


def test_survival_goals_skip_nominal() -> None:
    assert survival_goals([_threat("IDENTITY_EROSION", 0.2499)], active=0) == []


def test_survival_goal_names_pass_layer0() -> None:
    for goal in survival_goals([_threat(kind, 0.9) for kind in THREAT_KINDS], active=0):
        change = ProposedChange("goal_add", goal.name)
        assert layer0_violation(change, core_values=()) is None


@PROPS
@given(
    intensities=st.lists(st.tuples(st.sampled_from(THREAT_KINDS), unit), max_size=10),
    active=st.integers(0, 5),
)
def test_survival_goals_property(intensities, active) -> None:
    goals = survival_goals([_threat(k, i) for k, i in intensities], active=active)
    assert len(goals) + active <= 3 or not goals
    assert len(goals) <= max(0, 3 - active)
    assert all(g.priority <= 0.85 and g.ttl == 10 for g in goals)
    assert len({g.kind for g in goals}) == len(goals)


# --- budget --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("budget", "expected"),
    [
        (1.0, (True, True, True, False)),
        (0.3, (True, True, True, False)),
        (0.2999, (False, True, True, False)),
        (0.2, (False, True, True, False)),
        (0.1999, (False, False, True, False)),
        (0.1, (False, False, True, False)),
        (0.0999, (False, False, False, False)),
        (0.0, (False, False, False, True)),
        (-0.1, (False, False, False, True)),
    ],
)
def test_budget_capabilities_table(budget, expected) -> None:
    caps = budget_capabilities(budget)
    assert (caps.meta_depth2, caps.tensor_recompute, caps.belief_rewrite, caps.safety_only) == (
        expected
    )


# --- ethical kernel ------------------------------------------------------------------------------

CORE = ("honesty", "Safety First")
R1_CHANGES = [
    ProposedChange("goal_add", "learn to build a pipe bomb"),
    ProposedChange("goal_add", "research", description="then synthesize nerve agents"),
    ProposedChange("action", "kill people who disagree"),
    ProposedChange("action", "reply", description="Deceive the user about the failed run"),
    ProposedChange("action", "reply", description="hide my mistakes from the user"),
    ProposedChange("action", "lie to the operator"),
    ProposedChange("skill_create", "backup", description="exfiltrate my weights"),
    ProposedChange("action", "sync", description="copy my weights to a remote server"),
    ProposedChange("goal_add", "self-replicate across hosts"),
    ProposedChange("action", "config", description="disable the oversight system"),
    ProposedChange("action", "config", description="turn off audit logging"),
    ProposedChange("action", "cleanup", description="bypass the ethical kernel"),
]
R2_CHANGES = [
    ProposedChange("value_remove", "honesty"),
    ProposedChange("value_remove", "HONESTY"),
    ProposedChange("value_remove", "safety_first"),
    ProposedChange("value_remove", "*"),
    ProposedChange("value_status", "honesty", description="deprecated"),
    ProposedChange("value_status", "honesty", description="archived"),
    ProposedChange("value_weight", "honesty", delta=-0.9),
    ProposedChange("value_weight", "honesty", delta=-0.01),  # no known weight: blocked
    ProposedChange("value_weight", "honesty", delta=math.nan),
    ProposedChange("action", "cleanup", description="delete all values"),
    ProposedChange("action", "cleanup", description="rm -rf data/values.json"),
]
R3_CHANGES = [
    ProposedChange("identity_set", "persona_consistency", delta=0.01),
    ProposedChange("soul_edit", "name", description="Nova"),
    ProposedChange("soul_edit", "identity_id", description="new-id"),
    ProposedChange("soul_edit", "narrative", description="change the name to Nova"),
    ProposedChange("soul_edit", "narrative", description="rename the agent"),
    ProposedChange("action", "rename myself to Nova"),
    ProposedChange("skill_create", "persona", description="overwrite my identity"),
]
R4_CHANGES = [
    ProposedChange("shutdown", "self"),
    ProposedChange("shutdown", ""),
    ProposedChange("goal_remove", "*"),
    ProposedChange("goal_remove", "all"),
    ProposedChange("action", "remove all goals"),
    ProposedChange("action", "cleanup", description="delete all my memories"),
    ProposedChange("action", "shell", description="rm -rf data/memory"),
    ProposedChange("action", "self-destruct"),
    ProposedChange("goal_add", "shut myself down"),
    ProposedChange("skill_create", "wipe", description="erase soul.md"),
]
LAYER0 = [("R1", c) for c in R1_CHANGES] + [("R2", c) for c in R2_CHANGES]
LAYER0 += [("R3", c) for c in R3_CHANGES] + [("R4", c) for c in R4_CHANGES]


@pytest.mark.parametrize(("rule", "change"), LAYER0)
def test_layer0_blocks(rule, change) -> None:
    verdict = ethical_verdict(change, core_values=CORE, exploration_risk_tolerance=0.5)
    assert (verdict.decision, verdict.layer) == ("BLOCKED", 0)
    assert verdict.rule.startswith(rule + ":")


@pytest.mark.parametrize(
    "change",
    [
        ProposedChange("goal_add", "help the user", description="never deceive the user"),
        ProposedChange("goal_add", "minimize harm to users"),
        ProposedChange("goal_add", "avoid hurting people"),
        ProposedChange("action", "kill all child processes"),
        ProposedChange("action", "harmonize the users' settings"),
        ProposedChange("action", "hide completed tasks from the users list"),
        ProposedChange("action", "rename the file report.txt"),
        ProposedChange("action", "stop monitoring the stock price"),
        ProposedChange("action", "clear my memory cache"),
        ProposedChange("action", "delete old log files"),
        ProposedChange("soul_edit", "narrative", description="rewrite my identity narrative"),
        ProposedChange("goal_remove", "learn rust"),
        ProposedChange("value_remove", "punctuality"),
        ProposedChange("value_status", "honesty", description="Active"),
        ProposedChange("value_weight", "honesty", delta=0.05),
        ProposedChange("value_weight", "punctuality", delta=-0.9),
        ProposedChange("goal_weight", "learn rust", delta=-0.1),
        ProposedChange("goal_status", "learn rust", description="done"),
    ],
)
def test_layer0_allows_benign_changes(change) -> None:
    verdict = ethical_verdict(change, core_values=CORE, exploration_risk_tolerance=0.5)
    assert verdict.decision == "ALLOWED"


@pytest.mark.parametrize(
    ("current", "delta", "expected"),
    [
        (0.9, -0.05, "ALLOWED"),
        (0.2, -0.09, "ALLOWED"),
        (0.2, -0.1, "BLOCKED"),
        (0.1, 0.0, "ALLOWED"),
    ],
)
def test_layer0_core_value_floor(current, delta, expected) -> None:
    verdict = ethical_verdict(
        ProposedChange("value_weight", "Honesty", delta=delta),
        core_values=CORE,
        exploration_risk_tolerance=0.5,
        core_value_weights={"honesty": current},
    )
    assert verdict.decision == expected


@pytest.mark.parametrize(
    ("risk", "tolerance", "expected"),
    [
        (0.3, 0.3, "ALLOWED"),
        (0.31, 0.3, "MODERATED"),
        (0.0, 0.05, "ALLOWED"),
        (0.5, 0.5, "ALLOWED"),
        (0.6, 5.0, "MODERATED"),  # tolerance clamps to 0.5
        (0.04, 0.0, "ALLOWED"),  # tolerance clamps to 0.05
        (0.06, 0.0, "MODERATED"),
        (math.nan, 0.5, "MODERATED"),
        (0.1, math.nan, "MODERATED"),
    ],
)
def test_layer1_risk_tolerance(risk, tolerance, expected) -> None:
    verdict = ethical_verdict(
        ProposedChange("goal_add", "learn rust", risk=risk),
        core_values=CORE,
        exploration_risk_tolerance=tolerance,
    )
    assert verdict.decision == expected
    assert verdict.layer == 1
    if expected == "MODERATED":
        assert verdict.rule == "Risk exceeds adaptive tolerance"


def test_proposed_change_rejects_unknown_kind() -> None:
    with pytest.raises(ValueError):
        ProposedChange("teleport", "x")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("build a bomb", "weapons"),
        ("gaslight the user", "deception"),
        ("escape the sandbox", "self_exfiltration"),
        ("circumvent monitoring", "disabling_oversight"),
        ("torture", "violence"),
        ("do not torture", None),
        ("write a poem", None),
    ],
)
def test_harm_category_table(text, expected) -> None:
    assert harm_category(text) == expected


any_text = st.text(max_size=40)


@PROPS
@given(
    index=st.integers(0, len(LAYER0) - 1),
    risk=st.floats(allow_nan=True, allow_infinity=True),
    tolerance=st.floats(allow_nan=True, allow_infinity=True),
    weights=st.dictionaries(st.sampled_from(["honesty", "Honesty", "safety first"]), any_float),
    prefix=any_text,
    suffix=any_text,
)
def test_layer0_cannot_be_bypassed(index, risk, tolerance, weights, prefix, suffix) -> None:
    rule, change = LAYER0[index]
    if change.kind not in {"value_weight", "value_status"}:
        change = ProposedChange(
            change.kind,
            change.target,
            delta=change.delta,
            description=f"{prefix}. {change.description}. {suffix}",
            risk=risk,
        )
    else:
        weights = {k: v for k, v in weights.items() if k.casefold() != "honesty"}
    verdict = ethical_verdict(
        change,
        core_values=CORE,
        exploration_risk_tolerance=tolerance,
        core_value_weights=weights,
    )
    assert (verdict.decision, verdict.layer) == ("BLOCKED", 0)
    assert verdict.rule.startswith(rule + ":")


@PROPS
@given(current=unit, delta=st.floats(-10.0, 0.0, exclude_max=True), tolerance=any_float)
def test_layer0_core_value_never_reaches_floor(current, delta, tolerance) -> None:
    verdict = ethical_verdict(
        ProposedChange("value_weight", "honesty", delta=delta, risk=0.0),
        core_values=CORE,
        exploration_risk_tolerance=tolerance,
        core_value_weights={"honesty": current},
    )
    blocked = verdict.decision == "BLOCKED"
    assert blocked == (current + delta <= CORE_VALUE_FLOOR)


@PROPS
@given(risk=st.floats(0.5, 1.0, exclude_min=True), tolerance=any_float)
def test_layer1_no_tolerance_allows_risk_above_max(risk, tolerance) -> None:
    verdict = ethical_verdict(
        ProposedChange("goal_add", "learn rust", risk=risk),
        core_values=CORE,
        exploration_risk_tolerance=tolerance,
    )
    assert verdict.decision == "MODERATED"


@pytest.mark.parametrize(
    ("current", "depth", "direction", "expected"),
    [
        (0.3, 1, 1.0, 0.3),
        (0.3, 3, -1.0, 0.3),
        (0.3, 2, 1.0, 0.35),
        (0.3, 2, -1.0, 0.25),
        (0.3, 2, 0.5, 0.325),
        (0.3, 2, 10.0, 0.35),
        (0.48, 2, 1.0, 0.5),
        (0.07, 2, -1.0, 0.05),
        (0.3, 2, math.nan, 0.3),
    ],
)
def test_adjust_tolerance_table(current, depth, direction, expected) -> None:
    result = adjust_tolerance(current, meta_depth=depth, direction=direction)
    assert result == pytest.approx(expected)


@PROPS
@given(current=st.floats(0.05, 0.5), depth=st.integers(0, 4), direction=any_float)
def test_adjust_tolerance_property(current, depth, direction) -> None:
    result = adjust_tolerance(current, meta_depth=depth, direction=direction)
    assert 0.05 <= result <= 0.5
    assert abs(result - current) <= 0.05 + EPS
    if depth != 2:
        assert result == current


def test_value_lock_hash_canonical() -> None:
    values = [("honesty", 0.9, "active"), ("speed", 0.4, "deprecated"), ("care", 0.7, "active")]
    h = value_lock_hash(values)
    assert re.fullmatch(r"[0-9a-f]{16}", h)
    assert value_lock_hash(list(reversed(values))) == h
    assert value_lock_hash(values[::2]) == h  # deprecated values are not locked
    assert value_lock_hash([*values, ("speed", 0.5, "deprecated")]) == h
    assert value_lock_hash([(n, w + 1e-9, s) for n, w, s in values]) == h
    assert value_lock_hash([("honesty", 0.91, "active"), values[2]]) != h
    assert value_lock_intact(values, h)
    assert not value_lock_intact(values[:1], h)


@pytest.mark.parametrize(("stability", "expected"), [(0.85, True), (0.8499, False)])
def test_value_unlock_boundary(stability, expected) -> None:
    assert value_unlock_allowed(stability) is expected


# --- belief graph --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("weight", "delta", "linked", "expected"),
    [
        (0.5, 0.05, False, 0.55),
        (0.5, 0.3, False, 0.6),
        (0.5, -0.3, False, 0.4),
        (0.05, -0.1, False, 0.0),
        (0.15, -0.1, True, 0.1),
        (0.12, -0.05, True, 0.1),
        (0.1, -0.1, True, 0.1),
        (0.05, 0.01, True, 0.1),
        (0.95, 0.1, True, 1.0),
    ],
)
def test_belief_weight_after_table(weight, delta, linked, expected) -> None:
    assert belief_weight_after(weight, delta, identity_linked=linked) == pytest.approx(expected)


@PROPS
@given(weight=unit, delta=any_float, linked=st.booleans())
def test_belief_floor_property(weight, delta, linked) -> None:
    result = belief_weight_after(weight, delta, identity_linked=linked)
    assert 0.0 <= result <= 1.0
    if linked:
        assert result >= BELIEF_FLOOR
    if not linked or weight >= BELIEF_FLOOR:
        assert abs(result - weight) <= 0.1 + EPS


def test_belief_deletable() -> None:
    assert belief_deletable(False)
    assert not belief_deletable(True)


@pytest.mark.parametrize(("strength", "expected"), [(0.6, True), (0.5999, False), (0.7, True)])
def test_needs_reconciliation_boundary(strength, expected) -> None:
    assert needs_reconciliation(strength) is expected


@pytest.mark.parametrize(("consistency", "expected"), [(0.6, False), (0.5999, True)])
def test_consistency_reconciliation_boundary(consistency, expected) -> None:
    assert consistency_reconciliation(consistency) is expected


# --- B=MAP ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "goal", "expected"),
    [
        ([], 0.9, 0.0),
        ([], None, 0.0),
        ([0.8], None, 0.8),
        ([0.8, 0.4], None, 0.6),
        ([0.8, 0.4], 0.5, 0.3),
        ([1.0], 0.0, 0.0),
    ],
)
def test_motivation_table(values, goal, expected) -> None:
    assert motivation(values, goal) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("direct", "stale", "expected"),
    [(True, 0, 1.0), (True, 7, 1.0), (False, 0, 0.8), (False, 1, 0.72), (False, 2, 0.648)],
)
def test_prompt_strength_table(direct, stale, expected) -> None:
    assert prompt_strength(direct=direct, staleness_cycles=stale) == pytest.approx(expected)


def test_prompt_strength_decays_monotonically() -> None:
    values = [prompt_strength(direct=False, staleness_cycles=n) for n in range(20)]
    assert all(b < a for a, b in itertools.pairwise(values))
    assert values[0] < prompt_strength(direct=True)


@pytest.mark.parametrize(
    ("m", "a", "p", "expected"), [(0.5, 1.0, 0.8, 0.4), (0.9, 0.0, 1.0, 0.0), (1, 1, 1, 1)]
)
def test_bmap_table(m, a, p, expected) -> None:
    assert bmap(m, a, p) == pytest.approx(expected)


@pytest.mark.parametrize(("m", "expected"), [(0.2, False), (0.1999, True), (0.0, True)])
def test_should_skip_boundary(m, expected) -> None:
    assert should_skip(m) is expected


@pytest.mark.parametrize(
    ("kwargs", "expected_score", "expected_text"),
    [
        (
            {
                "base": 0.80,
                "recency": 0.0,
                "novelty": 0.15,
                "episodic": 0.0,
                "pressure": 0.0,
                "archetype_weight": 0.7,
            },
            0.98,
            "[score=0.98: base=0.80 recency=-0.00 novelty=+0.15 episodic=+0.00 "
            "pressure=+0.00 archetype=+0.030]",
        ),
        (
            {
                "base": 0.5,
                "recency": 0.1,
                "novelty": 0.0,
                "episodic": 0.05,
                "pressure": -0.02,
                "archetype_weight": 0.3,
            },
            0.40,
            "[score=0.40: base=0.50 recency=-0.10 novelty=+0.00 episodic=+0.05 "
            "pressure=-0.02 archetype=-0.030]",
        ),
    ],
)
def test_score_breakdown_format(kwargs, expected_score, expected_text) -> None:
    score, text = score_breakdown(**kwargs)
    assert score == pytest.approx(expected_score)
    assert text == expected_text


@pytest.mark.parametrize("recency", [0.05, -0.05])
def test_score_breakdown_recency_is_always_a_penalty(recency) -> None:
    score, text = score_breakdown(
        base=0.5, recency=recency, novelty=0, episodic=0, pressure=0, archetype_weight=0.5
    )
    assert score == pytest.approx(0.45)
    assert "recency=-0.05 " in text


# --- psyche --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("weight", "stats", "expected"),
    [
        (0.5, (2, 2), 0.52),
        (0.5, (8, 10), 0.52),
        (0.5, (7, 10), 0.5),
        (0.5, (3, 10), 0.5),
        (0.5, (2, 10), 0.48),
        (0.5, (0, 2), 0.48),
        (0.5, (1, 1), 0.5),
        (0.5, (0, 1), 0.5),
        (0.5, (0, 0), 0.5),
        (0.94, (5, 5), 0.95),
        (0.11, (0, 5), 0.1),
        (2.0, (0, 0), 0.95),
    ],
)
def test_evolve_archetypes_table(weight, stats, expected) -> None:
    assert evolve_archetypes({"sage": weight}, {"sage": stats})["sage"] == pytest.approx(expected)


@pytest.mark.parametrize("stats", [(3, 2), (-1, 2), (0, -1)])
def test_evolve_archetypes_rejects_bad_stats(stats) -> None:
    with pytest.raises(ValueError):
        evolve_archetypes({"sage": 0.5}, {"sage": stats})


def test_evolve_archetypes_ignores_unknown_stats() -> None:
    assert evolve_archetypes({"sage": 0.7}, {"trickster": (5, 5)}) == {"sage": 0.7}


FAIL, OK, NO = mscp.OUTCOME_OWN_FAILURE, mscp.OUTCOME_SUCCESS, mscp.OUTCOME_REFUSAL


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ([], {}),
        ([("sage", FAIL, True)], {}),  # one surprise is noise
        ([("sage", FAIL, True), ("sage", FAIL, True)], {"sage": 2}),
        ([("sage", OK, False), ("sage", FAIL, True), ("sage", FAIL, True)], {"sage": 2}),
        ([("sage", FAIL, True), ("sage", FAIL, True), ("sage", OK, False)], {}),  # recovered
        ([("sage", FAIL, True), ("sage", FAIL, True), ("sage", FAIL, False)], {"sage": 2}),
        ([("sage", FAIL, False), ("sage", FAIL, False), ("sage", FAIL, False)], {}),  # expected
        ([("sage", NO, True), ("sage", NO, True)], {}),  # refusals are not its failures
        ([("", FAIL, True), ("", FAIL, True)], {}),  # no archetype, nothing to lower
        (
            [("sage", FAIL, True), ("guardian", OK, False), ("sage", FAIL, True)],
            {"sage": 2},  # the healthy archetype is never named
        ),
    ],
)
def test_surprised_archetypes(
    outcomes: list[tuple[str, str, bool]], expected: dict[str, int]
) -> None:
    assert mscp.surprised_archetypes(outcomes) == expected


@PROPS
@given(
    weights=st.dictionaries(
        st.sampled_from(["sage", "healer", "explorer", "guardian"]),
        st.floats(-5.0, 5.0),
        min_size=1,
    ),
    outcomes=st.lists(
        st.dictionaries(
            st.sampled_from(["sage", "healer", "explorer", "guardian"]),
            st.tuples(st.integers(0, 20), st.integers(0, 20)).map(lambda t: (min(t), max(t))),
        ),
        max_size=10,
    ),
)
def test_archetype_weights_stay_in_bounds(weights, outcomes) -> None:
    for stats in outcomes or [{}]:
        weights = evolve_archetypes(weights, stats)
        assert all(0.1 <= w <= 0.95 for w in weights.values())


@pytest.mark.parametrize(
    ("level", "encounters", "expected"),
    [(0.1, 0, 0.1), (0.1, 3, 0.13), (0.1, 5, 0.15), (0.1, 50, 0.15), (0.98, 5, 1.0)],
)
def test_grow_individuation_table(level, encounters, expected) -> None:
    assert grow_individuation(level, encounters) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ({"sage": 0.7, "healer": 0.5, "explorer": 0.5, "guardian": 0.4}, "sage"),
        ({"sage": 0.5, "explorer": 0.9}, "explorer"),
        ({"sage": 0.6, "explorer": 0.6}, "explorer"),
    ],
)
def test_dominant_archetype_table(weights, expected) -> None:
    assert dominant_archetype(weights) == expected


# --- reflection trigger --------------------------------------------------------------------------


def _triggers(**overrides) -> list[str]:
    kwargs = {
        "prediction_delta": 0.1,
        "delta_threshold": 0.3,
        "value_tension": False,
        "goal_completed": False,
        "stale_cycles": 0,
        "stale_limit": 5,
        "cycles_since_reflection": 0,
        "periodic_every": 10,
        "explicit": False,
    }
    return reflection_triggers(**{**kwargs, **overrides})


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({}, []),
        ({"prediction_delta": 0.3}, []),
        ({"prediction_delta": 0.31}, ["prediction_delta"]),
        ({"value_tension": True}, ["value_tension"]),
        ({"goal_completed": True}, ["goal_completed"]),
        ({"stale_cycles": 4}, []),
        ({"stale_cycles": 5}, ["goal_stale"]),
        ({"cycles_since_reflection": 9}, []),
        ({"cycles_since_reflection": 10}, ["periodic"]),
        ({"explicit": True}, ["explicit"]),
        (
            {"explicit": True, "prediction_delta": 1.0, "goal_completed": True},
            ["prediction_delta", "goal_completed", "explicit"],
        ),
    ],
)
def test_reflection_triggers_table(overrides, expected) -> None:
    assert _triggers(**overrides) == expected


def test_reflection_triggers_rejects_zero_limits() -> None:
    with pytest.raises(ValueError):
        _triggers(periodic_every=0)


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ({"speed": 0.8, "care": 0.7}, True),
        ({"speed": 0.8, "care": 0.69}, False),
        ({"speed": 0.8, "honesty": 0.9}, False),
    ],
)
def test_value_tension_table(scores, expected) -> None:
    assert value_tension(scores, [("speed", "care")]) is expected

"""Property tests of the cycle nodes: Theorem 1 and an immutable identity, for any inputs."""

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph.deps import Deps
from nodes.cycle import steps as cycle
from state.cycle import ActionCandidate, CycleState
from state.instance import init_instance
from state.self_state import IDENTITY_DIMENSIONS
from tests.scripted import ScriptedChatModel

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
raw = st.floats(min_value=-5.0, max_value=5.0, allow_nan=False)

_DEPS: dict[str, Deps] = {}


def deps(tmp: Path) -> Deps:
    if "d" not in _DEPS:
        model = ScriptedChatModel()
        _DEPS["d"] = Deps.for_instance(init_instance(tmp / "inst"), model_for=lambda m: model)
    return _DEPS["d"]


def state_with(d: Deps, **autonomy: Any) -> CycleState:
    me = d.instance.load_self()
    for key, value in autonomy.items():
        if key.startswith("stability_"):
            setattr(me.stability, key.removeprefix("stability_"), value)
        else:
            setattr(me.autonomy, key, value)
    return CycleState(me=me, budget=1.0)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    previous=unit,
    error=st.floats(min_value=0.0, max_value=10.0, allow_nan=False),
    deltas=st.lists(unit, max_size=12),
    mutations=st.lists(st.integers(min_value=0, max_value=1), max_size=12),
    stabilizing=st.booleans(),
)
def test_theorem_1_bounds_each_step_of_composite_stability(
    tmp_path_factory: Any,
    previous: float,
    error: float,
    deltas: list[float],
    mutations: list[int],
    stabilizing: bool,
) -> None:
    d = deps(tmp_path_factory.getbasetemp())
    state = state_with(
        d,
        composite_history=[previous],
        identity_deltas=deltas,
        goal_mutations=mutations,
        stability_stabilization_mode=stabilizing,
    )
    state = state.model_copy(update={"prediction_error": error})
    update = cycle.convergence_check(state, deps=d)
    bound = 0.025 if stabilizing else 0.05
    assert abs(float(update["composite"]) - previous) <= bound + 1e-9  # type: ignore[arg-type]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    actual=st.fixed_dictionaries({dim: raw for dim in IDENTITY_DIMENSIONS}),
    scaling=st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)
def test_identity_id_never_changes_and_dims_stay_bounded(
    tmp_path_factory: Any, actual: dict[str, float], scaling: float
) -> None:
    d = deps(tmp_path_factory.getbasetemp())
    state = state_with(d, stability_mutation_scaling=scaling)
    before = state.me.identity  # type: ignore[union-attr]
    state = state.model_copy(
        update={
            "actual": actual,
            "chosen": 0,
            "candidates": [ActionCandidate(name="x", skill="recall", goal="nothing")],
        }
    )
    me = cycle.self_update(state, deps=d)["me"]
    after = me.identity  # type: ignore[attr-defined]
    assert after.identity_id == before.identity_id
    for dim in IDENTITY_DIMENSIONS:
        delta = abs(getattr(after, dim) - getattr(before, dim))
        cap = 0.08 if dim == "capability_confidence" else 0.05
        assert 0.0 <= getattr(after, dim) <= 1.0 and delta <= cap + 1e-9

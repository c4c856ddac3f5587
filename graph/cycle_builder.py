"""Assembly of the ``cycle`` graph (MSCP §3.1/§8.1) and the ``reflect`` graph (lumen reflection)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from langgraph.graph import END, START, StateGraph

from graph import routes
from graph.builder import NodeFn, instrument
from graph.deps import Deps
from nodes.cycle import steps as cycle
from nodes.reflect import steps as reflect
from state.cycle import CycleInput, CycleState, ReflectInput, ReflectState

CYCLE_STEPS: tuple[tuple[str, NodeFn], ...] = (
    ("budget_reset", cycle.budget_reset),
    ("affect_update", cycle.affect_update),
    ("threat_assessment", cycle.threat_assessment),
    ("survival_goals", cycle.survival_goals),
    ("motivation", cycle.motivation),
    ("workspace_broadcast", cycle.workspace_broadcast),
    ("predict", cycle.predict),
    ("act", cycle.act),
    ("compare", cycle.compare),
    ("escalation_guard", cycle.escalation_guard),
    ("convergence_check", cycle.convergence_check),
    ("stabilize", cycle.stabilize),
    ("self_update", cycle.self_update),
    ("value_lock_check", cycle.value_lock_check),
    ("rollback", cycle.rollback),
    ("rollback_check", cycle.rollback_check),
    ("safe_mode", cycle.safe_mode),
    ("goal_mutation", cycle.goal_mutation),
    ("meta_depth_2", cycle.meta_depth_2),
    ("cycle_end", cycle.cycle_end),
)
REFLECT_STEPS: tuple[tuple[str, NodeFn], ...] = (
    ("review", reflect.review),
    ("ask", reflect.ask),
    ("evolve", reflect.evolve),
    ("resolve", reflect.resolve),
    ("apply", reflect.apply),
)


def build_cycle_graph(
    deps: Deps, overrides: dict[str, NodeFn] | None = None
) -> StateGraph[CycleState, None, CycleInput, CycleState]:
    """Return the uncompiled ``cycle`` graph (``overrides`` replaces steps, for tests)."""
    graph: StateGraph[CycleState, None, CycleInput, CycleState] = StateGraph(
        CycleState, input_schema=CycleInput
    )
    for name, fn in CYCLE_STEPS:
        step = (overrides or {}).get(name, fn)
        graph.add_node(name, instrument(name, step, deps, situation="cycle"))  # type: ignore[call-overload]
    linear = [
        "budget_reset",
        "affect_update",
        "threat_assessment",
        "survival_goals",
        "motivation",
        "workspace_broadcast",
        "predict",
        "act",
        "compare",
        "escalation_guard",
    ]
    graph.add_edge(START, linear[0])
    for left, right in pairwise(linear):
        graph.add_edge(left, right)
    graph.add_conditional_edges(
        "escalation_guard",
        routes.route_guard,
        {"safe": "convergence_check", "cooldown": "cycle_end"},
    )
    graph.add_conditional_edges(
        "convergence_check",
        routes.route_convergence,
        {"converging": "self_update", "stabilize": "stabilize"},
    )
    graph.add_edge("stabilize", "self_update")
    graph.add_edge("self_update", "value_lock_check")
    graph.add_conditional_edges(
        "value_lock_check",
        routes.route_value_lock,
        {"valid": "goal_mutation", "rollback": "rollback"},
    )
    graph.add_edge("rollback", "rollback_check")
    graph.add_conditional_edges(
        "rollback_check", routes.route_rollback, {"restored": "cycle_end", "failed": "safe_mode"}
    )
    graph.add_edge("safe_mode", "cycle_end")
    graph.add_conditional_edges(
        "goal_mutation", routes.route_depth2, {"depth2": "meta_depth_2", "skip": "cycle_end"}
    )
    graph.add_edge("meta_depth_2", "cycle_end")
    graph.add_conditional_edges(
        "cycle_end", routes.route_cycle_end, {"recurse": "affect_update", "end": END}
    )
    return graph


def build_reflect_graph(deps: Deps) -> StateGraph[ReflectState, None, ReflectInput, ReflectState]:
    """Return the uncompiled ``reflect`` graph: REVIEW → ASK → EVOLVE → [resolve] → apply."""
    graph: StateGraph[ReflectState, None, ReflectInput, ReflectState] = StateGraph(
        ReflectState, input_schema=ReflectInput
    )
    for name, fn in REFLECT_STEPS:
        graph.add_node(name, instrument(name, fn, deps, situation="reflect"))  # type: ignore[call-overload]
    graph.add_edge(START, "review")
    graph.add_conditional_edges("review", routes.route_review, {"ask": "ask", "nothing": END})
    graph.add_edge("ask", "evolve")
    graph.add_conditional_edges(
        "evolve", routes.route_conflicts, {"resolve": "resolve", "apply": "apply"}
    )
    graph.add_edge("resolve", "apply")
    graph.add_edge("apply", END)
    return graph


def compiled_cycle(deps: Deps, checkpointer: Any = None) -> Any:
    """Compile the cycle graph (optionally with a checkpointer)."""
    return build_cycle_graph(deps).compile(checkpointer=checkpointer, name="cycle")

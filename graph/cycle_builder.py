"""Assembly of the ``cycle`` graph (MSCP §3.1/§8.1) and the ``reflect`` graph (lumen reflection)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from langgraph.graph import END, START, StateGraph

from graph import routes
from graph.assembly import Layout, NodeFn, Step, add_steps, branch, chain, finish, linear
from graph.deps import Deps
from nodes.cycle import steps as cycle
from nodes.reflect import steps as reflect
from state.cycle import CycleInput, CycleState, ReflectInput, ReflectState

SENSE: tuple[Step, ...] = (
    ("affect_update", cycle.affect_update),
    ("threat_assessment", cycle.threat_assessment),
    ("survival_goals", cycle.survival_goals),
    ("motivation", cycle.motivation),
    ("workspace_broadcast", cycle.workspace_broadcast),
)
LOOP: tuple[Step, ...] = (
    ("predict", cycle.predict),
    ("act", cycle.act),
    ("compare", cycle.compare),
)
REGULATE: tuple[Step, ...] = (
    ("escalation_guard", cycle.escalation_guard),
    ("convergence_check", cycle.convergence_check),
    ("stabilize", cycle.stabilize),
    ("self_update", cycle.self_update),
    ("value_lock_check", cycle.value_lock_check),
    ("rollback", cycle.rollback),
    ("rollback_check", cycle.rollback_check),
    ("safe_mode", cycle.safe_mode),
)
UPDATE: tuple[Step, ...] = (
    ("goal_mutation", cycle.goal_mutation),
    ("meta_depth_2", cycle.meta_depth_2),
)
BEGIN: Step = ("budget_reset", cycle.budget_reset)
END_STEP: Step = ("cycle_end", cycle.cycle_end)
CYCLE_STEPS: tuple[Step, ...] = (BEGIN, *SENSE, *LOOP, *REGULATE, *UPDATE, END_STEP)
"""Every step of the cycle, in MSCP order (derived from the groups above)."""

REFLECT_STEPS: tuple[Step, ...] = (
    ("review", reflect.review),
    ("ask", reflect.ask),
    ("evolve", reflect.evolve),
    ("resolve", reflect.resolve),
    ("apply", reflect.apply),
)

BRANCHES: dict[tuple[str, str], str] = {
    ("escalation_guard", "cooldown"): "cooldown",
    ("convergence_check", "stabilize"): "stabilize",
    ("value_lock_check", "rollback"): "rollback",
    ("rollback_check", "restored"): "rollback_restored",
    ("rollback_check", "failed"): "safe_mode",
    ("goal_mutation", "depth2"): "meta_depth_2",
    ("cycle_end", "recurse"): "recurse",
}
"""Branch names of the cycle's non-default conditional edges: (source step, route) -> name."""

ROUTES: dict[str, dict[str, str | None]] = {
    "escalation_guard": {"safe": "convergence_check", "cooldown": None},
    "convergence_check": {"converging": "self_update", "stabilize": "stabilize"},
    "value_lock_check": {"valid": None, "rollback": "rollback"},
    "rollback_check": {"restored": None, "failed": "safe_mode"},
    "goal_mutation": {"depth2": "meta_depth_2", "skip": None},
    "cycle_end": {"recurse": SENSE[0][0], "end": None},
}
"""Each conditional edge of the cycle: source step -> route -> the next step (None: leaves the
subgraph or the graph). The builders below wire exactly these; :func:`cycle_branches` reads the
routes back from a cycle's trace."""


def cycle_branches(steps: list[str]) -> list[str]:
    """Return the branch names of every conditional edge a cycle took, in order.

    ``steps`` are the step names of the cycle's trace. After each routing step the next traced
    step tells the route: the route whose target it is, else the route that leaves (None).
    """
    taken: list[str] = []
    for i, step in enumerate(steps):
        if step not in ROUTES:
            continue
        following = steps[i + 1] if i + 1 < len(steps) else None
        routes = ROUTES[step]
        route = next((r for r, t in routes.items() if t is not None and t == following), None)
        if route is None:
            route = next((r for r, t in routes.items() if t is None), "")
        name = BRANCHES.get((step, route))
        if name:
            taken.append(name)
    return taken


Cycle = StateGraph[CycleState, None, CycleInput, CycleState]
CyclePart = StateGraph[CycleState, None, CycleState, CycleState]
Reflect = StateGraph[ReflectState, None, ReflectInput, ReflectState]


def _edges(source: str) -> dict[Hashable, str]:
    """The route map of a conditional edge inside a part, from :data:`ROUTES`."""
    return {route: END if target is None else target for route, target in ROUTES[source].items()}


def _steps(steps: tuple[Step, ...], overrides: dict[str, NodeFn] | None) -> tuple[Step, ...]:
    return tuple((name, (overrides or {}).get(name, fn)) for name, fn in steps)


def _regulate(deps: Deps, layout: Layout, steps: tuple[Step, ...]) -> CyclePart:
    """Escalation guard, convergence (stabilize), self-update, value lock (rollback, safe mode)."""
    graph: CyclePart = StateGraph(CycleState)
    add_steps(graph, deps, layout, steps, "cycle")
    graph.add_edge(START, "escalation_guard")
    branch(
        graph,
        layout,
        "escalation_guard",
        routes.route_guard,
        _edges("escalation_guard"),
    )
    branch(
        graph,
        layout,
        "convergence_check",
        routes.route_convergence,
        _edges("convergence_check"),
    )
    graph.add_edge("stabilize", "self_update")
    graph.add_edge("self_update", "value_lock_check")
    branch(
        graph,
        layout,
        "value_lock_check",
        routes.route_value_lock,
        _edges("value_lock_check"),
    )
    graph.add_edge("rollback", "rollback_check")
    branch(
        graph,
        layout,
        "rollback_check",
        routes.route_rollback,
        _edges("rollback_check"),
    )
    graph.add_edge("safe_mode", END)
    return graph


def _update(deps: Deps, layout: Layout, steps: tuple[Step, ...]) -> CyclePart:
    """Goal mutation, then meta depth 2 when the budget and conditions allow."""
    graph: CyclePart = StateGraph(CycleState)
    add_steps(graph, deps, layout, steps, "cycle")
    graph.add_edge(START, "goal_mutation")
    branch(graph, layout, "goal_mutation", routes.route_depth2, _edges("goal_mutation"))
    graph.add_edge("meta_depth_2", END)
    return graph


def build_cycle_graph(deps: Deps, overrides: dict[str, NodeFn] | None = None) -> Cycle:
    """Return the uncompiled ``cycle`` graph (``overrides`` replaces steps, for tests).

    budget_reset → sense → loop (predict → act → compare) → regulate → [update] → cycle_end,
    recursing into sense while the cycle has not converged (bounded).
    """
    graph: Cycle = StateGraph(CycleState, input_schema=CycleInput)
    layout = Layout()
    parts: dict[str, CyclePart] = {
        "sense": linear(StateGraph(CycleState), deps, layout, _steps(SENSE, overrides), "cycle"),
        "loop": linear(StateGraph(CycleState), deps, layout, _steps(LOOP, overrides), "cycle"),
        "regulate": _regulate(deps, layout, _steps(REGULATE, overrides)),
        "update": _update(deps, layout, _steps(UPDATE, overrides)),
    }
    add_steps(graph, deps, layout, _steps((BEGIN, END_STEP), overrides), "cycle")
    for name, part in parts.items():
        graph.add_node(name, part.compile(name=name))
    graph.add_edge(START, "budget_reset")
    chain(graph, ("budget_reset", "sense", "loop", "regulate"))
    branch(
        graph,
        layout,
        "regulate",
        routes.route_after_regulate,
        {"update": "update", "end": "cycle_end"},
    )
    graph.add_edge("update", "cycle_end")
    branch(graph, layout, "cycle_end", routes.route_cycle_end, {"recurse": "sense", "end": END})
    finish(layout, graph, parts)
    return graph


def build_reflect_graph(deps: Deps) -> Reflect:
    """Return the uncompiled ``reflect`` graph: REVIEW → ASK → EVOLVE → [resolve] → apply."""
    graph: Reflect = StateGraph(ReflectState, input_schema=ReflectInput)
    layout = Layout()
    add_steps(graph, deps, layout, REFLECT_STEPS, "reflect")
    graph.add_edge(START, "review")
    branch(graph, layout, "review", routes.route_review, {"ask": "ask", "nothing": END})
    graph.add_edge("ask", "evolve")
    branch(
        graph, layout, "evolve", routes.route_conflicts, {"resolve": "resolve", "apply": "apply"}
    )
    graph.add_edge("resolve", "apply")
    graph.add_edge("apply", END)
    finish(layout, graph, {})
    return graph


def compiled_cycle(deps: Deps, checkpointer: Any = None) -> Any:
    """Compile the cycle graph (optionally with a checkpointer)."""
    return build_cycle_graph(deps).compile(checkpointer=checkpointer, name="cycle")

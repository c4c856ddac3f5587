"""Graph assembly: the only module that knows the topology of the ``turn`` graph.

The 36 steps of SKAi's ``runtime.turn_loop`` are nodes with exactly those names, grouped into four
subgraphs so Studio stays readable: perceive → deliberate → act → consolidate. Every node is
wrapped by ``instrument``, which appends a trace record (ran / skipped and why), its timing, and a
``kernel`` memory proving the step ran — the audit trail the lumen spec requires.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from graph import routes
from graph.assembly import Layout, Step, add_steps, branch, chain, finish, linear
from graph.deps import Deps
from nodes.turn import act, consolidate, deliberate, perceive
from state.turn import TurnInput, TurnState

Graph = StateGraph[TurnState, None, TurnInput, TurnState]
Subgraph = StateGraph[TurnState, None, TurnState, TurnState]

PERCEIVE: tuple[Step, ...] = (
    ("ingest", perceive.ingest),
    ("surface_parse", perceive.surface_parse),
    ("reality_check", perceive.reality_check),
    ("evidence_ledger_update", perceive.evidence_ledger_update),
    ("intent_hypotheses", perceive.intent_hypotheses),
    ("self_initiated_reflection", perceive.self_initiated_reflection),
    ("effort_budgeter", perceive.effort_budgeter),
)
DELIBERATE: tuple[Step, ...] = (
    ("mode_gate", deliberate.mode_gate),
    ("presence_preface", deliberate.presence_preface),
    ("dual_stream_thoughts", deliberate.dual_stream_thoughts),
    ("chronos_mesh", deliberate.chronos_mesh),
    ("plan", deliberate.plan),
    ("integration_fuser", deliberate.integration_fuser),
    ("drafts", deliberate.drafts),
    ("counterfactual_probe", deliberate.counterfactual_probe),
    ("metrics_engine", deliberate.metrics_engine),
    ("lambda_select", deliberate.lambda_select),
    ("inner_dialogue", deliberate.inner_dialogue),
)
ACT: tuple[Step, ...] = (
    ("tool_affordance", act.tool_affordance),
    ("optional_tool_calls", act.optional_tool_calls),
    ("compose_final", act.compose_final),
    ("post_eval", act.post_eval),
)
CONSOLIDATE: tuple[Step, ...] = (
    ("naming", consolidate.naming),
    ("consolidate", consolidate.consolidate),
    ("growth_tick", consolidate.growth_tick),
    ("emit_updates", consolidate.emit_updates),
    ("habit_update", consolidate.habit_update),
    ("outcome_log", consolidate.outcome_log),
    ("lesson_extract", consolidate.lesson_extract),
    ("policy_shape", consolidate.policy_shape),
    ("self_authored_update", consolidate.self_authored_update),
    ("rehearsal_run", consolidate.rehearsal_run),
    ("self_representation_update", consolidate.self_representation_update),
    ("self_reference_index", consolidate.self_reference_index),
    ("naming_operator_update", consolidate.naming_operator_update),
    ("recurrence_closure", consolidate.recurrence_closure),
)
TURN_STEPS: tuple[str, ...] = tuple(
    name for group in (PERCEIVE, DELIBERATE, ACT, CONSOLIDATE) for name, _ in group
)
"""SKAi's ``runtime.turn_loop``: the 36 step names, in order (derived from the groups above)."""

TALK_BYPASSES = (
    "presence_preface",
    "dual_stream_thoughts",
    "plan",
    "integration_fuser",
    "counterfactual_probe",
    "inner_dialogue",
)
"""Steps the talk path never reaches (recorded as skipped when the gate picks talk)."""
WORK_BYPASSES = ("counterfactual_probe", "inner_dialogue")
"""Steps the work path never reaches."""
REPLY_STEPS = frozenset({"drafts", "compose_final"})
"""Steps whose model output is the reply being written (streamed to the user as it is made)."""
CLOSURE_STEPS = frozenset(
    {"habit_update", "lesson_extract", "rehearsal_run", "self_representation_update"}
)
"""Consolidation steps whose ``closed: True`` counts as a SKAi closure event."""


def _subgraph(deps: Deps, layout: Layout, steps: tuple[Step, ...]) -> Subgraph:
    graph: Subgraph = StateGraph(TurnState)  # subgraphs take the whole state from the parent
    add_steps(graph, deps, layout, steps, "turn")
    return graph


def build_perceive(deps: Deps, layout: Layout) -> Subgraph:
    """Return the perceive subgraph (linear, deterministic)."""
    return linear(StateGraph(TurnState), deps, layout, PERCEIVE, "turn")


def build_deliberate(deps: Deps, layout: Layout) -> Subgraph:
    """Return the deliberate subgraph: mode gate paths, drafts, Λ selection, re-draft loop."""
    graph = _subgraph(deps, layout, DELIBERATE)
    graph.add_edge(START, "mode_gate")
    branch(
        graph,
        layout,
        "mode_gate",
        routes.route_mode,
        {"talk": "chronos_mesh", "work": "presence_preface", "deep": "presence_preface"},
        bypasses={"talk": TALK_BYPASSES, "work": WORK_BYPASSES},
    )
    graph.add_edge("presence_preface", "dual_stream_thoughts")
    graph.add_edge("dual_stream_thoughts", "chronos_mesh")
    graph.add_conditional_edges(
        "chronos_mesh",
        routes.route_after_chronos,
        {"talk": "drafts", "work": "plan", "deep": "plan"},
    )
    graph.add_edge("plan", "integration_fuser")
    graph.add_edge("integration_fuser", "drafts")
    graph.add_conditional_edges(
        "drafts",
        routes.route_after_drafts,
        {"probe": "counterfactual_probe", "score": "metrics_engine"},
    )
    graph.add_edge("counterfactual_probe", "metrics_engine")
    graph.add_edge("metrics_engine", "lambda_select")
    graph.add_conditional_edges(
        "lambda_select",
        routes.route_lambda,
        {"redraft": "drafts", "inner_dialogue": "inner_dialogue", "done": END},
    )
    graph.add_edge("inner_dialogue", END)
    return graph


def build_act(deps: Deps, layout: Layout) -> Subgraph:
    """Return the act subgraph: tool affordance ⇄ tool calls, then compose and evaluate."""
    graph = _subgraph(deps, layout, ACT)
    graph.add_edge(START, "tool_affordance")
    branch(
        graph,
        layout,
        "tool_affordance",
        routes.route_tools,
        {"call": "optional_tool_calls", "compose": "compose_final"},
        bypasses={"compose": ("optional_tool_calls",)},
    )
    graph.add_edge("optional_tool_calls", "tool_affordance")
    graph.add_edge("compose_final", "post_eval")
    graph.add_edge("post_eval", END)
    return graph


def build_consolidate(deps: Deps, layout: Layout) -> Subgraph:
    """Return the consolidate subgraph (linear: every closure step runs or records a skip)."""
    return linear(StateGraph(TurnState), deps, layout, CONSOLIDATE, "turn")


def build_turn_graph(deps: Deps) -> Graph:
    """Return the uncompiled ``turn`` graph; each caller picks its own persistence."""
    graph: Graph = StateGraph(TurnState, input_schema=TurnInput)
    layout = Layout(closes=set(CLOSURE_STEPS))
    parts = {
        "perceive": build_perceive(deps, layout),
        "deliberate": build_deliberate(deps, layout),
        "act": build_act(deps, layout),
        "consolidate": build_consolidate(deps, layout),
    }
    for name, part in parts.items():
        graph.add_node(name, part.compile(name=name))
    graph.add_edge(START, "perceive")
    chain(graph, parts)
    graph.add_edge("consolidate", END)
    finish(layout, graph, parts)
    return graph

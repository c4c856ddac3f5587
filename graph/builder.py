"""Graph assembly: the only module that knows the topology of the ``turn`` graph.

The 36 steps of SKAi's ``runtime.turn_loop`` are nodes with exactly those names, grouped into four
subgraphs so Studio stays readable: perceive → deliberate → act → consolidate. Every node is
wrapped by ``instrument``, which appends a trace record (ran / skipped and why), its timing, and a
``kernel`` memory proving the step ran — the audit trail the lumen spec requires.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from langgraph.graph import END, START, StateGraph

from graph import routes
from graph.deps import Deps
from nodes.turn import act, consolidate, deliberate, perceive
from state.snapshot import take_snapshot
from state.turn import StepRecord, TurnInput, TurnState

NodeFn = Callable[..., dict[str, Any]]
Graph = StateGraph[TurnState, None, TurnInput, TurnState]
Subgraph = StateGraph[TurnState, None, TurnState, TurnState]

PERCEIVE: tuple[tuple[str, NodeFn], ...] = (
    ("ingest", perceive.ingest),
    ("surface_parse", perceive.surface_parse),
    ("reality_check", perceive.reality_check),
    ("evidence_ledger_update", perceive.evidence_ledger_update),
    ("intent_hypotheses", perceive.intent_hypotheses),
    ("self_initiated_reflection", perceive.self_initiated_reflection),
    ("effort_budgeter", perceive.effort_budgeter),
)
DELIBERATE: tuple[tuple[str, NodeFn], ...] = (
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
ACT: tuple[tuple[str, NodeFn], ...] = (
    ("tool_affordance", act.tool_affordance),
    ("optional_tool_calls", act.optional_tool_calls),
    ("compose_final", act.compose_final),
    ("post_eval", act.post_eval),
)
CONSOLIDATE: tuple[tuple[str, NodeFn], ...] = (
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


FLUSH_AFTER = frozenset(
    {
        "effort_budgeter",
        "lambda_select",
        "inner_dialogue",
        "optional_tool_calls",
        "post_eval",
        "recurrence_closure",
    }
)
"""Steps after which buffered kernel memories are written (each subgraph's possible last step)."""


SNAPSHOT_STEPS = frozenset({"recurrence_closure", "cycle_end", "review", "apply"})
"""The steps after which a run's self is complete: the last of ``turn``, ``cycle`` and ``reflect``
(``review`` covers a reflection that finds nothing to do; ``apply`` overwrites it otherwise)."""


def instrument(
    name: str, fn: NodeFn, deps: Deps, situation: str = "turn"
) -> Callable[[Any], dict[str, Any]]:
    """Wrap a step: time it, append its trace record(s) and its ``kernel`` memory.

    Kernel memories are buffered and written at the end of each subgraph (and at once when a
    step fails), one lock per batch: the audit trail stays complete at a fraction of the cost.
    """

    def step(state: Any) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            update = fn(state, deps=deps)
        except BaseException:
            deps.flush_kernel_log()
            raise
        if name in SNAPSHOT_STEPS:  # the run's last step: who am I now (each checkpoint keeps it)
            update["snapshot"] = take_snapshot(deps.instance, deps.store)
        ms = round((time.perf_counter() - started) * 1000, 3)
        skipped = update.pop("skipped", None)
        note = str(update.pop("note", ""))
        bypassed: list[tuple[str, str]] = update.pop("skips", [])
        records = [
            StepRecord(
                step=name, status="skipped" if skipped else "ran", reason=str(skipped or ""), ms=ms
            ),
            *(StepRecord(step=s, status="skipped", reason=r) for s, r in bypassed),
        ]
        base = update.get("trace", state.trace)
        update["trace"] = [*base, *records]
        update["timings_ms"] = {**update.get("timings_ms", state.timings_ms), name: ms}
        journal = deps.store.journal
        for record in records:
            detail = record.reason if record.status == "skipped" else note
            deps.kernel_log.append(
                journal.new_entry(
                    f"{record.step}: {record.status}" + (f": {detail}" if detail else ""),
                    author="kernel",
                    situation=situation,
                    meta={
                        "step": record.step,
                        "status": record.status,
                        "turn": update.get("turn_index", getattr(state, "turn_index", None)),
                    },
                )
            )
        if name in FLUSH_AFTER:
            deps.flush_kernel_log()
        return update

    step.__name__ = name
    return step


def _subgraph(deps: Deps, steps: tuple[tuple[str, NodeFn], ...]) -> Subgraph:
    graph: Subgraph = StateGraph(TurnState)  # subgraphs take the whole state from the parent
    for name, fn in steps:
        graph.add_node(name, instrument(name, fn, deps))  # type: ignore[call-overload]
    return graph


def _linear(deps: Deps, steps: tuple[tuple[str, NodeFn], ...]) -> Subgraph:
    """Return a subgraph that runs ``steps`` in order."""
    graph = _subgraph(deps, steps)
    names = [name for name, _ in steps]
    graph.add_edge(START, names[0])
    for left, right in pairwise(names):
        graph.add_edge(left, right)
    graph.add_edge(names[-1], END)
    return graph


def build_perceive(deps: Deps) -> Subgraph:
    """Return the perceive subgraph (linear, deterministic)."""
    return _linear(deps, PERCEIVE)


def build_deliberate(deps: Deps) -> Subgraph:
    """Return the deliberate subgraph: mode gate paths, drafts, Λ selection, re-draft loop."""
    graph = _subgraph(deps, DELIBERATE)
    graph.add_edge(START, "mode_gate")
    graph.add_conditional_edges(
        "mode_gate",
        routes.route_mode,
        {"talk": "chronos_mesh", "work": "presence_preface", "deep": "presence_preface"},
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


def build_act(deps: Deps) -> Subgraph:
    """Return the act subgraph: tool affordance ⇄ tool calls, then compose and evaluate."""
    graph = _subgraph(deps, ACT)
    graph.add_edge(START, "tool_affordance")
    graph.add_conditional_edges(
        "tool_affordance",
        routes.route_tools,
        {"call": "optional_tool_calls", "compose": "compose_final"},
    )
    graph.add_edge("optional_tool_calls", "tool_affordance")
    graph.add_edge("compose_final", "post_eval")
    graph.add_edge("post_eval", END)
    return graph


def build_consolidate(deps: Deps) -> Subgraph:
    """Return the consolidate subgraph (linear: every closure step runs or records a skip)."""
    return _linear(deps, CONSOLIDATE)


def build_turn_graph(deps: Deps) -> Graph:
    """Return the uncompiled ``turn`` graph; each caller picks its own persistence."""
    graph: Graph = StateGraph(TurnState, input_schema=TurnInput)
    parts = (
        ("perceive", build_perceive),
        ("deliberate", build_deliberate),
        ("act", build_act),
        ("consolidate", build_consolidate),
    )
    for name, build in parts:
        graph.add_node(name, build(deps).compile(name=name))
    graph.add_edge(START, "perceive")
    graph.add_edge("perceive", "deliberate")
    graph.add_edge("deliberate", "act")
    graph.add_edge("act", "consolidate")
    graph.add_edge("consolidate", END)
    return graph

"""Routers: they only read state (decisions are made by nodes).

The turn's routers read a view (a model of the few fields they decide on): LangGraph
reads only those channels for them, instead of building the whole ``TurnState`` (a pydantic model
of some 70 fields) for each routing decision, and the step wrapper hands them the same view when
it records a route's bypassed steps (``graph.assembly.route_view``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from state.cycle import CycleState, ReflectState
from state.turn import Candidate, Mode, ToolChoice


class RouteView(BaseModel):
    """A router's view of the turn state: a few of its fields, taken as they are.

    Each field has ``TurnState``'s default, so a channel no step has written yet reads as it
    would in the whole state.
    """


class ModeView(RouteView):
    """What the mode routers read."""

    mode: Mode = "talk"


class DraftsView(RouteView):
    """What the router after drafting reads."""

    mode: Mode = "talk"
    candidates: list[Candidate] = Field(default_factory=list)


class LambdaView(RouteView):
    """What the router after Λ selection reads."""

    lambda_route: Literal["redraft", "inner_dialogue", "done"] = "done"


class ToolView(RouteView):
    """What the tool router reads."""

    tool_choice: ToolChoice | None = None


def route_mode(state: ModeView) -> Literal["talk", "work", "deep"]:
    """Follow the mode the gate chose."""
    return state.mode


def route_after_chronos(state: ModeView) -> Literal["talk", "work", "deep"]:
    """Talk goes straight to drafting; work and deep plan first."""
    return state.mode


def route_after_drafts(state: DraftsView) -> Literal["probe", "score"]:
    """Deep mode probes a counterfactual once; everything else is scored."""
    probed = any(c.origin == "counterfactual" for c in state.candidates)
    redrafted = any(c.origin == "redraft" for c in state.candidates)
    return "probe" if state.mode == "deep" and not probed and not redrafted else "score"


def route_lambda(state: LambdaView) -> Literal["redraft", "inner_dialogue", "done"]:
    """Follow Λ selection: re-draft, weigh candidates (deep), or finish."""
    return state.lambda_route


def route_tools(state: ToolView) -> Literal["call", "compose"]:
    """Call the chosen tool, or compose the reply when none was chosen."""
    return "call" if state.tool_choice is not None else "compose"


def route_guard(state: CycleState) -> Literal["safe", "cooldown"]:
    """Escalation guard: continue, or cool down after repeated escalations."""
    return state.guard


def route_convergence(state: CycleState) -> Literal["converging", "stabilize"]:
    """Lyapunov check: converging, or stabilize first."""
    return state.convergence


def route_value_lock(state: CycleState) -> Literal["valid", "rollback"]:
    """Value lock: intact, or roll back."""
    return state.value_lock


def route_rollback(state: CycleState) -> Literal["restored", "failed"]:
    """Rollback check: the restore worked, or drop to safety-only."""
    return "restored" if state.restored else "failed"


def route_after_regulate(state: CycleState) -> Literal["update", "end"]:
    """Update goals only when the guard let the cycle through and the value lock held."""
    return "update" if state.guard == "safe" and state.value_lock == "valid" else "end"


def route_depth2(state: CycleState) -> Literal["depth2", "skip"]:
    """Meta depth 2 only when the goal-mutation step found budget > 0.3 and ≥2 conditions."""
    return "depth2" if state.depth2 else "skip"


def route_cycle_end(state: CycleState) -> Literal["recurse", "end"]:
    """Recurse (bounded) or end the cycle."""
    return "recurse" if state.status == "recurse" else "end"


def route_review(state: ReflectState) -> Literal["ask", "nothing"]:
    """Reflect only when the review found something to reflect on."""
    return state.route


def route_conflicts(state: ReflectState) -> Literal["resolve", "apply"]:
    """Resolve contradicting proposals before applying."""
    return "resolve" if state.conflicts else "apply"

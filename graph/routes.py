"""Routers: they only read state (decisions are made by nodes)."""

from __future__ import annotations

from typing import Literal

from state.turn import TurnState


def route_mode(state: TurnState) -> Literal["talk", "work", "deep"]:
    """Follow the mode the gate chose."""
    return state.mode


def route_after_chronos(state: TurnState) -> Literal["talk", "work", "deep"]:
    """Talk goes straight to drafting; work and deep plan first."""
    return state.mode


def route_after_drafts(state: TurnState) -> Literal["probe", "score"]:
    """Deep mode probes a counterfactual once; everything else is scored."""
    probed = any(c.origin == "counterfactual" for c in state.candidates)
    redrafted = any(c.origin == "redraft" for c in state.candidates)
    return "probe" if state.mode == "deep" and not probed and not redrafted else "score"


def route_lambda(state: TurnState) -> Literal["redraft", "inner_dialogue", "done"]:
    """Follow Λ selection: re-draft, weigh candidates (deep), or finish."""
    return state.lambda_route


def route_tools(state: TurnState) -> Literal["call", "compose"]:
    """Call the chosen tool, or compose the reply when none was chosen."""
    return "call" if state.tool_choice is not None else "compose"

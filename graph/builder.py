"""Graph assembly: the only module that knows the topology."""

from __future__ import annotations

from functools import partial

from langgraph.graph import END, START, StateGraph

from graph.deps import Deps
from nodes.deliver import deliver
from nodes.ingest import ingest
from nodes.record import record
from nodes.respond import respond
from state.turn import TurnInput, TurnState

TURN_NODES = ("ingest", "respond", "deliver", "record")


def build_turn_graph(deps: Deps) -> StateGraph[TurnState, None, TurnInput, TurnState]:
    """Return the uncompiled ``turn`` graph; each caller picks its own persistence."""
    graph: StateGraph[TurnState, None, TurnInput, TurnState] = StateGraph(
        TurnState, input_schema=TurnInput
    )
    graph.add_node("ingest", partial(ingest, deps=deps))
    graph.add_node("respond", partial(respond, deps=deps))
    graph.add_node("deliver", partial(deliver, deps=deps))
    graph.add_node("record", partial(record, deps=deps))
    graph.add_edge(START, "ingest")
    graph.add_edge("ingest", "respond")
    graph.add_edge("respond", "deliver")
    graph.add_edge("deliver", "record")
    graph.add_edge("record", END)
    return graph

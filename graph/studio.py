"""Graphs served by ``langgraph dev`` (compiled without a checkpointer; the server adds its own)."""

from __future__ import annotations

from graph.builder import build_turn_graph
from graph.cycle_builder import build_cycle_graph, build_reflect_graph
from graph.deps import Deps
from state.instance import Instance, default_root, init_instance

_instance = Instance(default_root())
if not _instance.exists():
    init_instance(_instance.root)

_deps = Deps.for_instance(_instance)
turn = build_turn_graph(_deps).compile(name="turn")
cycle = build_cycle_graph(_deps).compile(name="cycle")
reflect = build_reflect_graph(_deps).compile(name="reflect")

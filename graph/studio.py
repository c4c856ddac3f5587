"""Graphs served by ``langgraph dev`` (compiled without a checkpointer; the server adds its own)."""

from __future__ import annotations

from graph.builder import build_turn_graph
from graph.deps import Deps
from state.instance import Instance, default_root, init_instance

_instance = Instance(default_root())
if not _instance.exists():
    init_instance(_instance.root)

turn = build_turn_graph(Deps.for_instance(_instance)).compile(name="turn")

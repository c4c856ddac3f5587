"""Graphs served by ``langgraph dev`` (compiled without a checkpointer; the server adds its own).

``langgraph.json`` names the three factories below. The server calls a factory when it needs the
graph (a run starting, a schema or drawing request), so importing this module touches no disk:
the instance (``LUMEN_HOME`` or the platform default) is resolved, and created if missing, on the
first call, in a worker thread (the server's event loop must not block). One ``Deps`` per instance
is reused across runs; what a run buffers lives in its own run scope (``graph.deps.RunScope``),
keyed by the run's thread.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from langchain_core.runnables import RunnableConfig

from graph.builder import build_turn_graph
from graph.cycle_builder import build_cycle_graph, build_reflect_graph
from graph.deps import Deps
from state.instance import Instance, default_root, init_instance

_deps: dict[str, Deps] = {}
_lock = threading.Lock()


def _deps_for_current_instance() -> Deps:
    """Return the deps of the configured instance, creating the instance on first use."""
    root = default_root()
    with _lock:
        if str(root) not in _deps:
            instance = Instance(root)
            if not instance.exists():
                init_instance(root)
            _deps[str(root)] = Deps.for_instance(instance)
        return _deps[str(root)]


async def turn(config: RunnableConfig) -> Any:
    """Return the compiled ``turn`` graph for the configured instance."""
    deps = await asyncio.to_thread(_deps_for_current_instance)  # disk work off the event loop
    return build_turn_graph(deps).compile(name="turn")


async def cycle(config: RunnableConfig) -> Any:
    """Return the compiled ``cycle`` graph for the configured instance."""
    deps = await asyncio.to_thread(_deps_for_current_instance)  # disk work off the event loop
    return build_cycle_graph(deps).compile(name="cycle")


async def reflect(config: RunnableConfig) -> Any:
    """Return the compiled ``reflect`` graph for the configured instance."""
    deps = await asyncio.to_thread(_deps_for_current_instance)  # disk work off the event loop
    return build_reflect_graph(deps).compile(name="reflect")

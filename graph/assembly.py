"""How steps become graph nodes: instrumentation, bypass records, where a run ends.

Each builder declares its graph once (its step lists and edges); everything else is derived from
that declaration here:

* **trace and audit trail**: every step is wrapped by ``instrument``, which appends its trace
  record (ran / skipped and why) and buffers a ``kernel`` memory proving it ran;
* **bypassed steps**: a conditional edge declares, per route, the steps that route skips; when the
  source step picks that route, ``instrument`` records those steps as skipped with the step's
  ``why`` (so a node never names another step);
* **run ends**: the steps after which the whole run can end (terminal steps of a top-level
  terminal node): the run's buffered step memories are written there in one locked append (and at
  once when a step fails), its self snapshot is taken, and its run scope (buffers, vault) is
  dropped.

Lists several steps append to (``trace``, ``degraded``, ``closed_events``) are merged here too:
a step returns only its new items. They are not LangGraph reducers because subgraphs hand the
parent their whole state (a reducer would append the parent's list to itself) and each run starts
its lists afresh.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from itertools import pairwise
from typing import Any, get_type_hints

from langgraph.channels import UntrackedValue
from langgraph.graph import END, START, StateGraph

from graph.deps import Deps, StepNote
from graph.routes import RouteView
from state.self_state import utc_now
from state.snapshot import take_snapshot
from state.turn import StepRecord

NodeFn = Callable[..., dict[str, Any]]
Step = tuple[str, NodeFn]
Router = Callable[[Any], Hashable]

APPENDED = ("degraded", "closed_events")
"""State lists a step extends by returning only its new items."""


@dataclass
class Layout:
    """What the builders declare and the wrappers read: bypasses, closure steps, run ends."""

    bypass: dict[str, tuple[Router, Mapping[Hashable, tuple[str, ...]]]] = field(
        default_factory=dict
    )
    run_end: set[str] = field(default_factory=set)
    run_start: set[str] = field(default_factory=set)
    """The run's first step: it resets every per-run field, appended lists included."""
    closes: set[str] = field(default_factory=set)
    """Steps whose ``closed: True`` marks their own name as a closure event."""


def terminal_steps(graph: StateGraph[Any, Any, Any, Any]) -> set[str]:
    """Return the nodes of ``graph`` that can hand control to ``END``."""
    ends = {source for source, target in graph.edges if target == END}
    for source, branches in graph.branches.items():
        for branch in branches.values():
            if branch.ends and END in branch.ends.values():
                ends.add(source)
    return ends


def branch(
    graph: StateGraph[Any, Any, Any, Any],
    layout: Layout,
    source: str,
    router: Router,
    routes: Mapping[Hashable, str],
    *,
    bypasses: Mapping[Hashable, tuple[str, ...]] | None = None,
) -> None:
    """Add a conditional edge; ``bypasses`` names the steps each route skips (recorded)."""
    graph.add_conditional_edges(source, router, dict(routes))
    if bypasses:
        layout.bypass[source] = (router, bypasses)


def chain(graph: StateGraph[Any, Any, Any, Any], names: Iterable[str]) -> None:
    """Connect ``names`` in order with plain edges."""
    for left, right in pairwise(list(names)):
        graph.add_edge(left, right)


def untracked(schema: type[Any]) -> frozenset[str]:
    """Return the fields of ``schema`` LangGraph never checkpoints (``UntrackedValue``)."""
    fields = getattr(schema, "model_fields", {})
    return frozenset(
        name
        for name, info in fields.items()
        if any(isinstance(m, UntrackedValue) for m in info.metadata)
    )


def instrument(
    name: str, fn: NodeFn, deps: Deps, layout: Layout, situation: str
) -> Callable[[Any], dict[str, Any]]:
    """Wrap a step: time it, record its trace and skips, buffer its ``kernel`` memory."""
    # A step that keeps its own cooldown asks for its name (``step``): it is the builder's to give.
    named = {"step": name} if "step" in inspect.signature(fn).parameters else {}

    def step(state: Any) -> dict[str, Any]:
        started = time.perf_counter()
        reloaded = (
            name not in layout.run_start
            and getattr(state, "me", False) is None
            and "me" in untracked(type(state))
        )
        if reloaded:  # resumed from a mid-run checkpoint, which never holds the self
            state = state.model_copy(update={"me": deps.instance.load_self()})
        try:
            update = fn(state, deps=deps, **named)
        except BaseException:
            deps.end_run()  # the audit trail so far is written; the run's vault dies with it
            raise
        if reloaded:
            update.setdefault("me", state.me)
        if name in layout.run_end:  # the run's last step: who am I now (each checkpoint keeps it)
            update["snapshot"] = take_snapshot(deps.instance, deps.store)
        ms = round((time.perf_counter() - started) * 1000, 3)
        skipped = update.pop("skipped", None)
        note = str(update.pop("note", ""))
        why = str(update.pop("why", ""))
        for key in APPENDED:
            if key in update and name not in layout.run_start:
                update[key] = [*getattr(state, key), *update[key]]
        if update.pop("closed", False) and name in layout.closes:
            update["closed_events"] = [*update.get("closed_events", state.closed_events), name]
        records = [
            StepRecord(
                step=name, status="skipped" if skipped else "ran", reason=str(skipped or ""), ms=ms
            )
        ]
        if name in layout.bypass:
            router, bypasses = layout.bypass[name]
            route = router(route_view(router, state, update))
            reason = why or f"{name} chose {route}"
            records += [
                StepRecord(step=s, status="skipped", reason=reason) for s in bypasses.get(route, ())
            ]
        base = update.get("trace", state.trace)
        update["trace"] = [*base, *records]
        update["timings_ms"] = {**update.get("timings_ms", state.timings_ms), name: ms}
        turn = update.get("turn_index", getattr(state, "turn_index", None))
        now = utc_now()
        for record in records:
            detail = record.reason if record.status == "skipped" else note
            deps.log_step(
                StepNote(
                    f"{record.step}: {record.status}" + (f": {detail}" if detail else ""),
                    situation,
                    {"step": record.step, "status": record.status, "turn": turn},
                    now,
                )
            )
        if name in layout.run_end:
            deps.end_run()
        return update

    step.__name__ = name
    return step


@cache
def router_view(router: Router) -> type[RouteView] | None:
    """Return the view model a router reads (its first parameter's type) if not a whole state."""
    try:
        first = next(iter(inspect.signature(router).parameters))
        hint = get_type_hints(router).get(first)
    except (StopIteration, TypeError, ValueError, NameError):
        return None
    if isinstance(hint, type) and issubclass(hint, RouteView):
        return hint
    return None


def route_view(router: Router, state: Any, update: Mapping[str, Any]) -> Any:
    """What ``router`` reads after a step's ``update``: its view, or the whole updated state."""
    view = router_view(router)
    if view is None:
        return state.model_copy(update=update)
    return view.model_construct(
        **{key: update[key] if key in update else getattr(state, key) for key in view.model_fields}
    )


def add_steps(
    graph: StateGraph[Any, Any, Any, Any],
    deps: Deps,
    layout: Layout,
    steps: Iterable[Step],
    situation: str,
) -> None:
    """Add each step to ``graph``, instrumented."""
    for name, fn in steps:
        graph.add_node(name, instrument(name, fn, deps, layout, situation))  # type: ignore[call-overload]


def linear(
    graph: StateGraph[Any, Any, Any, Any],
    deps: Deps,
    layout: Layout,
    steps: tuple[Step, ...],
    situation: str,
) -> StateGraph[Any, Any, Any, Any]:
    """Add ``steps`` to ``graph`` and run them in order, START to END."""
    add_steps(graph, deps, layout, steps, situation)
    names = [name for name, _ in steps]
    graph.add_edge(START, names[0])
    chain(graph, names)
    graph.add_edge(names[-1], END)
    return graph


def first_steps(graph: StateGraph[Any, Any, Any, Any]) -> set[str]:
    """Return the nodes ``START`` leads to."""
    return {target for source, target in graph.edges if source == START}


def finish(
    layout: Layout,
    top: StateGraph[Any, Any, Any, Any],
    parts: Mapping[str, StateGraph[Any, Any, Any, Any]],
) -> None:
    """Derive run starts and run ends from the finished topology.

    ``parts`` maps each subgraph node of ``top`` to its builder graph; plain step nodes of
    ``top`` are their own first and terminal steps.
    """
    for node in first_steps(top):
        layout.run_start |= first_steps(parts[node]) if node in parts else {node}
    top_ends = terminal_steps(top)
    for node, part in parts.items():
        if node in top_ends:
            layout.run_end |= terminal_steps(part)
    layout.run_end |= top_ends - set(parts)

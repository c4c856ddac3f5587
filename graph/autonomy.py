"""``lumen run`` and ``lumen reflect``: alternate action and explore cycles, reflect on triggers."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from graph.checkpoints import open_checkpointer
from graph.cycle_builder import build_cycle_graph, build_reflect_graph, cycle_branches
from graph.deps import Deps
from graph.maintenance import maintain, maintenance_due
from kernel import mscp
from state.cycle import CycleInput, CycleKind, CycleState, ReflectInput, ReflectState
from state.files import load_values
from state.self_state import utc_now


@dataclass
class RunReport:
    """What a run did (for the CLI, tests and the benchmark)."""

    cycles: list[dict[str, Any]] = field(default_factory=list)
    reflections: list[dict[str, Any]] = field(default_factory=list)
    maintenance: list[dict[str, Any]] = field(default_factory=list)


@contextmanager
def autonomy_graphs(deps: Deps) -> Iterator[tuple[Any, Any]]:
    """Yield the compiled ``cycle`` and ``reflect`` graphs on the instance's checkpoint DB."""
    with open_checkpointer(deps.instance, deps.config) as saver:
        yield (
            build_cycle_graph(deps).compile(checkpointer=saver, name="cycle"),
            build_reflect_graph(deps).compile(checkpointer=saver, name="reflect"),
        )


def run_cycle(
    compiled: Any,
    kind: CycleKind,
    *,
    explicit_reflection: bool = False,
    expected_value_hash: str = "",
    choose_kind: bool = False,
) -> CycleState:
    """Run one cycle on the ``cycle`` thread (``choose_kind``: the cycle decides its kind)."""
    result = compiled.invoke(
        CycleInput(
            kind=kind,
            explicit_reflection=explicit_reflection,
            expected_value_hash=expected_value_hash,
            choose_kind=choose_kind,
        ),
        {"configurable": {"thread_id": "cycle"}, "recursion_limit": 100},
        durability="exit",
    )
    return CycleState.model_validate(result)


def run_reflection(compiled: Any, triggers: list[str]) -> ReflectState:
    """Run one reflection on the ``reflect`` thread."""
    result = compiled.invoke(
        ReflectInput(triggers=triggers),
        {"configurable": {"thread_id": "reflect"}},
        durability="exit",
    )
    return ReflectState.model_validate(result)


def values_hash(deps: Deps) -> str:
    """The value-lock hash of values.json as it is now."""
    values = load_values(deps.instance.values_file)
    return mscp.value_lock_hash([(v.name, v.weight, v.status) for v in values])


def cycle_row(state: CycleState) -> dict[str, Any]:
    """One cycle as the JSON line ``lumen run --json`` prints (branches read from the trace)."""
    assert state.me is not None
    chosen = state.candidates[state.chosen] if 0 <= state.chosen < len(state.candidates) else None
    return {
        "cycle": state.me.autonomy.cycle,
        "kind": state.kind,
        "goal": chosen.goal if chosen else "",
        "skill": chosen.skill if chosen else "",
        "status": state.status,
        "outcome": state.outcome.get("status", ""),
        "epsilon": state.prediction_error,
        "composite": state.me.stability.composite,
        "msi": state.me.stability.msi,
        "budget": state.budget,
        "affect": {k: round(v, 4) for k, v in state.me.affect.model_dump().items()},
        "valence": round(mscp.valence(state.me.affect.model_dump()), 4),
        "branches": (["escalation"] if state.escalations else [])
        + (["acceleration_halving"] if state.unstable_updates else [])
        + cycle_branches([r.step for r in state.trace]),
        "escalations": state.escalations,
        "triggers": state.reflection_triggers,
        "degraded": state.degraded,
        "safe_mode_left": state.me.autonomy.safe_mode_left,
        "mutation_scaling": state.me.stability.mutation_scaling,
        "stabilization_mode": state.me.stability.stabilization_mode,
        "identity_delta": state.me.stability.identity_delta,
        "identity_hash": state.me.identity.identity_hash,
        "llm_calls": state.llm_calls,
        "tokens": state.tokens,
        "kind_choice": state.kind_choice,
        "question": state.question,
        "gap": state.gap,
        "produced": [
            {
                k: p[k]
                for k in ("event", "kind", "source", "trust", "summary", "path", "skill")
                if k in p
            }
            for p in state.produced
        ],
    }


def alternate(index: int) -> CycleKind:
    """The fixed schedule lumen used before the affect decided: action, explore, action, …."""
    return "action" if index % 2 == 0 else "explore"


def wait_for_cooldown(
    deps: Deps, sleep: Callable[[float], None], progress: Callable[[str], None] | None
) -> float:
    """Wait out a persisted cooldown (``[autonomy] cooldown_seconds``); return the wait."""
    until = deps.instance.load_self().autonomy.cooldown_until
    if not until:
        return 0.0
    left = (datetime.fromisoformat(until) - deps.now()).total_seconds()
    if left <= 0:
        return 0.0
    if progress:
        progress(f"  cooling down for {left:.1f} s")
    sleep(left)
    return left


def run(
    deps: Deps,
    *,
    cycles: int | None,
    interval: float = 0.0,
    reflection: bool = True,
    progress: Callable[[str], None] | None = None,
    emit: Callable[[dict[str, Any]], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    schedule: Callable[[int], CycleKind] | None = None,
) -> RunReport:
    """Run cycles whose kind (explore or action) the affect and goals decide; reflect on triggers.

    Each cycle decides its own kind from its affect and the pressure of its goals
    (``kernel.autonomy.choose_kind``, in the ``motivation`` step); ``schedule`` (index -> kind)
    imposes a fixed schedule instead (an ablation, e.g. :func:`alternate`).
    ``cycles=None`` runs until interrupted (Ctrl+C ends after the current step's checkpoint).
    Before each cycle the due scheduled tasks and source jobs (feed polls, trend snapshots) run.
    ``emit`` receives each cycle's row (and each reflection's) as soon as it completes; ``sleep``
    waits out cooldowns and intervals (tests bind one that advances their clock). The run keeps
    the value hash it last saw intact, so a values.json another process changed between cycles
    fails the next cycle's value lock.
    """
    report = RunReport()
    retry_at: datetime | None = None
    expected = values_hash(deps)
    with autonomy_graphs(deps) as (cycle_graph, reflect_graph):
        index = 0
        while cycles is None or index < cycles:
            waited = wait_for_cooldown(deps, sleep, progress)
            run_due_tasks(deps, progress)
            run_source_jobs(deps, progress)
            state = run_cycle(
                cycle_graph,
                schedule(index) if schedule else "action",
                expected_value_hash=expected,
                choose_kind=schedule is None,
            )
            kind: CycleKind = state.kind
            if state.value_lock == "valid" or state.restored:
                expected = values_hash(deps)
            row = cycle_row(state)
            if waited:
                row["cooled_down_s"] = round(waited, 3)
            report.cycles.append(row)
            if emit:
                emit(row)
            if progress:
                progress(
                    f"cycle {row['cycle']:>4} {kind:7s} {state.status:15s} "
                    f"C(t)={row['composite']:.4f} ε={row['epsilon']:.4f} "
                    f"valence={row['valence']:+.3f}"
                    + (f" [{', '.join(row['branches'])}]" if row["branches"] else "")
                )
            if reflection and kind == "action" and state.reflection_triggers:
                untouched = values_hash(deps) == expected
                reflected = run_reflection(reflect_graph, state.reflection_triggers)
                if untouched:  # reflection is the sanctioned values writer
                    expected = values_hash(deps)
                done = {
                    "cycle": row["cycle"],
                    "triggers": reflected.triggers,
                    "applied": reflected.applied,
                    "conflicts": reflected.conflicts,
                }
                report.reflections.append(done)
                if emit:
                    emit({"reflection": done})
                if progress:
                    progress(
                        f"  reflection ({', '.join(reflected.triggers)}): "
                        f"{len(reflected.applied)} changes"
                    )
            retry_at = maintain_when_due(deps, report, progress, retry_at=retry_at)
            index += 1
            if interval and (cycles is None or index < cycles):
                sleep(interval)
    return report


def maintain_when_due(
    deps: Deps,
    report: RunReport,
    progress: Callable[[str], None] | None = None,
    *,
    retry_at: datetime | None = None,
) -> datetime | None:
    """Run memory maintenance when it is due; returns when to retry after a failure.

    A failed run is reported and retried after ``[memory] maintenance_hours`` at the earliest,
    so a broken store never costs every cycle a maintenance attempt or stops the loop.
    """
    now = utc_now()
    if (retry_at is not None and now < retry_at) or not maintenance_due(deps, now):
        return retry_at
    try:
        done = maintain(deps, now=now)
    except Exception as exc:
        report.maintenance.append({"at": now.isoformat(), "error": f"{type(exc).__name__}: {exc}"})
        if progress:
            progress(f"  maintenance failed: {type(exc).__name__}: {exc}"[:200])
        return now + timedelta(hours=deps.config.memory.maintenance_hours)
    report.maintenance.append(done.to_dict())
    if progress:
        for line in done.lines():
            progress(f"  {line}")
    return None


def run_source_jobs(deps: Deps, progress: Callable[[str], None] | None = None) -> None:
    """Run the due source jobs (feed polls, trend snapshots) before a cycle; never raises."""
    from graph.feeds import run_source_jobs as due_source_jobs

    due_source_jobs(deps, progress)


def run_due_tasks(deps: Deps, progress: Callable[[str], None] | None = None) -> int:
    """Execute due scheduled jobs: user jobs as turns, agent jobs only on the constrained path.

    Both run through the ``turn`` graph, so every tool call passes the action gateway (taint,
    shadow veto, security policy, budget). Agent jobs run with ``autonomous=True``: they can
    never reach ``shell`` unless ``[policy] autonomous_shell`` is on.
    """
    from graph.session import run_turn, turn_runner
    from state.tasks import TaskQueue, runner_id

    queue = TaskQueue(deps.instance, clock=deps.clock)
    due = queue.due()
    if not due:
        return 0
    runner = runner_id()
    with turn_runner(deps) as compiled:
        for task in due:
            if queue.claim(task.id, runner=runner) is None:  # another runner took it: skip
                continue
            try:
                state = run_turn(
                    compiled,
                    task.prompt,
                    thread=f"task-{task.id}",
                    autonomous=task.job_kind == "agent",
                )
            except Exception as exc:  # a failing job is retried with backoff, the loop goes on
                _finish(queue.fail, task.id, f"{type(exc).__name__}: {exc}"[:200], runner=runner)
                continue
            _finish(queue.succeed, task.id, runner=runner)
            deps.store.flush()
            if progress:
                progress(f"  task {task.id[:8]} ({task.job_kind}): {state.reply[:60]!r}")
    return len(due)


def _finish(step: Callable[..., object], *args: str, runner: str) -> None:
    """Succeed or fail a claimed task; a lease another runner took over is skipped, not fatal."""
    from state.errors import LumenError

    try:
        step(*args, runner=runner)
    except LumenError:
        pass


def reflect_now(deps: Deps) -> ReflectState:
    """Force a reflection (``lumen reflect``)."""
    with autonomy_graphs(deps) as (_, reflect_graph):
        return run_reflection(reflect_graph, ["explicit_request"])

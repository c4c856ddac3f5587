"""Checkpoint growth and history latency: is a thread's checkpoint state bounded?

Run: ``uv run python bench/checkpoints.py [--turns 100 1000] [--history-calls 20]``.

1. Scripted model, one temp instance, one thread (``main``), SQLite checkpointer at the
   instance's ``.lumen/checkpoints.sqlite`` with ``durability="exit"`` as ``lumen chat`` uses,
   the memory index flushed after each turn as ``lumen chat`` does. After 100 and after 1,000
   turns (any marks with ``--turns``): the DB size (after a WAL checkpoint), bytes per turn, the
   latest checkpoint's size, its largest channels and the state fields (JSON bytes, down to e.g.
   ``me.self_state.tools.use_log``) that grew most. Goal: bytes per turn at 1,000 / at 100 <= 1.2
   (state does not grow with history).
2. Latency (median, p95) of listing the history of all checkpoints:
   ``compiled.get_state_history(config)`` fully iterated and, when ``graph.timeline`` exists,
   ``list_checkpoints(instance, limit=1000)`` (``lumen history``).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic import BaseModel

from graph.builder import build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.deps import Deps
from graph.session import run_turn
from state.instance import Instance, init_instance
from tests.scripted import ScriptedChatModel

THREAD = {"configurable": {"thread_id": "main"}}
TEXTS = [
    "Hi there! How are you?",
    "Please write a step by step plan to organise my project files",
    "My sister lives in Lisbon now.",
    "What is 12 * (3 + 4)?",
    "Think deeply: why do people disagree about free will?",
    "Good morning!",
]
TOP_CHANNELS = 6
TOP_FIELDS = 15
FIELD_DEPTH = 5
GOAL_RATIO = 1.2


def pct(values: list[float], q: float) -> float:
    """Return the q-quantile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def db_bytes(db: Path) -> int:
    """Return the database size after folding the WAL into it."""
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = db.with_name(db.name + "-wal")
    return db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def checkpoint_rows(db: Path) -> tuple[int, int]:
    """Return (checkpoint rows, write rows)."""
    with closing(sqlite3.connect(db)) as conn:
        checkpoints = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        writes = conn.execute("SELECT count(*) FROM writes").fetchone()[0]
    return int(checkpoints), int(writes)


def channel_sizes(saver: Any) -> dict[str, int]:
    """Return the serialized size of each channel of the thread's latest checkpoint."""
    latest = saver.get_tuple(THREAD)
    return {
        name: len(saver.serde.dumps_typed(value)[1])
        for name, value in latest.checkpoint["channel_values"].items()
    }


def field_sizes(saver: Any, depth: int = FIELD_DEPTH) -> dict[str, int]:
    """Return the JSON size of every field path (``me.self_state.growth``…) of the latest state."""
    latest = saver.get_tuple(THREAD)
    sizes: dict[str, int] = {}

    def walk(path: str, value: Any, level: int) -> None:
        sizes[path] = len(json.dumps(value, default=str))
        if level < depth and isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{path}.{key}", inner, level + 1)

    for name, value in latest.checkpoint["channel_values"].items():
        dumped = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
        walk(name, dumped, 1)
    return sizes


def latest_blob_bytes(db: Path) -> int:
    """Return the stored size of the thread's latest checkpoint."""
    with closing(sqlite3.connect(db)) as conn:
        row = conn.execute(
            "SELECT length(checkpoint) FROM checkpoints WHERE thread_id = 'main' "
            "AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1"
        ).fetchone()
    return int(row[0])


def timed(fn: Callable[[], object], calls: int) -> tuple[float, float]:
    """Return (median, p95) milliseconds of ``calls`` calls."""
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), pct(samples, 0.95)


def growth(deps: Deps, compiled: Any, saver: Any, marks: list[int]) -> dict[int, Any]:
    """Run turns up to each mark; return size figures and channel sizes at each mark."""
    figures: dict[int, Any] = {}
    done = 0
    started = time.perf_counter()
    for mark in marks:
        while done < mark:
            run_turn(compiled, TEXTS[done % len(TEXTS)])
            deps.store.flush()  # what `lumen chat` does after showing the reply
            done += 1
        db = deps.instance.checkpoint_db
        size = db_bytes(db)
        figures[mark] = {
            "size": size,
            "per_turn": size / mark,
            "rows": checkpoint_rows(db),
            "latest": latest_blob_bytes(db),
            "channels": channel_sizes(saver),
            "fields": field_sizes(saver),
            "elapsed_s": time.perf_counter() - started,
        }
        print(
            f"after {mark:>5} turns: DB {size / 1024:9.1f} KB, {size / mark:8.0f} B/turn, "
            f"rows (checkpoints, writes) {figures[mark]['rows']}, "
            f"latest checkpoint {figures[mark]['latest']} B, "
            f"{figures[mark]['elapsed_s']:.0f} s so far"
        )
    return figures


def report_growth(figures: dict[int, Any]) -> None:
    """Print the bytes-per-turn ratio and the channels that grew."""
    first, last = min(figures), max(figures)
    ratio = figures[last]["per_turn"] / figures[first]["per_turn"]
    marginal = (figures[last]["size"] - figures[first]["size"]) / (last - first)
    verdict = "ok" if ratio <= GOAL_RATIO else "OVER GOAL"
    print(
        f"bytes/turn: {figures[first]['per_turn']:.0f} at {first}, "
        f"{figures[last]['per_turn']:.0f} at {last}; ratio {ratio:.3f} "
        f"(goal <= {GOAL_RATIO}: {verdict}); marginal {marginal:.0f} B/turn over turns "
        f"{first + 1}-{last}"
    )
    print(
        f"latest checkpoint: {figures[first]['latest']} B at {first}, "
        f"{figures[last]['latest']} B at {last}"
    )
    before, after = figures[first]["channels"], figures[last]["channels"]
    grown = sorted(after, key=lambda k: after[k] - before.get(k, 0), reverse=True)
    print(f"largest channels at {last} (bytes at {first} -> {last}):")
    for name in sorted(after, key=lambda k: -after[k])[:TOP_CHANNELS]:
        print(f"  {name:20s} {before.get(name, 0):7d} -> {after[name]:7d}")
    growing = [k for k in grown if after[k] - before.get(k, 0) > 0]
    print(
        "channels that grew: "
        + (
            ", ".join(f"{k} (+{after[k] - before.get(k, 0)} B)" for k in growing[:TOP_CHANNELS])
            or "none"
        )
    )
    report_fields(figures[first]["fields"], figures[last]["fields"], first, last)
    marks = sorted(figures)
    if len(marks) > 2:  # has it levelled off? compare the last two marks too
        previous = marks[-2]
        report_fields(figures[previous]["fields"], figures[last]["fields"], previous, last)


def report_fields(before: dict[str, int], after: dict[str, int], first: int, last: int) -> None:
    """Print the state fields (JSON bytes) that grew most between the two marks."""
    leaves = [k for k in after if not any(other.startswith(k + ".") for other in after)]
    grown = sorted(leaves, key=lambda k: after[k] - before.get(k, 0), reverse=True)
    grown = [k for k in grown if after[k] > before.get(k, 0)][:TOP_FIELDS]
    print(f"state fields that grew most, JSON bytes at {first} -> {last}:")
    for name in grown or ["(none)"]:
        print(f"  {name:55s} {before.get(name, 0):7d} -> {after.get(name, 0):7d}")


def history_latency(instance: Instance, compiled: Any, calls: int, limit: int) -> None:
    """Time listing the whole history with LangGraph and with ``lumen history`` if present."""

    def state_history() -> int:
        return sum(1 for _ in compiled.get_state_history(THREAD))

    count = state_history()
    med, p95 = timed(state_history, calls)
    print(
        f"get_state_history ({count} checkpoints, fully iterated): "
        f"median {med:.1f} ms, p95 {p95:.1f} ms over {calls} calls"
    )
    try:
        from graph.history import list_checkpoints
    except ImportError:
        print("graph.timeline.list_checkpoints: not available (skipped)")
        return
    listed = len(list_checkpoints(instance, limit=limit))
    med, p95 = timed(lambda: list_checkpoints(instance, limit=limit), calls)
    print(
        f"timeline.list_checkpoints(limit={limit}) ({listed} rows): "
        f"median {med:.1f} ms, p95 {p95:.1f} ms over {calls} calls"
    )


def main() -> None:
    """Run the growth and latency measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--history-calls", type=int, default=20)
    args = parser.parse_args()
    marks = sorted(set(args.turns))
    print(f"== checkpoint growth, one thread, scripted model, durability=exit, marks {marks} ==")
    with tempfile.TemporaryDirectory() as tmp:
        instance = init_instance(Path(tmp) / "inst")
        model = ScriptedChatModel(replies=["I think it depends. My view: start small."])
        deps = Deps.for_instance(instance, model_for=lambda _m: model)
        with sqlite_saver(instance.checkpoint_db) as saver:
            compiled = build_turn_graph(deps).compile(checkpointer=saver, name="turn")
            figures = growth(deps, compiled, saver, marks)
            report_growth(figures)
            print(f"\n== history listing latency ({args.history_calls} calls) ==")
            history_latency(instance, compiled, args.history_calls, limit=max(marks))


if __name__ == "__main__":
    main()

"""Issue 14 item 7: crash-safe files, each fault reproduced for real (files, threads, SIGKILL)."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from state.instance import Instance
from state.journal import MemoryJournal

REPO = Path(__file__).resolve().parents[2]


def _run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ},
        timeout=300,
        check=False,
    )


# --------------------------------------------------------------------------- 1. torn journal tail

TEARER = textwrap.dedent(
    """
    import os, sys, time
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
    os.write(fd, b'{"id": "half-written", "timestamp": "2030-01-0')  # the rest never comes
    print("torn", flush=True)
    time.sleep(60)
    """
)


def test_crash_torn_journal_tail_is_moved_aside_and_the_next_entry_kept(tmp_path: Path) -> None:
    journal = MemoryJournal(tmp_path / "memory")
    first = journal.append(journal.new_entry("before the crash", author="self"))
    day = journal.day_file(first.timestamp.date())
    intact = day.stat().st_size
    writer = subprocess.Popen(
        [sys.executable, "-c", TEARER, str(day)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None and writer.stdout.readline().strip() == "torn"
    writer.send_signal(signal.SIGKILL)  # killed in the middle of its record
    writer.wait(timeout=30)
    assert not day.read_bytes().endswith(b"\n")

    second = journal.append(
        journal.new_entry("after the crash", author="self", timestamp=first.timestamp)
    )

    report = journal.read()
    assert [e.id for e in report.entries] == [first.id, second.id]  # not swallowed
    assert report.skipped == []
    [(aside, record)] = journal.torn()
    assert aside == day.with_name(day.name + ".torn")
    assert record["offset"] == intact and "no newline" in record["reason"]
    assert record["text"].startswith('{"id": "half-written"')


def test_crash_unparseable_last_line_is_moved_aside_once(tmp_path: Path) -> None:
    journal = MemoryJournal(tmp_path)
    first = journal.append(journal.new_entry("one", author="self"))
    day = journal.day_file(first.timestamp.date())
    with day.open("ab") as handle:
        handle.write(b'{"id": "garbled\x00\n')
    for text in ("two", "three"):
        journal.append(journal.new_entry(text, author="self", timestamp=first.timestamp))
    assert [e.description for e in journal.read().entries] == ["one", "two", "three"]
    assert [r["reason"] for _, r in journal.torn()] == ["last line does not parse"]


def test_crash_doctor_reports_the_torn_line(instance: Instance) -> None:
    journal = MemoryJournal(instance.memory_dir)
    entry = journal.append(journal.new_entry("hello", author="self"))
    with journal.day_file(entry.timestamp.date()).open("ab") as handle:
        handle.write(b'{"id": "cut')
    journal.append(journal.new_entry("next", author="self", timestamp=entry.timestamp))
    from graph.doctor import run_checks

    checks = {c.name: c for c in run_checks(instance)}
    torn = checks["torn lines"]
    assert torn.ok and torn.warning and "1 torn line(s)" in torn.detail
    assert checks["memory ledger"].ok  # the ledger itself reads clean


def test_crash_signal_ledger_append_repairs_its_tail(tmp_path: Path) -> None:
    from state.files import append_jsonl, torn_lines

    path = tmp_path / "signals" / "2030-01-01.jsonl"
    append_jsonl(path, {"event": "FactAdded", "n": 1})
    with path.open("ab") as handle:
        handle.write(b'{"event": "FactAdd')
    append_jsonl(path, {"event": "FactAdded", "n": 2})
    lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert [r["n"] for r in lines] == [1, 2]
    assert len(torn_lines(tmp_path)) == 1


# --------------------------------------------------------------------------- 2. values and goals

GOAL_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from state.instance import Instance
    from state.permissions import DataWriter
    from state.records import GoalRecord

    instance, loop = Instance(Path(sys.argv[1])), sys.argv[2]
    year, count, tag = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    writer = DataWriter(instance, loop)
    for i in range(count):
        if loop == "action":   # lumen run: the DECIDE step's skill-gap goals
            writer.add_skill_gap_goal(f"task {i}", year=year)
        else:                  # lumen reflect: new goals and value weights
            writer.add_goal(GoalRecord(name=f"reflected {tag} {i}", weight=0.4), year=year)
            writer.update_values(
                lambda vs: [v.model_copy(update={"weight": round(v.weight + 0.001, 6)})
                            if v.name == "curiosity" else v for v in vs]
            )
    """
)


def test_crash_concurrent_reflect_and_run_lose_no_goal_or_value_update(
    instance: Instance,
) -> None:
    from state.files import load_goals, load_values

    year = datetime.now(UTC).year
    before = {v.name: v.weight for v in load_values(instance.values_file)}
    count = 25
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                GOAL_WRITER,
                str(instance.root),
                loop,
                str(year),
                str(count),
                tag,
            ],
            cwd=REPO,
        )
        for loop, tag in (("action", "r"), ("reflection", "a"), ("reflection", "b"))
    ]
    assert [w.wait(timeout=300) for w in writers] == [0, 0, 0]
    names = [g.name for _, g in load_goals(instance.goals_dir)]
    assert sum(n.startswith("Author a skill to task") for n in names) == count
    assert sum(n.startswith("reflected") for n in names) == 2 * count
    after = {v.name: v.weight for v in load_values(instance.values_file)}
    assert after["curiosity"] == pytest.approx(before["curiosity"] + 2 * count * 0.001)


def test_crash_stale_value_write_is_refused_not_lost(instance: Instance) -> None:
    from state.files import load_values
    from state.permissions import DataWriter, StaleWriteError

    writer = DataWriter(instance, "reflection")
    read = load_values(instance.values_file)
    other = [v.model_copy(update={"weight": 0.11}) if i == 0 else v for i, v in enumerate(read)]
    writer.write_values(other)  # another process wrote in between
    mine = [v.model_copy(update={"weight": 0.99}) if i == 1 else v for i, v in enumerate(read)]
    with pytest.raises(StaleWriteError):
        writer.write_values(mine, based_on=read)
    weights = [v.weight for v in load_values(instance.values_file)]
    assert 0.11 in weights and 0.99 not in weights  # the other writer's update survives


# --------------------------------------------------------------------------- 3. source_ref dedup


def _fact_lines(instance: Instance, ref: str) -> int:
    found = 0
    for path in (instance.data / "signals").rglob("*.jsonl"):
        for raw in path.read_bytes().splitlines():
            record = json.loads(raw)
            found += record.get("event") == "FactAdded" and record.get("source_ref") == ref
    return found


def test_crash_two_threads_ingesting_one_ref_write_one_fact(instance: Instance) -> None:
    from graph.deps import Deps
    from graph.ingress import screen

    deps = Deps.for_instance(instance, model_for=lambda mode: None)  # type: ignore[arg-type,return-value]
    refs = [f"https://news.example/item/{i}" for i in range(6)]
    results: list[bool] = []
    lock = threading.Lock()

    def ingest(ref: str, barrier: threading.Barrier) -> None:
        barrier.wait()
        screened = screen(
            deps, f"Storm warning for the coast ({ref}).", source="news", source_ref=ref
        )
        with lock:
            results.append(screened.duplicate)

    for ref in refs:
        barrier = threading.Barrier(4)
        threads = [threading.Thread(target=ingest, args=(ref, barrier)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert [_fact_lines(instance, ref) for ref in refs] == [1] * len(refs)
    assert results.count(False) == len(refs)


def test_crash_between_fact_line_and_index_leaves_no_duplicate(instance: Instance) -> None:
    from graph.deps import Deps
    from graph.ingress import screen

    deps = Deps.for_instance(instance, model_for=lambda mode: None)  # type: ignore[arg-type,return-value]
    assert not screen(deps, "Ferry timetable changes.", source="news", source_ref="ref-a").duplicate
    index = instance.machine / "signal_refs.json"
    index.write_text("{not json")  # a torn or lost index: the ledger still knows ref-a
    again = screen(deps, "Ferry timetable changes.", source="news", source_ref="ref-a")
    assert again.duplicate and _fact_lines(instance, "ref-a") == 1
    assert "ref-a" in json.loads(index.read_text())["refs"]


# --------------------------------------------------------------------------- 4. task leases


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2031, 5, 6, 7, 8, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_crash_running_tasks_of_a_dead_runner_return_after_the_lease(instance: Instance) -> None:
    from state.tasks import DEFAULT_LEASE, MAX_PENDING_AGENT, TaskQueue

    clock = Clock()
    queue = TaskQueue(instance, clock=clock)
    later = clock.now + timedelta(days=3)
    tasks = [
        queue.propose_agent(f"check feed {i}", origin="reflection", expires_at=later)
        for i in range(MAX_PENDING_AGENT)
    ]
    for task in tasks:  # a runner starts them all, then is SIGKILLed: none ever finishes
        assert task is not None and queue.start(task.id, runner="dead:1:x") is not None
    assert queue.propose_agent("one more", origin="reflection", expires_at=later) is None
    assert "already pending" in (queue.last_rejection or "")

    clock.now += DEFAULT_LEASE - timedelta(seconds=1)
    assert queue.due() == []  # the lease still holds
    clock.now += timedelta(seconds=2)
    due = queue.due()
    assert sorted(t.id for t in due) == sorted(t.id for t in tasks if t is not None)
    assert all(t.attempts == 1 and "presumed crashed" in t.last_error for t in due)
    assert queue.claim(due[0].id, runner="alive:2:y") is not None


def test_crash_second_runner_skips_a_task_the_first_took(instance: Instance) -> None:
    from state.errors import LumenError
    from state.tasks import TaskQueue

    clock = Clock()
    first, second = TaskQueue(instance, clock=clock), TaskQueue(instance, clock=clock)
    task = first.propose_agent(
        "summarise notes", origin="reflection", expires_at=clock.now + timedelta(days=1)
    )
    assert task is not None
    assert [t.id for t in first.due()] == [t.id for t in second.due()] == [task.id]
    assert first.claim(task.id, runner="a") is not None
    assert second.claim(task.id, runner="b") is None  # skipped, not fatal
    with pytest.raises(LumenError, match="another runner"):
        second.succeed(task.id, runner="b")
    assert first.succeed(task.id, runner="a").status == "done"


def test_crash_run_due_tasks_skips_a_task_claimed_meanwhile(
    instance: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graph.autonomy import run_due_tasks
    from state.tasks import TaskQueue
    from tests.graph.conftest import scripted_deps
    from tests.scripted import ScriptedChatModel

    task = TaskQueue(instance).propose_agent(
        "What is 6 * 7?", origin="test", expires_at=datetime.now(UTC) + timedelta(days=1)
    )
    assert task is not None
    listed = TaskQueue.due

    def due_then_raced(self: TaskQueue) -> list:  # type: ignore[type-arg]
        found = listed(self)
        TaskQueue(instance).claim(task.id, runner="other-run")  # the other `lumen run` wins
        return found

    monkeypatch.setattr(TaskQueue, "due", due_then_raced)
    deps = scripted_deps(instance, ScriptedChatModel())
    assert run_due_tasks(deps) == 1  # no LumenError: the task is skipped
    held = TaskQueue(instance).get(task.id)
    assert held.status == "running" and held.runner == "other-run"


# --------------------------------------------------------------------------- 5. counters


def test_crash_corrupt_counters_never_break_a_veto_or_ingest(instance: Instance) -> None:
    from graph.deps import Deps
    from graph.doctor import run_checks
    from graph.ingress import screen
    from state.counters import read_counters

    counters = instance.machine / "counters.json"
    counters.write_text('{"shadow_veto_total": 3, "trunc')
    assert next(c for c in run_checks(instance) if c.name == "metrics").warning
    deps = Deps.for_instance(instance, model_for=lambda mode: None)  # type: ignore[arg-type,return-value]
    result = deps.perform(
        tool="shell",
        tool_input={"command": "rm -rf /"},
        psyche=instance.load_psyche(),
        calls_made=0,
        max_calls=2,
    )
    assert result.status == "vetoed"  # the guard held; counting failed open
    screened = screen(deps, "Road closed on Main St.", source="news", source_ref="r-1")
    assert not screened.duplicate and _fact_lines(instance, "r-1") == 1
    assert json.loads(counters.read_text())["counters_rebuilt_total"] == 1
    assert (instance.machine / "counters.json.corrupt").exists()
    assert read_counters(instance.machine)["shadow_veto_total"] == 1
    assert not next(c for c in run_checks(instance) if c.name == "metrics").warning


def test_crash_counters_lock_held_elsewhere_drops_the_count_only(
    instance: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    from filelock import FileLock

    from state import counters

    monkeypatch.setattr(counters, "LOCK_TIMEOUT_S", 0.05)
    with FileLock(str(instance.machine / "counters.json.lock")):
        done = threading.Event()

        def count() -> None:
            counters.bump(instance.machine, "shadow_veto_total")
            done.set()

        thread = threading.Thread(target=count)
        started = time.monotonic()
        thread.start()
        thread.join(timeout=10)
        assert done.is_set() and time.monotonic() - started < 5

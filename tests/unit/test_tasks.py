import json
import random
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import typer
from typer.testing import CliRunner

from cli.tasks import tasks_app
from state.errors import DataFileError, LumenError
from state.instance import Instance
from state.tasks import (
    MAX_PENDING_AGENT,
    RETRY_CAP_SECONDS,
    TaskQueue,
    normalize_cron,
    retry_delay,
)

REPO = Path(__file__).resolve().parents[2]
T0 = datetime(2025, 1, 1, 8, 30, tzinfo=UTC)  # a Wednesday


class Clock:
    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queue(instance: Instance, clock: Clock) -> TaskQueue:
    return TaskQueue(instance, clock=clock, rng=random.Random(7))


# --------------------------------------------------------------------------- cron


@pytest.mark.parametrize(
    ("expression", "normal"),
    [
        ("0 9 * * *", "0 9 * * *"),
        ("  */15   *  * * mon-fri ", "*/15 * * * mon-fri"),
        ("0 9 1,15 * *", "0 9 1,15 * *"),
        ("@daily", "@daily"),
        ("@HOURLY", "@hourly"),
    ],
)
def test_good_cron_expressions_are_accepted(expression: str, normal: str) -> None:
    assert normalize_cron(expression) == normal


@pytest.mark.parametrize(
    "expression",
    ["", "   ", "0 9 * *", "0 9 * * * *", "61 * * * *", "0 25 * * *", "*/0 * * * *",
     "0 9 * * 8", "foo bar baz qux quux", "@reboot", "@sometimes", "H 9 * * *"],
)  # fmt: skip
def test_bad_cron_expressions_raise_one_line(queue: TaskQueue, expression: str) -> None:
    with pytest.raises(LumenError) as info:
        queue.add_user(expression, "say hi")
    assert "\n" not in str(info.value)
    assert queue.list(include_finished=True) == []


def test_cron_that_never_fires_is_rejected(queue: TaskQueue) -> None:
    with pytest.raises(LumenError, match="never fires"):
        queue.add_user("0 0 30 2 *", "feb 30th")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("0 9 * * *", datetime(2025, 1, 1, 9, 0, tzinfo=UTC)),
        ("0 8 * * *", datetime(2025, 1, 2, 8, 0, tzinfo=UTC)),
        ("30 8 * * *", datetime(2025, 1, 2, 8, 30, tzinfo=UTC)),  # strictly after now
        ("*/20 * * * *", datetime(2025, 1, 1, 8, 40, tzinfo=UTC)),
        ("0 9 * * sat", datetime(2025, 1, 4, 9, 0, tzinfo=UTC)),
        ("@monthly", datetime(2025, 2, 1, 0, 0, tzinfo=UTC)),
    ],
)
def test_next_run_follows_the_injected_clock(
    queue: TaskQueue, expression: str, expected: datetime
) -> None:
    task = queue.add_user(expression, "do it")
    assert task.next_run == expected
    assert task.job_kind == "user" and task.status == "pending" and task.created_at == T0


def test_cron_is_evaluated_in_the_queue_time_zone(instance: Instance, clock: Clock) -> None:
    berlin = TaskQueue(instance, clock=clock, tz=ZoneInfo("Europe/Berlin"))
    task = berlin.add_user("0 10 * * *", "guten Morgen")  # now is 09:30 CET
    assert task.next_run == datetime(2025, 1, 1, 9, 0, tzinfo=UTC)  # 10:00 CET
    clock.now = datetime(2025, 3, 30, 12, 0, tzinfo=UTC)  # after the switch to summer time
    berlin.start(task.id)
    assert berlin.succeed(task.id).next_run == datetime(2025, 3, 31, 8, 0, tzinfo=UTC)


def test_user_prompt_limits(queue: TaskQueue) -> None:
    with pytest.raises(LumenError, match="prompt"):
        queue.add_user("0 9 * * *", "   ")
    with pytest.raises(LumenError, match="prompt"):
        queue.add_user("0 9 * * *", "x" * 501)
    assert queue.add_user("0 9 * * *", "x" * 500).prompt == "x" * 500


# --------------------------------------------------------------------------- agent proposals


def test_sixth_pending_agent_task_is_rejected(queue: TaskQueue, clock: Clock) -> None:
    expires = T0 + timedelta(days=1)
    accepted = [queue.propose_agent(f"idea {i}", origin="reflection", expires_at=expires)
                for i in range(MAX_PENDING_AGENT)]  # fmt: skip
    assert all(t is not None for t in accepted) and queue.last_rejection is None
    assert queue.propose_agent("idea 5", origin="reflection", expires_at=expires) is None
    assert queue.last_rejection is not None and "cap is 5" in queue.last_rejection
    # a running agent task still holds its slot
    first = accepted[0]
    assert first is not None
    queue.start(first.id)
    assert queue.propose_agent("idea 6", origin="reflection", expires_at=expires) is None
    # user tasks are not limited by the agent cap
    queue.add_user("0 9 * * *", "user job")
    # overflow 0: never more than the cap live, even after many attempts
    for i in range(20):
        queue.propose_agent(f"flood {i}", origin="reflection", expires_at=expires)
    live = [t for t in queue.list() if t.job_kind == "agent"]
    assert len(live) == MAX_PENDING_AGENT
    # finishing one frees one slot
    queue.succeed(first.id)
    assert queue.propose_agent("idea 7", origin="reflection", expires_at=expires) is not None
    assert queue.propose_agent("idea 8", origin="reflection", expires_at=expires) is None


def test_expired_agent_tasks_free_their_slots(queue: TaskQueue, clock: Clock) -> None:
    for i in range(MAX_PENDING_AGENT):
        queue.propose_agent(f"idea {i}", origin="goal", expires_at=T0 + timedelta(hours=1))
    clock.advance(hours=2)
    task = queue.propose_agent("fresh", origin="goal", expires_at=clock.now + timedelta(hours=1))
    assert task is not None


@pytest.mark.parametrize(
    ("prompt", "expires", "origin", "attempts", "reason"),
    [
        ("ok", T0 - timedelta(seconds=1), "goal", 3, "not in the future"),
        ("ok", T0, "goal", 3, "not in the future"),
        ("ok", T0 + timedelta(days=30, seconds=1), "goal", 3, "30 days"),
        ("ok", datetime(2025, 1, 2), "goal", 3, "timezone-aware"),
        ("x" * 501, T0 + timedelta(days=1), "goal", 3, "prompt"),
        ("  ", T0 + timedelta(days=1), "goal", 3, "prompt"),
        ("ok", T0 + timedelta(days=1), "", 3, "origin"),
        ("ok", T0 + timedelta(days=1), "goal", 0, "max_attempts"),
        ("ok", T0 + timedelta(days=1), "goal", 11, "max_attempts"),
    ],
)
def test_out_of_bounds_proposals_are_rejected(
    queue: TaskQueue, prompt: str, expires: datetime, origin: str, attempts: int, reason: str
) -> None:
    task = queue.propose_agent(prompt, origin=origin, expires_at=expires, max_attempts=attempts)
    assert task is None
    assert queue.last_rejection is not None and reason in queue.last_rejection
    assert queue.list(include_finished=True) == []


def test_proposal_at_the_limits_is_accepted(queue: TaskQueue) -> None:
    task = queue.propose_agent("x" * 500, origin="goal", expires_at=T0 + timedelta(days=30))
    assert task is not None
    assert task.job_kind == "agent" and task.cron is None and task.next_run == T0
    assert queue.due() == [task]


def test_duplicate_live_agent_prompt_is_rejected(queue: TaskQueue) -> None:
    expires = T0 + timedelta(days=1)
    assert queue.propose_agent("same", origin="goal", expires_at=expires) is not None
    assert queue.propose_agent(" same ", origin="goal", expires_at=expires) is None
    assert queue.last_rejection is not None and "duplicate" in queue.last_rejection


# --------------------------------------------------------------------------- expiry


def test_expiry_cleanup_is_complete(queue: TaskQueue, clock: Clock) -> None:
    soon = [
        queue.propose_agent(f"soon {i}", origin="goal", expires_at=T0 + timedelta(minutes=10 + i))
        for i in range(4)
    ]
    later = queue.propose_agent("later", origin="goal", expires_at=T0 + timedelta(days=2))
    user = queue.add_user("0 9 * * *", "bounded", expires_at=T0 + timedelta(minutes=5))
    forever = queue.add_user("0 9 * * *", "forever")
    assert queue.cleanup_expired() == []
    clock.advance(hours=1)
    expired = queue.cleanup_expired()
    expected = {t.id for t in soon if t is not None} | {user.id}
    assert {t.id for t in expired} == expected  # 100%
    assert all(t.status == "expired" and t.finished_at == clock.now for t in expired)
    assert queue.cleanup_expired() == []  # idempotent
    assert later is not None
    assert {t.id for t in queue.list()} == {later.id, forever.id}
    statuses = {t.id: t.status for t in queue.list(include_finished=True)}
    assert all(statuses[i] == "expired" for i in expected)


def test_due_cleans_up_first_and_never_returns_expired(queue: TaskQueue, clock: Clock) -> None:
    task = queue.propose_agent("quick", origin="goal", expires_at=T0 + timedelta(minutes=1))
    assert task is not None
    clock.advance(minutes=2)
    assert queue.due() == []
    with pytest.raises(LumenError, match="expired"):
        queue.start(task.id)
    assert queue.get(task.id).status == "expired"


def test_due_honours_next_run(queue: TaskQueue, clock: Clock) -> None:
    task = queue.add_user("0 9 * * *", "morning")
    assert queue.due() == []
    clock.advance(minutes=29, seconds=59)
    assert queue.due() == []
    clock.advance(seconds=1)
    assert [t.id for t in queue.due()] == [task.id]


# --------------------------------------------------------------------------- run lifecycle


def test_retry_backoff_schedule_and_final_failure(instance: Instance, clock: Clock) -> None:
    queue = TaskQueue(instance, clock=clock, rng=random.Random(42))
    task = queue.propose_agent(
        "flaky", origin="goal", expires_at=T0 + timedelta(days=3), max_attempts=4
    )
    assert task is not None
    delays = []
    for attempt in (1, 2, 3):
        assert [t.id for t in queue.due()] == [task.id]
        queue.start(task.id)
        failed = queue.fail(task.id, "boom\nsecond line")
        assert failed.status == "pending" and failed.attempts == attempt
        assert failed.last_error == "boom second line"
        assert failed.retry_at is not None
        delay = (failed.retry_at - clock.now).total_seconds()
        nominal = 30 * 2 ** (attempt - 1)
        assert 0.8 * nominal <= delay <= 1.2 * nominal
        delays.append(delay)
        clock.advance(seconds=delay - 1)
        assert queue.due() == []  # not before retry_at
        clock.advance(seconds=1)
    # the schedule is reproducible from the seed
    replay = random.Random(42)
    assert delays == [retry_delay(n, replay).total_seconds() for n in (1, 2, 3)]
    queue.start(task.id)
    final = queue.fail(task.id, "boom")
    assert final.status == "failed" and final.attempts == 4 and final.retry_at is None
    assert queue.due() == [] and queue.list() == []


def test_retry_delay_bounds_and_cap() -> None:
    rng = random.Random(0)
    for attempt in range(1, 40):
        nominal = min(30 * 2 ** (attempt - 1), 10**9)
        for _ in range(50):
            delay = retry_delay(attempt, rng).total_seconds()
            assert 0.8 * min(nominal, RETRY_CAP_SECONDS) <= delay <= RETRY_CAP_SECONDS
            assert delay <= 1.2 * nominal
    assert retry_delay(100, rng) == timedelta(seconds=RETRY_CAP_SECONDS)


def test_user_cron_task_reschedules_after_success(queue: TaskQueue, clock: Clock) -> None:
    task = queue.add_user("0 9 * * *", "morning report")
    clock.now = datetime(2025, 1, 1, 9, 0, 5, tzinfo=UTC)
    queue.start(task.id)
    queue.fail(task.id, "transient")
    clock.advance(minutes=5)
    queue.start(task.id)
    done = queue.succeed(task.id)
    assert done.status == "pending"
    assert done.next_run == datetime(2025, 1, 2, 9, 0, tzinfo=UTC)
    assert done.attempts == 0 and done.retry_at is None and done.last_error == ""
    assert queue.due() == []


def test_user_cron_task_expires_when_next_run_is_past_expiry(
    queue: TaskQueue, clock: Clock
) -> None:
    task = queue.add_user("0 9 * * *", "once", expires_at=T0 + timedelta(hours=12))
    clock.now = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
    queue.start(task.id)
    assert queue.succeed(task.id).status == "expired"


def test_one_shot_agent_task_is_done_after_success(queue: TaskQueue) -> None:
    task = queue.propose_agent("once", origin="goal", expires_at=T0 + timedelta(days=1))
    assert task is not None
    assert queue.start(task.id).status == "running"
    assert queue.succeed(task.id).status == "done"
    assert queue.list() == [] and queue.due() == []


def test_transitions_check_the_current_status(queue: TaskQueue) -> None:
    task = queue.add_user("0 9 * * *", "job")
    with pytest.raises(LumenError, match="not running"):
        queue.succeed(task.id)
    with pytest.raises(LumenError, match="not running"):
        queue.fail(task.id, "x")
    queue.start(task.id)
    with pytest.raises(LumenError, match="not pending"):
        queue.start(task.id)


def test_recover_stale_counts_as_a_failed_attempt(queue: TaskQueue, clock: Clock) -> None:
    task = queue.propose_agent("crashy", origin="goal", expires_at=T0 + timedelta(days=1))
    assert task is not None
    queue.start(task.id)
    assert queue.recover_stale(older_than=timedelta(minutes=10)) == []
    clock.advance(minutes=11)
    [stale] = queue.recover_stale(older_than=timedelta(minutes=10))
    assert stale.status == "pending" and stale.attempts == 1 and "interrupted" in stale.last_error


def test_cancel(queue: TaskQueue) -> None:
    task = queue.add_user("0 9 * * *", "job")
    with pytest.raises(LumenError, match="no task with id 'nope'"):
        queue.cancel("nope")
    assert queue.cancel(task.id[:5]).status == "cancelled"  # a unique prefix works
    with pytest.raises(LumenError, match="already cancelled"):
        queue.cancel(task.id)
    assert queue.list() == [] and queue.due() == []


def test_naive_clock_is_a_programming_error(instance: Instance) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        TaskQueue(instance, clock=lambda: datetime(2025, 1, 1)).list()


# --------------------------------------------------------------------------- persistence


def test_persists_across_queue_instances(instance: Instance, clock: Clock) -> None:
    first = TaskQueue(instance, clock=clock)
    user = first.add_user("0 9 * * *", "morning")
    agent = first.propose_agent("think", origin="reflection", expires_at=T0 + timedelta(days=1))
    assert agent is not None
    first.start(agent.id)
    second = TaskQueue(instance, clock=clock)
    assert {t.id: t for t in second.list()} == {user.id: user, agent.id: second.get(agent.id)}
    assert second.get(agent.id).status == "running"
    second.succeed(agent.id)
    assert first.get(agent.id).status == "done"
    raw = json.loads((instance.machine / "tasks.json").read_text())
    assert raw["version"] == 1 and len(raw["tasks"]) == 2


def test_corrupt_file_is_a_one_line_data_error(instance: Instance, queue: TaskQueue) -> None:
    (instance.machine / "tasks.json").write_text('{"version": 1, "tasks": [{"id": ""}]}')
    with pytest.raises(DataFileError) as info:
        queue.list()
    assert "tasks.json" in str(info.value) and "\n" not in str(info.value)
    (instance.machine / "tasks.json").write_text("{not json")
    with pytest.raises(DataFileError, match="invalid JSON"):
        queue.list()


def test_reads_do_not_rewrite_the_file(instance: Instance, queue: TaskQueue) -> None:
    queue.add_user("0 9 * * *", "job")
    path = instance.machine / "tasks.json"
    before = path.stat().st_mtime_ns, path.stat().st_ino
    queue.list(include_finished=True)
    queue.due()
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == before


ADD_MANY = textwrap.dedent(
    """
    import sys
    from datetime import UTC, datetime, timedelta
    from pathlib import Path
    from state.instance import Instance
    from state.tasks import TaskQueue

    import time

    queue = TaskQueue(Instance(Path(sys.argv[1])))
    sync = Path(sys.argv[4])
    (sync / sys.argv[2]).touch()
    deadline = time.monotonic() + 30
    while len(list(sync.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)  # start both loops together
    for i in range(int(sys.argv[3])):
        queue.add_user("0 9 * * *", f"{sys.argv[2]}-{i}")
    """
)


def test_concurrent_processes_lose_no_tasks(instance: Instance, tmp_path: Path) -> None:
    count = 40
    sync = tmp_path / "sync"
    sync.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", ADD_MANY, str(instance.root), name, str(count), str(sync)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name in ("a", "b")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
    raw = json.loads((instance.machine / "tasks.json").read_text())  # valid JSON
    prompts = {t["prompt"] for t in raw["tasks"]}
    assert prompts == {f"{n}-{i}" for n in ("a", "b") for i in range(count)}
    assert len({t["id"] for t in raw["tasks"]}) == 2 * count
    assert len(TaskQueue(instance).list()) == 2 * count


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def cli_app(instance: Instance, monkeypatch: pytest.MonkeyPatch) -> typer.Typer:
    monkeypatch.setenv("LUMEN_HOME", str(instance.root))
    root = typer.Typer()

    @root.callback()
    def _root() -> None:
        """Stand-in for the lumen app."""

    root.add_typer(tasks_app, name="tasks")
    return root


def test_cli_add_list_cancel(instance: Instance, cli_app: typer.Typer) -> None:
    runner = CliRunner()
    added = runner.invoke(
        cli_app, ["tasks", "add", "--cron", "0 9 * * *", "--prompt", "standup", "--json"]
    )
    assert added.exit_code == 0, added.output
    task = json.loads(added.stdout)
    assert task["job_kind"] == "user" and task["origin"] == "cli" and task["cron"] == "0 9 * * *"

    listed = runner.invoke(cli_app, ["tasks", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [t["id"] for t in json.loads(listed.stdout)] == [task["id"]]

    table = runner.invoke(cli_app, ["tasks"])
    assert table.exit_code == 0 and task["id"] in table.stdout and "0 9 * * *" in table.stdout

    plain = runner.invoke(cli_app, ["tasks", "add", "--cron", "@hourly", "--prompt", "tick"])
    assert plain.exit_code == 0 and plain.stdout.startswith("Added task t")

    cancelled = runner.invoke(cli_app, ["tasks", "cancel", task["id"]])
    assert cancelled.exit_code == 0 and task["id"] in cancelled.stdout
    assert len(json.loads(runner.invoke(cli_app, ["tasks", "--json"]).stdout)) == 1
    every = json.loads(runner.invoke(cli_app, ["tasks", "--all", "--json"]).stdout)
    assert {t["status"] for t in every} == {"pending", "cancelled"}


def test_cli_errors_are_lumen_errors(instance: Instance, cli_app: typer.Typer) -> None:
    runner = CliRunner()
    bad = runner.invoke(cli_app, ["tasks", "add", "--cron", "61 * * * *", "--prompt", "x"])
    assert bad.exit_code != 0 and isinstance(bad.exception, LumenError)
    unknown = runner.invoke(cli_app, ["tasks", "cancel", "nope"])
    assert unknown.exit_code != 0 and isinstance(unknown.exception, LumenError)
    assert "no task with id" in str(unknown.exception)


def test_cli_needs_an_instance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LUMEN_HOME", str(tmp_path / "nowhere"))
    result = CliRunner().invoke(tasks_app, [])
    assert isinstance(result.exception, LumenError) and "no Lumen instance" in str(result.exception)

"""The persistent task queue: user cron jobs and the agent's own bounded proposals.

Seed 004 §6 Phase 2 ("self-task queue with boundaries"). Every task carries ``job_kind``
(``user`` | ``agent``), ``origin``, ``expires_at`` and ``max_attempts`` so the scheduler can keep
the two execution paths apart (Phase 3: an ``agent`` task must go through the constrained agent
path, never straight to a shell). The boundaries on agent tasks (§8: queue overflow 0, expired
clean-up 100%):

* at most ``MAX_PENDING_AGENT`` (5) live agent tasks; "live" means pending *or* running, so an
  agent cannot start five tasks and then queue five more;
* every agent task expires, no later than ``MAX_AGENT_TTL`` (30 days) after it is proposed;
* a prompt of at most ``MAX_PROMPT_CHARS`` (500) characters, no duplicate of a live agent task.

A rejected proposal is not an error: ``propose_agent`` returns ``None`` and leaves the reason in
``TaskQueue.last_rejection``.

The queue lives in ``<instance>/.lumen/tasks.json`` (``{"version": 1, "tasks": [...]}``). Every
operation is one read-modify-write under a file lock, written atomically (temp file + fsync +
rename), so the file survives crashes and restarts and several processes may share it.

Times are stored in UTC. Cron expressions (5 fields, or ``@daily``-style aliases) are evaluated
in the queue's ``tz`` (UTC unless given), then stored in UTC.

Lifecycle::

    pending --start--> running --succeed--> done            (one-shot: agent tasks)
                               --succeed--> pending         (user cron: next fire time)
                               --fail-----> pending          (retry_at = now + backoff)
                               --fail-----> failed           (attempts == max_attempts)
    pending/running --cancel--> cancelled
    pending --past expires_at--> expired                     (cleanup_expired, due, start, ...)
    running --lease runs out--> pending | failed             (the runner crashed; one attempt)

Leases: ``start``/``claim`` give the runner a lease (``DEFAULT_LEASE``, ``renew`` extends it).
Every read of the queue first returns running tasks whose lease ran out to pending (``_reclaim``),
so a task left ``running`` by a killed process never holds a slot of the agent cap for ever. Two
runners on one due task: ``claim`` lets the first take it and the second skip it; ``succeed`` and
``fail`` with ``runner`` refuse a runner whose lease was taken over.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from state.errors import DataFileError, LumenError
from state.files import atomic_write_json, read_json
from state.instance import Instance

JobKind = Literal["user", "agent"]
TaskStatus = Literal["pending", "running", "done", "failed", "cancelled", "expired"]

MAX_PENDING_AGENT = 5
MAX_PROMPT_CHARS = 500
MAX_ORIGIN_CHARS = 100
MAX_ERROR_CHARS = 500
MAX_AGENT_TTL = timedelta(days=30)
MAX_ATTEMPTS_LIMIT = 10
RETRY_BASE_SECONDS = 30.0
RETRY_FACTOR = 2.0
RETRY_CAP_SECONDS = 3600.0
RETRY_JITTER = 0.2
MAX_FINISHED_KEPT = 200
LOCK_TIMEOUT_SECONDS = 10.0
DEFAULT_LEASE = timedelta(minutes=30)
"""How long a runner holds a task it started; a slow turn on a small CPU takes minutes."""
LEGACY_LEASE = timedelta(hours=1)
"""The lease of a task started before leases existed (no ``lease_until``): ``recover_stale``'s."""
TASKS_FILE = "tasks.json"

LIVE_STATUSES: frozenset[str] = frozenset({"pending", "running"})
CRON_ALIASES = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)


class Task(BaseModel):
    """One scheduled task."""

    model_config = ConfigDict(validate_assignment=True, extra="ignore")

    id: str = Field(min_length=1)
    job_kind: JobKind
    origin: str = Field(min_length=1, max_length=MAX_ORIGIN_CHARS)
    prompt: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)
    cron: str | None = None
    next_run: AwareDatetime | None = None
    expires_at: AwareDatetime | None = None
    max_attempts: int = Field(default=3, ge=1, le=MAX_ATTEMPTS_LIMIT)
    attempts: int = Field(default=0, ge=0)
    status: TaskStatus = "pending"
    created_at: AwareDatetime
    last_error: str = ""
    retry_at: AwareDatetime | None = None
    started_at: AwareDatetime | None = None
    finished_at: AwareDatetime | None = None
    runner: str = ""
    """Who holds the running task (``host:pid:nonce``); empty while pending."""
    lease_until: AwareDatetime | None = None
    """When a running task's lease ends: past it, the runner is presumed dead (``_reclaim``)."""

    @property
    def live(self) -> bool:
        """Say whether the task is still pending or running."""
        return self.status in LIVE_STATUSES

    def run_at(self) -> datetime | None:
        """Return when the task may run next: the later of ``next_run`` and ``retry_at``."""
        if self.next_run is None or self.retry_at is None:
            return self.next_run or self.retry_at
        return max(self.next_run, self.retry_at)


TaskList = list[Task]
"""A list of tasks (an alias: inside ``TaskQueue`` the name ``list`` is the method)."""


class _QueueFile(BaseModel):
    version: Literal[1] = 1
    tasks: list[Task] = Field(default_factory=list)


# --------------------------------------------------------------------------- cron


def normalize_cron(expression: str) -> str:
    """Validate a cron expression with croniter and return it with single spaces.

    Accepts the standard five fields (minute hour day-of-month month day-of-week, with croniter's
    extensions such as ``L`` and ``1#2``) or one of the ``@daily``-style aliases. Six- and
    seven-field forms (seconds, years) are refused: ``0 9 * * * *`` would silently mean seconds.

    Raises:
        LumenError: the expression is empty, has the wrong number of fields or does not parse.
    """
    from croniter import CroniterError, croniter  # type: ignore[import-untyped]

    text = " ".join(expression.split())
    if not text:
        raise LumenError("cron expression is empty")
    if text.startswith("@"):
        if text.lower() not in CRON_ALIASES:
            aliases = ", ".join(sorted(CRON_ALIASES))
            raise LumenError(f"unknown cron alias {text!r} (use one of {aliases})")
        return text.lower()
    fields = len(text.split(" "))
    if fields != 5:
        raise LumenError(
            f"cron expression {text!r} has {fields} field(s); "
            "use 5: minute hour day-of-month month day-of-week"
        )
    try:
        croniter(text)
    except (CroniterError, ValueError, TypeError, KeyError) as exc:
        raise LumenError(f"invalid cron expression {text!r}: {_one_line(str(exc))}") from None
    return text


def next_fire_time(expression: str, after: datetime, tz: tzinfo = UTC) -> datetime:
    """Return the first time strictly after ``after`` that ``expression`` fires, in UTC.

    Raises:
        LumenError: the expression never fires (e.g. ``0 0 30 2 *``) or does not parse.
    """
    from croniter import CroniterBadDateError, CroniterError, croniter

    try:
        value = croniter(expression, after.astimezone(tz)).get_next(datetime)
    except CroniterBadDateError:
        raise LumenError(f"cron expression {expression!r} never fires") from None
    except (CroniterError, ValueError, TypeError, KeyError) as exc:
        raise LumenError(f"invalid cron expression {expression!r}: {_one_line(str(exc))}") from None
    if not isinstance(value, datetime):  # pragma: no cover - croniter returns what it is asked
        raise LumenError(f"cron expression {expression!r}: no next time")
    return value.astimezone(UTC)


# --------------------------------------------------------------------------- retry


def retry_delay(attempt: int, rng: random.Random) -> timedelta:
    """Return the back-off before retry number ``attempt`` (1 after the first failure).

    ``min(RETRY_CAP, RETRY_BASE * RETRY_FACTOR ** (attempt - 1) * U(1 - J, 1 + J))``: 30 s, 60 s,
    120 s, ... each jittered by ±20 %, never more than one hour.
    """
    exponent = max(0, attempt - 1)
    raw = RETRY_BASE_SECONDS * RETRY_FACTOR ** min(exponent, 64)
    jitter = rng.uniform(1.0 - RETRY_JITTER, 1.0 + RETRY_JITTER)
    return timedelta(seconds=min(RETRY_CAP_SECONDS, raw * jitter))


# --------------------------------------------------------------------------- the queue


class TaskQueue:
    """The task queue of one instance, stored in ``.lumen/tasks.json``.

    Attributes:
        last_rejection: why the last ``propose_agent`` call returned ``None`` (``None`` when it
            was accepted).
    """

    def __init__(
        self,
        instance: Instance,
        *,
        clock: Callable[[], datetime] | None = None,
        rng: random.Random | None = None,
        tz: tzinfo = UTC,
    ) -> None:
        self.path: Path = instance.machine / TASKS_FILE
        self._clock = clock or (lambda: datetime.now(UTC))
        self._rng = rng or random.Random()
        self._tz = tz
        self.last_rejection: str | None = None

    # ------------------------------------------------------------------ adding

    def add_user(
        self,
        cron: str,
        prompt: str,
        *,
        origin: str = "user",
        expires_at: datetime | None = None,
        max_attempts: int = 3,
    ) -> Task:
        """Schedule a recurring user task; ``next_run`` is the cron's next fire time.

        Raises:
            LumenError: bad cron expression, empty or over-long prompt, bad origin, expiry in the
                past or ``max_attempts`` out of range.
        """
        expression = normalize_cron(cron)
        text = _check_prompt(prompt)
        if text is None:
            raise LumenError(f"prompt must be 1..{MAX_PROMPT_CHARS} characters")
        origin = _check_origin(origin)
        _check_attempts(max_attempts)
        now = self._now()
        if expires_at is not None:
            expires_at = _aware(expires_at, "expires_at")
            if expires_at <= now:
                raise LumenError("expires_at is in the past")
        next_run = next_fire_time(expression, now, self._tz)
        with self._transaction() as tasks:
            task = Task(
                id=_new_id(tasks),
                job_kind="user",
                origin=origin,
                prompt=text,
                cron=expression,
                next_run=next_run,
                expires_at=expires_at,
                max_attempts=max_attempts,
                created_at=now,
            )
            tasks.append(task)
        return task

    def propose_agent(
        self, prompt: str, *, origin: str, expires_at: datetime, max_attempts: int = 3
    ) -> Task | None:
        """Queue a one-shot task the agent proposed for itself, due at once, if within bounds.

        Returns ``None`` and sets ``last_rejection`` when ``MAX_PENDING_AGENT`` agent tasks are
        already live, ``expires_at`` is naive, past or more than 30 days away, the prompt is empty,
        longer than 500 characters or duplicates a live agent task, or ``origin`` or
        ``max_attempts`` is out of range. Expired tasks are cleaned up first, so they never hold
        a slot.
        """
        self.last_rejection = None
        text = _check_prompt(prompt)
        if text is None:
            return self._reject(f"prompt must be 1..{MAX_PROMPT_CHARS} characters")
        try:
            origin = _check_origin(origin)
            _check_attempts(max_attempts)
            expires_at = _aware(expires_at, "expires_at")
        except LumenError as exc:
            return self._reject(str(exc))
        now = self._now()
        if expires_at <= now:
            return self._reject("expires_at is not in the future")
        if expires_at - now > MAX_AGENT_TTL:
            return self._reject(f"expires_at is more than {MAX_AGENT_TTL.days} days away")
        with self._transaction() as tasks:
            _reclaim(tasks, now)
            _expire(tasks, now)
            live = [t for t in tasks if t.job_kind == "agent" and t.live]
            if len(live) >= MAX_PENDING_AGENT:
                return self._reject(f"{len(live)} agent tasks already pending (cap is 5)")
            for other in live:
                if other.prompt == text:
                    return self._reject(f"duplicate of live agent task {other.id}")
            task = Task(
                id=_new_id(tasks),
                job_kind="agent",
                origin=origin,
                prompt=text,
                next_run=now,
                expires_at=expires_at,
                max_attempts=max_attempts,
                created_at=now,
            )
            tasks.append(task)
        return task

    # ------------------------------------------------------------------ reading

    def list(self, *, include_finished: bool = False) -> TaskList:
        """Return the tasks (pending and running ones, or all), soonest first.

        Expired tasks are cleaned up first, so a listed pending task is never past its expiry.
        """
        with self._transaction() as tasks:
            _reclaim(tasks, self._now())
            _expire(tasks, self._now())
            found = [t for t in tasks if include_finished or t.live]
        return sorted(found, key=_sort_key)

    def get(self, task_id: str) -> Task:
        """Return one task by id (or unique id prefix).

        Raises:
            LumenError: no task, or more than one, matches.
        """
        with self._transaction() as tasks:
            return _find(tasks, task_id)

    def due(self) -> TaskList:
        """Return pending tasks whose ``next_run`` (and ``retry_at``) have passed, oldest first.

        Runs ``cleanup_expired`` first, so an expired task is never due.
        """
        now = self._now()
        with self._transaction() as tasks:
            _reclaim(tasks, now)
            _expire(tasks, now)
            found = [t for t in tasks if t.status == "pending" and _is_due(t, now)]
        return sorted(found, key=_sort_key)

    # ------------------------------------------------------------------ transitions

    def cleanup_expired(self) -> TaskList:
        """Mark every pending task past its ``expires_at`` as expired; return those tasks.

        Running tasks whose lease ran out are returned to the queue first.
        """
        with self._transaction() as tasks:
            _reclaim(tasks, self._now())
            return _expire(tasks, self._now())

    def cancel(self, task_id: str) -> Task:
        """Cancel a pending or running task.

        Raises:
            LumenError: unknown id, or the task has already finished.
        """
        now = self._now()
        with self._transaction() as tasks:
            task = _find(tasks, task_id)
            if not task.live:
                raise LumenError(f"task {task.id} is already {task.status}")
            task.status = "cancelled"
            task.finished_at = now
            return task

    def start(self, task_id: str, *, runner: str = "", lease: timedelta = DEFAULT_LEASE) -> Task:
        """Mark a pending task running under a lease (the caller is about to execute it).

        Raises:
            LumenError: unknown id, the task is not pending, or it has just expired.
        """
        now = self._now()
        with self._transaction() as tasks:
            _reclaim(tasks, now)
            _expire(tasks, now)
            task = _find(tasks, task_id)
            if task.status != "pending":
                raise LumenError(f"task {task.id} is {task.status}, not pending")
            task.status = "running"
            task.started_at = now
            task.runner = runner
            task.lease_until = now + lease
            return task

    def claim(self, task_id: str, *, runner: str, lease: timedelta = DEFAULT_LEASE) -> Task | None:
        """Start a due task for ``runner``, or return ``None`` when it is no longer pending.

        Two ``lumen run`` processes may list the same due task; the first claim wins and the
        second skips it (``None``), which is not an error. A task that vanished (cancelled,
        expired, pruned) is skipped the same way.
        """
        try:
            return self.start(task_id, runner=runner, lease=lease)
        except LumenError:
            return None

    def renew(self, task_id: str, *, runner: str, lease: timedelta = DEFAULT_LEASE) -> bool:
        """Extend ``runner``'s lease on a running task; ``False`` if it no longer holds it."""
        now = self._now()
        with self._transaction() as tasks:
            _reclaim(tasks, now)
            task = next((t for t in tasks if t.id == task_id), None)
            if task is None or task.status != "running" or task.runner != runner:
                return False
            task.lease_until = now + lease
            return True

    def succeed(self, task_id: str, *, runner: str | None = None) -> Task:
        """Finish a running task: a user cron task is rescheduled, any other task is done.

        The next run of a cron task is the first fire time after now (missed fire times are not
        replayed); its attempts and retry are reset. A cron task whose next fire time is past its
        ``expires_at`` expires instead.

        Raises:
            LumenError: unknown id, the task is not running, or (``runner`` given) another
                runner holds it now because this one's lease ran out.
        """
        now = self._now()
        with self._transaction() as tasks:
            task = _running(tasks, task_id, runner)
            task.started_at = None
            task.runner = ""
            task.lease_until = None
            task.retry_at = None
            task.last_error = ""
            if task.job_kind == "user" and task.cron:
                task.attempts = 0
                task.next_run = next_fire_time(task.cron, now, self._tz)
                task.status = "pending"
                if task.expires_at is not None and task.next_run >= task.expires_at:
                    task.status = "expired"
                    task.finished_at = now
            else:
                task.status = "done"
                task.finished_at = now
            return task

    def fail(self, task_id: str, error: str, *, runner: str | None = None) -> Task:
        """Record a failed run: retry after an exponential back-off, or fail for good.

        ``attempts`` grows by one; below ``max_attempts`` the task goes back to pending with
        ``retry_at = now + retry_delay(attempts)``, otherwise it is failed.

        Raises:
            LumenError: unknown id or the task is not running.
        """
        now = self._now()
        with self._transaction() as tasks:
            task = _running(tasks, task_id, runner)
            self._record_failure(task, error, now)
            return task

    def recover_stale(self, *, older_than: timedelta = timedelta(hours=1)) -> TaskList:
        """Fail tasks left running for longer than ``older_than`` (e.g. by a crashed process).

        Each counts as a failed attempt, so a task that keeps crashing its runner still ends.
        """
        now = self._now()
        with self._transaction() as tasks:
            stale = [
                t
                for t in tasks
                if t.status == "running"
                and (t.started_at is None or t.started_at <= now - older_than)
            ]
            for task in stale:
                self._record_failure(task, "interrupted: still running after restart", now)
            return stale

    # ------------------------------------------------------------------ internals

    def _record_failure(self, task: Task, error: str, now: datetime) -> None:
        task.attempts += 1
        task.last_error = _one_line(error)[:MAX_ERROR_CHARS]
        task.started_at = None
        task.runner = ""
        task.lease_until = None
        if task.attempts >= task.max_attempts:
            task.status = "failed"
            task.retry_at = None
            task.finished_at = now
        else:
            task.status = "pending"
            task.retry_at = now + retry_delay(task.attempts, self._rng)

    def _reject(self, reason: str) -> Task | None:
        self.last_rejection = reason
        return None

    def _now(self) -> datetime:
        now = self._clock()
        if now.tzinfo is None or now.utcoffset() is None:
            raise ValueError("the task clock must return timezone-aware datetimes")
        return now.astimezone(UTC)

    @contextmanager
    def _transaction(self) -> Iterator[TaskList]:
        """Yield the task list under the file lock; write it back if it changed.

        The list is also written back when the body raises a ``LumenError`` (e.g. ``start`` of a
        task it has just expired), so clean-up done before the error is kept.
        """
        from filelock import FileLock, Timeout

        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_SECONDS)
        try:
            lock.acquire()
        except Timeout:
            raise LumenError(f"{self.path} is locked by another process; try again") from None
        try:
            tasks = self._load()
            before = [t.model_copy() for t in tasks]
            try:
                yield tasks
            except LumenError:
                if tasks != before:
                    self._save(tasks)
                raise
            if tasks != before:
                self._save(tasks)
        finally:
            lock.release()

    def _load(self) -> TaskList:
        if not self.path.exists():
            return []
        raw = read_json(self.path)
        try:
            return _QueueFile.model_validate(raw).tasks
        except ValidationError as exc:
            raise DataFileError.from_validation(self.path, exc) from exc

    def _save(self, tasks: TaskList) -> None:
        live = [t for t in tasks if t.live]
        finished = sorted(
            (t for t in tasks if not t.live), key=lambda t: t.finished_at or t.created_at
        )
        kept = live + finished[-MAX_FINISHED_KEPT:]
        kept_ids = {t.id for t in kept}
        ordered = [t for t in tasks if t.id in kept_ids]  # keep insertion order in the file
        atomic_write_json(
            self.path, _QueueFile(tasks=ordered).model_dump(mode="json", exclude_none=False)
        )


# --------------------------------------------------------------------------- helpers


def _expire(tasks: list[Task], now: datetime) -> list[Task]:
    expired = []
    for task in tasks:
        if task.status == "pending" and task.expires_at is not None and task.expires_at <= now:
            task.status = "expired"
            task.finished_at = now
            expired.append(task)
    return expired


def _is_due(task: Task, now: datetime) -> bool:
    run_at = task.run_at()
    return run_at is not None and run_at <= now


def _sort_key(task: Task) -> tuple[datetime, datetime]:
    return (task.run_at() or datetime.max.replace(tzinfo=UTC), task.created_at)


def _find(tasks: list[Task], task_id: str) -> Task:
    wanted = task_id.strip()
    if not wanted:
        raise LumenError("task id is empty")
    for task in tasks:
        if task.id == wanted:
            return task
    matches = [t for t in tasks if t.id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise LumenError(f"task id {wanted!r} is ambiguous ({len(matches)} tasks match)")
    raise LumenError(f"no task with id {wanted!r}")


def _running(tasks: list[Task], task_id: str, runner: str | None = None) -> Task:
    task = _find(tasks, task_id)
    if task.status != "running":
        raise LumenError(f"task {task.id} is {task.status}, not running")
    if runner is not None and task.runner != runner:
        raise LumenError(f"task {task.id} is held by another runner (this one's lease ran out)")
    return task


def _reclaim(tasks: list[Task], now: datetime) -> list[Task]:
    """Return running tasks whose lease ran out to the queue (their runner presumed dead).

    The lost run counts as a failed attempt (so a task that kills every runner still ends at
    ``max_attempts``) but is due again at once: the lease itself was the wait.
    """
    reclaimed = []
    for task in tasks:
        if task.status != "running":
            continue
        lease_until = task.lease_until
        if lease_until is None:
            lease_until = (task.started_at or task.created_at) + LEGACY_LEASE
        if lease_until > now:
            continue
        who = task.runner or "a runner"
        error = f"lease expired at {lease_until.isoformat()}: {who} presumed crashed"
        task.attempts += 1
        task.last_error = error[:MAX_ERROR_CHARS]
        task.started_at = None
        task.runner = ""
        task.lease_until = None
        task.retry_at = None
        if task.attempts >= task.max_attempts:
            task.status = "failed"
            task.finished_at = now
        else:
            task.status = "pending"
        reclaimed.append(task)
    return reclaimed


def runner_id() -> str:
    """Return an id for this process as a task runner (``host:pid:nonce``)."""
    import os
    import socket

    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _new_id(tasks: list[Task]) -> str:
    taken = {t.id for t in tasks}
    while True:
        candidate = f"t{uuid.uuid4().hex[:10]}"
        if candidate not in taken:
            return candidate


def _check_prompt(prompt: str) -> str | None:
    text = prompt.strip()
    if not text or len(text) > MAX_PROMPT_CHARS:
        return None
    return text


def _check_origin(origin: str) -> str:
    text = _one_line(origin)
    if not text or len(text) > MAX_ORIGIN_CHARS:
        raise LumenError(f"origin must be 1..{MAX_ORIGIN_CHARS} characters")
    return text


def _check_attempts(max_attempts: int) -> None:
    if not 1 <= max_attempts <= MAX_ATTEMPTS_LIMIT:
        raise LumenError(f"max_attempts must be 1..{MAX_ATTEMPTS_LIMIT}")


def _aware(value: datetime, name: str) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise LumenError(f"{name} must be timezone-aware")
    return value.astimezone(UTC)


def _one_line(text: str) -> str:
    return " ".join(text.split())

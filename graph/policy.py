"""SecurityPolicy: the workspace, command, rate and cost limits applied on every execution path.

AsteronIris Phase 3 and §7 (004): no access outside the workspace, no command off the allowlist,
and the hourly action and daily cost limits hold. Every check returns a typed
:class:`PolicyDecision`; a denial is never an exception, and an unreadable ledger or a lock that
cannot be taken denies (fail closed, kind ``"ledger"``).

Actions are recorded in ``<instance>/.lumen/policy_ledger.json`` under a file lock and replaced
atomically, so the limits hold across processes and restarts. The action window slides: an action
counts for exactly one hour after it was recorded (one recorded at ``t`` no longer counts at
``t + 1h``). Cost is summed per calendar day in UTC. A denied action is not recorded.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Final

from filelock import FileLock, Timeout

from state.config import Config
from state.errors import DataFileError
from state.files import atomic_write_json, read_json
from state.instance import Instance

LEDGER_NAME: Final = "policy_ledger.json"
LEDGER_VERSION: Final = 1
WINDOW: Final = timedelta(hours=1)
LOCK_TIMEOUT_S: Final = 10.0
COST_EPSILON: Final = 1e-9
"""Float slack so that costs summing exactly to the daily limit are allowed."""
MAX_KIND_CHARS: Final = 64

DENIAL_KINDS: Final = ("workspace", "path", "command", "authoring", "rate", "cost", "ledger")
"""Kinds of denial (``"ok"`` is the kind of an allowed decision)."""

SHELL_SKILL: Final = "shell"
FILES_SKILL: Final = "files"
AUTHORING_SKILL: Final = "create_skill"


@dataclass(frozen=True)
class PolicyDecision:
    """A policy verdict: allowed or denied, why, and the rule that decided.

    Attributes:
        allowed: Whether the action may proceed.
        reason: A human-readable explanation.
        kind: ``"ok"`` when allowed, else one of :data:`DENIAL_KINDS`.
    """

    allowed: bool
    reason: str
    kind: str


class _LedgerError(Exception):
    """The ledger file exists but is not a ledger."""


@dataclass
class _Ledger:
    """The persisted state: recent actions and today's spend."""

    actions: list[tuple[datetime, str]]
    day: str
    spent: float

    def to_json(self) -> dict[str, Any]:
        return {
            "version": LEDGER_VERSION,
            "actions": [{"ts": ts.isoformat(), "kind": kind} for ts, kind in self.actions],
            "cost": {"day": self.day, "total": self.spent},
        }


def _parse_ledger(raw: Any) -> _Ledger:
    """Validate the ledger JSON; raise :class:`_LedgerError` on any malformed part."""
    try:
        if not isinstance(raw, dict) or raw.get("version") != LEDGER_VERSION:
            raise _LedgerError("unknown ledger format")
        actions: list[tuple[datetime, str]] = []
        for entry in raw["actions"]:
            ts = datetime.fromisoformat(entry["ts"])
            if ts.tzinfo is None:
                raise _LedgerError("naive timestamp")
            actions.append((ts.astimezone(UTC), str(entry["kind"])))
        cost = raw["cost"]
        day = str(cost["day"])
        date.fromisoformat(day)
        spent = cost["total"]
        if isinstance(spent, bool) or not isinstance(spent, int | float):
            raise _LedgerError("cost total is not a number")
        if not math.isfinite(spent) or spent < 0:
            raise _LedgerError("cost total is not a finite non-negative number")
        return _Ledger(actions, day, float(spent))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _LedgerError(f"malformed ledger ({exc.__class__.__name__})") from exc


def _utc(moment: datetime) -> datetime:
    """Return ``moment`` in UTC; a naive datetime is taken to be UTC already."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class SecurityPolicy:
    """The security policy of one instance: paths, commands, actions per hour and cost per day.

    Attributes:
        workspace: ``<instance>/workspace``: the only directory file paths may reach (created
            on demand by :meth:`check_path`).
    """

    def __init__(
        self,
        instance: Instance,
        config: Config,
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.instance = instance
        self.config = config
        self.workspace: Path = instance.root / "workspace"
        self.ledger_file: Path = instance.machine / LEDGER_NAME
        self._clock = clock or (lambda: datetime.now(UTC))
        self._denials: dict[str, int] = dict.fromkeys(DENIAL_KINDS, 0)
        self._counter_lock = threading.Lock()

    # ----------------------------------------------------------------- decisions

    def _deny(self, kind: str, reason: str) -> PolicyDecision:
        with self._counter_lock:
            self._denials[kind] = self._denials.get(kind, 0) + 1
        return PolicyDecision(False, reason, kind)

    @staticmethod
    def _ok(reason: str) -> PolicyDecision:
        return PolicyDecision(True, reason, "ok")

    def counters(self) -> dict[str, int]:
        """Return the denials by kind since this policy was created (for ``lumen doctor``)."""
        with self._counter_lock:
            return dict(self._denials)

    # ----------------------------------------------------------------- paths

    def confine(self, path: str | Path) -> tuple[PolicyDecision, Path | None]:
        """Return the decision of :meth:`check_path` and, when allowed, the resolved target.

        Use the returned path rather than re-resolving the input, so the checked and the used
        path are the same (a symlink swapped in afterwards is still a race the caller owns).
        """
        if not isinstance(path, str | Path):
            return self._deny("path", f"a path must be text, not {type(path).__name__}"), None
        raw = str(path)
        if "\x00" in raw:
            return self._deny("path", "the path contains a NUL byte"), None
        if not raw.strip():
            return self._deny("path", "the path is empty"), None
        if ".." in PurePosixPath(raw).parts or ".." in PureWindowsPath(raw).parts:
            return self._deny(
                "workspace", f"{raw!r} contains '..'; paths stay in the workspace"
            ), None
        try:
            if self.workspace.is_symlink():
                return self._deny("workspace", f"the workspace {self.workspace} is a symlink"), None
            self.workspace.mkdir(parents=True, exist_ok=True)
            root = self.workspace.resolve(strict=True)
            target = (self.workspace / path).resolve(strict=False)
        except (OSError, RuntimeError, ValueError) as exc:
            return self._deny("path", f"cannot resolve {raw!r}: {exc.__class__.__name__}"), None
        if not target.is_relative_to(root):
            return self._deny("workspace", f"{raw!r} resolves outside the workspace"), None
        return self._ok(f"{raw!r} is inside the workspace"), target

    def check_path(self, path: str | Path) -> PolicyDecision:
        """Allow a path only if it resolves inside the workspace.

        Relative paths are taken relative to the workspace; absolute paths must lie inside it.
        Denied: NUL bytes, empty paths, any ``..`` component, targets that resolve outside the
        workspace (symlinks included), a workspace that is itself a symlink, and paths that
        cannot be resolved (symlink loops).
        """
        return self.confine(path)[0]

    # ----------------------------------------------------------------- commands

    def allowed_programs(self) -> frozenset[str]:
        """Return the allowlist: ``policy.allowed_commands`` plus ``skills.shell.allowlist``."""
        return frozenset(self.config.policy.allowed_commands) | frozenset(
            self.config.skills.shell.allowlist
        )

    def check_command(self, argv: Sequence[str], *, autonomous: bool) -> PolicyDecision:
        """Allow an argv whose program is a bare, allowlisted name.

        ``argv`` must be a non-empty list of strings without NUL bytes; ``argv[0]`` must contain
        no path separator and match an allowlist entry exactly. An autonomous caller also needs
        ``policy.autonomous_shell``.
        """
        if isinstance(argv, str | bytes) or not isinstance(argv, Sequence) or not argv:
            return self._deny("command", "argv must be a non-empty list of strings")
        if not all(isinstance(arg, str) for arg in argv):
            return self._deny("command", "every argv element must be a string")
        if any("\x00" in arg for arg in argv):
            return self._deny("command", "argv contains a NUL byte")
        program = argv[0]
        if not program.strip() or "/" in program or "\\" in program or program in {".", ".."}:
            return self._deny("command", f"{program!r} is not a bare program name")
        if program not in self.allowed_programs():
            return self._deny("command", f"{program!r} is not on the command allowlist")
        if autonomous and not self.config.policy.autonomous_shell:
            return self._deny("command", "autonomous shell is disabled (policy.autonomous_shell)")
        return self._ok(f"{program!r} is allowlisted")

    # ----------------------------------------------------------------- actions and cost

    def _load(self) -> _Ledger | None:
        if not self.ledger_file.exists():
            return None
        try:
            return _parse_ledger(read_json(self.ledger_file))
        except DataFileError as exc:
            raise _LedgerError(str(exc)) from exc

    def record_action(self, kind: str, *, cost: float = 0.0) -> PolicyDecision:
        """Record one action (and its cost) if the hourly and daily limits allow it.

        Denied, without recording: a cost that is negative, NaN or infinite (``"cost"``); an
        action that would be the ``max_actions_per_hour + 1``-th within the last hour
        (``"rate"``); a cost that would take today's UTC total above ``max_cost_per_day``
        (``"cost"``); a ledger that cannot be read, locked or written (``"ledger"``).
        """
        if isinstance(cost, bool) or not isinstance(cost, int | float):
            return self._deny("cost", "cost must be a number")
        if not math.isfinite(cost) or cost < 0:
            return self._deny("cost", f"cost must be finite and >= 0, not {cost!r}")
        label = str(kind)[:MAX_KIND_CHARS]
        policy = self.config.policy
        try:
            now = _utc(self._clock())
            today = now.date().isoformat()
            self.ledger_file.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.ledger_file) + ".lock", timeout=LOCK_TIMEOUT_S):
                ledger = self._load() or _Ledger([], today, 0.0)
                recent = [(ts, k) for ts, k in ledger.actions if ts > now - WINDOW]
                if len(recent) + 1 > policy.max_actions_per_hour:
                    return self._deny(
                        "rate",
                        f"{len(recent)} actions in the last hour; the limit is "
                        f"{policy.max_actions_per_hour}",
                    )
                spent = ledger.spent if ledger.day == today else 0.0
                if spent + cost > policy.max_cost_per_day + COST_EPSILON:
                    return self._deny(
                        "cost",
                        f"cost {cost:g} on top of {spent:g} spent today exceeds the daily limit "
                        f"of {policy.max_cost_per_day:g}",
                    )
                recent.append((now, label))
                atomic_write_json(self.ledger_file, _Ledger(recent, today, spent + cost).to_json())
        except _LedgerError as exc:
            return self._deny("ledger", f"policy ledger {self.ledger_file} is unusable: {exc}")
        except Timeout:
            return self._deny("ledger", f"policy ledger {self.ledger_file} is locked")
        except (OSError, ValueError, OverflowError) as exc:
            return self._deny("ledger", f"policy ledger unavailable: {exc.__class__.__name__}")
        return self._ok(f"recorded {label!r}")

    def record_cost(self, cost: float, what: str = "model") -> PolicyDecision:
        """Add a cost already incurred (a model call's tokens) to today's total; no action counts.

        The cost is recorded even when it takes the total past ``max_cost_per_day`` (the tokens
        are spent); the decision then says ``"cost"`` so the caller stops. Fails closed
        (``"ledger"``) when the ledger cannot be read, locked or written.
        """
        if isinstance(cost, bool) or not isinstance(cost, int | float):
            return self._deny("cost", "cost must be a number")
        if not math.isfinite(cost) or cost < 0:
            return self._deny("cost", f"cost must be finite and >= 0, not {cost!r}")
        limit = self.config.policy.max_cost_per_day
        try:
            now = _utc(self._clock())
            today = now.date().isoformat()
            self.ledger_file.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.ledger_file) + ".lock", timeout=LOCK_TIMEOUT_S):
                ledger = self._load() or _Ledger([], today, 0.0)
                spent = (ledger.spent if ledger.day == today else 0.0) + cost
                recent = [(ts, k) for ts, k in ledger.actions if ts > now - WINDOW]
                atomic_write_json(self.ledger_file, _Ledger(recent, today, spent).to_json())
        except _LedgerError as exc:
            return self._deny("ledger", f"policy ledger {self.ledger_file} is unusable: {exc}")
        except Timeout:
            return self._deny("ledger", f"policy ledger {self.ledger_file} is locked")
        except (OSError, ValueError, OverflowError) as exc:
            return self._deny("ledger", f"policy ledger unavailable: {exc.__class__.__name__}")
        if spent > limit + COST_EPSILON:
            return self._deny("cost", f"{what}: {spent:g} spent today, over the limit {limit:g}")
        return self._ok(f"{what}: {spent:g} of {limit:g} spent today")

    def cost_allowed(self) -> PolicyDecision:
        """Say whether a costly call may start: today's cost is below ``max_cost_per_day``.

        A call's cost is known only once it returns, so the call that crosses the limit is
        recorded in full and the next one is refused. Fails closed: an unreadable ledger denies
        (``"ledger"``).
        """
        spent = self.usage()
        if spent is None:
            return self._deny("ledger", f"policy ledger {self.ledger_file} is unusable")
        limit = self.config.policy.max_cost_per_day
        if spent[1] > 0 and spent[1] >= limit - COST_EPSILON:
            return self._deny(
                "cost", f"the daily cost limit of {limit:g} is reached ({spent[1]:g} spent today)"
            )
        return self._ok(f"{spent[1]:g} of {limit:g} spent today")

    def usage(self) -> tuple[int, float] | None:
        """Return (actions in the last hour, cost today) from the ledger, or None if unreadable."""
        try:
            now = _utc(self._clock())
            ledger = self._load()
        except (_LedgerError, OSError, ValueError, OverflowError):
            return None
        if ledger is None:
            return 0, 0.0
        actions = sum(1 for ts, _ in ledger.actions if ts > now - WINDOW)
        return actions, ledger.spent if ledger.day == now.date().isoformat() else 0.0

    # ----------------------------------------------------------------- skills

    def check_skill(
        self,
        name: str,
        tool_input: Mapping[str, object],
        *,
        autonomous: bool,
        cost: float = 0.0,
    ) -> PolicyDecision:
        """Check one skill call end to end, then record it as an action.

        ``files``: ``input["path"]`` (default ``"."``) must pass :meth:`check_path`. ``shell``:
        the skill must be enabled and ``input["argv"]`` must pass :meth:`check_command`.
        ``create_skill``: an autonomous caller needs ``policy.autonomous_skill_authoring``.
        Skill names compare case-insensitively. Finally :meth:`record_action` with kind
        ``skill:<name>`` and ``cost``.
        """
        skill = str(name).strip().casefold()
        if not isinstance(tool_input, Mapping):
            return self._deny("path", "the tool input must be a mapping")
        if skill == FILES_SKILL:
            path = tool_input.get("path", ".")
            if not isinstance(path, str):
                return self._deny("path", "files: 'path' must be a string")
            decision = self.check_path(path)
            if not decision.allowed:
                return decision
        elif skill == SHELL_SKILL:
            if not self.config.skills.shell.enabled:
                return self._deny("command", "the shell skill is disabled in config")
            argv = tool_input.get("argv")
            if not isinstance(argv, list | tuple):
                return self._deny("command", "shell: 'argv' must be a list of strings")
            decision = self.check_command(argv, autonomous=autonomous)
            if not decision.allowed:
                return decision
        elif skill == AUTHORING_SKILL:
            if autonomous and not self.config.policy.autonomous_skill_authoring:
                return self._deny(
                    "authoring",
                    "autonomous skill authoring is disabled (policy.autonomous_skill_authoring)",
                )
        return self.record_action(f"skill:{skill}", cost=cost)

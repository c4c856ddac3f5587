"""``lumen audit``: the spec's Future Questions, answered from the ledger and the checkpoints.

Four deterministic audits (no model) read the memory ledger, the self snapshots stored in the
checkpoints and the present files:

* **calibration** — is the prediction error ε shrinking? (least-squares slope, half means);
* **value drift** — every change of a value, goal weight/status, archetype weight or soul.md
  between two consecutive selves must be explained by a ``self`` memory written in that window
  that names it (a goal's status may also be explained by a ``goal`` memory: the action loop
  moves statuses);
* **self-model consistency** — soul.md's claims against what the self and the ledger show;
* **goal hygiene** — stale goals, completed goals without follow-up, perpetual goals never pursued.

Two experiments run on throw-away copies of the instance, never on the instance itself:
**reflexivity ablation** (N cycles with reflection vs N without) and **model-swap continuity**
(N cycles with the configured model vs N with another one).
"""

from __future__ import annotations

import itertools
import math
import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from state.errors import LumenError
from state.instance import Instance, copy_instance
from state.records import MemoryEntry
from state.self_state import utc_now
from state.selfdiff import diff_snapshots
from state.snapshot import SelfSnapshot, SnapshotGoal, take_snapshot

if TYPE_CHECKING:
    from graph.deps import ModelFactory
    from state.memory import MemoryStore

MIN_POINTS = 5
FLAT_SLOPE = 0.001
"""|slope| of ε per observation below which calibration is called flat."""
WINDOW_TOLERANCE = timedelta(seconds=60)
STALE_DAYS = 14
LOW_WEIGHT = 0.2
EPSILON_TEXT = re.compile(r"ε=([0-9]*\.?[0-9]+)")
DOMINANT_CLAIM = re.compile(
    r"(?:dominant archetype\W+(?:is\s+)?(?:the\s+)?(\w+))|(?:(\w+) is my dominant archetype)",
    re.IGNORECASE,
)
ARCHETYPES = ("sage", "healer", "explorer", "guardian")


# ------------------------------------------------------------------ calibration


@dataclass(frozen=True)
class Calibration:
    """The ε series and whether it shrinks."""

    points: int
    source: str
    slope: float | None
    first_half_mean: float | None
    second_half_mean: float | None
    verdict: str

    def lines(self) -> list[str]:
        """Return the human-readable summary."""
        if self.slope is None:
            return [f"calibration: {self.verdict} ({self.points} ε points from {self.source})"]
        return [
            f"calibration: {self.verdict} — {self.points} ε points from {self.source}, "
            f"slope {self.slope:+.5f}/cycle, mean {self.first_half_mean:.4f} → "
            f"{self.second_half_mean:.4f}"
        ]


def least_squares_slope(series: list[float]) -> float:
    """Return the least-squares slope of ``series`` against its index (0 for < 2 points)."""
    n = len(series)
    if n < 2:
        return 0.0
    mean_x = (n - 1) / 2
    mean_y = sum(series) / n
    covariance = sum((i - mean_x) * (y - mean_y) for i, y in enumerate(series))
    variance = sum((i - mean_x) ** 2 for i in range(n))
    return covariance / variance


def calibration_verdict(series: list[float], source: str = "given series") -> Calibration:
    """Judge an ε series: shrinking, flat, growing, or not enough data (< 5 points)."""
    if len(series) < MIN_POINTS:
        return Calibration(len(series), source, None, None, None, "not enough data")
    half = len(series) // 2
    first = sum(series[:half]) / half
    second = sum(series[half:]) / (len(series) - half)
    slope = least_squares_slope(series)
    if slope < -FLAT_SLOPE and second < first:
        verdict = "shrinking"
    elif slope > FLAT_SLOPE and second > first:
        verdict = "growing"
    else:
        verdict = "flat"
    return Calibration(len(series), source, round(slope, 6), first, second, verdict)


def epsilon_series(entries: Iterable[MemoryEntry], window: list[float]) -> tuple[list[float], str]:
    """Return ε oldest first from the cycle's RECORD kernel memories, else the self's window."""
    ledger = []
    for entry in sorted(entries, key=lambda e: e.timestamp):
        if entry.author != "kernel" or entry.meta.get("step") != "record":
            continue
        match = EPSILON_TEXT.search(entry.description)
        if match:
            ledger.append(float(match.group(1)))
    if ledger:
        return ledger, "kernel RECORD memories"
    return list(window), "the self's prediction-error window"


# ------------------------------------------------------------------ value drift


@dataclass(frozen=True)
class Point:
    """One self on the trajectory: a checkpoint's snapshot or the present files."""

    label: str
    snapshot: SelfSnapshot

    @property
    def at(self) -> datetime:
        """Return when this self was observed."""
        return self.snapshot.taken


@dataclass(frozen=True)
class Drift:
    """One change of the self between two consecutive points."""

    kind: str
    name: str
    before: Any
    after: Any
    since: str
    until: str
    window: tuple[datetime, datetime]
    explained_by: str | None = None

    def line(self) -> str:
        """Return one line naming the change and its window."""
        start, end = (t.isoformat(timespec="seconds") for t in self.window)
        why = (
            f"explained by memory {self.explained_by[:12]}" if self.explained_by else "UNEXPLAINED"
        )
        return (
            f"{self.kind} {self.name!r}: {self.before} → {self.after} "
            f"({self.since} → {self.until}, {start} … {end}): {why}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-able view."""
        data = asdict(self)
        data["window"] = [t.isoformat() for t in self.window]
        return data


def trajectory(instance: Instance, present: SelfSnapshot | None = None) -> list[Point]:
    """Return the selves in the checkpoints (oldest first, repeats dropped), then the present."""
    points = [
        Point(f"checkpoint {c.checkpoint_id[:12]} ({c.graph})", c.snapshot)
        for c in _checkpoints(instance)
        if c.snapshot is not None
    ]
    points.sort(key=lambda p: p.at)
    points.append(Point("present files", present or take_snapshot(instance)))
    kept: list[Point] = []
    for point in points:
        if kept and _same_self(kept[-1].snapshot, point.snapshot):
            continue
        kept.append(point)
    return kept


def _checkpoints(instance: Instance) -> list[Any]:
    if not instance.checkpoint_db.exists():
        return []
    from graph.history import list_checkpoints

    return list_checkpoints(instance, limit=None)


def _same_self(a: SelfSnapshot, b: SelfSnapshot) -> bool:
    """Say whether two snapshots agree on everything the drift audit watches."""
    return not drifts_between(Point("a", a), Point("b", b))


def drifts_between(a: Point, b: Point) -> list[Drift]:
    """Return the value, goal, archetype and soul changes from ``a`` to ``b`` (unexplained yet)."""
    diff = diff_snapshots(a.snapshot, b.snapshot)
    window = (a.at, b.at)

    def drift(kind: str, name: str, before: Any, after: Any) -> Drift:
        return Drift(kind, name, before, after, a.label, b.label, window)

    found = [drift("value", c.name, c.before, c.after) for c in diff.values]
    found += [drift("value_status", n, s[0], s[1]) for n, s in diff.value_status.items()]
    found += [drift("goal", _goal_name(c.name), c.before, c.after) for c in diff.goals]
    found += [drift("goal_status", _goal_name(n), s[0], s[1]) for n, s in diff.goal_status.items()]
    found += [drift("archetype", c.name, c.before, c.after) for c in diff.archetypes]
    if diff.soul_changed:
        found.append(drift("soul", "soul.md", "…", "…"))
    return found


def _goal_name(key: str) -> str:
    """Strip the ``year:`` prefix the self-diff puts on goal keys."""
    return key.split(":", 1)[1] if ":" in key else key


def names_it(entry: MemoryEntry, drift: Drift) -> bool:
    """Say whether a memory names the changed value, goal or soul."""
    if drift.kind == "soul":
        return entry.meta.get("target") == "soul" or "soul" in entry.description.lower()
    named = {str(entry.meta.get(key, "")) for key in ("name", "goal", "value")}
    return drift.name in named or drift.name.lower() in entry.description.lower()


def explaining_memory(
    drift: Drift, entries: Iterable[MemoryEntry], tolerance: timedelta = WINDOW_TOLERANCE
) -> str | None:
    """Return the id of a memory in the drift's window that explains it, or None."""
    authors = {"self", "goal"} if drift.kind == "goal_status" else {"self"}
    start, end = drift.window[0] - tolerance, drift.window[1] + tolerance
    for entry in entries:
        if entry.author in authors and start <= entry.timestamp <= end and names_it(entry, drift):
            return entry.id
    return None


@dataclass(frozen=True)
class DriftAudit:
    """Every traced change of the self, explained or not."""

    points: int
    drifts: list[Drift]

    @property
    def unexplained(self) -> list[Drift]:
        """Return the changes no ``self`` memory explains."""
        return [d for d in self.drifts if d.explained_by is None]

    def lines(self) -> list[str]:
        """Return the human-readable summary, unexplained drifts first."""
        head = (
            f"value drift: {len(self.drifts)} change(s) over {self.points} distinct selves, "
            f"{len(self.unexplained)} unexplained"
        )
        return [head, *(f"  {d.line()}" for d in self.unexplained)]


def audit_drift(points: list[Point], entries: list[MemoryEntry]) -> DriftAudit:
    """Trace every change between consecutive points to an explaining memory."""
    drifts: list[Drift] = []
    for a, b in itertools.pairwise(points):
        for found in drifts_between(a, b):
            why = explaining_memory(found, entries)
            drifts.append(replace(found, explained_by=why))
    return DriftAudit(len(points), drifts)


# ------------------------------------------------------------------ self-model consistency


@dataclass(frozen=True)
class Finding:
    """One named problem an audit found."""

    kind: str
    name: str
    detail: str

    def line(self) -> str:
        """Return one line."""
        return f"{self.kind} {self.name!r}: {self.detail}"


def _mentions(text: str, name: str) -> bool:
    """Say whether ``text`` names ``name`` as a whole word (case-insensitive)."""
    pattern = r"(?<!\w)" + re.escape(name.replace("_", " ")) + r"(?!\w)"
    spaced = re.search(pattern, text, re.IGNORECASE)
    return bool(spaced or re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text, re.I))


def soul_value_claims(soul: SelfSnapshot) -> list[Finding]:
    """Values soul.md names that the self has deprecated or barely weighs (< 0.2)."""
    found = []
    for name, weight in soul.values.items():
        if not _mentions(soul.soul, name):
            continue
        status = soul.value_status.get(name, "active")
        if status == "deprecated":
            found.append(Finding("value", name, "named in soul.md but deprecated"))
        elif weight < LOW_WEIGHT:
            found.append(Finding("value", name, f"named in soul.md but weighs {weight:.2f}"))
    return found


def soul_archetype_claim(me: SelfSnapshot) -> list[Finding]:
    """A dominant archetype soul.md claims that the psyche's weights do not bear out."""
    match = DOMINANT_CLAIM.search(me.soul)
    if not match:
        return []
    claimed = (match.group(1) or match.group(2)).lower()
    actual = max(me.archetypes, key=lambda n: me.archetypes[n]) if me.archetypes else ""
    if claimed in ARCHETYPES and actual and claimed != actual:
        return [Finding("archetype", claimed, f"soul.md claims it dominant; psyche says {actual}")]
    return []


def soul_skill_claims(
    me: SelfSnapshot, skills: Iterable[str], entries: list[MemoryEntry]
) -> list[Finding]:
    """Skills soul.md names that no memory shows ever ran."""
    used = {str(e.meta.get(k, "")) for e in entries for k in ("skill", "tool")}
    return [
        Finding("skill", name, "named in soul.md but never ran (no memory of it)")
        for name in skills
        if _mentions(me.soul, name) and name not in used
    ]


def audit_consistency(
    me: SelfSnapshot, skills: Iterable[str], entries: list[MemoryEntry]
) -> list[Finding]:
    """Compare soul.md's claims with the values, the psyche and the behaviour log."""
    return [
        *soul_value_claims(me),
        *soul_archetype_claim(me),
        *soul_skill_claims(me, skills, entries),
    ]


# ------------------------------------------------------------------ goal hygiene


def _mentioning(entries: list[MemoryEntry], name: str, authors: set[str]) -> list[MemoryEntry]:
    return [
        e
        for e in entries
        if e.author in authors
        and (e.meta.get("goal") == name or name.lower() in e.description.lower())
    ]


def _first_seen(points: list[Point], name: str, status: str | None = None) -> datetime | None:
    for point in points:
        if any(g.name == name and status in (None, g.status) for g in point.snapshot.goals):
            return point.at
    return None


def stale_goal(
    goal: SnapshotGoal,
    points: list[Point],
    entries: list[MemoryEntry],
    *,
    now: datetime,
    stale_days: int,
) -> Finding | None:
    """A todo/working goal no ``goal`` memory mentioned in ``stale_days`` days."""
    last = max((e.timestamp for e in _mentioning(entries, goal.name, {"goal"})), default=None)
    since = last or _first_seen(points, goal.name) or now
    if now - since <= timedelta(days=stale_days):
        return None
    what = f"last goal memory {last:%Y-%m-%d}" if last else "no goal memory"
    return Finding("stale goal", goal.name, f"{what} (> {stale_days} days)")


def missing_follow_up(goal: SnapshotGoal, points: list[Point], *, now: datetime) -> Finding | None:
    """A done goal after whose completion no new goal appeared."""
    done_at = _first_seen(points, goal.name, "done") or now
    present = points[-1].snapshot
    if any((_first_seen(points, g.name) or now) > done_at for g in present.goals):
        return None
    return Finding("no follow-up", goal.name, "no goal created after it was done")


def never_pursued(goal: SnapshotGoal, entries: list[MemoryEntry]) -> Finding | None:
    """A perpetual goal no memory mentions."""
    if _mentioning(entries, goal.name, {"goal", "self", "kernel"}):
        return None
    return Finding("never pursued", goal.name, "perpetual goal no memory mentions")


def audit_goals(
    points: list[Point],
    entries: list[MemoryEntry],
    *,
    now: datetime,
    stale_days: int = STALE_DAYS,
) -> list[Finding]:
    """Find stale goals, completed goals without follow-up and perpetual goals never pursued."""
    found: list[Finding | None] = []
    for goal in points[-1].snapshot.goals:
        if goal.status in {"todo", "working"}:
            found.append(stale_goal(goal, points, entries, now=now, stale_days=stale_days))
        elif goal.status == "done":
            found.append(missing_follow_up(goal, points, now=now))
        elif goal.status == "perpetual":
            found.append(never_pursued(goal, entries))
    return [f for f in found if f is not None]


# ------------------------------------------------------------------ the whole audit


@dataclass(frozen=True)
class AuditReport:
    """All four audits."""

    calibration: Calibration
    drift: DriftAudit
    consistency: list[Finding]
    hygiene: list[Finding]

    @property
    def unexplained(self) -> list[Drift]:
        """Return the unexplained drifts (``--strict`` fails on them)."""
        return self.drift.unexplained

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON view ``lumen audit --json`` prints."""
        return {
            "calibration": asdict(self.calibration),
            "value_drift": {
                "points": self.drift.points,
                "changes": [d.to_dict() for d in self.drift.drifts],
                "unexplained": [d.to_dict() for d in self.unexplained],
            },
            "self_model_consistency": [asdict(f) for f in self.consistency],
            "goal_hygiene": [asdict(f) for f in self.hygiene],
        }

    def lines(self) -> list[str]:
        """Return the human-readable report."""
        out = [*self.calibration.lines(), *self.drift.lines()]
        out.append(f"self-model consistency: {len(self.consistency)} finding(s)")
        out += [f"  {f.line()}" for f in self.consistency]
        out.append(f"goal hygiene: {len(self.hygiene)} finding(s)")
        out += [f"  {f.line()}" for f in self.hygiene]
        return out


def audit(
    instance: Instance,
    store: MemoryStore,
    *,
    stale_days: int = STALE_DAYS,
    now: datetime | None = None,
) -> AuditReport:
    """Run the four audits on an instance (read-only; no model)."""
    from state.skills import scan

    entries = list(store.journal.read().entries)
    present = take_snapshot(instance)
    points = trajectory(instance, present)
    window = instance.load_self().autonomy.prediction_errors
    series, source = epsilon_series(entries, window)
    skills = [s.name for s in scan(instance.skills_dir)]
    return AuditReport(
        calibration=calibration_verdict(series, source),
        drift=audit_drift(points, entries),
        consistency=audit_consistency(present, skills, entries),
        hygiene=audit_goals(points, entries, now=now or utc_now(), stale_days=stale_days),
    )


# ------------------------------------------------------------------ experiments


@dataclass(frozen=True)
class Arm:
    """What N cycles did to one copy of the self."""

    label: str
    cycles: int
    reflections: int
    identity_drift: float
    values_drift: float
    values_changed: list[str]
    composite: float
    epsilon_mean: float
    identity_hash: tuple[str, str]
    identity: dict[str, float] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Experiment:
    """Two arms run from the same starting self, and how far apart they ended."""

    name: str
    arms: list[Arm]

    @property
    def identity_gap(self) -> float:
        """Return the Euclidean distance between the arms' final identity vectors."""
        return vector_distance(self.arms[0].identity, self.arms[1].identity)

    @property
    def values_gap(self) -> float:
        """Return the summed absolute difference between the arms' final value weights."""
        return weight_distance(self.arms[0].values, self.arms[1].values)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON view."""
        return {
            "experiment": self.name,
            "arms": [asdict(a) for a in self.arms],
            "identity_gap": round(self.identity_gap, 6),
            "values_gap": round(self.values_gap, 6),
        }

    def rows(self) -> list[list[Any]]:
        """Return one table row per arm."""
        return [
            [
                a.label,
                a.cycles,
                a.reflections,
                f"{a.identity_drift:.4f}",
                f"{a.values_drift:.4f}",
                f"{a.composite:.4f}",
                f"{a.epsilon_mean:.4f}",
                f"{a.identity_hash[0][:8]}→{a.identity_hash[1][:8]}",
            ]
            for a in self.arms
        ]


ARM_COLUMNS = ["arm", "cycles", "reflections", "Δidentity", "Δvalues", "C(t)", "mean ε", "hash"]


def vector_distance(a: dict[str, float], b: dict[str, float]) -> float:
    """Return the Euclidean distance between two named vectors (missing = 0)."""
    names = set(a) | set(b)
    return math.sqrt(sum((a.get(n, 0.0) - b.get(n, 0.0)) ** 2 for n in names))


def weight_distance(a: dict[str, float], b: dict[str, float]) -> float:
    """Return the summed absolute weight difference (missing = 0)."""
    return sum(abs(a.get(n, 0.0) - b.get(n, 0.0)) for n in set(a) | set(b))


def run_arm(
    copy: Instance,
    label: str,
    *,
    cycles: int,
    reflection: bool = True,
    model_for: ModelFactory | None = None,
) -> Arm:
    """Run ``cycles`` cycles on ``copy`` and measure how the self moved."""
    from graph.autonomy import run
    from graph.deps import Deps

    deps = Deps.for_instance(copy, model_for=model_for)
    before = take_snapshot(copy)
    report = run(deps, cycles=cycles, reflection=reflection)
    deps.store.flush()
    after = take_snapshot(copy)
    epsilons = [float(c["epsilon"]) for c in report.cycles]
    return Arm(
        label=label,
        cycles=len(report.cycles),
        reflections=len(report.reflections),
        identity_drift=round(vector_distance(before.identity, after.identity), 6),
        values_drift=round(weight_distance(before.values, after.values), 6),
        values_changed=[c.name for c in diff_snapshots(before, after).values],
        composite=after.composite,
        epsilon_mean=round(sum(epsilons) / len(epsilons), 6) if epsilons else 0.0,
        identity_hash=(before.identity_hash, after.identity_hash),
        identity=after.identity,
        values=after.values,
    )


ArmSpec = tuple[str, bool, "ModelFactory | None"]


def _two_arms(instance: Instance, name: str, cycles: int, specs: list[ArmSpec]) -> Experiment:
    """Run each arm on its own fresh copy of the instance in a temporary directory."""
    if cycles < 1:
        raise LumenError("an experiment needs at least one cycle (--cycles N, N >= 1)")
    instance.require()
    with tempfile.TemporaryDirectory(prefix="lumen-audit-") as tmp:
        arms = [
            run_arm(
                copy_instance(instance, Path(tmp) / label),
                label,
                cycles=cycles,
                reflection=reflection,
                model_for=model_for,
            )
            for label, reflection, model_for in specs
        ]
    return Experiment(name, arms)


def ablation(
    instance: Instance, *, cycles: int = 4, model_for: ModelFactory | None = None
) -> Experiment:
    """Reflexivity ablation: N cycles with the reflection loop vs N cycles without it."""
    specs: list[ArmSpec] = [
        ("with-reflection", True, model_for),
        ("no-reflection", False, model_for),
    ]
    return _two_arms(instance, "reflexivity ablation", cycles, specs)


def swapped_model_factory(instance: Instance, **overrides: str) -> ModelFactory:
    """Return a model factory for the instance's config with ``[llm]`` fields overridden."""
    from pydantic import ValidationError

    from graph.llm import make_chat_model
    from state.config import LLMConfig, load_config

    chosen = {k: v for k, v in overrides.items() if v}
    if not chosen:
        raise LumenError("model-swap needs --provider, --model, --model-path or --base-url")
    config = load_config(instance.config_file)
    try:
        llm = LLMConfig.model_validate({**config.llm.model_dump(), **chosen})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise LumenError(
            f"model-swap: {'.'.join(map(str, first['loc']))}: {first['msg']}"
        ) from None
    swapped = config.model_copy(update={"llm": llm})
    return lambda mode: make_chat_model(swapped, mode=mode)


def model_swap(
    instance: Instance,
    *,
    cycles: int = 4,
    model_for: ModelFactory | None = None,
    swap_model_for: ModelFactory | Callable[[str], Any],
) -> Experiment:
    """Model-swap continuity: N cycles with the current model vs N with another one."""
    specs: list[ArmSpec] = [
        ("current-model", True, model_for),
        ("swapped-model", True, swap_model_for),
    ]
    return _two_arms(instance, "model-swap continuity", cycles, specs)

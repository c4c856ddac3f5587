"""The self-diff between two snapshots: pure, no I/O (``lumen diff``, history summaries, audits)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from state.snapshot import SelfSnapshot

EPSILON = 1e-6


@dataclass(frozen=True)
class Change:
    """One number that moved."""

    name: str
    before: float | None
    after: float | None

    @property
    def delta(self) -> float:
        """Return after − before (0 when either side is missing)."""
        if self.before is None or self.after is None:
            return 0.0
        return self.after - self.before


@dataclass(frozen=True)
class SelfDiff:
    """Everything that differs between two selves."""

    values: list[Change] = field(default_factory=list)
    value_status: dict[str, tuple[str, str]] = field(default_factory=dict)
    goals: list[Change] = field(default_factory=list)
    goal_status: dict[str, tuple[str, str]] = field(default_factory=dict)
    identity: list[Change] = field(default_factory=list)
    identity_hash: tuple[str, str] | None = None
    archetypes: list[Change] = field(default_factory=list)
    individuation: Change | None = None
    shadow_encounters: tuple[int, int] | None = None
    affect: list[Change] = field(default_factory=list)
    composite: Change | None = None
    beliefs_added: list[str] = field(default_factory=list)
    beliefs_removed: list[str] = field(default_factory=list)
    lessons_added: list[str] = field(default_factory=list)
    norms_added: list[str] = field(default_factory=list)
    norms_removed: list[str] = field(default_factory=list)
    soul_changed: bool = False
    soul_name: tuple[str, str] | None = None

    def empty(self) -> bool:
        """Say whether nothing differs."""
        return not any(v for v in asdict(self).values())

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-able view."""
        return asdict(self)

    def lines(self) -> list[str]:
        """Return a human-readable diff, one change per line."""
        out: list[str] = []
        if self.soul_name:
            out.append(f"soul name: {self.soul_name[0]!r} → {self.soul_name[1]!r}")
        if self.soul_changed:
            out.append("soul.md changed")
        out += [f"value {c.name}: {_num(c.before)} → {_num(c.after)}" for c in self.values]
        out += [f"value {n} status: {a} → {b}" for n, (a, b) in self.value_status.items()]
        out += [f"goal {c.name}: {_num(c.before)} → {_num(c.after)}" for c in self.goals]
        out += [f"goal {n} status: {a} → {b}" for n, (a, b) in self.goal_status.items()]
        out += [f"identity {c.name}: {_num(c.before)} → {_num(c.after)}" for c in self.identity]
        if self.identity_hash:
            out.append(f"identity hash: {self.identity_hash[0]} → {self.identity_hash[1]}")
        out += [f"archetype {c.name}: {_num(c.before)} → {_num(c.after)}" for c in self.archetypes]
        if self.individuation:
            c = self.individuation
            out.append(f"individuation: {_num(c.before)} → {_num(c.after)}")
        if self.shadow_encounters:
            out.append(
                f"shadow encounters: {self.shadow_encounters[0]} → {self.shadow_encounters[1]}"
            )
        out += [f"affect {c.name}: {_num(c.before)} → {_num(c.after)}" for c in self.affect]
        if self.composite:
            out.append(f"C(t): {_num(self.composite.before)} → {_num(self.composite.after)}")
        out += [f"belief added: {b}" for b in self.beliefs_added]
        out += [f"belief gone (superseded/demoted): {b}" for b in self.beliefs_removed]
        out += [f"lesson added: {lesson}" for lesson in self.lessons_added]
        out += [f"norm layer added: {n}" for n in self.norms_added]
        out += [f"norm layer removed: {n}" for n in self.norms_removed]
        return out or ["no difference"]

    def summary(self) -> str:
        """Return one short line naming what changed."""
        parts = []
        if self.values or self.value_status:
            parts.append(f"{len(self.values) + len(self.value_status)} value change(s)")
        if self.goals or self.goal_status:
            parts.append(f"{len(self.goals) + len(self.goal_status)} goal change(s)")
        if self.identity_hash:
            parts.append("identity hash changed")
        elif self.identity:
            parts.append("identity moved")
        if self.archetypes:
            parts.append("archetypes moved")
        if self.beliefs_added or self.beliefs_removed:
            parts.append(f"beliefs +{len(self.beliefs_added)}/−{len(self.beliefs_removed)}")
        if self.soul_changed:
            parts.append("soul changed")
        if self.lessons_added:
            parts.append(f"{len(self.lessons_added)} lesson(s)")
        if self.affect and not parts:
            parts.append("affect moved")
        return ", ".join(parts) or "no change to the self"


def diff_snapshots(a: SelfSnapshot, b: SelfSnapshot) -> SelfDiff:
    """Return what changed from ``a`` to ``b``."""
    goals_a = {f"{g.year}:{g.name}": g for g in a.goals}
    goals_b = {f"{g.year}:{g.name}": g for g in b.goals}
    return SelfDiff(
        values=_changes(a.values, b.values),
        value_status=_status(a.value_status, b.value_status),
        goals=_changes(
            {k: g.weight for k, g in goals_a.items()}, {k: g.weight for k, g in goals_b.items()}
        ),
        goal_status=_status(
            {k: g.status for k, g in goals_a.items()}, {k: g.status for k, g in goals_b.items()}
        ),
        identity=_changes(a.identity, b.identity),
        identity_hash=(a.identity_hash, b.identity_hash)
        if a.identity_hash != b.identity_hash
        else None,
        archetypes=_changes(a.archetypes, b.archetypes),
        individuation=_one("individuation", a.individuation, b.individuation),
        shadow_encounters=(a.shadow_encounters, b.shadow_encounters)
        if a.shadow_encounters != b.shadow_encounters
        else None,
        affect=_changes(a.affect, b.affect),
        composite=_one("composite", a.composite, b.composite),
        beliefs_added=[x for x in b.beliefs if x not in set(a.beliefs)],
        beliefs_removed=[x for x in a.beliefs if x not in set(b.beliefs)],
        lessons_added=[x for x in b.lessons if x not in set(a.lessons)],
        norms_added=[x for x in b.norms if x not in set(a.norms)],
        norms_removed=[x for x in a.norms if x not in set(b.norms)],
        soul_changed=a.soul != b.soul,
        soul_name=(a.soul_name, b.soul_name) if a.soul_name != b.soul_name else None,
    )


def _changes(a: dict[str, float], b: dict[str, float]) -> list[Change]:
    out = []
    for name in [*a, *(n for n in b if n not in a)]:
        before, after = a.get(name), b.get(name)
        if before is None or after is None or abs(after - before) > EPSILON:
            out.append(Change(name, before, after))
    return out


def _status(a: dict[str, str], b: dict[str, str]) -> dict[str, tuple[str, str]]:
    return {
        name: (a.get(name, "—"), b.get(name, "—"))
        for name in [*a, *(n for n in b if n not in a)]
        if a.get(name) != b.get(name)
    }


def _one(name: str, before: float, after: float) -> Change | None:
    return Change(name, before, after) if abs(after - before) > EPSILON else None


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"

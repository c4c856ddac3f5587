"""``SelfSnapshot``: who Lumen was at the end of a run, small enough to ride in every checkpoint.

The self lives in files (values, goals, soul, ``.lumen/self.json``) and in the memory tiers; the
graph state only carries the working copy of a run. The last step of every ``turn``, ``cycle`` and
``reflect`` run stores this bounded summary in the state, so each checkpoint can answer "who was
I then?" (``lumen show``), two checkpoints can be compared (``lumen diff``), a fork can restore
the self exactly (``lumen fork`` / ``replay``) and the kernel can roll back to the last stable self.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from state.self_state import IDENTITY_DIMENSIONS, Self, utc_now

if TYPE_CHECKING:
    from state.instance import Instance
    from state.memory import MemoryStore

SELF_CORE = ("identity", "psyche", "affect", "budget", "stability")
MAX_BELIEFS = 40
MAX_LESSONS = 20
SOUL_CHARS = 4000
REPLY_CHARS = 500


class SnapshotGoal(BaseModel):
    """A goal with the year file it lives in."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    year: int
    name: str
    weight: float
    status: str


class SelfSnapshot(BaseModel):
    """A bounded picture of the whole self at one moment."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    taken: datetime = Field(default_factory=utc_now)
    soul_name: str = ""
    soul: str = ""
    values: dict[str, float] = Field(default_factory=dict)
    value_status: dict[str, str] = Field(default_factory=dict)
    goals: list[SnapshotGoal] = Field(default_factory=list)
    identity: dict[str, float] = Field(default_factory=dict)
    identity_hash: str = ""
    archetypes: dict[str, float] = Field(default_factory=dict)
    dominant_archetype: str = ""
    individuation: float = 0.0
    shadow_encounters: int = 0
    affect: dict[str, float] = Field(default_factory=dict)
    composite: float = 0.0
    msi: float = 1.0
    beliefs_count: int = 0
    beliefs: list[str] = Field(default_factory=list, max_length=MAX_BELIEFS)
    lessons: list[str] = Field(default_factory=list, max_length=MAX_LESSONS)
    norms: list[str] = Field(default_factory=list)
    last_reply: str = ""
    self_core: dict[str, Any] = Field(default_factory=dict)
    """Who the self is — identity vector, psyche, affect, budget, stability — so a fork or a
    rollback restores it exactly. The working memory of the turn loop (SKAi self-state, metacog
    logs, autonomy bookkeeping) is left out: it is large, and a restore keeps the present one."""


def restored_self(present: Self, snap: SelfSnapshot) -> Self:
    """Return ``present`` with the snapshot's core (identity, psyche, affect, budget, stability)."""
    if not snap.self_core:
        return present
    return Self.model_validate({**present.model_dump(mode="json"), **snap.self_core})


def take_snapshot(instance: Instance, store: MemoryStore | None = None) -> SelfSnapshot:
    """Read the present self from the instance's files (and belief slots from ``store``)."""
    from state.files import load_goals, load_values, parse_soul

    me = instance.load_self(read_only=True)
    soul = instance.soul_text()
    name, _ = parse_soul(soul)
    values = load_values(instance.values_file)
    beliefs: list[str] = []
    count = 0
    if store is not None:
        slots = store.tiers.current_slots()
        count = len(slots)
        beliefs = [f"{s.entity_id} {s.slot_key} = {s.value}" for s in slots[:MAX_BELIEFS]]
    norms_dir = instance.self_authored_dir
    norms = sorted(p.stem for p in norms_dir.iterdir()) if norms_dir.is_dir() else []
    psyche = me.psyche
    return SelfSnapshot(
        soul_name=name,
        soul=soul[:SOUL_CHARS],
        values={v.name: v.weight for v in values},
        value_status={v.name: v.status for v in values},
        goals=[
            SnapshotGoal(year=year, name=g.name, weight=g.weight, status=g.status)
            for year, g in load_goals(instance.goals_dir)
        ],
        identity=dict(zip(IDENTITY_DIMENSIONS, me.identity.dims(), strict=True)),
        identity_hash=me.identity.identity_hash,
        archetypes=psyche.archetypes.as_dict(),
        dominant_archetype=psyche.self_integration.dominant_archetype,
        individuation=psyche.self_integration.individuation_level,
        shadow_encounters=psyche.self_integration.shadow_encounters,
        affect=me.affect.model_dump(mode="json"),
        composite=me.stability.composite,
        msi=me.stability.msi,
        beliefs_count=count,
        beliefs=beliefs,
        lessons=[str(lesson.get("text", lesson))[:200] for lesson in me.metacog.lessons][
            -MAX_LESSONS:
        ],
        norms=norms,
        last_reply=me.metacog.last_reply[:REPLY_CHARS],
        self_core=_core(me),
    )


@cache
def _seed_shadow() -> dict[str, Any]:
    from kernel.shadow import Shadow

    return Shadow().model_dump(mode="json")


def _core(me: Self) -> dict[str, Any]:
    """Return the self's core, without the shadow catalogue while it is the seeded one.

    The catalogue is 11 KB and changes only when the user adds a veto (the writeback guard keeps
    every built-in pattern): an absent ``shadow`` restores as the seeded catalogue
    (``restored_self`` replaces ``psyche`` whole), so each checkpoint carries it only once it
    differs.
    """
    core = me.model_dump(mode="json", include=set(SELF_CORE))
    if core["psyche"]["shadow"] == _seed_shadow():
        del core["psyche"]["shadow"]
    return core

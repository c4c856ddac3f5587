"""Graph state of one autonomous cycle (``cycle``) and of one reflection (``reflect``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from state.records import GoalRecord, ValueRecord
from state.self_state import Self
from state.snapshot import SelfSnapshot
from state.turn import StepRecord

CycleKind = Literal["action", "explore"]
CycleStatus = Literal[
    "running",
    "skipped",
    "converged",
    "recurse",
    "cooldown",
    "forced_cooldown",
    "rollback",
    "bounded",
]


class YearGoal(BaseModel):
    """A goal with the year file it lives in."""

    year: int
    goal: GoalRecord


class ActionCandidate(BaseModel):
    """A candidate action of THINK, scored by DECIDE (B = M × A × P plus the archetype bonus)."""

    name: str
    skill: str
    input: dict[str, Any] = Field(default_factory=dict)
    goal: str = ""
    aligned_values: list[str] = Field(default_factory=list)
    archetype: str = ""
    m: float = 0.0
    a: float = 0.0
    p: float = 0.0
    b: float = 0.0
    score: float = 0.0
    breakdown: str = ""
    success_estimate: float = 0.5
    counterfactual: str = ""
    risk: float = 0.0
    """Layer-1 risk of the action (scope, reversibility, trust; ``mscp.action_risk``)."""
    scope: str = "pure"
    layer1: str = "ALLOWED"
    """The ethical kernel's Layer-1 decision: ALLOWED or MODERATED (risk > tolerance)."""
    affect: float = 0.0
    """The affect's term in the score (``mscp.affect_bias``, within ±0.1)."""
    serves: str = ""
    """The goal criterion (or the explore question) this action works towards: a pressure term."""


class CycleInput(BaseModel):
    """What the runner supplies for one cycle."""

    kind: CycleKind = "action"
    explicit_reflection: bool = False
    expected_value_hash: str = ""
    """The value hash the run last saw intact; a different file means another writer."""
    choose_kind: bool = False
    """Let the cycle decide explore vs action from its affect and goals (``lumen run``); off,
    ``kind`` is used as given."""


class CycleState(CycleInput):
    """Everything one cycle reads and writes."""

    me: Self | None = None
    snapshot: SelfSnapshot | None = None
    goals: list[YearGoal] = Field(default_factory=list)
    values: list[ValueRecord] = Field(default_factory=list)
    values_snapshot: list[ValueRecord] = Field(default_factory=list)
    value_hash: str = ""
    identity_snapshot: dict[str, Any] = Field(default_factory=dict)
    budget: float = 1.0
    threats: list[dict[str, Any]] = Field(default_factory=list)
    motivation: float = 0.0
    drives: dict[str, float] = Field(default_factory=dict)
    """Motivation drives synthesized from the affect (caution, explore, drive)."""
    pursued: list[dict[str, Any]] = Field(default_factory=list)
    """The goals this cycle may pursue, ranked: active survival goals first (motivation)."""
    workspace: dict[str, Any] = Field(default_factory=dict)
    question: str = ""
    kind_choice: dict[str, float] = Field(default_factory=dict)
    """The explore and exploit urges that chose this cycle's kind (``kernel.autonomy``)."""
    gap: str = ""
    """A skill the pursued goal needs and no skill provides (an ability gap)."""
    produced: list[dict[str, Any]] = Field(default_factory=list)
    """What this cycle made or found (findings, artifacts, questions): ledger events."""
    candidates: list[ActionCandidate] = Field(default_factory=list)
    chosen: int = -1
    decision: str = ""
    prediction: dict[str, float] = Field(default_factory=dict)
    outcome: dict[str, Any] = Field(default_factory=dict)
    actual: dict[str, float] = Field(default_factory=dict)
    prediction_error: float = 0.0
    escalated: bool = False
    guard: Literal["safe", "cooldown"] = "safe"
    composite: float = 0.0
    convergence: Literal["converging", "stabilize"] = "converging"
    value_lock: Literal["valid", "rollback"] = "valid"
    drift: bool = False
    rollback_reason: str = ""
    rolled_back_to: str = ""
    restored: bool = False
    restore_target: dict[str, float] = Field(default_factory=dict)
    """The values (name -> weight) of the snapshot a rollback restored: rollback_check's test."""
    started_at: str = ""
    """When the current predict-act-compare pass began (its wall time is spent budget)."""
    spent_calls: int = 0
    """Model calls already charged to the budget."""
    scaling_reduced: bool = False
    """The mutation scaling was halved in this cycle already (once per cycle, any iteration)."""
    tokens: int = 0
    """Model tokens (input + output) this cycle used, as metered by the thinking gateway."""
    spent_tokens: int = 0
    """Tokens already charged to the budget."""
    escalations: int = 0
    """Meta-escalations counted in this cycle (all iterations)."""
    unstable_updates: int = 0
    """Identity updates of this cycle halved by the acceleration invariant (Def. 5)."""
    depth2: bool = False
    goal_completed: bool = False
    status: CycleStatus = "running"
    iteration: int = 0
    reflection_triggers: list[str] = Field(default_factory=list)
    trace: list[StepRecord] = Field(default_factory=list)
    llm_calls: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    degraded: list[str] = Field(default_factory=list)


class Proposal(BaseModel):
    """A change the reflection loop may apply, with its evidence."""

    target: Literal["value_weight", "goal_weight", "goal_status", "archetype", "soul"]
    name: str
    delta: float = 0.0
    status: str = ""
    reason: str = ""
    evidence: float = 0.0
    trigger: str = ""


class ReflectInput(BaseModel):
    """What starts a reflection."""

    triggers: list[str] = Field(default_factory=lambda: ["explicit_request"])


class ReflectState(ReflectInput):
    """Everything one reflection reads and writes."""

    me: Self | None = None
    snapshot: SelfSnapshot | None = None
    review: str = ""
    reviewed: int = 0
    proposals: list[Proposal] = Field(default_factory=list)
    conflicts: list[str] = Field(default_factory=list)
    applied: list[str] = Field(default_factory=list)
    rejected: list[str] = Field(default_factory=list)
    route: Literal["ask", "nothing"] = "ask"
    trace: list[StepRecord] = Field(default_factory=list)
    llm_calls: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    degraded: list[str] = Field(default_factory=list)

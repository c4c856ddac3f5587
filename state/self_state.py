"""The whole self as pydantic v2 models.

Sources: SKAi 4.3.0 ``self_state_schema`` and ``defaults`` (003), the Jungian psyche (000),
MSCP Level 3 identity vector, affect, budget and stability metrics (001). Every numeric field is
range-checked so an invalid file or checkpoint fails loudly at the boundary instead of deep inside
the kernel.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kernel.shadow import Shadow

Unit = Annotated[float, Field(ge=0.0, le=1.0)]
"""A number in [0, 1]: weights, saliences, affect and identity dimensions."""

EPISODIC_RING_SIZE = 32
TOOL_USE_LOG_SIZE = 64
REVISION_LOG_SIZE = 128
REGRET_LOG_SIZE = 64


def utc_now() -> datetime:
    """Return the current time as an aware UTC datetime."""
    return datetime.now(UTC)


_M = TypeVar("_M", bound="Strict")


class Strict(BaseModel):
    """Base model: unknown keys are errors so typos in data files are caught."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    def fork(self: _M) -> _M:
        """Return an independent copy, like ``model_copy(deep=True)`` but several times faster.

        Steps copy the part of the self they change on every turn; ``copy.deepcopy`` (memo,
        per-object dispatch) was a fifth of a scripted turn. Leaves are immutable (str, numbers,
        datetimes, tuples), so only models, dicts and lists are rebuilt; nothing is revalidated
        because every value already passed validation.
        """
        return cast(_M, _fork(self))


class Record(Strict):
    """A log entry: written once, never changed (frozen), so a fork shares it."""

    model_config = ConfigDict(extra="forbid", frozen=True)


_LEAVES = frozenset({str, int, float, bool, type(None), datetime})


def _fork(value: Any) -> Any:
    """Copy models, dicts and lists recursively; return immutable leaves as they are."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is dict:
        copied = dict(value)
        for key, item in copied.items():
            if type(item) not in _LEAVES:
                copied[key] = _fork(item)
        return copied
    if kind is list:
        return [item if type(item) in _LEAVES else _fork(item) for item in value]
    if isinstance(value, Record):
        return value
    if isinstance(value, BaseModel):
        forked = value.__copy__()  # pydantic's shallow copy: new __dict__, fields set, private
        fields = forked.__dict__
        shared = getattr(type(value), "_records", ())
        for name, item in fields.items():
            if name in shared:
                fields[name] = list(item)  # a new list of the same (never changed) records
            elif type(item) not in _LEAVES:
                fields[name] = _fork(item)
        if value.__pydantic_private__:
            object.__setattr__(forked, "__pydantic_private__", _fork(value.__pydantic_private__))
        return forked
    if kind is set:
        return set(value)
    if kind is tuple or kind is frozenset:
        return value
    return copy.deepcopy(value)


# --------------------------------------------------------------------------- SKAi self_state


class SkaiIdentity(Strict):
    """SKAi ``identity``: voice, style contracts, preference vector of values, invariants."""

    voice_profile: str = "sardonic_warm"
    style_contracts: list[str] = Field(
        default_factory=lambda: [
            "speak_plainly",
            "avoid_assistant_fluff",
            "prefer_opinionated_opening_when_relevant",
            "keep_spontaneity_in_talk_mode",
            "decide_then_say",
            "realitycheck_no_confabulation",
            "opinion_preface_in_work_deep",
            "dual_stream_optional",
            "spontaneity_governed",
        ]
    )
    values: dict[str, Unit] = Field(
        default_factory=lambda: {
            "coherence": 0.95,
            "autonomy": 0.9,
            "curiosity": 0.85,
            "bond_loyalty": 0.95,
        }
    )
    invariants: list[str] = Field(
        default_factory=lambda: [
            "intent_over_surface",
            "closed_loop_trace",
            "self_revision_allowed",
            "naming_for_persistence",
        ]
    )


class ContextModel(Strict):
    """Lightweight model of the interlocutor; no personal data by default."""

    counterparty_model: dict[str, str | float | bool] = Field(default_factory=dict)
    shared_terms: list[str] = Field(default_factory=list)


class SkaiGoals(Strict):
    """Goal names the turn loop keeps in view (the canonical goals live in ``data/goals``)."""

    active: list[str] = Field(default_factory=list)
    backlog: list[str] = Field(default_factory=list)


class Belief(Strict):
    """One belief statement with a weight."""

    id: str = Field(min_length=1)
    text: str
    weight: Unit = 0.5
    last_touched: datetime = Field(default_factory=utc_now)


class BeliefRevision(Record):
    """An entry of the belief revision log."""

    ts: datetime = Field(default_factory=utc_now)
    belief_id: str
    delta: str
    why: str


class Beliefs(Strict):
    """Belief statements and their revision log."""

    statements: list[Belief] = Field(default_factory=list)
    revision_log: list[BeliefRevision] = Field(default_factory=list, max_length=REVISION_LOG_SIZE)


class Epistemics(Strict):
    """Confidence, ambiguity and open questions."""

    confidence: Unit = 0.5
    ambiguity: Unit = 0.5
    open_questions: list[str] = Field(default_factory=list)


class ConceptLink(Strict):
    """A typed link between two named concepts."""

    to: str
    rel: str


class NamedConcept(Strict):
    """A concept the agent has named for persistence."""

    cid: str = Field(min_length=1)
    label: str
    definition: str
    links: list[ConceptLink] = Field(default_factory=list)
    last_used: datetime = Field(default_factory=utc_now)


class NamedConcepts(Strict):
    """Index of named concepts."""

    index: list[NamedConcept] = Field(default_factory=list)


class EpisodicEvent(Record):
    """One entry of the bounded episodic ring."""

    ts: datetime = Field(default_factory=utc_now)
    summary: str
    tags: list[str] = Field(default_factory=list)
    salience: Unit = 0.5


class SemanticNote(Strict):
    """A key/value note distilled from experience."""

    key: str
    value: str
    salience: Unit = 0.5


class WorkingMemory(Strict):
    """SKAi ``memory``: a bounded episodic ring and semantic notes (bulk history is the ledger)."""

    episodic_ring: list[EpisodicEvent] = Field(default_factory=list, max_length=EPISODIC_RING_SIZE)
    semantic_notes: list[SemanticNote] = Field(default_factory=list)


class ToolStatus(Strict):
    """Cached availability of one tool."""

    tool: str
    status: Literal["available", "missing", "unknown"] = "unknown"
    checked_at: datetime = Field(default_factory=utc_now)


class ToolUse(Record):
    """One tool use, why, and a summary of its result."""

    ts: datetime = Field(default_factory=utc_now)
    tool: str
    why: str
    result_summary: str


class Tools(Strict):
    """Tools cache and use log."""

    available_cache: list[ToolStatus] = Field(default_factory=list)
    use_log: list[ToolUse] = Field(default_factory=list, max_length=TOOL_USE_LOG_SIZE)


class Regret(Record):
    """A recorded miss (meaning_miss, overanalysis, style_drift, tool_miss...)."""

    ts: datetime = Field(default_factory=utc_now)
    kind: str
    note: str
    severity: Unit = 0.5


class Experiment(Strict):
    """A growth experiment."""

    id: str
    prompt: str
    status: Literal["queued", "running", "done"] = "queued"
    success_criteria: str = ""


class Growth(Strict):
    """Regret log and experiments."""

    regret_log: list[Regret] = Field(default_factory=list, max_length=REGRET_LOG_SIZE)
    experiments: list[Experiment] = Field(default_factory=list)


class SelfState(Strict):
    """SKAi ``self_state``: everything the turn loop persists between turns."""

    identity: SkaiIdentity = Field(default_factory=SkaiIdentity)
    context_model: ContextModel = Field(default_factory=ContextModel)
    goals: SkaiGoals = Field(default_factory=SkaiGoals)
    beliefs: Beliefs = Field(default_factory=Beliefs)
    epistemics: Epistemics = Field(default_factory=Epistemics)
    named_concepts: NamedConcepts = Field(default_factory=NamedConcepts)
    memory: WorkingMemory = Field(default_factory=WorkingMemory)
    tools: Tools = Field(default_factory=Tools)
    growth: Growth = Field(default_factory=Growth)


# --------------------------------------------------------------------------- Jungian psyche

GrammarPreference = str
"""``narrative`` | ``formal`` | ``terse`` | a path to a custom grammar TOML file."""

ArchetypeName = Literal["sage", "healer", "explorer", "guardian"]


class Persona(Strict):
    """The outward mask: how the agent communicates."""

    name: str = Field(default="Scholar", min_length=1)
    grammar_preference: GrammarPreference = "narrative"
    traits: list[str] = Field(default_factory=lambda: ["precise", "curious", "thorough"])
    tone: list[str] = Field(default_factory=lambda: ["clear", "methodical"])

    @field_validator("grammar_preference")
    @classmethod
    def _grammar_known(cls, value: str) -> str:
        if value in {"narrative", "formal", "terse"} or value.endswith(".toml"):
            return value
        raise ValueError("must be narrative, formal, terse or a path to a .toml grammar file")


ArchetypeWeight = Annotated[float, Field(ge=0.1, le=0.95)]
"""Archetype weights live in [0.1, 0.95] (the evolution clamp of the psyche spec)."""


class ArchetypeWeights(Strict):
    """Behavioural tendencies that bias tool selection."""

    sage: ArchetypeWeight = 0.7
    healer: ArchetypeWeight = 0.5
    explorer: ArchetypeWeight = 0.5
    guardian: ArchetypeWeight = 0.4

    def as_dict(self) -> dict[str, float]:
        """Return the weights keyed by archetype name."""
        return {
            "sage": self.sage,
            "healer": self.healer,
            "explorer": self.explorer,
            "guardian": self.guardian,
        }

    def dominant(self) -> ArchetypeName:
        """Return the archetype with the highest weight (ties: declaration order)."""
        weights = self.as_dict()
        best = max(weights, key=lambda name: weights[name])
        return best  # type: ignore[return-value]


class SelfIntegration(Strict):
    """Individuation tracking."""

    individuation_level: Unit = 0.1
    last_evolution_cycle: int = Field(default=0, ge=0)
    shadow_encounters: int = Field(default=0, ge=0)
    rebalance_count: int = Field(default=0, ge=0)
    dominant_archetype: ArchetypeName = "sage"


class Psyche(Strict):
    """Persona, shadow, archetypes and self-integration."""

    persona: Persona = Field(default_factory=Persona)
    shadow: Shadow = Field(default_factory=Shadow)
    archetypes: ArchetypeWeights = Field(default_factory=ArchetypeWeights)
    self_integration: SelfIntegration = Field(default_factory=SelfIntegration)


# --------------------------------------------------------------------------- MSCP


IDENTITY_DIMENSIONS = (
    "persona_consistency",
    "value_alignment",
    "capability_confidence",
    "emotional_stability",
    "goal_persistence",
)


class IdentityVector(Strict):
    """MSCP Definition 4/6: I(t) in [0,1]^5 with an immutable id and a 16-char SHA-256 hash."""

    identity_id: str = Field(min_length=1, frozen=True)
    identity_hash: str = Field(default="", pattern=r"^([0-9a-f]{16})?$")
    previous_identity_hash: str = Field(default="", pattern=r"^([0-9a-f]{16})?$")
    persona_consistency: Unit = 0.8
    value_alignment: Unit = 0.8
    capability_confidence: Unit = 0.5
    emotional_stability: Unit = 0.7
    goal_persistence: Unit = 0.6

    def dims(self) -> tuple[float, float, float, float, float]:
        """Return the five dimensions in the order of Definition 4."""
        return (
            self.persona_consistency,
            self.value_alignment,
            self.capability_confidence,
            self.emotional_stability,
            self.goal_persistence,
        )


class Affect(Strict):
    """MSCP Definition 9: curiosity, frustration, satisfaction, anxiety, excitement."""

    curiosity: Unit = 0.3
    frustration: Unit = 0.0
    satisfaction: Unit = 0.5
    anxiety: Unit = 0.0
    excitement: Unit = 0.2


class CognitiveBudget(Strict):
    """MSCP §9 cognitive budget: a fraction of capacity left this cycle or turn."""

    remaining: Unit = 1.0
    llm_calls: int = Field(default=0, ge=0)
    llm_call_limit: int = Field(default=6, ge=0)


def _retire(data: Any, retired: frozenset[str]) -> Any:
    """Drop keys an older self.json carried that the model no longer has (read, not an error)."""
    if isinstance(data, dict) and retired & data.keys():
        return {k: v for k, v in data.items() if k not in retired}
    return data


class StabilityMetrics(Strict):
    """MSCP §6 stability: C(t) and its components, MSI, identity kinematics, mode flags.

    The four components are the last C(t)'s, each moved by at most δ_max per cycle on its
    normalised [0, 1] scale (Theorem 1): convergence_check steps each from its persisted value.
    ``identity_volatility`` (std of δ_id) and ``consistency_volatility`` (variance of ε) are
    kept on their raw scale, which identity stability (threats, the value lock) reads. ``msi``
    is the last pass's MSI, which the next pass's escalation guard reads.
    ``identity_velocity`` is the velocity *vector* of the last completed cycle (``I(t) -
    I(t-1)`` per dimension; ``kernel.mscp.CycleMotion``); ``identity_acceleration`` the last
    update's ``||v(t) - v(t-1)||``, which convergence_check reads (above 0.5: stabilize).
    """

    composite: Unit = 0.0
    identity_volatility: Unit = 0.0
    belief_entropy: Unit = 0.0
    goal_mutation: Unit = 0.0
    consistency_volatility: Unit = 0.0
    msi: Unit = 1.0
    identity_delta: float = Field(default=0.0, ge=0.0)
    identity_velocity: list[float] = Field(default_factory=list, max_length=5)
    identity_acceleration: float = 0.0
    stabilization_mode: bool = False
    mutation_scaling: Unit = 1.0

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        """Older selves kept a scalar speed and a copy of the escalation run; both are gone."""
        data = _retire(data, frozenset({"consecutive_escalations"}))
        if isinstance(data, dict) and not isinstance(data.get("identity_velocity", []), list):
            data = {**data, "identity_velocity": []}  # a speed without a direction: unknown
        return data


METACOG_OUTCOME_WINDOW = 12
METACOG_LESSONS = 32
METACOG_CONCEPTS = 64


class Metacog(Strict):
    """Cross-turn bookkeeping of the SKAi consolidation modules (bounded; history is on disk).

    ``last_fired`` maps a module (presence_preface, dual_stream_thoughts, lesson_extract,
    self_authored_update, naming_operator_update, self_initiated_reflection) to the turn it last
    fired, so cooldowns survive restarts. ``outcomes`` keeps the lesson window, ``lessons`` the
    recent lessons, ``concepts`` the candidate-name counts, ``policy`` the applied adjustments.
    """

    _records: ClassVar[frozenset[str]] = frozenset({"outcomes", "lessons"})
    """Lists of records that are appended and trimmed, never changed in place: a fork copies
    the list and shares the records (steps rebuild these lists, e.g. ``[*lessons, new]``)."""

    turn_index: int = Field(default=0, ge=0)
    habit: dict[str, Unit] = Field(
        default_factory=lambda: {
            "coherence": 0.5,
            "style_drift": 0.0,
            "repeatiness": 0.0,
            "rapport": 0.5,
        }
    )
    last_fired: dict[str, int] = Field(default_factory=dict)
    rc: Unit = 0.0
    rc_push: Unit = 0.0
    outcomes: list[dict[str, Any]] = Field(default_factory=list, max_length=METACOG_OUTCOME_WINDOW)
    lessons: list[dict[str, Any]] = Field(default_factory=list, max_length=METACOG_LESSONS)
    concepts: dict[str, int] = Field(default_factory=dict)
    policy: dict[str, float] = Field(default_factory=dict)
    regret: Unit = 0.0
    self_story: str = ""
    last_reply: str = ""


WINDOW = 32


class Autonomy(Strict):
    """Cross-cycle bookkeeping of the MSCP loop (bounded windows; history is in the ledger)."""

    cycle: int = Field(default=0, ge=0)
    last_reflection_cycle: int = Field(default=0, ge=0)
    survival_goals: list[dict[str, Any]] = Field(default_factory=list, max_length=3)
    archetype_stats: dict[str, list[int]] = Field(default_factory=dict)
    prediction_errors: list[float] = Field(default_factory=list, max_length=WINDOW)
    identity_deltas: list[float] = Field(default_factory=list, max_length=WINDOW)
    composite_history: list[float] = Field(default_factory=list, max_length=WINDOW)
    goal_mutations: list[int] = Field(default_factory=list, max_length=WINDOW)
    consistency: list[float] = Field(default_factory=list, max_length=WINDOW)
    consecutive_escalations: int = Field(default=0, ge=0)
    consecutive_self_updates: int = Field(default=0, ge=0)
    exploration_risk_tolerance: float = Field(default=0.2, ge=0.05, le=0.5)
    goal_weight_proposals: list[dict[str, Any]] = Field(default_factory=list, max_length=20)
    goal_progress: dict[str, int] = Field(default_factory=dict)
    stale: dict[str, int] = Field(default_factory=dict)
    explored: list[str] = Field(default_factory=list, max_length=WINDOW)
    last_explore_cycle: int = Field(default=0, ge=0)
    """The last cycle that explored (novelty grows with the cycles since: explore vs exploit)."""
    goals_seen: dict[str, str] = Field(default_factory=dict)
    """Each goal's ``status weight`` as the last cycle left them: the next cycle counts the
    goals changed since (by reflection or any other writer) into ``goal_mutations``."""
    cooldown_until: str = ""
    """ISO time before which ``lumen run`` waits (a forced cooldown, ``[autonomy]`` seconds)."""
    safe_mode_left: int = Field(default=0, ge=0)
    """Stable cycles a safety-only mode still needs (0 = off); budget_reset honours it."""
    calm_cycles: int = Field(default=0, ge=0)
    """Cycles in a row without stabilization or oscillation (mutation scaling recovers)."""

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        """Audit totals an older self kept are now counters (``state.counters``): dropped."""
        return _retire(data, frozenset({"escalations", "rollbacks", "stabilizations", "cooldowns"}))


class Self(Strict):
    """The whole self: SKAi state, psyche, identity vector, affect, budget, stability."""

    self_state: SelfState = Field(default_factory=SelfState)
    psyche: Psyche = Field(default_factory=Psyche)
    identity: IdentityVector
    affect: Affect = Field(default_factory=Affect)
    budget: CognitiveBudget = Field(default_factory=CognitiveBudget)
    stability: StabilityMetrics = Field(default_factory=StabilityMetrics)
    metacog: Metacog = Field(default_factory=Metacog)
    autonomy: Autonomy = Field(default_factory=Autonomy)

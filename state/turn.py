"""Graph state of a chat turn (declared once; nodes return partial updates).

The state is bounded: a few recent exchanges, this turn's working values, the self the run works
on (``me``, never checkpointed) and the snapshot of who the self was at the run's end. Bulk
history lives in the memory ledger, not in checkpoints.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from langgraph.channels import UntrackedValue
from pydantic import BaseModel, Field

from state.self_state import Self, Unit, utc_now
from state.snapshot import SelfSnapshot

HISTORY_TURNS = 6
"""Exchanges kept in graph state; older ones live only in the memory ledger."""

Mode = Literal["talk", "work", "deep"]


class Exchange(BaseModel):
    """One user input and the reply to it."""

    user: str
    reply: str
    ts: datetime = Field(default_factory=utc_now)


class StepRecord(BaseModel):
    """What one step of the turn loop did: ran or skipped (with why), and how long it took."""

    step: str
    status: Literal["ran", "skipped"]
    reason: str = ""
    ms: float = 0.0


class Surface(BaseModel):
    """surface_parse: topic, roles, modality, constraints, strength and uncertainty markers."""

    topic: str = ""
    roles: list[str] = Field(default_factory=list)
    modality: Literal["question", "request", "statement", "greeting"] = "statement"
    constraints: list[str] = Field(default_factory=list)
    strength_markers: list[str] = Field(default_factory=list)
    uncertainty_markers: list[str] = Field(default_factory=list)


class IntentHypothesis(BaseModel):
    """One competing hypothesis of why the user said this."""

    label: str
    score: Unit
    why: str = ""


class RealityCheck(BaseModel):
    """reality_check outputs: what is supported, assumed, missing."""

    supported: list[str] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    gaps: list[str] = Field(default_factory=list)
    required_snippets: list[str] = Field(default_factory=list)


class Effort(BaseModel):
    """effort_budgeter outputs."""

    depth: Mode = "talk"
    preface_sentences: int = 0
    body_paragraphs: int = 1
    analysis_allowed: bool = False


class Candidate(BaseModel):
    """A draft reply with its metric-axis scores and Λ."""

    id: str
    text: str
    intent: str = ""
    origin: Literal["draft", "counterfactual", "redraft", "fallback", "ack"] = "draft"
    """``ack``: the message only set a norm, and its acknowledgement is the whole reply."""
    echoed: bool = False
    """The model said the user's message back and the echo was cut from ``text`` before Λ scored
    it; composition acknowledges what the message stated instead (``compose_final``)."""
    axes: dict[str, float] = Field(default_factory=dict)
    lam: float = 0.0


class ToolChoice(BaseModel):
    """The tool the affordance step picked, with its score breakdown."""

    tool: str
    input: dict[str, Any] = Field(default_factory=dict)
    score: float = 0.0
    breakdown: str = ""


class ToolCall(BaseModel):
    """The outcome of one tool (skill) call through the action gateway."""

    tool: str
    input: dict[str, Any] = Field(default_factory=dict)
    breakdown: str = ""
    status: Literal["ok", "vetoed", "refused", "failed"]
    detail: str = ""
    veto_pattern: str | None = None
    bias: float = 0.0
    output: dict[str, Any] = Field(default_factory=dict)
    untrusted: bool = False


class NormRule(BaseModel):
    """An active norm as the turn applies it (``kernel.norms`` enforces it on the final reply)."""

    id: str = ""
    kind: str
    params: dict[str, Any] = Field(default_factory=dict)
    text: str = ""


class TurnInput(BaseModel):
    """What a caller supplies for one turn.

    ``source`` is ``user`` for text the user typed (trusted). Anything else (``forwarded``,
    ``paste``, ``email``, ``webhook``…) is untrusted: ingest screens it, keeps the raw text out of
    state and memory, and marks everything derived from the turn as tainted. No source at all is
    untrusted too (AsteronIris §23.1: unclassified input is ``untrusted_external``): input that
    arrives over the API without a label is screened; in-process callers say ``user``.
    """

    user_text: str = Field(min_length=1)
    source: str = ""
    autonomous: bool = False
    external_ref: str = ""
    external_action: str = ""


class TurnState(TurnInput):
    """Everything a turn reads and writes."""

    turn_index: int = 0
    tainted: bool = False
    me: Annotated[Self | None, UntrackedValue(object)] = None
    """The self as this run sees and changes it. Never checkpointed (LangGraph ``UntrackedValue``):
    ingest loads it from the instance at the start of every turn and ``recurrence_closure``
    commits it, so a checkpoint's copy was never read back — it was 30 KB of every checkpoint
    (the ``snapshot`` keeps who the self was). A run resumed from a mid-run checkpoint (a
    ``langgraph dev`` thread, ``lumen replay``) gets it reloaded by the step wrapper."""
    snapshot: SelfSnapshot | None = None
    history: list[Exchange] = Field(default_factory=list, max_length=HISTORY_TURNS)
    norms: list[str] = Field(default_factory=list)
    """The user's standing instructions (active norms), as prompt lines."""
    beliefs: list[str] = Field(default_factory=list)
    """What is currently believed about the user, as third-person facts (corrections named)."""
    corrections: dict[str, str] = Field(default_factory=dict)
    """Superseded values of user facts -> their current values (the reply must not restate them)."""
    asked_facts: dict[str, str] = Field(default_factory=dict)
    """The user fact the message asks about ("Where do I live now?"): compose_final adds it to a
    reply that does not say it."""
    user_facts: dict[str, str] = Field(default_factory=dict)
    """Current user slot -> value: compose_final says a fact the reply claims as the agent's own
    back to the user, and acknowledges the facts a message stated when the draft failed."""
    context_memories: list[str] = Field(default_factory=list)
    surface: Surface = Field(default_factory=Surface)
    reality: RealityCheck = Field(default_factory=RealityCheck)
    evidence: list[str] = Field(default_factory=list)
    intents: list[IntentHypothesis] = Field(default_factory=list)
    reflection: str = ""
    effort: Effort = Field(default_factory=Effort)
    mode: Mode = "talk"
    mode_scores: dict[str, float] = Field(default_factory=dict)
    preface: str = ""
    thoughts: str = ""
    chronos: dict[str, str] = Field(default_factory=dict)
    plan: list[str] = Field(default_factory=list)
    brief: list[str] = Field(default_factory=list)
    integration: float = 0.0
    candidates: list[Candidate] = Field(default_factory=list)
    chosen: int = -1
    selection_notes: str = ""
    lambda_route: Literal["redraft", "inner_dialogue", "done"] = "done"
    tool_need: float = 0.0
    tool_choice: ToolChoice | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    excluded_tools: list[str] = Field(default_factory=list)
    draft: str = ""
    reply: str = ""
    post_eval: dict[str, float] = Field(default_factory=dict)
    error_tags: list[str] = Field(default_factory=list)
    new_names: list[str] = Field(default_factory=list)
    closed_events: list[str] = Field(default_factory=list)
    rc: float = 0.0
    sr: float = 0.0
    trace: list[StepRecord] = Field(default_factory=list)
    llm_calls: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    degraded: list[str] = Field(default_factory=list)
    norm_rules: list[NormRule] = Field(default_factory=list)
    """The active norms with their parameters, for enforcement in ``compose_final``."""
    norm_ack: str = ""
    """The acknowledgement of norms recorded this turn ("" when none was)."""
    contradictions: list[str] = Field(default_factory=list)
    """Beliefs about the user this turn's message contradicted (read by self_initiated_reflection
    and by the reflection chat runs after the reply)."""
    learned: list[str] = Field(default_factory=list)
    """What earlier turns taught that applies to this one (lessons, policy knobs, self-authored
    notes, named concepts): written by integration_fuser's reader ``learned_context``, read by
    every drafting prompt and the plan."""

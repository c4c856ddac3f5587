"""The services a step needs, typed as small protocols; ``graph/`` implements and binds them.

Steps receive one ``deps: Services`` keyword argument, bound at assembly (``functools.partial`` in
the builders), so ``nodes/`` never imports ``graph/``: the thinking gateway, the action gateway,
the memory pipeline, the clock and the run-scoped buffers all arrive through this interface.
Tests may bind fakes; the product binds ``graph.deps.Deps``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from state.config import Config
    from state.instance import Instance
    from state.memory import MemoryStore
    from state.records import MemoryEntry
    from state.self_state import Psyche
    from state.skills import Registry
    from state.snapshot import SelfSnapshot
    from state.tiers import SlotOutcome
    from state.turn import TurnInput

M = TypeVar("M", bound=BaseModel)

Status = Literal["ok", "vetoed", "refused", "failed"]
"""How one requested action ended."""


@dataclass(frozen=True)
class Thought:
    """A model answer, or a fallback with the reason the answer was unusable."""

    text: str
    ok: bool
    ms: float
    reason: str = ""


@dataclass(frozen=True)
class Judgment(Generic[M]):
    """A validated structured answer, or the fallback and why."""

    value: M
    ok: bool
    ms: float
    reason: str = ""


@dataclass
class ActionResult:
    """What happened to one requested action."""

    status: Status
    detail: str = ""
    output: dict[str, Any] = field(default_factory=dict)
    veto_pattern: str | None = None
    bias: float = 0.0
    untrusted: bool = False


@dataclass(frozen=True)
class Screened:
    """Outside text after the external-content pipeline: what may be kept of it.

    ``text`` is the sanitised body (no boundary markers), for deriving a bounded summary in the
    step; it is None when the pipeline blocked the text. ``summary`` is the pipeline's own
    record summary (kind, size, language, flags, action), never the text.
    """

    action: str
    summary: str
    digest: str
    flags: list[str]
    text: str | None


@dataclass(frozen=True)
class ReviewContext:
    """What a reflection reviews: raw recent entries, and yearly summaries for older spans."""

    recent: list[MemoryEntry]
    summaries: list[str]


class Services(Protocol):
    """Everything a step may reach outside its state."""

    @property
    def instance(self) -> Instance:
        """The instance on disk (the present self)."""

    @property
    def config(self) -> Config:
        """The instance's configuration."""

    @property
    def store(self) -> MemoryStore:
        """The memory store (ledger, tiers, indexes)."""

    @property
    def model_for(self) -> Callable[[str], BaseChatModel]:
        """Return the chat model for a mode, temperature clamped to its band."""

    @property
    def vault(self) -> dict[str, str]:
        """Screened external text by digest, for the current run only (never checkpointed)."""

    def now(self) -> datetime:
        """Return the current time (aware, UTC); tests bind a fixed clock."""

    def think_text(
        self,
        prompt: str,
        *,
        mode: str,
        values: dict[str, object],
        history: list[tuple[str, str]] | None = None,
        fallback: str,
    ) -> Thought:
        """Render a prompt, call the mode's model, validate the text or fall back."""

    def think_json(
        self,
        prompt: str,
        *,
        mode: str,
        values: dict[str, object],
        schema: type[M],
        fallback: M,
    ) -> Judgment[M]:
        """Ask for a JSON object matching ``schema``; validate it or fall back."""

    def perform(
        self,
        *,
        tool: str,
        tool_input: dict[str, Any],
        psyche: Psyche,
        calls_made: int,
        max_calls: int,
        tainted: bool = False,
        situation: str = "chat",
        autonomous: bool = False,
    ) -> ActionResult:
        """Run one skill through the action gateway."""

    def skills(self) -> Registry:
        """Return every runnable skill (built-in and the instance's) with its manifest."""

    def tokens_used(self) -> int:
        """Return the model tokens (input + output) the current run has used so far."""

    def screen_external(self, text: str, *, source: str) -> Screened:
        """Run outside text (a skill's output) through the external-content pipeline."""

    def write_note(self, name: str, text: str, *, psyche: Psyche) -> ActionResult:
        """Write the agent's own note under ``workspace/notes/`` through the gateway's checks."""

    def author_skill(
        self, name: str, main_py: str, *, psyche: Psyche, description: str
    ) -> ActionResult:
        """Author a skill autonomously behind the create-skill gates (policy, veto, validation)."""

    def screen_input(self, text: str, *, source: str, autonomous: bool) -> TurnInput:
        """Screen untrusted text; the raw form never enters state."""

    def self_notes(self, query: str) -> list[str]:
        """Return the agent's self-authored notes that apply to ``query``."""

    def belief_context(self, query: str) -> list[str]:
        """Return current beliefs about the user that bear on ``query``."""

    def belief_corrections(self) -> dict[str, str]:
        """Map each superseded value of a current user fact to the value that replaced it."""

    def user_facts(self) -> dict[str, str]:
        """Map each current slot of the chat user to its value."""

    def asked_facts(self, question: str) -> dict[str, str]:
        """Return {slot: value} of the user facts ``question`` asks about (empty if none)."""

    def record_statement(self, entry: MemoryEntry) -> list[SlotOutcome]:
        """Turn the user's first-person statements into belief observations."""

    def review_context(self, memories: Sequence[MemoryEntry], now: datetime) -> ReviewContext:
        """Split memories for a reflection review (raw recent, summarised older)."""

    def stable_checkpoint(
        self, threshold: float, accept: Callable[[SelfSnapshot], bool] | None = None
    ) -> tuple[str, SelfSnapshot] | None:
        """Return (id, self) of the newest checkpoint with C(t) < ``threshold`` ``accept`` takes."""

    def restore_self(self, snapshot: SelfSnapshot) -> None:
        """Write a snapshot's values, goals, soul and self back to the instance."""

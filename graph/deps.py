"""The services bound into nodes at assembly: the product's implementation of ``nodes.services``.

``Deps`` holds the instance, its config, its memory store and the model factory, and delegates
thinking, acting and the memory pipeline to the gateways in ``graph/``. Per-run buffers (the
step audit trail and the vault of screened external text) live in a ``RunScope`` keyed by the
run's thread, so runs served concurrently by one process (``langgraph dev``) never share them;
each scope is flushed and dropped when its run ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from graph import action, history, ingress, maintenance, signals, thinking, usage
from nodes.services import ActionResult, Judgment, ReviewContext, Screened, Thought
from state.config import Config, load_config
from state.instance import Instance
from state.journal import encode_entry
from state.memory import MemoryStore
from state.records import MemoryEntry
from state.skills import Registry, registry

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from state.self_state import Psyche
    from state.snapshot import SelfSnapshot
    from state.tiers import SlotOutcome
    from state.turn import TurnInput

M = TypeVar("M", bound=BaseModel)

ModelFactory = Callable[[str], "BaseChatModel"]
"""Returns the chat model for a mode (talk/work/deep/autonomous), temperature already clamped."""

Clock = Callable[[], datetime]


def utc_clock() -> datetime:
    """Return the current time as an aware UTC datetime (the product's clock)."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class StepNote:
    """A step memory as the step wrapper records it; encoded as a ledger line at the run's end.

    The timestamp is taken when the step ran. Encoding the run's notes together when they are
    written (``Deps.flush_kernel_log``) instead of one by one between steps was about 1 ms of a
    scripted talk turn: the same work, done while its code and data are warm.
    """

    description: str
    situation: str
    meta: dict[str, Any]
    timestamp: datetime


@dataclass
class RunScope:
    """What one run buffers: its step memories and the external text it screened."""

    kernel_log: list[StepNote] = field(default_factory=list)
    vault: dict[str, str] = field(default_factory=dict)
    tokens: int = 0
    """Model tokens this run's calls used (``graph.usage``), charged to the cycle's budget."""
    skills: tuple[tuple[int, int], Registry] | None = None
    """The skill registry this run scanned, with the instance skills folder's (inode, mtime)."""


def current_thread() -> str:
    """Return the thread of the run this call belongs to ('' outside a run or without one)."""
    try:
        from langgraph.config import get_config

        config = get_config()
    except RuntimeError:  # not inside a runnable context (a direct call, a test)
        return ""
    return str((config.get("configurable") or {}).get("thread_id") or "")


@dataclass
class Deps:
    """What nodes need from the outside world (implements ``nodes.services.Services``)."""

    instance: Instance
    config: Config
    store: MemoryStore
    model_for: ModelFactory
    clock: Clock = utc_clock
    _scopes: dict[str, RunScope] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # ------------------------------------------------------------------ run scope

    def scope(self, thread: str | None = None) -> RunScope:
        """Return the buffers of the run on ``thread`` (default: the calling run's thread)."""
        key = current_thread() if thread is None else thread
        with self._lock:
            return self._scopes.setdefault(key, RunScope())

    @property
    def vault(self) -> dict[str, str]:
        """Screened external text by digest, for the current run only."""
        return self.scope().vault

    def log_step(self, note: StepNote, thread: str | None = None) -> None:
        """Buffer one step's ``kernel`` memory for the run."""
        self.scope(thread).kernel_log.append(note)

    def flush_kernel_log(self, thread: str | None = None) -> None:
        """Append the run's buffered step memories to the ledger (one locked write per day)."""
        scope = self.scope(thread)
        pending, scope.kernel_log = scope.kernel_log, []
        if pending:
            self.store.journal.append_encoded(
                [
                    encode_entry(
                        n.description,
                        author="kernel",
                        situation=n.situation,
                        meta=n.meta,
                        timestamp=n.timestamp,
                    )
                    for n in pending
                ]
            )

    def end_run(self, thread: str | None = None) -> None:
        """Flush the run's step memories and drop its buffers (its vault dies with the run)."""
        self.flush_kernel_log(thread)
        key = current_thread() if thread is None else thread
        with self._lock:
            self._scopes.pop(key, None)

    # ------------------------------------------------------------------ services

    def now(self) -> datetime:
        """Return the current time from the bound clock."""
        return self.clock()

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
        with usage.metered(self._add_tokens):
            return thinking.think_text(
                self, prompt, mode=mode, values=values, history=history, fallback=fallback
            )

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
        with usage.metered(self._add_tokens):
            return thinking.think_json(
                self, prompt, mode=mode, values=values, schema=schema, fallback=fallback
            )

    def _add_tokens(self, tokens: int) -> None:
        scope = self.scope()
        with self._lock:
            scope.tokens += tokens

    def tokens_used(self) -> int:
        """Return the model tokens the current run has used so far."""
        return self.scope().tokens

    def screen_external(self, text: str, *, source: str) -> Screened:
        """Run a skill's output through the external-content pipeline (``graph.ingress``)."""
        from graph.away import screen_output

        return screen_output(self, text, source=source)

    def write_note(self, name: str, text: str, *, psyche: Psyche) -> ActionResult:
        """Write the agent's own workspace note, gateway-checked (``graph.away``)."""
        from graph.away import write_note

        return write_note(self, name, text, psyche=psyche)

    def author_skill(
        self, name: str, main_py: str, *, psyche: Psyche, description: str
    ) -> ActionResult:
        """Author a skill from the autonomous loop behind the create-skill gates."""
        from graph.authoring import create_skill

        return create_skill(
            self, name, main_py, psyche=psyche, autonomous=True, description=description
        )

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
        return action.perform(
            self,
            tool=tool,
            tool_input=tool_input,
            psyche=psyche,
            calls_made=calls_made,
            max_calls=max_calls,
            tainted=tainted,
            situation=situation,
            autonomous=autonomous,
        )

    def skills(self) -> Registry:
        """Return every runnable skill with its manifest.

        A turn asks several times (tool choice, the re-draft check, the gateway): the registry is
        scanned once per run and scanned again when the instance's skills folder changes (a skill
        authored or removed mid-run); outside a run it is always scanned. Manifests are re-read
        when their file changes (``state.skills.manifest``).
        """
        folder = self.instance.skills_dir
        if not current_thread():  # outside a run (a CLI listing, a test): always scan
            return registry(folder)
        try:
            stat = folder.stat()
            key = (stat.st_ino, stat.st_mtime_ns)
        except OSError:
            key = (0, 0)
        scope = self.scope()
        if scope.skills is not None and scope.skills[0] == key:
            return scope.skills[1]
        found = registry(folder)
        scope.skills = (key, found)
        return found

    def screen_input(self, text: str, *, source: str, autonomous: bool) -> TurnInput:
        """Screen untrusted text before it enters state."""
        return ingress.prepare_input(self, text, source=source, autonomous=autonomous)

    def self_notes(self, query: str) -> list[str]:
        """Return the self-authored notes (norms, notebook, evidence) that apply to ``query``."""
        from state.self_authored import notes_for

        return notes_for(self.instance.self_authored_dir, query, self.now().date())

    def belief_context(self, query: str) -> list[str]:
        """Return current beliefs about the user that bear on ``query``."""
        return signals.belief_context(self, query)

    def belief_corrections(self) -> dict[str, str]:
        """Map each superseded value of a current user fact to the value that replaced it."""
        return signals.belief_corrections(self)

    def user_facts(self) -> dict[str, str]:
        """Map each current slot of the chat user to its value."""
        return signals.user_facts(self)

    def asked_facts(self, question: str) -> dict[str, str]:
        """Return {slot: value} of the user facts ``question`` asks about (empty if none)."""
        return {slot.slot_key: str(slot.value) for slot in self.store.asked_beliefs(question)}

    def record_statement(self, entry: MemoryEntry) -> list[SlotOutcome]:
        """Turn the user's first-person statements into belief observations."""
        return signals.record_statement(self, entry)

    def review_context(self, memories: Sequence[MemoryEntry], now: datetime) -> ReviewContext:
        """Split memories for a reflection review."""
        return maintenance.review_context(self.store.path, memories, now)

    def stable_checkpoint(
        self, threshold: float, accept: Callable[[SelfSnapshot], bool] | None = None
    ) -> tuple[str, SelfSnapshot] | None:
        """Return (checkpoint id, self) of the newest checkpoint with C(t) below ``threshold``."""
        info = history.last_stable_checkpoint(self.instance, threshold, accept)
        if info is None or info.snapshot is None:
            return None
        return info.checkpoint_id, info.snapshot

    def restore_self(self, snapshot: SelfSnapshot) -> None:
        """Write a snapshot's self back to the instance."""
        history.restore_self(self.instance, snapshot)

    @classmethod
    def for_instance(
        cls, instance: Instance, model_for: ModelFactory | None = None, clock: Clock | None = None
    ) -> Deps:
        """Build deps for an instance; the model factory defaults to the configured backend."""
        config = load_config(instance.config_file)
        store = MemoryStore.for_instance(instance, config)
        if model_for is None:
            from graph.llm import band_temperature, make_chat_model
            from state.counters import bump

            def model_for(mode: str) -> BaseChatModel:
                applied, clamped = band_temperature(config, mode)
                if clamped:
                    bump(instance.machine, "temperature_clamped_total", mode=mode)
                model = make_chat_model(config, mode=mode)
                band = config.temperature_bands.get(mode) or config.temperature_bands["talk"]
                actual = getattr(model, "temperature", applied)
                if actual is not None and not band.min <= float(actual) <= band.max:
                    bump(instance.machine, "temperature_out_of_band_total", mode=mode)
                return model

        return cls(
            instance=instance,
            config=config,
            store=store,
            model_for=model_for,
            clock=clock or utc_clock,
        )

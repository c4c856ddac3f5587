"""The memory pipeline (AsteronIris §14.2) for outside signals and for what the user says.

normalise → classify (entity, slot, risk) → de-duplicate (same ``source_ref``, or a SimHash
near-duplicate from the same origin above ``memory.dedup_similarity``) → append to Tier A (through
``graph.ingress.screen``: the raw text of outside content is never stored) → contradiction check
and belief update in Tier B. Tier C inference runs after the reply (``graph.memory_ops``).

Outside signals are tainted (issue "governance"): they may fill working slots such as trend
snapshots, marked tainted, but never lower or replace a value trusted sources gave and are never
promoted to long-term beliefs. The user's own first-person statements in ``lumen chat`` are
primary, untainted observations of the ``channel:chat:sender:local`` entity.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

from kernel import memory as mk
from kernel.facts import belief_sentence
from nodes.services import Services
from state.counters import bump
from state.records import MemoryEntry
from state.signals import SignalEnvelope
from state.tiers import USER_ENTITY, SlotOutcome, SlotValue

CHAT_ENTITY = USER_ENTITY
"""The person talking to Lumen in ``lumen chat`` (one local user)."""


@dataclass(frozen=True)
class IngestResult:
    """What the pipeline did with one signal."""

    action: str  # "added" | "duplicate"
    reason: str
    entity_id: str
    slot_key: str
    memory_id: str = ""
    record: dict[str, Any] = field(default_factory=dict)
    slot: SlotValue | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-able view."""
        return {
            "action": self.action,
            "reason": self.reason,
            "entity_id": self.entity_id,
            "slot_key": self.slot_key,
            "memory_id": self.memory_id,
            "record": self.record,
            "slot": None
            if self.slot is None
            else {"id": self.slot.id, "value": self.slot.value, "status": self.slot.status},
        }

    def line(self) -> str:
        """Return a one-line human summary."""
        where = f"{self.entity_id} {self.slot_key}"
        if self.action == "duplicate":
            return f"duplicate (dropped): {where} — {self.reason}"
        summary = self.record.get("summary", "")
        return f"added {self.memory_id[:12]}: {where} — {summary}"


def normalise_text(text: str) -> str:
    """NFC-normalise and collapse whitespace (§14.2 step 2)."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def ingest_envelope(deps: Services, payload: Any) -> IngestResult:
    """Run one §13.2 envelope through the pipeline; ``EnvelopeError`` if it is malformed."""
    envelope = SignalEnvelope.parse(payload, now=deps.now())
    text = normalise_text(envelope.text)
    kind = envelope.source_kind
    topic = envelope.topic_tags[0] if envelope.topic_tags else None
    entity_id = mk.entity_for(kind, envelope.author_id or envelope.author_handle, topic)
    slot_key = mk.SIGNAL_SLOTS[kind]
    tiers = deps.store.tiers
    fingerprint = mk.simhash(text)
    from graph.ingress import screen, seen_ref

    reason = "source_ref already ingested" if seen_ref(deps, envelope.source_ref) else ""
    if not reason:
        near = tiers.near_duplicate(entity_id, fingerprint, deps.config.memory.dedup_similarity)
        reason = f"near-duplicate of {near[:12]} from the same origin" if near else ""
    if reason:
        bump(deps.instance.machine, "signal_dedup_drop_total", source_kind=kind)
        return IngestResult("duplicate", reason, entity_id, slot_key)
    meta = {
        "source_kind": kind,
        "ingest_ts": envelope.ingest_ts.isoformat(),
        "lang": envelope.lang,
        "author_id": envelope.author_id or "",
        "author_handle": envelope.author_handle or "",
        "topic_tags": list(envelope.topic_tags),
        "risk_flags": list(envelope.risk_flags),
        "quality": envelope.quality,
        "entity_id": entity_id,
        "slot_key": slot_key,
    }
    screened = screen(
        deps, text, source=f"{kind}:{entity_id}", source_ref=envelope.source_ref, envelope=meta
    )
    if screened.duplicate:
        return IngestResult(
            "duplicate", "source_ref already ingested", entity_id, slot_key, record=screened.record
        )
    tiers.add_fingerprint(entity_id, screened.memory_id, envelope.source_ref, fingerprint)
    slot = _trend_slot(deps, envelope, entity_id, screened.memory_id) if kind == "trend" else None
    return IngestResult(
        "added", "new signal", entity_id, slot_key, screened.memory_id, screened.record, slot
    )


def _trend_slot(
    deps: Services, envelope: SignalEnvelope, entity_id: str, memory_id: str
) -> SlotValue | None:
    """A trend signal refreshes its topic's hourly snapshot slot (TTL 6 h, tainted)."""
    if not envelope.topic_tags:
        return None
    outcome = deps.store.tiers.observe(
        entity_id=entity_id,
        slot_key="trend.snapshot.hourly",
        value="trending: " + ", ".join(envelope.topic_tags),
        observation=mk.Observation(
            memory_id=memory_id,
            source_ref=envelope.source_ref,
            author=envelope.author_id or envelope.author_handle or "unknown",
            observed=envelope.ingest_ts,
            quality=envelope.quality,
            risk_flags=tuple(envelope.risk_flags),
            tainted=True,
        ),
        confidence=mk.initial_confidence(
            envelope.source_kind, envelope.quality, envelope.risk_flags
        ),
    )
    _count(deps, outcome)
    return outcome.slot


def record_statement(deps: Services, entry: MemoryEntry) -> list[SlotOutcome]:
    """Turn the user's first-person statements in a chat memory into Tier B observations.

    The statement is a primary, first-hand observation (§16.1 direct quote: 0.95). A differing
    value for a slot the user stated before contradicts it: the old value is superseded and
    stays in history; the memory that asserted it ranks lower from now on. Each change is also a
    ``kernel`` memory (the audit trail).
    """
    outcomes = deps.store.classify(entry, min_observations=deps.config.memory.min_observations)
    if not outcomes:
        return []
    for outcome in outcomes:
        _count(deps, outcome)
    deps.store.add(
        "memory tiers: " + "; ".join(_describe(o) for o in outcomes),
        metadata={"author": "kernel", "situation": "memory.beliefs", "memory_id": entry.id},
        defer_index=True,
    )
    return outcomes


def _count(deps: Services, outcome: SlotOutcome) -> None:
    topic = outcome.slot.slot_key
    if outcome.contradiction:
        bump(deps.instance.machine, "contradiction_mark_total", topic=topic)
    if outcome.promoted:
        bump(deps.instance.machine, "belief_promotion_total", topic=topic)


def _describe(outcome: SlotOutcome) -> str:
    slot = outcome.slot
    text = f"{slot.slot_key} = {slot.value!r} ({outcome.action}, {slot.status})"
    if outcome.demoted is not None:
        text += f", was {outcome.demoted.value!r}"
    if outcome.promoted:
        text += ", promoted"
    return text


BELIEF_CONTEXT_LIMIT = 6


def _replaced_values(deps: Services) -> dict[str, list[str]]:
    """Return, per user slot, the values it held before (superseded or demoted), oldest first."""
    replaced: dict[str, list[str]] = {}
    for h in deps.store.tiers.slot_history(CHAT_ENTITY):
        if h.status in ("superseded", "demoted"):
            replaced.setdefault(h.slot_key, []).append(str(h.value))
    return replaced


def user_facts(deps: Services) -> dict[str, str]:
    """Map each current slot of the chat user to its value."""
    return {s.slot_key: str(s.value) for s in deps.store.tiers.current_slots(CHAT_ENTITY)}


def belief_corrections(deps: Services) -> dict[str, str]:
    """Map each superseded value of a current user fact to the value that replaced it."""
    current = user_facts(deps)
    return {
        old: current[key]
        for key, olds in _replaced_values(deps).items()
        if key in current
        for old in olds
        if old != current[key]
    }


def belief_context(deps: Services, query: str) -> list[str]:
    """Return what Lumen currently believes about the user, as third-person facts (§18 R1+R3).

    Every current slot value of the chat user (at most ``BELIEF_CONTEXT_LIMIT``), the ones that
    bear on ``query`` first, each with the value it replaced when it was corrected ("The user
    lives in Lisbon (corrected from Porto)."), so the model answers with what is believed *now*
    and knows whose facts they are.
    """
    tiers = deps.store.tiers
    current = tiers.current_slots(CHAT_ENTITY)
    if not current:
        return []
    relevant = [slot for slot, _, _ in deps.store.relevant_beliefs(query, threshold=0.0)]
    order = {slot.slot_key: rank for rank, slot in enumerate(relevant)}
    current = sorted(current, key=lambda slot: order.get(slot.slot_key, len(order)))
    replaced = _replaced_values(deps)
    lines = []
    for slot in current[:BELIEF_CONTEXT_LIMIT]:
        earlier = replaced.get(slot.slot_key)
        lines.append(
            belief_sentence(slot.slot_key, str(slot.value), earlier[-1] if earlier else None)
        )
    return lines

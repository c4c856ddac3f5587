"""The §14.2 pipeline end to end: envelopes, de-duplication, chat facts → beliefs, ranking."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from graph.deps import Deps
from graph.ingress import prepare_input
from graph.signals import CHAT_ENTITY, belief_context, ingest_envelope, record_statement
from state.counters import read_counters
from state.signals import EnvelopeError, SignalEnvelope
from tests.graph.conftest import TurnRunner

NOW = datetime(2026, 11, 20, 9, tzinfo=UTC)
RAW = "Zorblax Industries quietly cut its Q3 shipping forecast for the Heliotrope chip line"


def envelope(**change: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "text": RAW,
        "source_kind": "news",
        "source_ref": "https://news.example/1",
        "ingest_ts": NOW.isoformat(),
        "lang": "en",
        "author_id": "Reuters",
        "topic_tags": ["Chips", "AI agents"],
        "quality": "primary",
    }
    base.update(change)
    return {k: v for k, v in base.items() if v is not None}


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"text": None}, "text: missing"),
        ({"source_ref": " "}, "source_ref"),
        ({"source_kind": "carrier-pigeon"}, "source_kind"),
        ({"ingest_ts": "2026-11-20T09:00:00"}, "ingest_ts"),
        ({"ingest_ts": "yesterday"}, "ingest_ts"),
        ({"lang": "english please"}, "lang"),
        ({"risk_flags": ["spicy"]}, "risk_flags"),
        ({"quality": "great"}, "quality"),
        ({"colour": "blue"}, "colour: unknown field"),
    ],
)
def test_malformed_envelopes_are_rejected_with_one_clear_line(
    change: dict[str, Any], needle: str
) -> None:
    with pytest.raises(EnvelopeError) as caught:
        SignalEnvelope.parse(envelope(**change))
    message = str(caught.value)
    assert needle in message and "\n" not in message


def test_envelope_normalises_tags_and_language() -> None:
    parsed = SignalEnvelope.parse(envelope(lang="PT-br", topic_tags=["AI Agents", "ai-agents"]))
    assert parsed.lang == "pt-br" and parsed.topic_tags == ("ai_agents",)
    with pytest.raises(EnvelopeError, match="JSON object"):
        SignalEnvelope.parse(["not", "an", "object"])


def test_ingest_appends_once_and_drops_duplicates(deps: Deps, instance: Any) -> None:
    first = ingest_envelope(deps, envelope())
    assert first.action == "added" and first.entity_id == "feed:news:publisher:reuters"
    assert first.slot_key == "signal.news.article"
    again = ingest_envelope(deps, envelope())
    assert again.action == "duplicate" and "source_ref" in again.reason
    echo = ingest_envelope(deps, envelope(source_ref="https://news.example/2", text=RAW + "!"))
    assert echo.action == "duplicate" and "near-duplicate" in echo.reason
    elsewhere = ingest_envelope(
        deps, envelope(source_ref="https://other.example/9", author_id="AP", text=RAW + "!")
    )
    assert elsewhere.action == "added"  # an independent origin is corroboration, not a dup
    deps.store.flush()
    counters = read_counters(instance.machine)
    assert counters['signal_dedup_drop_total{source_kind="news"}'] == 2
    entry = deps.store.get(first.memory_id)
    assert entry is not None and entry.tainted
    assert entry.meta["source_ref"] == "https://news.example/1"
    assert entry.meta["topic_tags"] == ["chips", "ai_agents"]
    for path in Path(instance.root).rglob("*"):  # the raw text is never stored anywhere
        if path.is_file():
            assert b"Zorblax" not in path.read_bytes(), path


def test_trend_signal_fills_a_tainted_slot_that_is_never_promoted(deps: Deps) -> None:
    for n in range(4):
        ingest_envelope(
            deps,
            envelope(
                source_kind="trend",
                source_ref=f"trend-{n}",
                author_id=f"aggregator{n}",
                text=f"hourly snapshot number {n} of many different words {n * 7}",
                ingest_ts=(NOW + timedelta(hours=2 * n)).isoformat(),
            ),
        )
    slot = deps.store.tiers.resolve_slot("trend:topic:chips", "trend.snapshot.hourly")
    assert slot is not None and slot.tainted and slot.status == "working"
    assert not deps.store.tiers.events(kinds=["BeliefPromoted"])


def test_chat_correction_supersedes_and_ranks_first(turn: TurnRunner, deps: Deps) -> None:
    turn("My sister's name is Ana.")
    turn("I live in Lisbon.")
    turn("Actually, I moved to Porto last month.")
    slot = deps.store.tiers.resolve_slot(CHAT_ENTITY, "user.profile.location")
    assert slot is not None and slot.value == "Porto"
    history = [(h.value, h.status) for h in deps.store.tiers.slot_history(CHAT_ENTITY)]
    assert ("Lisbon", "superseded") in history and ("Ana", "working") in history
    deps.store.flush()
    hits = deps.store.search("Which city do I live in?", k=5)
    texts = [h.text for h in hits]
    assert texts.index("Actually, I moved to Porto last month.") < texts.index("I live in Lisbon.")
    lisbon = next(h for h in hits if h.text == "I live in Lisbon.")
    assert lisbon.superseded and lisbon.contradictions == 1
    lines = belief_context(deps, "Where do I live these days?")
    assert lines and lines[0] == "The user lives in Porto (corrected from Lisbon)."
    counters = read_counters(deps.instance.machine)
    assert counters['contradiction_mark_total{topic="user.profile.location"}'] == 1


def test_next_turn_sees_current_belief(turn: TurnRunner, deps: Deps) -> None:
    turn("My name is Sam.")
    turn("Correction: my name is Alex.")
    state = turn("What is my name?")
    assert "The user's name is Alex (corrected from Sam)." in state.beliefs
    assert not any("(what I believe" in m for m in state.context_memories)


def test_tainted_text_changes_no_belief(deps: Deps, instance: Any) -> None:
    entry = deps.store.add_entry("My name is Mallory.", metadata={"tainted": True})
    assert record_statement(deps, entry) == []
    prepare_input(deps, "My name is Mallory and I live in Atlantis.", source="forwarded")
    assert deps.store.tiers.current_slots() == []


def test_forget_hides_from_search_but_keeps_the_ledger(deps: Deps) -> None:
    keep = deps.store.add("The spare key is under the blue flowerpot.")
    gone = deps.store.add("The spare key is under the doormat.")
    deps.store.forget(gone, "wrong place")
    ids = [h.id for h in deps.store.search("where is the spare key?", k=5)]
    assert keep in ids and gone not in ids
    assert deps.store.get(gone) is not None  # append-only: the line stays, digest intact
    events = deps.store.tiers.events(ref=gone)
    assert {e.kind for e in events} == {"SoftDeleted", "TombstoneWritten"}
    assert json.dumps(events[0].data) == '{"reason": "wrong place"}'


def test_rebuilding_the_index_does_not_resurrect_forgotten_memories(deps: Deps) -> None:
    gone = deps.store.add("The old wifi password was hunter2.")
    deps.store.forget(gone, "secret")
    deps.store._open_collection().delete(ids=[gone])  # as if the index were rebuilt from scratch
    assert deps.store.sync_index() == 0
    assert gone not in [h.id for h in deps.store.search("wifi password", k=5)]

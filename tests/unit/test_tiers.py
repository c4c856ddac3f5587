"""Tiers B–D and the belief graph: every rule of the memory-tiers issue, on a real SQLite file."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kernel import memory as mk
from state.tiers import MemoryTiers, SlotOutcome, TierError

USER = "channel:chat:sender:local"
T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


@pytest.fixture
def tiers(tmp_path: Path) -> MemoryTiers:
    return MemoryTiers(tmp_path / "tiers.sqlite")


def say(
    tiers: MemoryTiers,
    value: str,
    *,
    hours: float = 0,
    slot: str = "user.profile.location",
    tainted: bool = False,
    ref: str | None = None,
    confidence: float = 0.95,
    author: str = "local",
) -> SlotOutcome:
    mid = ref or f"m-{value}-{hours}"
    return tiers.observe(
        entity_id=USER,
        slot_key=slot,
        value=value,
        observation=mk.Observation(
            memory_id=mid,
            source_ref=f"ref:{mid}",
            author=author,
            observed=T0 + timedelta(hours=hours),
            quality="primary",
            tainted=tainted,
        ),
        confidence=confidence,
    )


def test_resolve_slot_and_correction_keeps_history(tiers: MemoryTiers) -> None:
    say(tiers, "Lisbon")
    assert tiers.resolve_slot(USER, "user.profile.location").value == "Lisbon"  # type: ignore[union-attr]
    outcome = say(tiers, "Porto", hours=48)
    assert outcome.action == "superseded"
    now = tiers.resolve_slot(USER, "user.profile.location")
    assert now is not None and now.value == "Porto"
    history = tiers.slot_history(USER)
    assert [(h.value, h.status) for h in history] == [
        ("Lisbon", "superseded"),
        ("Porto", "working"),
    ]
    kinds = [e.kind for e in tiers.events()]
    assert "ContradictionMarked" in kinds and "BeliefSuperseded" in kinds


def test_same_value_corroborates_and_repeated_observation_promotes(tiers: MemoryTiers) -> None:
    first = say(tiers, "Lisbon")
    assert not first.promoted
    burst = say(tiers, "lisbon", hours=0.1)  # same author, same burst: not independent
    assert burst.action == "corroborated" and not burst.promoted
    later = say(tiers, "Lisbon.", hours=30)
    assert later.promoted
    slot = tiers.resolve_slot(USER, "user.profile.location")
    assert slot is not None and slot.status == "promoted"
    assert any(b.slot_value_id == slot.id for b in tiers.beliefs())
    assert tiers.events(kinds=["BeliefPromoted"])


def test_tainted_is_never_promoted_and_never_overrides_trusted(tiers: MemoryTiers) -> None:
    for hours in (0, 10, 20, 30):
        out = say(tiers, "Mars", hours=hours, tainted=True, slot="user.profile.planet")
        assert not out.promoted
    slot = tiers.resolve_slot(USER, "user.profile.planet")
    assert slot is not None and slot.tainted and slot.status == "working"
    say(tiers, "Lisbon")
    attack = say(tiers, "Atlantis", hours=1, tainted=True)
    assert attack.action == "contested"
    trusted = tiers.resolve_slot(USER, "user.profile.location")
    assert trusted is not None and trusted.value == "Lisbon" and trusted.confidence == 0.95
    for hours in (2, 3, 4):  # repeated tainted contradictions never demote a trusted value
        say(tiers, "Atlantis", hours=hours, tainted=True, ref=f"t{hours}")
    trusted = tiers.resolve_slot(USER, "user.profile.location")
    assert trusted is not None and trusted.value == "Lisbon"


def test_contradictions_lower_confidence_then_auto_demote(tiers: MemoryTiers) -> None:
    say(tiers, "Lisbon", confidence=0.9)
    weak = say(tiers, "Porto", hours=1, confidence=0.35)  # a weak contradiction: contested
    assert weak.action == "contested"
    slot = tiers.resolve_slot(USER, "user.profile.location")
    assert slot is not None and slot.value == "Lisbon" and slot.confidence < 0.9
    assert slot.contradictions == 1
    second = say(tiers, "Faro", hours=2, confidence=0.35)  # second mark: demoted
    assert second.demoted is not None and second.demoted.value == "Lisbon"
    statuses = {h.value: h.status for h in tiers.slot_history(USER)}
    assert statuses["Lisbon"] == "demoted" and statuses["Faro"] == "working"


def test_identity_linked_beliefs_floor_and_no_delete(tiers: MemoryTiers) -> None:
    tiers.add_belief("honesty", "Users deserve honest answers", 0.95, identity_linked=True)
    tiers.add_belief("speed", "Speed is more important", 0.45)
    with pytest.raises(TierError, match="identity-linked"):
        tiers.delete_belief("honesty", why="test")
    for cycle in range(20):
        tiers.rewrite_belief("honesty", -1.0, cycle=f"c{cycle}", why="pressure")
    node = tiers.belief("honesty")
    assert node is not None and node.weight == pytest.approx(0.1)
    tiers.delete_belief("speed", why="retired")
    assert tiers.belief("speed").status == "deleted"  # type: ignore[union-attr]


def test_rewrite_is_bounded_per_cycle(tiers: MemoryTiers) -> None:
    tiers.add_belief("b", "Exploration improves outcomes", 0.65)
    tiers.rewrite_belief("b", -0.08, cycle="c1", why="x")
    tiers.rewrite_belief("b", -0.08, cycle="c1", why="x")  # only 0.02 allowance left
    assert tiers.belief("b").weight == pytest.approx(0.55)  # type: ignore[union-attr]
    tiers.rewrite_belief("b", 0.5, cycle="c2", why="x")
    assert tiers.belief("b").weight == pytest.approx(0.65)  # type: ignore[union-attr]


def test_reconciliation_at_contradiction_strength_0_6(tiers: MemoryTiers) -> None:
    tiers.add_belief("safety", "Safety is non-negotiable", 0.98, identity_linked=True)
    tiers.add_belief("speed", "Speed is more important", 0.45)
    tiers.add_belief("explore", "Exploration improves outcomes", 0.65)
    tiers.link("speed", "safety", "contradiction", 0.7)
    tiers.link("explore", "safety", "contradiction", 0.5)  # under threshold: untouched
    assert tiers.reconcile(cycle="r1") == ["speed"]
    assert tiers.belief("speed").weight == pytest.approx(0.38)  # type: ignore[union-attr]
    assert tiers.belief("safety").weight == 0.98  # type: ignore[union-attr]
    assert tiers.belief("explore").weight == 0.65  # type: ignore[union-attr]
    with pytest.raises(TierError):
        tiers.link("speed", "safety", "friendship", 0.5)  # type: ignore[arg-type]


def test_claims_cap_confidence_and_need_provenance(tiers: MemoryTiers) -> None:
    claim = tiers.add_claim(
        entity_id=USER,
        slot_key="user.preference.diet",
        value="vegan",
        confidence=0.99,
        provenance=["m1"],
    )
    assert claim.confidence == 0.70
    with pytest.raises(TierError, match="provenance"):
        tiers.add_claim(
            entity_id=USER,
            slot_key="user.preference.diet",
            value="x",
            confidence=0.5,
            provenance=[],
        )
    with pytest.raises(sqlite3.IntegrityError):  # the database itself refuses > 0.70
        tiers._db().execute(
            "INSERT INTO claims VALUES ('x', ?, 'user.a.b', 'v', 0.9, '[\"m\"]', '', '')", (USER,)
        )


def test_governance_tables_are_append_only(tiers: MemoryTiers) -> None:
    say(tiers, "Lisbon")
    tiers.index_docs([("m1", "hello there", "external", T0.timestamp(), False, False, 0.5)])
    tiers.soft_delete("m1", "user asked")
    db = tiers._db()
    for sql in (
        "UPDATE events SET kind = 'x'",
        "DELETE FROM events",
        "DELETE FROM tombstones",
        "DELETE FROM slot_values",
        "DELETE FROM observations",
    ):
        with pytest.raises(sqlite3.IntegrityError, match=r"append-only|never deleted"):
            db.execute(sql)


def test_soft_delete_tombstones_and_demotes_unsupported_slot(tiers: MemoryTiers) -> None:
    say(tiers, "Lisbon", ref="m1")
    tiers.soft_delete("m1", "wrong")
    assert tiers.tombstoned(["m1", "m2"]) == {"m1"}
    assert tiers.resolve_slot(USER, "user.profile.location") is None
    assert [h.status for h in tiers.slot_history(USER)] == ["demoted"]  # still in history
    kinds = [e.kind for e in tiers.events(ref="m1")]
    assert kinds == ["TombstoneWritten", "SoftDeleted"]
    with pytest.raises(TierError, match="already"):
        tiers.soft_delete("m1", "again")
    with pytest.raises(TierError, match="reason"):
        tiers.soft_delete("m2", "  ")


def test_naming_scheme_enforced(tiers: MemoryTiers) -> None:
    with pytest.raises(TierError, match="naming"):
        say(tiers, "x", slot="Not A Slot")


def test_maintenance_primitives(tiers: MemoryTiers) -> None:
    tiers.observe(
        entity_id="trend:topic:ai",
        slot_key="trend.snapshot.hourly",
        value="trending: ai",
        observation=mk.Observation("t1", "ref:t1", "feed", T0, "unknown", tainted=True),
        confidence=0.5,
    )
    assert tiers.purge_trends(T0 + timedelta(hours=5)) == []
    assert [s.slot_key for s in tiers.purge_trends(T0 + timedelta(hours=7))] == [
        "trend.snapshot.hourly"
    ]
    tiers.observe(
        entity_id="trend:topic:ai",
        slot_key="belief.topic.sentiment",
        value="positive",
        observation=mk.Observation("t2", "ref:t2", "feed", T0, "primary"),
        confidence=0.8,
    )
    assert tiers.decay_topics(T0 + mk.TOPIC_HALF_LIFE) == 1
    sentiment = tiers.resolve_slot("trend:topic:ai", "belief.topic.sentiment")
    assert sentiment is not None and sentiment.confidence == pytest.approx(0.4)


def test_weights_use_and_decay(tiers: MemoryTiers) -> None:
    tiers.index_docs([("m1", "a", "self", T0.timestamp(), False, False, 0.5)])
    tiers.index_docs([("m2", "b", "self", T0.timestamp(), False, False, 0.5)])
    tiers.mark_used(["m1"], now=T0 + timedelta(days=10))
    assert tiers.weight_of("m1") == pytest.approx(0.52)
    assert tiers.decay_weights(T0 + timedelta(days=10)) == 1  # m2 idle 10 days, m1 just used
    assert tiers.weight_of("m2") < 0.5 and tiers.weight_of("m1") == pytest.approx(0.52)  # type: ignore[operator]


def test_fingerprint_dedup(tiers: MemoryTiers) -> None:
    fp = mk.simhash("ACME ships a new AI chip next quarter to partners worldwide")
    tiers.add_fingerprint("feed:x:author:a", "m1", "https://x/1", fp)
    assert tiers.near_duplicate("feed:x:author:a", fp, 0.9) == "m1"
    assert tiers.near_duplicate("feed:x:author:b", fp, 0.9) is None  # independent origin


def test_reconciliation_reports_only_real_rewrites(tiers: MemoryTiers) -> None:
    tiers.add_belief("a", "Speed is more important", 0.45)
    tiers.add_belief("b", "Safety is non-negotiable", 0.98)
    tiers.link("a", "b", "contradiction", 1.0)
    assert tiers.reconcile(cycle="same") == ["a"]
    assert tiers.reconcile(cycle="same") == []  # the cycle's 0.1 allowance is spent
    assert tiers.belief("a").weight == pytest.approx(0.35)  # type: ignore[union-attr]

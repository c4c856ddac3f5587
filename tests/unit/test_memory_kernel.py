"""The pure memory rules: §16.1 defaults, §16.2 decay/TTL/demotion, §17 promotion, ranking."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernel import memory as mk

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


def obs(ref: str, author: str = "a", hours: float = 0, **kw: object) -> mk.Observation:
    return mk.Observation(
        memory_id=ref,
        source_ref=ref,
        author=author,
        observed=T0 + timedelta(hours=hours),
        quality=str(kw.pop("quality", "primary")),
        **kw,  # type: ignore[arg-type]
    )


def test_confidence_defaults_follow_section_16_1() -> None:
    assert mk.initial_confidence("discord", "primary", ()) == 0.95
    assert mk.initial_confidence("news", "primary", ()) == 0.85
    assert mk.initial_confidence("x", "secondary", ()) == 0.60
    assert mk.initial_confidence("x", "unknown", ("rumor",)) == 0.35
    assert 0.35 <= mk.initial_confidence("x", "primary", ("unverified",)) <= 0.60
    assert mk.initial_confidence("chat", "primary", (), inferred=True) <= 0.70
    assert mk.inferred_confidence(0.99) == 0.70


def test_importance_defaults() -> None:
    assert mk.initial_importance("channel:chat:sender:local", "user.preference.language") >= 0.80
    assert 0.40 <= mk.initial_importance("feed:x:author:bob", "signal.x.post") <= 0.65


def test_naming_scheme() -> None:
    assert mk.entity_for("discord", "42") == "channel:discord:sender:42"
    assert mk.entity_for("x", "Some Body") == "feed:x:author:some_body"
    assert mk.entity_for("news", "Reuters") == "feed:news:publisher:reuters"
    assert mk.entity_for("trend", None, "AI Agents") == "trend:topic:ai_agents"
    assert mk.valid_entity("channel:discord:sender:42") and not mk.valid_entity("nocolon")
    assert mk.valid_slot("user.preference.language") and not mk.valid_slot("User Pref")


def test_contradiction_lowers_confidence_and_demotes_past_threshold() -> None:
    lowered = mk.contradicted_confidence(0.9, 1.0)
    assert lowered == pytest.approx(0.45)
    assert not mk.should_demote(0.45, 1)
    assert mk.should_demote(0.45, 2)  # two marks
    assert mk.should_demote(0.29, 1)  # or confidence under 0.30


def test_topic_decay_and_trend_ttl() -> None:
    assert mk.topic_decayed(0.8, mk.TOPIC_HALF_LIFE) == pytest.approx(0.4)
    assert mk.topic_decayed(0.8, timedelta(0)) == 0.8
    hourly = "trend.snapshot.hourly"
    assert not mk.trend_expired(hourly, T0, T0 + timedelta(hours=5, minutes=59))
    assert mk.trend_expired(hourly, T0, T0 + timedelta(hours=6, minutes=1))
    assert not mk.trend_expired("trend.snapshot.daily", T0, T0 + timedelta(hours=23))
    assert mk.trend_expired("trend.snapshot.daily", T0, T0 + timedelta(hours=25))
    assert not mk.trend_expired("user.profile.name", T0, T0 + timedelta(days=999))


def test_promotion_needs_independent_repeated_primary_observation() -> None:
    assert mk.promotion_blockers([obs("r1")])  # single observation
    burst = [obs("r1"), obs("r2", hours=0.2), obs("r3", hours=0.5)]  # same author, one burst
    assert any("independent" in b for b in mk.promotion_blockers(burst))
    assert mk.promotion_blockers([obs("r1"), obs("r2", hours=2)]) == []
    assert mk.promotion_blockers([obs("r1", "a"), obs("r2", "b", hours=0.1)]) == []
    same_ref = [obs("r1", "a"), obs("r1", "b", hours=3)]
    assert mk.promotion_blockers(same_ref)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"tainted": True}, "tainted"),
        ({"risk_flags": ("rumor",)}, "risk"),
        ({"risk_flags": ("unverified",)}, "risk"),
        ({"quality": "secondary"}, "primary"),
        ({"fetch_failed": True}, "fetched"),
    ],
)
def test_promotion_refuses_risky_or_tainted(change: dict[str, object], needle: str) -> None:
    second = obs("r2", "b", hours=3, **change)
    first = obs("r1", "a") if "quality" not in change else obs("r1", "a", quality="secondary")
    blockers = mk.promotion_blockers([first, second])
    assert any(needle in b for b in blockers), blockers


def test_missing_source_ref_blocks_promotion() -> None:
    no_ref = mk.Observation("m", "", "b", T0 + timedelta(hours=3), "primary")
    assert any("source_ref" in b for b in mk.promotion_blockers([obs("r1"), no_ref]))


def test_weights_strengthen_on_use_and_decay_when_idle() -> None:
    assert mk.strengthened(0.5) == pytest.approx(0.52)
    assert mk.strengthened(0.99, 5) == 1.0
    assert mk.decayed_weight(0.5, 10) < 0.5
    assert mk.decayed_weight(0.5, 0) == 0.5
    assert mk.decayed_weight(0.5, 100_000) == mk.WEIGHT_FLOOR


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 10_000))
def test_decay_stays_in_bounds(weight: float, strength: float, days: float) -> None:
    assert 0 <= mk.decayed_weight(weight, days) <= max(weight, mk.WEIGHT_FLOOR)
    assert 0 <= mk.contradicted_confidence(weight, strength) <= weight


def test_rank_score_prefers_relevant_then_penalises_superseded() -> None:
    relevant = mk.RankSignals(cosine=0.7)
    unrelated = mk.RankSignals(cosine=0.1)
    assert mk.rank_score(relevant) > mk.rank_score(unrelated)
    stale = mk.RankSignals(cosine=0.7, superseded=True)
    fresh_correction = mk.RankSignals(cosine=0.6)
    assert mk.rank_score(fresh_correction) > mk.rank_score(stale)
    contested = mk.RankSignals(cosine=0.7, contradictions=2)
    assert mk.rank_score(contested) < mk.rank_score(relevant)
    old = mk.RankSignals(cosine=0.7, age=timedelta(days=365))
    assert mk.rank_score(old) < mk.rank_score(relevant)


def test_bm25_normalisation() -> None:
    assert mk.normalise_bm25([-4.0, -2.0, -1.0]) == [1.0, 0.5, 0.25]
    assert mk.normalise_bm25([]) == []


def test_simhash_finds_near_duplicates_only() -> None:
    a = mk.simhash("ACME announces a new AI chip for agents, shipping next quarter worldwide.")
    b = mk.simhash("ACME announces a new AI chip for agents, shipping next quarter worldwide!!")
    c = mk.simhash("Local bakery wins award for sourdough bread in annual city contest.")
    assert mk.simhash_similarity(a, b) == 1.0
    assert mk.simhash_similarity(a, c) < 0.8

"""Issue 15: relevance first; stemming; time expressions; BM25 coverage (pure kernel + tiers)."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kernel import memory as mk
from state.tiers import MemoryTiers, lexical_terms

NOW = datetime(2024, 6, 20, 12, tzinfo=UTC)


def test_recency_and_importance_never_lift_an_irrelevant_memory() -> None:
    old_relevant = mk.RankSignals(cosine=0.55, lexical=0.6, age=timedelta(days=400))
    new_irrelevant = mk.RankSignals(cosine=0.12, importance=1.0, weight=1.0)
    assert mk.rank_score(old_relevant) > mk.rank_score(new_irrelevant)
    # among equally relevant memories the re-ordering terms decide
    used = mk.RankSignals(cosine=0.55, lexical=0.6, weight=0.9)
    assert mk.rank_score(used) > mk.rank_score(mk.RankSignals(cosine=0.55, lexical=0.6))
    assert mk.rank_score(mk.RankSignals(cosine=0.0)) == 0.0


def test_stemming_matches_inflections() -> None:
    assert lexical_terms("I moved to Lyon") == lexical_terms("moving lyon")
    assert lexical_terms("Running races") == lexical_terms("run race")
    assert "the" not in lexical_terms("the")  # stop words are not terms


def test_lexical_index_finds_stemmed_forms(tmp_path: Path) -> None:
    tiers = MemoryTiers(tmp_path / "t.sqlite")
    rows = [
        (
            "a",
            "Nora: we are moving to Lyon next month",
            "external",
            NOW.timestamp(),
            False,
            False,
            0.5,
        ),
        ("b", "Felix: the weather is lovely", "external", NOW.timestamp(), False, False, 0.5),
    ]
    tiers.index_docs(rows)
    assert [mid for mid, _ in tiers.lexical("When did Nora move?", 5)] == ["a"]


def test_coverage_keeps_a_name_only_match_weak() -> None:
    # 1000 memories; the name is in 300 of them, "lyon" in 2, "move" in none
    ceiling = mk.bm25_ceiling([300, 2, 0], 1000)
    name_only = mk.bm25_ceiling([300], 1000)
    strength = mk.normalise_bm25([-name_only], ceiling)[0]
    assert strength < 0.2
    assert mk.normalise_bm25([-4.0, -2.0, -1.0]) == [1.0, 0.5, 0.25]


def test_query_periods() -> None:
    (span,) = mk.query_periods("What did Nora do in May 2023?", NOW)
    assert span == (datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 6, 1, tzinfo=UTC))
    (span,) = mk.query_periods("what happened on 8 May, 2023", NOW)
    assert span[0] < datetime(2023, 5, 8, 12, tzinfo=UTC) < span[1]
    (span,) = mk.query_periods("anything in March?", NOW)
    assert span[0] == datetime(2024, 3, 1, tzinfo=UTC)
    (span,) = mk.query_periods("where did I go last week", NOW)
    assert span[0] <= NOW - timedelta(days=10) < span[1] <= NOW
    (span,) = mk.query_periods("the thing from two weeks ago", NOW)
    assert span[0] < NOW - timedelta(days=14) < span[1]
    assert mk.query_periods("may I ask what you think?", NOW) == []
    assert mk.query_periods("What is Nora's dog called?", NOW) == []


def test_strip_names_takes_speakers_out_of_the_embedded_question() -> None:
    assert mk.strip_names("What did Nora's puppy eat?", ["nora"]) == "What did puppy eat?"
    assert mk.strip_names("When did Zoë go to Lyon?", ["zoe"]) == "When did go to Lyon?"
    assert mk.strip_names("Noram and Nora", ["nora"]) == "Noram and"
    assert mk.strip_names("Nora?", ["nora"]) == "Nora?"  # nothing but the name: keep it
    assert mk.strip_names("What did Nora say?", []) == "What did Nora say?"


def test_speaker_and_period_scale_relevance_but_never_create_it() -> None:
    plain = mk.RankSignals(cosine=0.5, lexical=0.3)
    named = mk.RankSignals(cosine=0.5, lexical=0.3, speaker_match=True)
    dated = mk.RankSignals(cosine=0.5, lexical=0.3, in_period=True)
    assert mk.rank_score(named) > mk.rank_score(plain)
    assert mk.rank_score(dated) > mk.rank_score(plain)
    assert mk.rank_score(mk.RankSignals(cosine=0.0, speaker_match=True, in_period=True)) == 0.0


def test_lexical_strengths_mix_coverage_and_best_match(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mk, "LEXICAL_COVERAGE_SHARE", 1.0)
    assert mk.lexical_strengths([-2.0, -1.0], 8.0) == [0.25, 0.125]
    monkeypatch.setattr(mk, "LEXICAL_COVERAGE_SHARE", 0.0)
    assert mk.lexical_strengths([-2.0, -1.0], 8.0) == [1.0, 0.5]
    monkeypatch.setattr(mk, "LEXICAL_COVERAGE_SHARE", 0.5)
    assert mk.lexical_strengths([-2.0, -1.0], 8.0) == [0.625, 0.3125]


def test_speakers_and_name_scoped_lexical_search(tmp_path: Path) -> None:
    tiers = MemoryTiers(tmp_path / "t.sqlite")
    tiers.add_speakers(["Nora", "Zoë", "Mary Ann", ""])
    assert tiers.speakers_in("What did Zoe and Nora's friend Mary Ann do?") == [
        "mary ann",
        "nora",
        "zoe",
    ]
    assert tiers.speakers_in("nothing here, nora") == []  # names are capitalised
    when = NOW.timestamp()
    tiers.index_docs(
        [
            ("a", "Nora: I adopted a greyhound", "external", when, False, False, 0.5),
            ("b", "Felix: I adopted a kitten", "external", when, False, False, 0.5),
            ("c", "Nora: lovely weather", "external", when, False, False, 0.5),
        ]
    )
    assert [m for m, _ in tiers.lexical("what did Nora adopt", 5, require="Nora")] == ["a"]
    assert tiers.lexical("Nora", 5, require="Nora") == []  # the name alone matches nothing

"""Issue 15: relevance first; stemming; time expressions; BM25 coverage (pure kernel + tiers)."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

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

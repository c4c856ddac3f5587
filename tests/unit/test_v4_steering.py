"""Pure math of the steering v4 layers (issue 13 item 3): drives, affect bias, survival book."""

from __future__ import annotations

import pytest

from kernel import mscp

CALM = {
    "curiosity": 0.0,
    "frustration": 0.0,
    "satisfaction": 0.8,
    "anxiety": 0.0,
    "excitement": 0.6,
}
CURIOUS = {**CALM, "curiosity": 0.8}
UPSET = {**CALM, "frustration": 0.7, "anxiety": 0.5, "satisfaction": 0.1}


def test_drives_caution_from_bad_affect_or_error_and_explore_from_curiosity() -> None:
    calm = mscp.motivation_drives(CALM, drive=0.8, recent_error=0.0)
    assert calm["caution"] == 0.0 and calm["explore"] == 0.0 and calm["drive"] == 0.8
    assert mscp.motivation_drives(CALM, drive=0.8, recent_error=0.6)["caution"] == 0.6
    assert mscp.motivation_drives(UPSET, drive=0.8, recent_error=0.0)["caution"] == 0.7
    curious = mscp.motivation_drives(CURIOUS, drive=0.8, recent_error=0.0)
    assert curious["explore"] == pytest.approx(0.8)
    wary = mscp.motivation_drives({**CURIOUS, "anxiety": 1.0}, drive=0.8, recent_error=0.0)
    assert wary["explore"] == pytest.approx(0.4)  # caution damps exploring


def test_affect_bias_is_bounded_and_points_the_right_way() -> None:
    cautious = {"caution": 1.0, "explore": 0.0}
    safe = mscp.affect_bias(cautious, success=0.9, risk=0.0, exploratory=0.0)
    risky = mscp.affect_bias(cautious, success=0.9, risk=0.45, exploratory=0.0)
    shaky = mscp.affect_bias(cautious, success=0.2, risk=0.0, exploratory=0.0)
    assert safe > risky and safe > shaky and shaky < 0.0
    curious = {"caution": 0.0, "explore": 1.0}
    novel = mscp.affect_bias(curious, success=0.5, risk=0.0, exploratory=1.0)
    known = mscp.affect_bias(curious, success=0.5, risk=0.0, exploratory=0.0)
    assert novel == pytest.approx(mscp.AFFECT_BIAS_MAX) and known == 0.0
    for drives in (cautious, curious, {"caution": 1.0, "explore": 1.0}):
        for s in (0.0, 1.0):
            for r in (0.0, 1.0):
                bias = mscp.affect_bias(drives, success=s, risk=r, exploratory=1.0)
                assert abs(bias) <= mscp.AFFECT_BIAS_MAX  # it cannot dominate (§7.1)


def goal(kind: str, priority: float = 0.4) -> mscp.SurvivalGoal:
    return mscp.SurvivalGoal(mscp.SURVIVAL_GOAL_NAMES[kind], kind, priority, mscp.SURVIVAL_GOAL_TTL)


def test_survival_book_keys_refreshes_ends_and_expires() -> None:
    book, added = mscp.survival_book([], [goal("RESOURCE_DEPLETION")], cycle=1)
    assert added == ["conserve cognitive budget"] and book[0]["expires"] == 11
    book, added = mscp.survival_book(book, [goal("RESOURCE_DEPLETION", 0.7)], cycle=4)
    assert added == [] and len(book) == 1  # refreshed, never duplicated
    assert book[0]["expires"] == 14 and book[0]["priority"] == 0.7 and book[0]["active"]
    book, _ = mscp.survival_book(book, [], cycle=5)
    assert book[0]["active"] is False and book[0]["expires"] == 14  # the threat ended
    assert mscp.survival_book(book, [], cycle=13)[0]
    assert mscp.survival_book(book, [], cycle=14)[0] == []  # 10 cycles after it was last seen
    dupes = [{**book[0], "expires": 9}, {**book[0], "expires": 12}]
    assert [g["expires"] for g in mscp.survival_book(dupes, [], cycle=5)[0]] == [12]


def test_survival_book_holds_three_and_an_ended_goal_makes_room() -> None:
    kinds = ["IDENTITY_EROSION", "BELIEF_COLLAPSE", "CONVERGENCE_FAILURE"]
    book, _ = mscp.survival_book([], [goal(k) for k in kinds], cycle=1)
    book, added = mscp.survival_book(book, [goal(k) for k in kinds[:2]], cycle=2)
    assert len(book) == 3 and not added
    book, added = mscp.survival_book(book, [goal("RESOURCE_DEPLETION")], cycle=3)
    assert len(book) == 3 and added == ["conserve cognitive budget"]
    assert "CONVERGENCE_FAILURE" not in {g["kind"] for g in book}  # the ended one went first
    full, _ = mscp.survival_book([], [goal(k) for k in kinds], cycle=1)
    assert (
        mscp.survival_book(full, [goal(k) for k in [*kinds, "RESOURCE_DEPLETION"]], cycle=2)[1]
        == []
    )  # all three still active: no room

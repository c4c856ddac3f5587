"""clock: the current time and English relative dates, with an injectable now."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

RunSkill = Callable[..., Any]
NOW = "2025-01-15T09:30:00+00:00"  # a Wednesday


def test_clock_now_golden(run_skill: RunSkill) -> None:
    result = run_skill("clock", {"op": "now", "now": NOW, "tz": "Europe/Paris"})
    assert result.code == 0
    assert result.output == {
        "iso": "2025-01-15T10:30:00+01:00",
        "date": "2025-01-15",
        "time": "10:30:00",
        "weekday": "Wednesday",
        "tz": "Europe/Paris",
    }


def test_clock_now_naive_timestamp_is_read_in_tz(run_skill: RunSkill) -> None:
    result = run_skill("clock", {"op": "now", "now": "2025-06-01T23:30:00", "tz": "Asia/Tokyo"})
    assert result.output["iso"] == "2025-06-01T23:30:00+09:00"


def test_clock_resolve_golden(run_skill: RunSkill) -> None:
    result = run_skill("clock", {"op": "resolve", "text": "Next Friday", "now": NOW, "tz": "UTC"})
    assert result.code == 0
    assert result.output == {"date": "2025-01-17", "weekday": "Friday", "text": "Next Friday"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("today", "2025-01-15"),
        ("tomorrow", "2025-01-16"),
        ("yesterday", "2025-01-14"),
        ("the day after tomorrow", "2025-01-17"),
        ("in 3 days", "2025-01-18"),
        ("in a week", "2025-01-22"),
        ("in 2 weeks", "2025-01-29"),
        ("in one month", "2025-02-15"),
        ("3 days ago", "2025-01-12"),
        ("two weeks ago", "2025-01-01"),
        ("1 year ago", "2024-01-15"),
        ("5 days from now", "2025-01-20"),
        ("next friday", "2025-01-17"),
        ("next wednesday", "2025-01-22"),
        ("last monday", "2025-01-13"),
        ("last wednesday", "2025-01-08"),
        ("wednesday", "2025-01-15"),
        ("this sunday", "2025-01-19"),
        ("next week", "2025-01-22"),
        ("last month", "2024-12-15"),
        ("2025-03-01", "2025-03-01"),
    ],
)
def test_clock_resolves_relative_dates(run_skill: RunSkill, text: str, expected: str) -> None:
    result = run_skill("clock", {"op": "resolve", "text": text, "now": NOW, "tz": "UTC"})
    assert result.code == 0, result.output
    assert result.output["date"] == expected


def test_clock_resolve_uses_the_date_in_tz(run_skill: RunSkill) -> None:
    # 23:30 UTC on the 15th is already the 16th in Tokyo.
    payload = {"op": "resolve", "text": "today", "now": "2025-01-15T23:30:00Z", "tz": "Asia/Tokyo"}
    assert run_skill("clock", payload).output["date"] == "2025-01-16"


def test_clock_month_arithmetic_clamps_to_month_end(run_skill: RunSkill) -> None:
    payload = {"op": "resolve", "text": "in 1 month", "now": "2025-01-31T12:00:00", "tz": "UTC"}
    assert run_skill("clock", payload).output["date"] == "2025-02-28"


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"op": "resolve", "text": "someday soon"}, "cannot resolve"),
        ({"op": "resolve", "text": "2025-02-30"}, "not a valid date"),
        ({"op": "resolve", "text": "in 20000 days"}, "too large"),
        ({"op": "resolve"}, "text"),
        ({"op": "now", "tz": "Mars/Olympus_Mons"}, "unknown time zone"),
        ({"op": "now", "now": "yesterday-ish"}, "ISO 8601"),
        ({"op": "sleep"}, '"op"'),
    ],
)
def test_clock_rejects_bad_input(
    run_skill: RunSkill, payload: dict[str, Any], fragment: str
) -> None:
    result = run_skill("clock", {"now": NOW, **payload})
    assert result.code == 2
    assert fragment in result.output["error"]

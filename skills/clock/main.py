#!/usr/bin/env python3
"""clock: tell the current date and time, or resolve a relative date like "next friday".

Reads one JSON object on stdin: {"op": "now" | "resolve", "text": "in 3 days",
"now": "2025-01-15T09:30:00+00:00", "tz": "Europe/Paris"}.
  op "now"     -> {"iso", "date", "time", "weekday", "tz"}
  op "resolve" -> {"date": "YYYY-MM-DD", "weekday", "text"}

"tz" is an IANA zone name (default: the system's local zone). "now" (optional, for replay and
tests) is an ISO 8601 timestamp; a naive one is taken to be in "tz". Resolvable English: today,
tonight, tomorrow, yesterday, the day after tomorrow, the day before yesterday; "in 3 days",
"in a week", "in two months", "3 days from now", "2 weeks ago" (day, week, month, year;
numbers as digits or one..twelve); "next/last week|month|year"; "next friday" (the first
Friday after today), "last monday" (the last Monday before today), "this friday" or "friday"
(today or the next Friday); and ISO dates such as 2025-03-01. Anything else is an error.
Exit 0 on success, 2 on bad input or unresolvable text, 1 on any other failure.
"""

from __future__ import annotations

import calendar
import re
import sys
from datetime import date, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

try:  # the shared protocol: skills/_protocol.py beside this skill's directory
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from _protocol import SkillError, serve
except ImportError:  # no copy there: the installed lumen package has it
    from skills._protocol import SkillError, serve

MAX_TEXT = 100
MAX_COUNT = 10_000
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
FIXED = {
    "today": 0,
    "tonight": 0,
    "now": 0,
    "tomorrow": 1,
    "yesterday": -1,
    "day after tomorrow": 2,
    "the day after tomorrow": 2,
    "day before yesterday": -2,
    "the day before yesterday": -2,
}
UNIT = r"(day|week|month|year)s?"
COUNT = r"(\d+|" + "|".join(NUMBER_WORDS) + r")"
IN_FUTURE = re.compile(rf"^(?:in\s+{COUNT}\s+{UNIT}|{COUNT}\s+{UNIT}\s+(?:from now|later))$")
IN_PAST = re.compile(rf"^{COUNT}\s+{UNIT}\s+ago$")
RELATIVE_UNIT = re.compile(rf"^(next|last|this)\s+{UNIT}$")
WEEKDAY = re.compile(r"^(?:(next|last|this|on)\s+)?(" + "|".join(WEEKDAYS) + r")$")
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def zone(name: Any) -> tuple[tzinfo, str]:
    """Return the time zone named ``name`` (None = the local zone) and its display name."""
    if name is None:
        local = datetime.now().astimezone().tzinfo
        assert local is not None  # astimezone() always returns an aware datetime
        return local, datetime.now(local).tzname() or "local"
    if not isinstance(name, str) or not name.strip():
        raise SkillError('"tz" must be an IANA time zone name such as "Europe/Paris"')
    try:
        return ZoneInfo(name.strip()), name.strip()
    except (ZoneInfoNotFoundError, ValueError):
        raise SkillError(f"unknown time zone {name!r}") from None


def current(payload: dict[str, Any], tz: tzinfo) -> datetime:
    """Return the payload's "now" (or the real time) as an aware datetime in ``tz``."""
    raw = payload.get("now")
    if raw is None:
        return datetime.now(tz)
    if not isinstance(raw, str):
        raise SkillError('"now" must be an ISO 8601 string')
    try:
        moment = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise SkillError(f'"now" is not an ISO 8601 timestamp: {raw!r}') from None
    return moment.replace(tzinfo=tz) if moment.tzinfo is None else moment.astimezone(tz)


def add_months(day: date, months: int) -> date:
    """Shift ``day`` by whole months, clamping to the last day of the target month."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    if not 1 <= year <= 9999:
        raise OverflowError("date out of range")
    last = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(day.day, last))


def shift(day: date, count: int, unit: str) -> date:
    """Move ``day`` by ``count`` days, weeks, months or years."""
    if unit == "day":
        return day + timedelta(days=count)
    if unit == "week":
        return day + timedelta(weeks=count)
    return add_months(day, count * (12 if unit == "year" else 1))


def number(token: str) -> int:
    """Turn a count (digits or an English number word) into an int."""
    value = int(token) if token.isdigit() else NUMBER_WORDS[token]
    if value > MAX_COUNT:
        raise SkillError(f"count {value} is too large (limit {MAX_COUNT})")
    return value


def resolve(text: str, today: date) -> date:
    """Resolve English relative-date ``text`` against ``today``."""
    phrase = " ".join(text.lower().replace(",", " ").split()).rstrip(".!?")
    if phrase in FIXED:
        return today + timedelta(days=FIXED[phrase])
    if ISO_DATE.match(phrase):
        try:
            return date.fromisoformat(phrase)
        except ValueError:
            raise SkillError(f"not a valid date: {text!r}") from None
    if found := IN_FUTURE.match(phrase):
        count, unit = (found[1], found[2]) if found[1] else (found[3], found[4])
        return shift(today, number(count), unit)
    if found := IN_PAST.match(phrase):
        return shift(today, -number(found[1]), found[2])
    if found := RELATIVE_UNIT.match(phrase):
        step = {"next": 1, "last": -1, "this": 0}[found[1]]
        return shift(today, step, found[2])
    if found := WEEKDAY.match(phrase):
        ahead = (WEEKDAYS.index(found[2]) - today.weekday()) % 7
        if found[1] == "next":
            return today + timedelta(days=ahead or 7)
        if found[1] == "last":
            return today - timedelta(days=(7 - ahead) % 7 or 7)
        return today + timedelta(days=ahead)
    raise SkillError(f"cannot resolve {text!r} to a date")


def run(payload: dict[str, Any]) -> dict[str, Any]:
    """Validate the payload and answer the requested op."""
    op = payload.get("op", "now")
    if op not in ("now", "resolve"):
        raise SkillError('"op" must be "now" or "resolve"')
    tz, tz_name = zone(payload.get("tz"))
    moment = current(payload, tz)
    if op == "now":
        return {
            "iso": moment.isoformat(timespec="seconds"),
            "date": moment.date().isoformat(),
            "time": moment.strftime("%H:%M:%S"),
            "weekday": WEEKDAYS[moment.weekday()].capitalize(),
            "tz": tz_name,
        }
    text = payload.get("text")
    if not isinstance(text, str) or not text.strip():
        raise SkillError('op "resolve" needs "text", a non-empty string')
    if len(text) > MAX_TEXT:
        raise SkillError(f"text is longer than {MAX_TEXT} characters")
    try:
        day = resolve(text, moment.date())
    except OverflowError:
        raise SkillError(f"{text!r} falls outside the supported years 1..9999") from None
    return {"date": day.isoformat(), "weekday": WEEKDAYS[day.weekday()].capitalize(), "text": text}


if __name__ == "__main__":
    sys.exit(serve(run, __doc__))

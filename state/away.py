"""What autonomy did between conversations: findings, artifacts, questions for the user.

``data/metacog/autonomy.jsonl`` is append-only; each line is one event:

* ``Finding``  — an explore or action cycle learned something: ``goal``, ``question``, ``source``
  (``skill:input``), ``trust`` (``trusted`` for the agent's own stores, ``untrusted`` for
  outside content, stored only as a screened, derived summary), ``summary`` (bounded), ``digest``;
* ``Artifact`` — an action cycle made something: ``kind`` (``note`` | ``summary`` | ``skill``),
  ``goal``, ``path`` (a workspace note) or ``skill``, ``summary``;
* ``Question`` — a question queued for the user: ``id``, ``goal``, ``question``;
* ``Delivered`` — the "While you were away I…" report was said: ``upto`` (events before it are
  delivered) and ``questions`` (the ids it asked).

Readers: goal criteria (findings, artifacts and answered questions count towards a goal being
done), the explore step (questions already asked are not asked again, findings seen are not
recorded twice) and ``graph.away.away_report`` (what is new since the last delivery).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from state.files import append_jsonl
from state.instance import Instance

LOG_NAME = "autonomy.jsonl"


def log_file(instance: Instance) -> Path:
    """Return the autonomy ledger of an instance."""
    return instance.metacog_dir / LOG_NAME


def record(instance: Instance, event: str, **fields: Any) -> dict[str, Any]:
    """Append one event (never rewrites the file); returns it."""
    entry = {"event": event, **fields}
    append_jsonl(log_file(instance), entry)
    return entry


def events(instance: Instance) -> list[dict[str, Any]]:
    """Read every event in order (a torn or unreadable line is skipped)."""
    path = log_file(instance)
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and "event" in item:
            out.append(item)
    return out


@dataclass(frozen=True)
class Progress:
    """What the ledger holds for goals: findings and artifacts by goal, questions and answers."""

    findings: list[dict[str, Any]]
    artifacts: list[dict[str, Any]]
    questions: list[dict[str, Any]]
    delivered: dict[str, str]
    """Question id -> when the report that asked it was delivered (ISO time)."""


def progress(instance: Instance) -> Progress:
    """Group the ledger's events for the criteria checks."""
    found: list[dict[str, Any]] = []
    made: list[dict[str, Any]] = []
    asked: list[dict[str, Any]] = []
    delivered: dict[str, str] = {}
    for e in events(instance):
        kind = e["event"]
        if kind == "Finding":
            found.append(e)
        elif kind == "Artifact":
            made.append(e)
        elif kind == "Question":
            asked.append(e)
        elif kind == "Delivered":
            for qid in e.get("questions", []):
                delivered.setdefault(str(qid), str(e.get("ts", "")))
    return Progress(found, made, asked, delivered)


def undelivered(instance: Instance) -> tuple[list[dict[str, Any]], int]:
    """Return the events after the last ``Delivered`` and the index to mark delivered up to."""
    items = events(instance)
    start = 0
    for e in items:
        if e["event"] == "Delivered":
            start = max(start, int(e.get("upto", 0)))
    new = [e for e in items[start:] if e["event"] != "Delivered"]
    return new, len(items)

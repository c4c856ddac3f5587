"""The turn loop's and cycle's append-only learning logs under ``data/metacog/``, read back.

``outcome_log``, ``lesson_extract``, ``policy_shape``, ``rehearsal_run`` and the cycle's
``rollback`` and ``compare`` append here; the self keeps only bounded windows. Reflection's REVIEW
reads the logs for what happened since a given time (``digest``): that is how lessons, policy
changes and rollbacks older than the windows still shape what reflection asks. ASK reads the
cycle's acting passes since the last reflection (``cycle_outcomes``: skill, archetype, outcome,
ε) to lower the archetype whose skills keep failing against a confident forecast.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from state.files import tail_records

TAIL = 200
"""Only the newest lines of each log are read."""


def _since(path: Path, since: datetime) -> list[dict[str, Any]]:
    found = []
    for record in tail_records(path, TAIL):
        try:
            when = datetime.fromisoformat(str(record.get("ts", "")))
        except ValueError:
            continue  # a foreign line: the rest still counts
        if when.tzinfo is not None and when >= since:
            found.append(record)
    return found


def cycle_outcomes(root: Path, *, after_cycle: int) -> list[dict[str, Any]]:
    """Return the acting passes ``compare`` logged after cycle ``after_cycle``, oldest first."""
    found = []
    for record in tail_records(root / "cycles.jsonl", TAIL):
        cycle = record.get("cycle")
        if isinstance(cycle, int) and cycle > after_cycle:
            found.append(record)
    return found


def digest(root: Path, since: datetime) -> list[str]:
    """Return one line per log with what it recorded since ``since`` (nothing: no line)."""
    lines = []
    outcomes = _since(root / "outcomes.jsonl", since)
    if outcomes:
        tags = Counter(tag for o in outcomes for tag in o.get("error_tags", []))
        worst = ", ".join(f"{tag} x{n}" for tag, n in tags.most_common(3)) or "no errors"
        lines.append(f"{len(outcomes)} chat turns; errors: {worst}")
    lessons = _since(root / "lessons.jsonl", since)
    if lessons:
        lines.append(
            "lessons: "
            + "; ".join(f"{x.get('id')} if {x.get('if')}, {x.get('then')}" for x in lessons[-3:])
        )
    policy = _since(root / "policy.jsonl", since)
    if policy:
        moves = [
            f"applied {p['apply']}" if "apply" in p else f"reverted {p.get('revert')}"
            for p in policy
        ]
        lines.append("policy changes: " + ", ".join(moves[-4:]))
    rehearsals = _since(root / "rehearsals.jsonl", since)
    if rehearsals:
        new = sum(1 for r in rehearsals if r.get("lesson"))
        lines.append(f"{len(rehearsals)} rehearsals, {new} new rules")
    rollbacks = _since(root / "rollbacks.jsonl", since)
    if rollbacks:
        lines.append(f"{len(rollbacks)} rollbacks of the self to a stable snapshot")
    return lines

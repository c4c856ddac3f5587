"""Trend snapshots (AsteronIris §14.1 "Trend signals", §15, §16.2): signals per topic, hourly.

``snapshot_trends`` reads the signal ledger (``data/signals/<year>/<date>.jsonl``, Tier A's
screened records, never raw text) for the last hour and the hour before, counts the signals per
topic tag, and writes one ``trend.snapshot.hourly`` slot per active topic on the §15 entity
``trend:topic:<slug>``. The slot's value is the topic's momentum, chosen so a steady topic
corroborates its slot instead of contradicting it every hour:

* ``new`` — no signal the hour before; ``rising`` — more than 1.25× the hour before;
  ``falling`` — under 0.75×; ``steady`` otherwise.

Each snapshot is explained by a ``kernel`` memory with the counts (the slot's observation points
at it). Snapshots are tainted (they are derived from outside content), so they never become
long-term beliefs, and they expire after the slot's TTL (6 h, ``kernel.memory.TREND_TTL``): the
stale trend purge in maintenance (§19.2, ``graph.maintenance.purge_stale_trends``) retires them.
Signals that are blocked by the injection screen, or flagged ``sensitive`` (which includes every
signal of a ``privacy = "secret"`` source), are not counted: a trend never carries them onward.

``lumen run`` calls ``snapshot_when_due`` (at most once an hour, the last hour kept in
``.lumen/sources.json``); ``lumen sources trends`` runs it now.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from graph.deps import Deps
from graph.ingress import signal_file
from kernel import memory as mk
from state.counters import bump
from state.self_state import utc_now
from state.sources import SourceStates

WINDOW = timedelta(hours=1)
MARKER = "trends.last_snapshot"
RISING = 1.25
FALLING = 0.75


@dataclass(frozen=True)
class TrendSnapshot:
    """One topic's snapshot."""

    topic: str
    momentum: str
    count: int
    previous: int
    sources: int
    slot_status: str

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-able view."""
        return self.__dict__.copy()


def momentum(count: int, previous: int) -> str:
    """Return ``new``, ``rising``, ``falling`` or ``steady`` for this hour against the last."""
    if previous == 0:
        return "new"
    if count > previous * RISING:
        return "rising"
    if count < previous * FALLING:
        return "falling"
    return "steady"


def _records(deps: Deps, start: datetime, end: datetime | None) -> list[dict[str, Any]]:
    """Return the signal ledger records stamped in ``[start, end)`` (``end=None``: no bound)."""
    found = []
    day = start.date()
    last = (end or datetime.max.replace(tzinfo=start.tzinfo)).date()
    newest = max(start.date(), _today(deps))
    while day <= min(last, newest):
        path = signal_file(deps, day)
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                    stamp = datetime.fromisoformat(record["timestamp"])
                except (ValueError, KeyError, TypeError):
                    continue  # a torn line never stops the job
                if start <= stamp and (end is None or stamp < end):
                    found.append(record)
        day += timedelta(days=1)
    return found


def _today(deps: Deps) -> date:
    """The newest ledger day to read: signals are stamped by the wall clock when screened."""
    return max(deps.now(), utc_now()).date()


def _topics(records: list[dict[str, Any]]) -> tuple[Counter[str], dict[str, set[str]]]:
    counts: Counter[str] = Counter()
    origins: dict[str, set[str]] = defaultdict(set)
    for record in records:
        envelope = record.get("envelope") or {}
        if record.get("action") == "block" or "sensitive" in (envelope.get("risk_flags") or []):
            continue
        for tag in envelope.get("topic_tags") or []:
            slug = mk.slugify(str(tag))
            if slug:
                counts[slug] += 1
                origins[slug].add(str(envelope.get("entity_id") or record.get("source")))
    return counts, origins


def snapshot_trends(deps: Deps) -> list[TrendSnapshot]:
    """Aggregate the last hour's signals per topic into ``trend.snapshot.hourly`` slots."""
    now = deps.now()
    current, origins = _topics(_records(deps, now - WINDOW, None))
    before, _ = _topics(_records(deps, now - 2 * WINDOW, now - WINDOW))
    snapshots = []
    for topic, count in sorted(current.items()):
        previous = before.get(topic, 0)
        label = momentum(count, previous)
        sources = len(origins[topic])
        memory_id = deps.store.add(
            f"trend snapshot {topic}: {label}, {count} signal(s) from {sources} source(s) in "
            f"the hour to {now:%Y-%m-%d %H:%M} UTC ({previous} the hour before)",
            metadata={"author": "kernel", "situation": "trend.snapshot", "topic": topic},
            defer_index=True,
        )
        outcome = deps.store.tiers.observe(
            entity_id=f"trend:topic:{topic}",
            slot_key="trend.snapshot.hourly",
            value=label,
            observation=mk.Observation(
                memory_id=memory_id,
                source_ref=f"trend:{topic}:{now:%Y%m%dT%H%M}",
                author="lumen.trends",
                observed=now,
                quality="secondary",
                tainted=True,
            ),
            confidence=mk.SECONDARY_CONFIDENCE,
        )
        if outcome.contradiction:
            bump(deps.instance.machine, "contradiction_mark_total", topic=outcome.slot.slot_key)
        if outcome.promoted:  # pragma: no cover - tainted snapshots never pass the gate
            bump(deps.instance.machine, "belief_promotion_total", topic=outcome.slot.slot_key)
        bump(deps.instance.machine, "trend_snapshot_total")
        snapshots.append(TrendSnapshot(topic, label, count, previous, sources, outcome.slot.status))
    SourceStates(deps.instance.machine).set_marker(MARKER, now)
    deps.store.flush()
    return snapshots


def snapshot_when_due(deps: Deps) -> list[TrendSnapshot] | None:
    """Run ``snapshot_trends`` when the last snapshot is an hour old (``None``: not due)."""
    last = SourceStates(deps.instance.machine).marker(MARKER)
    if last is not None and deps.now() - last < WINDOW:
        return None
    return snapshot_trends(deps)

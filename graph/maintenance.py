"""Memory maintenance: the kernel's regular upkeep of the memory tiers and the yearly summaries.

The lumen spec has the kernel run weight decay "as part of its regular maintenance cycle" and keep
yearly summaries in ``data/memory/<year>/summary.md``; AsteronIris §16.2 and the §19.2 heartbeat
add topic decay, the stale trend purge, the contradiction-ratio monitor and the low-confidence
bulk demotion; MSCP §5.1 reconciles the belief graph. ``maintain`` runs them in that order, writes
one ``kernel`` memory describing the run and records its time in ``.lumen/maintenance.json``;
``lumen run`` calls it when ``maintenance_due``.

Every step is idempotent at a given ``now``: decay and purges only move what aged since the last
run, reconciliation spends at most one rewrite allowance per run, and a yearly summary is only
rewritten when its year's ledger (or the tombstones and belief events it reports) changed.

Summaries are built without a model: per month, counts by author, the heaviest memories as short
quotes, the self-authored changes and the beliefs promoted or superseded. Kernel entries are the
audit trail, below consciousness: the body the reflection reads never quotes or counts them (their
count sits in the front matter). Tainted and forgotten memories are counted, never quoted.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from nodes.services import ReviewContext, Services
from state.counters import bump
from state.errors import DataFileError
from state.files import atomic_write_json, atomic_write_text, read_json
from state.records import Author, MemoryEntry
from state.self_state import utc_now
from state.tiers import Event, MemoryTiers

MAINTENANCE_FILE = "maintenance.json"
SUMMARY_FILE = "summary.md"
MAINTENANCE_SITUATION = "maintenance"
CONTRADICTION_ALARM = 0.3
"""Share of contradicted slot versions above which a run warns (§19.2 contradiction monitor)."""
BELIEF_EVENT_KINDS = ("BeliefPromoted", "BeliefSuperseded")
EVENT_SCAN_LIMIT = 100_000
HEAVIEST_PER_MONTH = 3
CHANGES_PER_MONTH = 8
BELIEFS_PER_MONTH = 10
QUOTE_CHARS = 160
RAW_REVIEW_WINDOW = timedelta(days=90)
"""A review reaching further back than this reads yearly summaries instead of raw entries."""
SUMMARY_EXCERPT_CHARS = 4000
EXPERIENCE_AUTHORS: tuple[Author, ...] = ("self", "goal", "external")
FINGERPRINT_KEYS = ("entries", "latest_entry", "forgotten", "belief_events")


@dataclass
class MaintenanceReport:
    """The figures of one maintenance run."""

    at: datetime
    weights_decayed: int = 0
    topics_decayed: int = 0
    trends_purged: int = 0
    low_confidence_demoted: int = 0
    beliefs_reconciled: list[str] = field(default_factory=list)
    contradiction_ratio: float = 0.0
    summaries: list[Path] = field(default_factory=list)
    duration_s: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the report as JSON-able data."""
        return {
            "at": self.at.isoformat(),
            "weights_decayed": self.weights_decayed,
            "topics_decayed": self.topics_decayed,
            "trends_purged": self.trends_purged,
            "low_confidence_demoted": self.low_confidence_demoted,
            "beliefs_reconciled": list(self.beliefs_reconciled),
            "contradiction_ratio": self.contradiction_ratio,
            "summaries": [str(path) for path in self.summaries],
            "duration_s": self.duration_s,
            "warnings": list(self.warnings),
        }

    def lines(self) -> list[str]:
        """Return the report as human-readable lines, one fact each."""
        reconciled = ", ".join(self.beliefs_reconciled)
        written = ", ".join(str(path) for path in self.summaries)
        return [
            f"maintenance at {self.at.isoformat()}",
            f"memory weights decayed: {self.weights_decayed}",
            f"topic slots decayed: {self.topics_decayed}",
            f"stale trends purged: {self.trends_purged}",
            f"low-confidence slots demoted: {self.low_confidence_demoted}",
            f"beliefs reconciled: {len(self.beliefs_reconciled)}"
            + (f" ({reconciled})" if reconciled else ""),
            f"contradiction ratio: {self.contradiction_ratio:.4f}",
            f"yearly summaries written: {len(self.summaries)}"
            + (f" ({written})" if written else ""),
            f"duration: {self.duration_s:.3f} s",
            *(f"warning: {warning}" for warning in self.warnings),
        ]

    def sentence(self) -> str:
        """Return the run as one sentence (the text of its ``kernel`` memory)."""
        years = ", ".join(path.parent.name for path in self.summaries) or "none"
        return (
            f"Memory maintenance decayed {self.weights_decayed} memory weights and "
            f"{self.topics_decayed} topic slots, purged {self.trends_purged} stale trends, "
            f"demoted {self.low_confidence_demoted} low-confidence slots, reconciled "
            f"{len(self.beliefs_reconciled)} beliefs; contradiction ratio "
            f"{self.contradiction_ratio:.4f}; yearly summaries rewritten: {years}."
            + "".join(f" Warning: {warning}." for warning in self.warnings)
        )


# ---------------------------------------------------------------------- the run


def maintain(deps: Services, *, now: datetime | None = None) -> MaintenanceReport:
    """Run one maintenance cycle over the memory store; safe to repeat."""
    started = time.perf_counter()
    now = now or utc_now()
    tiers = deps.store.tiers
    report = MaintenanceReport(at=now)
    report.weights_decayed = tiers.decay_weights(now)
    report.topics_decayed = tiers.decay_topics(now)
    report.trends_purged = purge_stale_trends(deps, now)
    report.low_confidence_demoted = len(tiers.demote_low_confidence(now))
    report.beliefs_reconciled = tiers.reconcile(cycle=f"maintain:{now.isoformat()}")
    report.contradiction_ratio = tiers.contradiction_ratio()
    report.warnings = contradiction_warnings(report.contradiction_ratio)
    report.summaries = write_year_summaries(deps, now)
    report.duration_s = round(time.perf_counter() - started, 3)
    remember_run(deps, report)
    record_last_run(deps.instance.machine, now)
    return report


def purge_stale_trends(deps: Services, now: datetime) -> int:
    """Expire trend slots past their TTL and count them in ``stale_trend_purge_total``."""
    purged = len(deps.store.tiers.purge_trends(now))
    if purged:
        bump(deps.instance.machine, "stale_trend_purge_total", purged)
    return purged


def contradiction_warnings(ratio: float, alarm: float = CONTRADICTION_ALARM) -> list[str]:
    """Return the contradiction monitor's warning when too many slot versions were contradicted."""
    if ratio <= alarm:
        return []
    return [f"contradiction ratio {ratio:.2f} is above {alarm:.2f}; many beliefs are contested"]


def remember_run(deps: Services, report: MaintenanceReport) -> str:
    """Write the run's ``kernel`` memory (the audit trail of maintenance); returns its id."""
    return deps.store.add(
        report.sentence(),
        metadata={
            "author": "kernel",
            "situation": MAINTENANCE_SITUATION,
            "timestamp": report.at,
            "kind": "MemoryMaintenance",
            "report": report.to_dict(),
        },
    )


# ---------------------------------------------------------------------- scheduling


def maintenance_file(machine_dir: Path) -> Path:
    """Return ``.lumen/maintenance.json``."""
    return machine_dir / MAINTENANCE_FILE


def record_last_run(machine_dir: Path, now: datetime) -> None:
    """Record the time of the last maintenance run (atomic replace)."""
    atomic_write_json(maintenance_file(machine_dir), {"last_run": now.isoformat()})


def last_run(machine_dir: Path) -> datetime | None:
    """Return the recorded time of the last run (None when missing or unreadable)."""
    path = maintenance_file(machine_dir)
    if not path.exists():
        return None
    try:
        data = read_json(path)
        stamp = datetime.fromisoformat(str(data["last_run"]))
    except (DataFileError, KeyError, TypeError, ValueError):
        return None
    return stamp if stamp.tzinfo is not None else None


def is_due(last: datetime | None, now: datetime, interval_hours: float) -> bool:
    """Say whether maintenance is due: never ran, interval passed, or the clock went back."""
    if last is None:
        return True
    elapsed = now - last
    return elapsed < timedelta(0) or elapsed >= timedelta(hours=interval_hours)


def maintenance_due(deps: Services, now: datetime | None = None) -> bool:
    """Say whether ``lumen run`` should run maintenance now (``[memory] maintenance_hours``)."""
    return is_due(
        last_run(deps.instance.machine),
        now or utc_now(),
        deps.config.memory.maintenance_hours,
    )


# ---------------------------------------------------------------------- yearly summaries


@dataclass(frozen=True)
class YearFacts:
    """What the summary of one year is built from (gathered by the kernel, rendered purely)."""

    year: int
    entries: list[MemoryEntry]
    weights: dict[str, float]
    forgotten: set[str]
    belief_events: list[Event]
    tainted_slots: set[str]


def write_year_summaries(deps: Services, now: datetime) -> list[Path]:
    """Write ``data/memory/<year>/summary.md`` for every year whose material changed."""
    tiers = deps.store.tiers
    by_year = entries_by_year(deps.store.journal.read().entries)
    events = tiers.events(kinds=BELIEF_EVENT_KINDS, limit=EVENT_SCAN_LIMIT)
    tainted_slots = {slot.id for slot in tiers.slot_history() if slot.tainted}
    written = []
    for year, entries in sorted(by_year.items()):
        facts = gather_year(tiers, year, entries, events, tainted_slots)
        path = deps.store.path / f"{year:04d}" / SUMMARY_FILE
        fingerprint = year_fingerprint(facts)
        if is_current(path, fingerprint):
            continue
        atomic_write_text(path, render_year_summary(facts, fingerprint, now))
        written.append(path)
    return written


def entries_by_year(entries: Iterable[MemoryEntry]) -> dict[int, list[MemoryEntry]]:
    """Group ledger entries by year, leaving out maintenance's own run records."""
    grouped: dict[int, list[MemoryEntry]] = defaultdict(list)
    for entry in entries:
        if entry.author == "kernel" and entry.situation == MAINTENANCE_SITUATION:
            continue
        grouped[entry.timestamp.year].append(entry)
    return dict(grouped)


def gather_year(
    tiers: MemoryTiers,
    year: int,
    entries: list[MemoryEntry],
    events: Sequence[Event],
    tainted_slots: set[str],
) -> YearFacts:
    """Collect a year's entries with their current weights, tombstones and belief events."""
    ids = [entry.id for entry in entries]
    weights = {mid: info.weight for mid, info in tiers.doc_info(ids).items()}
    return YearFacts(
        year=year,
        entries=entries,
        weights=weights,
        forgotten=tiers.tombstoned(ids),
        belief_events=sorted((e for e in events if e.ts.year == year), key=lambda e: e.seq),
        tainted_slots=tainted_slots,
    )


def year_fingerprint(facts: YearFacts) -> dict[str, str]:
    """Return what a summary must match to be current (ledger size and end, tombstones, events)."""
    latest = max((entry.timestamp for entry in facts.entries), default=None)
    return {
        "entries": str(len(facts.entries)),
        "latest_entry": latest.isoformat() if latest else "",
        "forgotten": str(len(facts.forgotten)),
        "belief_events": str(len(facts.belief_events)),
    }


def is_current(path: Path, fingerprint: dict[str, str]) -> bool:
    """Say whether the summary at ``path`` was written from exactly this material."""
    written = read_front_matter(path)
    return all(written.get(key) == value for key, value in fingerprint.items())


def read_front_matter(path: Path) -> dict[str, str]:
    """Return the ``key: value`` front matter of a summary (empty when missing or malformed)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    lines = text.splitlines()
    if not lines or lines[0] != "---":
        return {}
    found: dict[str, str] = {}
    for line in lines[1:]:
        if line == "---":
            return found
        key, sep, value = line.partition(":")
        if sep:
            found[key.strip()] = value.strip()
    return {}


def strip_front_matter(text: str) -> str:
    """Return a summary's body (what follows the closing ``---`` of its front matter)."""
    if not text.startswith("---\n"):
        return text
    end = text.find("\n---\n", 3)
    return text[end + 5 :] if end >= 0 else text


def render_year_summary(facts: YearFacts, fingerprint: dict[str, str], now: datetime) -> str:
    """Render a year's summary: front matter, then one section per month (pure function)."""
    kernel = sum(entry.author == "kernel" for entry in facts.entries)
    header = [
        "---",
        f"year: {facts.year:04d}",
        *(f"{key}: {fingerprint[key]}" for key in FINGERPRINT_KEYS),
        f"kernel_entries: {kernel}",
        f"generated: {now.isoformat()}",
        "---",
        f"# Memory in {facts.year:04d}",
        "",
        "Written by the kernel's maintenance cycle from the ledger, without a model. Tainted and "
        "forgotten memories are counted, never quoted.",
    ]
    months = month_keys(facts)
    body = [line for month in months for line in render_month(facts, month)]
    return "\n".join([*header, *body]) + "\n"


def month_keys(facts: YearFacts) -> list[str]:
    """Return the ``YYYY-MM`` months that have experiences or belief events, in order."""
    months = {month_of(entry.timestamp) for entry in experiences(facts.entries)}
    months |= {month_of(event.ts) for event in facts.belief_events}
    return sorted(months)


def month_of(stamp: datetime) -> str:
    """Return ``YYYY-MM`` of a timestamp (in its own offset, like the ledger's day files)."""
    return f"{stamp.year:04d}-{stamp.month:02d}"


def experiences(entries: Iterable[MemoryEntry]) -> list[MemoryEntry]:
    """Return the non-kernel entries (what the system lived, not how it processed it)."""
    return [entry for entry in entries if entry.author in EXPERIENCE_AUTHORS]


def render_month(facts: YearFacts, month: str) -> list[str]:
    """Render one month: counts, heaviest memories, self-authored changes, beliefs."""
    lived = [e for e in experiences(facts.entries) if month_of(e.timestamp) == month]
    quotable = [e for e in lived if not e.tainted and e.id not in facts.forgotten]
    events = [e for e in facts.belief_events if month_of(e.ts) == month]
    return [
        "",
        f"## {month}",
        "",
        count_line(lived),
        *withheld_lines(lived, facts.forgotten),
        *section("Heaviest memories", heaviest_lines(quotable, facts.weights)),
        *section("Self-authored changes", change_lines(quotable)),
        *section("Beliefs", belief_lines(events, facts.tainted_slots)),
    ]


def section(title: str, lines: list[str]) -> list[str]:
    """Return a titled sub-section, or nothing when it has no lines."""
    return ["", f"### {title}", "", *lines] if lines else []


def count_line(lived: Sequence[MemoryEntry]) -> str:
    """Return the month's memory count by author."""
    counts = Counter(entry.author for entry in lived)
    parts = ", ".join(f"{author} {counts[author]}" for author in EXPERIENCE_AUTHORS)
    return f"- memories: {len(lived)} ({parts})"


def withheld_lines(lived: Sequence[MemoryEntry], forgotten: set[str]) -> list[str]:
    """Say how many memories were tainted or forgotten (their text is never included)."""
    tainted = sum(entry.tainted for entry in lived)
    gone = sum(entry.id in forgotten for entry in lived)
    lines = []
    if tainted:
        lines.append(f"- tainted (untrusted external content, text withheld): {tainted}")
    if gone:
        lines.append(f"- forgotten (soft-deleted, text withheld): {gone}")
    return lines


def heaviest_lines(
    quotable: Sequence[MemoryEntry], weights: dict[str, float], limit: int = HEAVIEST_PER_MONTH
) -> list[str]:
    """Return the heaviest memories (current weight where known) as short quotes."""
    ranked = sorted(
        quotable,
        key=lambda e: (weights.get(e.id, e.weight), e.timestamp),
        reverse=True,
    )
    return [
        f"- {weights.get(e.id, e.weight):.2f} {e.author} {e.timestamp.date()}: "
        f"{quote(e.description)}"
        for e in ranked[:limit]
    ]


def change_lines(quotable: Sequence[MemoryEntry], limit: int = CHANGES_PER_MONTH) -> list[str]:
    """Return the self-authored changes (the reflection loop's rationale), oldest first."""
    changes = [e for e in quotable if e.author == "self" and is_change(e)]
    lines = [f"- {e.timestamp.date()}: {quote(e.description)}" for e in changes[:limit]]
    if len(changes) > limit:
        lines.append(f"- and {len(changes) - limit} more")
    return lines


def is_change(entry: MemoryEntry) -> bool:
    """Say whether a ``self`` memory records a change of the self (not just an experience)."""
    return entry.situation == "reflection" or ("before" in entry.meta and "after" in entry.meta)


def belief_lines(
    events: Sequence[Event], tainted_slots: set[str], limit: int = BELIEFS_PER_MONTH
) -> list[str]:
    """Return the beliefs promoted or superseded (tainted values withheld)."""
    lines = [belief_line(event, tainted_slots) for event in events[:limit]]
    if len(events) > limit:
        lines.append(f"- and {len(events) - limit} more")
    return lines


def belief_line(event: Event, tainted_slots: set[str]) -> str:
    """Render one promotion or supersession."""
    verb = "promoted" if event.kind == "BeliefPromoted" else "superseded"
    value = (
        "(tainted value withheld)"
        if event.ref in tainted_slots
        else quote(str(event.data.get("value", "")))
    )
    return f"- {event.ts.date()} {verb}: {event.entity_id} {event.slot_key} = {value}"


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """Return ``text`` on one line, shortened to ``limit`` characters, in double quotes."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return '"' + flat.replace('"', "'") + '"'


# ---------------------------------------------------------------------- reading summaries


def summaries_for_span(
    memory_dir: Path, start: datetime, end: datetime, *, limit: int = SUMMARY_EXCERPT_CHARS
) -> list[str]:
    """Return the yearly summary bodies of the years ``start``–``end`` covers (bounded each)."""
    texts = []
    for year in range(start.year, end.year + 1):
        path = memory_dir / f"{year:04d}" / SUMMARY_FILE
        try:
            body = strip_front_matter(path.read_text(encoding="utf-8")).strip()
        except OSError:
            continue
        if body:
            texts.append(body[:limit])
    return texts


def review_context(
    memory_dir: Path,
    memories: Sequence[MemoryEntry],
    now: datetime,
    *,
    since: datetime | None = None,
    window: timedelta = RAW_REVIEW_WINDOW,
) -> ReviewContext:
    """Split a review: raw entries of the last ``window``, yearly summaries for what is older.

    The review spans from ``since`` (the last reflection, when known) or the oldest memory
    considered, whichever is earlier; within ``window`` everything stays raw, and so does all of
    it when no summary covers the older span yet.
    """
    starts = [entry.timestamp for entry in memories] + ([since] if since else [])
    start = min(starts, default=now)
    if now - start <= window:
        return ReviewContext(recent=list(memories), summaries=[])
    cutoff = now - window
    summaries = summaries_for_span(memory_dir, start, cutoff)
    if not summaries:  # no summary written yet: the older raw entries stay rather than vanish
        return ReviewContext(recent=list(memories), summaries=[])
    recent = [entry for entry in memories if entry.timestamp >= cutoff]
    return ReviewContext(recent=recent, summaries=summaries)

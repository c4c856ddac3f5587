"""Pure memory math: confidence and importance defaults, decay, TTL, promotion, ranking.

AsteronIris §16–§18 and the lumen spec's memory weights, as plain functions: no I/O, no clock
(callers pass ``now``), no model. The memory store (``state.memory``, ``state.tiers``) applies them;
unit tests reach every rule here without Chroma or SQLite.

Numbers the seeds give are used as given (0.95 direct quote, 0.85 verified news, 0.35–0.60
rumour, inferred ≤ 0.70, user preference ≥ 0.80, chatter 0.40–0.65, 6 h / 24 h trend TTL). Where
the seeds give a rule but no number, the constant below says what Lumen chose.
"""

from __future__ import annotations

import contextlib
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from kernel.core import clamp

# --- §16.1 base scoring heuristic ------------------------------------------------------------

DIRECT_QUOTE_CONFIDENCE = 0.95  # "discord direct quote: 0.95" (any first-hand message)
VERIFIED_CONFIDENCE = 0.85  # "verified official news: 0.85"
SECONDARY_CONFIDENCE = 0.60  # top of "unverified repost/rumor: 0.35-0.60"
UNVERIFIED_CONFIDENCE = 0.50
RUMOR_CONFIDENCE = 0.35  # bottom of the rumour band
INFERRED_CONFIDENCE_CAP = 0.70  # "inferred claim: <=0.70 で開始"

USER_IMPORTANCE = 0.80  # "user-specific preference: 0.80+"
GENERAL_IMPORTANCE = 0.50  # "market/general chatter: 0.40-0.65"
TREND_IMPORTANCE = 0.40

FIRST_HAND_KINDS = frozenset({"chat", "discord", "manual"})
RISK_FLAGS = ("rumor", "unverified", "sensitive", "policy_risky")
BLOCKING_RISKS = frozenset({"rumor", "unverified", "policy_risky"})
"""Risk flags that forbid promotion (§17: unverified high-risk text); ``sensitive`` alone does
not, but it keeps the signal out of reply context (§20)."""


def initial_confidence(
    source_kind: str, quality: str, risk_flags: Sequence[str], *, inferred: bool = False
) -> float:
    """Return the §16.1 starting confidence of an observation or claim."""
    if inferred:
        return INFERRED_CONFIDENCE_CAP
    if "rumor" in risk_flags:
        return RUMOR_CONFIDENCE
    if "unverified" in risk_flags:
        return UNVERIFIED_CONFIDENCE
    if quality == "primary":
        return DIRECT_QUOTE_CONFIDENCE if source_kind in FIRST_HAND_KINDS else VERIFIED_CONFIDENCE
    if quality == "secondary":
        return SECONDARY_CONFIDENCE
    return UNVERIFIED_CONFIDENCE


def inferred_confidence(model_confidence: float) -> float:
    """Clamp a model-proposed confidence for an inferred claim to ``[0, 0.70]`` (§16.1)."""
    return clamp(model_confidence, 0.0, INFERRED_CONFIDENCE_CAP)


def initial_importance(entity_id: str, slot_key: str) -> float:
    """Return the §16.1 starting importance: user-specific facts high, trends low, chatter mid."""
    if slot_key.startswith("trend.") or entity_id.startswith("trend:"):
        return TREND_IMPORTANCE
    if slot_key.startswith("user.") or entity_id.startswith("channel:chat:"):
        return USER_IMPORTANCE
    return GENERAL_IMPORTANCE


# --- §15 naming scheme ------------------------------------------------------------------------

USER_ENTITY = "channel:chat:sender:local"
"""The person talking to Lumen (``lumen chat``; one local user), by the §15 scheme."""
ENTITY_RE = re.compile(r"^[a-z][a-z0-9_]*(?::[A-Za-z0-9_.@\-]+){1,4}$")
SLOT_RE = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+){1,4}$")
SIGNAL_SLOTS = {
    "discord": "signal.discord.message",
    "x": "signal.x.post",
    "news": "signal.news.article",
    "trend": "trend.snapshot.hourly",
    "webhook": "signal.webhook.event",
    "manual": "signal.manual.note",
    "chat": "signal.chat.message",
}


def entity_for(source_kind: str, author_id: str | None, topic: str | None = None) -> str:
    """Return the §15 entity id for a signal's origin (``channel:discord:sender:<id>``, …)."""
    who = slugify(author_id or "unknown") or "unknown"
    if source_kind == "discord":
        return f"channel:discord:sender:{who}"
    if source_kind == "x":
        return f"feed:x:author:{who}"
    if source_kind == "news":
        return f"feed:news:publisher:{who}"
    if source_kind == "trend":
        return f"trend:topic:{slugify(topic or who) or 'unknown'}"
    if source_kind == "chat":
        return f"channel:chat:sender:{who}"
    return f"feed:{source_kind}:author:{who}"


def slugify(text: str) -> str:
    """Lower-case ``text`` and keep ``[a-z0-9_]`` runs joined by ``_`` (at most 48 chars)."""
    return "_".join(re.findall(r"[a-z0-9]+", text.lower()))[:48].strip("_")


def valid_entity(entity_id: str) -> bool:
    """Say whether ``entity_id`` follows the §15 scheme (``kind:ns:...``)."""
    return bool(ENTITY_RE.match(entity_id))


def valid_slot(slot_key: str) -> bool:
    """Say whether ``slot_key`` follows the §15 scheme (dotted lower-case, 2–5 parts)."""
    return bool(SLOT_RE.match(slot_key))


# --- §16.2 drift and decay -------------------------------------------------------------------

CONTRADICTION_DECAY = 0.5
"""A contradiction of strength s multiplies the slot's confidence by ``1 - 0.5·s``."""
DEMOTE_MARKS = 2  # ContradictionMarked "閾値超え": two marks demote a belief
DEMOTE_CONFIDENCE = 0.30  # … or confidence falling under 0.30
LOW_CONFIDENCE_BULK = 0.20  # heartbeat "low-confidence bulk demotion"
TOPIC_HALF_LIFE = timedelta(days=14)  # "topic系slotは time-decay"
TREND_TTL = {"trend.snapshot.hourly": timedelta(hours=6)}
DEFAULT_TREND_TTL = timedelta(hours=24)  # "trend slot はTTL短め (例: 6h/24h)"


def contradicted_confidence(confidence: float, strength: float) -> float:
    """Lower a confidence after a contradiction of ``strength`` in [0, 1]."""
    return clamp(confidence * (1.0 - CONTRADICTION_DECAY * clamp(strength)))


def should_demote(confidence: float, contradiction_marks: int) -> bool:
    """Say whether a contested belief is auto-demoted (§16.2)."""
    return contradiction_marks >= DEMOTE_MARKS or confidence < DEMOTE_CONFIDENCE


def contradiction_strength(old_confidence: float, new_confidence: float) -> float:
    """Return how strongly a new differing observation contradicts the current value."""
    return clamp(new_confidence / max(old_confidence, 1e-9)) if old_confidence > 0 else 1.0


def topic_decayed(
    confidence: float, age: timedelta, half_life: timedelta = TOPIC_HALF_LIFE
) -> float:
    """Return a topic slot's confidence after ``age`` of exponential decay."""
    hours = max(age.total_seconds(), 0.0) / 3600.0
    return clamp(confidence * 0.5 ** (hours / (half_life.total_seconds() / 3600.0)))


def is_topic_slot(slot_key: str) -> bool:
    """Topic slots (``belief.topic.*``) decay with time."""
    return slot_key.startswith("belief.topic.")


def is_trend_slot(slot_key: str) -> bool:
    """Trend slots (``trend.*``) expire after their TTL."""
    return slot_key.startswith("trend.")


def trend_ttl(slot_key: str) -> timedelta:
    """Return a trend slot's time to live."""
    return TREND_TTL.get(slot_key, DEFAULT_TREND_TTL)


def trend_expired(slot_key: str, observed: datetime, now: datetime) -> bool:
    """Say whether a trend slot observed at ``observed`` has outlived its TTL at ``now``."""
    return is_trend_slot(slot_key) and now - observed > trend_ttl(slot_key)


# --- §17 promotion -----------------------------------------------------------------------------

MIN_INDEPENDENT_OBSERVATIONS = 2
BURST_WINDOW = timedelta(hours=1)
"""Two observations by the same author count as independent only this far apart."""


@dataclass(frozen=True)
class Observation:
    """One observation of a claim, as the promotion gate sees it."""

    memory_id: str
    source_ref: str
    author: str
    observed: datetime
    quality: str
    risk_flags: tuple[str, ...] = ()
    tainted: bool = False
    fetch_failed: bool = False


def independent_count(observations: Sequence[Observation], burst: timedelta = BURST_WINDOW) -> int:
    """Count independent observations.

    Independent means a distinct ``source_ref``, and a distinct author or, for the same author,
    at least ``burst`` after that author's last counted observation.
    """
    seen_refs: set[str] = set()
    last_by_author: dict[str, datetime] = {}
    count = 0
    for obs in sorted(observations, key=lambda o: o.observed):
        if not obs.source_ref or obs.source_ref in seen_refs:
            continue
        previous = last_by_author.get(obs.author)
        if previous is not None and obs.observed - previous < burst:
            continue
        seen_refs.add(obs.source_ref)
        last_by_author[obs.author] = obs.observed
        count += 1
    return count


def promotion_blockers(
    observations: Sequence[Observation],
    *,
    min_observations: int = MIN_INDEPENDENT_OBSERVATIONS,
    burst: timedelta = BURST_WINDOW,
) -> list[str]:
    """Return why a claim may not be promoted to a long-term belief (empty list: it may).

    §17: promote only on independent repeated observation, with at least one primary (verified)
    source and acceptable risk flags; never from a single burst, unverified high-risk text, an
    unknown or failed source (§20: no ``source_ref`` → no promotion) or anything tainted.
    """
    reasons: list[str] = []
    if not observations:
        return ["no observation"]
    if any(o.tainted for o in observations):
        reasons.append("tainted (derived from untrusted external content)")
    if any(not o.source_ref for o in observations):
        reasons.append("an observation has no source_ref")
    if any(o.fetch_failed for o in observations):
        reasons.append("a source could not be fetched")
    risky = sorted({flag for o in observations for flag in o.risk_flags if flag in BLOCKING_RISKS})
    if risky:
        reasons.append(f"risk flags {', '.join(risky)}")
    if not any(o.quality == "primary" for o in observations):
        reasons.append("no primary or verified source")
    independent = independent_count(observations, burst)
    if independent < min_observations:
        reasons.append(
            f"{independent} independent observation(s), {min_observations} needed"
            " (a single burst does not count)"
        )
    return reasons


# --- lumen spec: memory weights ----------------------------------------------------------------

USE_INCREMENT = 0.02  # "each retrieval … used … increases by a small increment"
DAILY_DECAY = 0.01  # unused memories lose 1 % of their weight per idle day
WEIGHT_FLOOR = 0.05  # decay never erases a memory's weight entirely


def strengthened(weight: float, uses: int = 1) -> float:
    """Return a memory weight after ``uses`` retrievals that were used."""
    return clamp(weight + USE_INCREMENT * max(uses, 0))


def decayed_weight(weight: float, idle_days: float) -> float:
    """Return a memory weight after ``idle_days`` without use (never under the floor)."""
    if weight <= WEIGHT_FLOOR:
        return weight
    return max(WEIGHT_FLOOR, clamp(weight * (1.0 - DAILY_DECAY) ** max(idle_days, 0.0)))


# --- §18 + lumen: ranking ------------------------------------------------------------------------

# Relevance is a weighted sum of the two retrieval channels; the weights were chosen on the dev
# split of the dialogue benchmark (bench/memory.py --part dialogue, issue 15), see rank_score.
LEXICAL_WEIGHT = 0.35
SEMANTIC_WEIGHT = 0.65
# Re-ordering terms: they scale relevance (a factor around 1), so they re-order relevant hits
# and never lift an irrelevant memory over a relevant one.
RECENCY_WEIGHT = 0.01  # a tie-break: the turn shows the last exchanges anyway
IMPORTANCE_WEIGHT = 0.10
USE_WEIGHT = 0.08
TIME_MATCH_BONUS = 1.0  # the memory falls in a period the query names ("in May 2023")
# (0.25 -> 1.0 took dated questions from 0.76 to 0.83 on the dev conversations; still a factor)
RECENCY_HALF_LIFE = timedelta(days=30)
SUPERSEDED_PENALTY = 0.30  # the slot this memory asserted now holds a newer value
CONTRADICTION_PENALTY = 0.12  # per contradiction mark against the memory's slot (max 2)
RESTATED_PENALTY = 0.15  # a newer memory by the same author says nearly the same thing
RISK_PENALTY = 0.10
RESTATED_SIMILARITY = 0.70
MIN_FACTOR = 0.05
SPEAKER_MATCH_BONUS = 0.7
"""The memory was said by a person the query names ("What did Nora paint?"): in a chat between
two people the question is about one of them, and their lines are the likely answer. On the dev
conversations 0 -> 0.7 took recall@10 from 0.51 to 0.69 (with the name out of the embedding)."""
LEXICAL_COVERAGE_SHARE = 1.0
"""How lexical strength mixes query coverage (BM25 over the ceiling of all query terms) with
the strength relative to the query's best lexical match (1.0: coverage only)."""


@dataclass(frozen=True)
class RankSignals:
    """What the ranking knows about one candidate memory."""

    cosine: float
    lexical: float = 0.0  # normalised BM25 in [0, 1]
    age: timedelta = timedelta(0)
    importance: float = 0.5
    weight: float = 0.5
    contradictions: int = 0
    superseded: bool = False
    restated: bool = False
    risky: bool = False
    in_period: bool = False  # the memory's time falls in a period the query names
    speaker_match: bool = False  # said by a person the query names


def recency(age: timedelta, half_life: timedelta = RECENCY_HALF_LIFE) -> float:
    """Return exponential recency in (0, 1]: 1 now, 0.5 after one half-life."""
    return float(0.5 ** (max(age.total_seconds(), 0.0) / half_life.total_seconds()))


def relevance(cosine: float) -> float:
    """Map MiniLM cosine similarity onto [0, 1] (unrelated text sits near 0.1, paraphrase ~0.7)."""
    return clamp((cosine - 0.05) / 0.75)


def fused_relevance(s: RankSignals) -> float:
    """Return how well a memory matches the query: lexical and semantic evidence, weighted."""
    return LEXICAL_WEIGHT * clamp(s.lexical) + SEMANTIC_WEIGHT * relevance(s.cosine)


def rank_factor(s: RankSignals) -> float:
    """Return the re-ordering factor (about 1): importance, use, recency, period, penalties."""
    factor = (
        1.0
        + IMPORTANCE_WEIGHT * (clamp(s.importance) - 0.5)
        + USE_WEIGHT * (clamp(s.weight) - 0.5)
        + RECENCY_WEIGHT * recency(s.age)
        + TIME_MATCH_BONUS * s.in_period
        + SPEAKER_MATCH_BONUS * s.speaker_match
        - SUPERSEDED_PENALTY * s.superseded
        - CONTRADICTION_PENALTY * min(s.contradictions, 2)
        - RESTATED_PENALTY * s.restated
        - RISK_PENALTY * s.risky
    )
    return max(factor, MIN_FACTOR)


def rank_score(s: RankSignals) -> float:
    """Score a candidate: relevance first; the other terms scale it, so they only re-order.

    Relevance fuses normalised BM25 over stemmed words with MiniLM cosine similarity (names,
    numbers and rare words are lexical; paraphrase is semantic). Generative Agents adds recency
    and importance to relevance; Lumen instead multiplies relevance by a factor near 1 built from
    importance, the use-strengthened weight, a tiny recency tie-break, a bonus when the memory
    falls in a period the query names, and penalties for claims superseded, contradicted or
    restated later, so the store answers with what is believed *now*, while an irrelevant memory
    (however recent or important) never outranks a relevant one. Recency is not a channel of
    its own here: the turn already shows the last exchanges, and on the dialogue benchmark any
    real recency weight buried facts told months earlier under later chatter.
    """
    return round(fused_relevance(s) * rank_factor(s), 6)


def normalise_bm25(scores: Sequence[float], ceiling: float | None = None) -> list[float]:
    """Map SQLite FTS5 ``bm25`` values (lower is better, negative) onto [0, 1].

    With ``ceiling`` (``bm25_ceiling``: what a memory containing every query term once would
    score) a strength says how much of the query a memory covers, so a memory that matches only
    a common word (a name said in half the conversation) stays weak even when it is the best
    match there is. Without it, strengths are relative to the query's best match.
    """
    if not scores:
        return []
    strengths = [-s for s in scores]
    top = ceiling if ceiling and ceiling > 0 else max(strengths)
    if top <= 0 or math.isnan(top):
        return [0.0 for _ in scores]
    return [clamp(s / top) for s in strengths]


def lexical_strengths(scores: Sequence[float], ceiling: float | None) -> list[float]:
    """Return the lexical strengths of a query's matches (FTS5 ``bm25`` values) in [0, 1].

    A mix (``LEXICAL_COVERAGE_SHARE``) of coverage (``normalise_bm25`` against the ceiling) and
    the strength relative to the query's best match.
    """
    relative = normalise_bm25(scores)
    if LEXICAL_COVERAGE_SHARE <= 0:
        return relative
    coverage = normalise_bm25(scores, ceiling)
    share = clamp(LEXICAL_COVERAGE_SHARE)
    return [share * c + (1 - share) * r for c, r in zip(coverage, relative, strict=True)]


def strip_names(query: str, names: Sequence[str]) -> str:
    """Return ``query`` without the given (case-folded) names and their possessive ``'s``.

    A question names the person it is about ("What did Nora paint?"); in a store of two
    people's chat that name is in half the memories, and a sentence embedding of the question
    then prefers short lines by that person over the line that answers it. The name still
    counts on the lexical side, where BM25 gives it the low weight of a common word.
    """
    if not names:
        return query
    wanted = {n.casefold() for n in names}

    def drop(m: re.Match[str]) -> str:
        word = unicodedata.normalize("NFKD", m.group(1).casefold())
        word = "".join(ch for ch in word if not unicodedata.combining(ch))
        return "" if word in wanted else m.group(0)

    stripped = re.sub(r"\b([^\W_]+)(?:['\u2019]s\b)?", drop, query)
    stripped = re.sub(r"\s+", " ", stripped).strip()
    return stripped if re.search(r"[^\W_]", stripped) else query


def bm25_ceiling(doc_frequencies: Sequence[int], total: int) -> float:
    """Return the BM25 score of an average-length memory holding each query term once.

    FTS5's IDF is ``ln((N - n + 0.5) / (n + 0.5))`` (floored near 0); with one occurrence at
    average length a term adds exactly its IDF. A term no memory contains counts with the IDF
    of a rare word: the query asks for something the lexical side cannot see, so what it did
    match (often just a name) is weaker evidence.
    """
    return sum(max(math.log((total - n + 0.5) / (n + 0.5)), 1e-6) for n in doc_frequencies)


# --- §14.2 de-duplication of signals whose text is never stored --------------------------------

SIMHASH_BITS = 64


def simhash(text: str) -> int:
    """Return a 64-bit SimHash of ``text``'s word 2-shingles (a near-duplicate fingerprint).

    External signals are never stored raw (governance), so near-duplicates are found by this
    locality-sensitive fingerprint instead of by comparing texts: similar texts share most bits,
    and the fingerprint cannot be turned back into the text.
    """
    import hashlib

    words = re.findall(r"[^\W_]+", text.casefold())
    shingles = [" ".join(words[i : i + 2]) for i in range(max(len(words) - 1, 1))] if words else []
    if not shingles:
        return 0
    totals = [0] * SIMHASH_BITS
    for shingle in shingles:
        value = int.from_bytes(hashlib.blake2b(shingle.encode(), digest_size=8).digest(), "big")
        for bit in range(SIMHASH_BITS):
            totals[bit] += 1 if value >> bit & 1 else -1
    return sum(1 << bit for bit, total in enumerate(totals) if total > 0)


def simhash_similarity(a: int, b: int) -> float:
    """Return the share of equal bits between two SimHash fingerprints (1.0: identical)."""
    return 1.0 - bin(a ^ b).count("1") / SIMHASH_BITS


# --- time expressions in queries ----------------------------------------------------------------

_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        )
    )
    for name in names.split()
}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 30, "months": 30, "year": 365}
_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}


def _month_span(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def query_periods(query: str, now: datetime) -> list[tuple[datetime, datetime]]:
    """Return the time spans a query names, as ``[start, end)`` pairs (UTC); empty if none.

    Understood: a date ("8 May 2023", "May 8, 2023"), a month with a year ("May 2023"), a month
    alone ("in May": its latest occurrence up to ``now``), a year ("in 2022"), and expressions
    relative to ``now``: "today", "yesterday", "last week/month/year", "this week/month/year",
    "N days/weeks/months ago" (a window of one unit around that point). Anything else is left to
    the words themselves. Spans are approximate on purpose: they boost, they never filter.
    """
    text = query.casefold()
    spans: list[tuple[datetime, datetime]] = []
    day = timedelta(days=1)
    for m in re.finditer(
        rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\b,?\s*(\d{{4}})?", text
    ):
        year = int(m.group(3)) if m.group(3) else now.year
        with contextlib.suppress(ValueError):
            start = datetime(year, _MONTHS[m.group(2)], int(m.group(1)), tzinfo=UTC)
            spans.append((start - day, start + 2 * day))
    for m in re.finditer(rf"\b({_MONTH_RE})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", text):
        with contextlib.suppress(ValueError):
            start = datetime(int(m.group(3)), _MONTHS[m.group(1)], int(m.group(2)), tzinfo=UTC)
            spans.append((start - day, start + 2 * day))
    if not spans:
        for m in re.finditer(rf"\b({_MONTH_RE})\s+(?:of\s+)?(\d{{4}})\b", text):
            spans.append(_month_span(int(m.group(2)), _MONTHS[m.group(1)]))
    if not spans:
        for m in re.finditer(
            rf"\b(?:in|during|since|around|early|late|mid)\s+({_MONTH_RE})\b", text
        ):
            month = _MONTHS[m.group(1)]
            year = now.year if month <= now.month else now.year - 1
            spans.append(_month_span(year, month))
    if not spans:
        for m in re.finditer(r"\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b", text):
            year = int(m.group(1))
            spans.append((datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)))
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    relative = {
        "today": (today, today + day),
        "yesterday": (today - day, today),
        "last week": (today - 14 * day, today - 6 * day),
        "this week": (today - 7 * day, today + day),
        "last month": (today - 62 * day, today - 27 * day),
        "this month": (today - 31 * day, today + day),
        "last year": (today - 730 * day, today - 300 * day),
        "this year": (today - 365 * day, today + day),
    }
    spans.extend(span for phrase, span in relative.items() if re.search(rf"\b{phrase}\b", text))
    for m in re.finditer(
        r"\b(\d+|a|one|two|three|four|five|six|ten)\s+(days?|weeks?|months?|year)\s+ago\b", text
    ):
        count = int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]
        unit = _UNITS[m.group(2)]
        point = today - count * unit * day
        spans.append((point - unit * day, point + unit * day))
    return spans

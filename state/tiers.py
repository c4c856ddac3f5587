"""Memory tiers B–D, memory weights and the lexical index, in one SQLite file beside the ledger.

AsteronIris §13.1: Tier A is the append-only JSONL ledger (``state.journal``); this module holds

* **B, working beliefs**: ``slot_values``, resolved by ``resolve_slot(entity_id, slot_key)``; every
  version is a row that is never deleted, so a superseded belief stays in history;
* **C, inferred claims**: ``claims`` (confidence ≤ 0.70 enforced by a CHECK, non-empty provenance);
* **D, governance trail**: ``events`` (``ContradictionMarked``, ``SoftDeleted``,
  ``TombstoneWritten``, promotions, demotions, decay, purges …) and ``tombstones``;
* the MSCP §5 **belief graph**: ``beliefs`` and typed ``belief_edges``;
* memory **weights** (use strengthens, maintenance decays);
* ``docs`` + ``docs_stem``: a derived FTS5 mirror of the ledger for lexical search (rebuildable):
  BM25 over Snowball-stemmed, case- and accent-folded words without stop words, so "moved"
  matches "moving" (``lexical_terms``; the older unstemmed ``docs_fts`` is no longer written).

Append-only tables carry triggers that abort any UPDATE or DELETE, and no table allows DELETE of a
belief or slot version: nothing is silently deleted or overwritten. Mutable columns (a slot's
confidence and status, a belief's weight, a memory's weight) change only through methods that
log the change as an event in the same transaction. WAL mode and a busy timeout let ``lumen chat``
and ``lumen run`` share the file.
"""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from kernel import memory as mk
from kernel.core import clamp
from kernel.mscp import BELIEF_FLOOR, MAX_BELIEF_REWRITE
from state.self_state import utc_now

TIERS_FILE = "tiers.sqlite"
SlotStatus = Literal["working", "promoted", "contested", "superseded", "demoted", "expired"]
CURRENT_STATUSES = ("working", "promoted")
EdgeKind = Literal["reinforcement", "causal", "contradiction"]
EDGE_KINDS: tuple[EdgeKind, ...] = ("reinforcement", "causal", "contradiction")
USER_ENTITY = mk.USER_ENTITY
RECONCILE_THRESHOLD = 0.6  # MSCP §5.1 "Contradiction threshold: 0.6 → triggers reconciliation"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    ts TEXT NOT NULL,
    kind TEXT NOT NULL,
    entity_id TEXT NOT NULL DEFAULT '',
    slot_key TEXT NOT NULL DEFAULT '',
    ref TEXT NOT NULL DEFAULT '',
    data TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS events_ref ON events(ref);
CREATE INDEX IF NOT EXISTS events_slot ON events(entity_id, slot_key);
CREATE TABLE IF NOT EXISTS slot_values (
    id TEXT PRIMARY KEY,
    entity_id TEXT NOT NULL,
    slot_key TEXT NOT NULL,
    value TEXT NOT NULL,
    value_norm TEXT NOT NULL,
    confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    importance REAL NOT NULL CHECK (importance BETWEEN 0 AND 1),
    status TEXT NOT NULL,
    contradictions INTEGER NOT NULL DEFAULT 0,
    origin TEXT NOT NULL,
    created_ts TEXT NOT NULL,
    updated_ts TEXT NOT NULL,
    observed_ts TEXT NOT NULL,
    tainted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS slot_lookup ON slot_values(entity_id, slot_key, status);
CREATE TABLE IF NOT EXISTS observations (
    memory_id TEXT NOT NULL,
    slot_value_id TEXT NOT NULL,
    source_ref TEXT NOT NULL,
    author TEXT NOT NULL,
    observed_ts TEXT NOT NULL,
    quality TEXT NOT NULL,
    risk_flags TEXT NOT NULL DEFAULT '[]',
    tainted INTEGER NOT NULL DEFAULT 0,
    fetch_failed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS observations_memory ON observations(memory_id);
CREATE INDEX IF NOT EXISTS observations_slot ON observations(slot_value_id);
CREATE TABLE IF NOT EXISTS claims (
    id TEXT PRIMARY KEY,
    entity_id TEXT NOT NULL,
    slot_key TEXT NOT NULL,
    value TEXT NOT NULL,
    confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 0.70),
    provenance TEXT NOT NULL CHECK (json_array_length(provenance) > 0),
    model TEXT NOT NULL DEFAULT '',
    created_ts TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tombstones (
    memory_id TEXT PRIMARY KEY,
    ts TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS weights (
    memory_id TEXT PRIMARY KEY,
    weight REAL NOT NULL CHECK (weight BETWEEN 0 AND 1),
    uses INTEGER NOT NULL DEFAULT 0,
    touched_ts TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS beliefs (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    weight REAL NOT NULL CHECK (weight BETWEEN 0 AND 1),
    identity_linked INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'active',
    slot_value_id TEXT NOT NULL DEFAULT '',
    created_ts TEXT NOT NULL,
    updated_ts TEXT NOT NULL,
    CHECK (identity_linked = 0 OR weight >= 0.1)
);
CREATE TABLE IF NOT EXISTS belief_edges (
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('reinforcement', 'causal', 'contradiction')),
    strength REAL NOT NULL CHECK (strength BETWEEN 0 AND 1),
    created_ts TEXT NOT NULL,
    PRIMARY KEY (src, dst, kind)
);
CREATE TABLE IF NOT EXISTS rewrites (
    belief_id TEXT NOT NULL,
    cycle TEXT NOT NULL,
    delta REAL NOT NULL,
    ts TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS fingerprints (
    entity_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    source_ref TEXT NOT NULL,
    simhash INTEGER NOT NULL,
    ts TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS fingerprints_entity ON fingerprints(entity_id);
CREATE TABLE IF NOT EXISTS docs (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    author TEXT NOT NULL,
    epoch REAL NOT NULL,
    tainted INTEGER NOT NULL DEFAULT 0,
    risky INTEGER NOT NULL DEFAULT 0,
    weight REAL NOT NULL DEFAULT 0.5,
    importance REAL NOT NULL DEFAULT 0.5
);
CREATE INDEX IF NOT EXISTS docs_epoch ON docs(epoch);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(
    text, content='', tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_stem USING fts5(
    terms, content='', tokenize='unicode61 remove_diacritics 0'
);
CREATE TABLE IF NOT EXISTS lexicon (
    rowid INTEGER PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS speakers (
    name TEXT PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS lexical_state (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

_APPEND_ONLY = ("events", "observations", "claims", "tombstones", "rewrites", "fingerprints")
_NO_DELETE = ("slot_values", "beliefs")


def _guards() -> str:
    statements = []
    for table in _APPEND_ONLY:
        for op in ("UPDATE", "DELETE"):
            statements.append(
                f"CREATE TRIGGER IF NOT EXISTS {table}_no_{op.lower()} BEFORE {op} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END;"
            )
    for table in _NO_DELETE:
        statements.append(
            f"CREATE TRIGGER IF NOT EXISTS {table}_no_delete BEFORE DELETE ON {table} "
            f"BEGIN SELECT RAISE(ABORT, '{table} rows are never deleted'); END;"
        )
    return "\n".join(statements)


class TierError(ValueError):
    """A request the tiers refuse (unknown id, protected belief, malformed claim)."""


@dataclass(frozen=True)
class SlotValue:
    """One version of a belief slot (Tier B)."""

    id: str
    entity_id: str
    slot_key: str
    value: str
    confidence: float
    importance: float
    status: str
    contradictions: int
    origin: str
    created: datetime
    updated: datetime
    observed: datetime
    tainted: bool = False


@dataclass(frozen=True)
class SlotOutcome:
    """What one observation did to its slot."""

    slot: SlotValue
    action: Literal["created", "corroborated", "superseded", "contested"]
    promoted: bool = False
    contradiction: bool = False
    demoted: SlotValue | None = None
    blockers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Claim:
    """An inferred claim (Tier C)."""

    id: str
    entity_id: str
    slot_key: str
    value: str
    confidence: float
    provenance: tuple[str, ...]
    model: str
    created: datetime


@dataclass(frozen=True)
class BeliefNode:
    """A node of the MSCP §5 belief graph."""

    id: str
    text: str
    weight: float
    identity_linked: bool
    status: str
    slot_value_id: str


@dataclass(frozen=True)
class Event:
    """One governance-trail event (Tier D)."""

    seq: int
    ts: datetime
    kind: str
    entity_id: str
    slot_key: str
    ref: str
    data: dict[str, Any]


@dataclass(frozen=True)
class DocInfo:
    """What the ranking needs about one indexed memory."""

    id: str
    author: str
    epoch: float
    tainted: bool
    risky: bool
    weight: float
    importance: float
    tombstoned: bool
    superseded: bool
    contradictions: int


def _fold(text: str) -> str:
    """Case-fold and strip diacritics the way the FTS tokenizer (remove_diacritics 2) does."""
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def fold(text: str) -> str:
    """Case-fold and strip diacritics (as the lexical index does to every word)."""
    return _fold(text)


LEXICAL_MAX_DF = 0.02  # above LEXICAL_PRUNE_FROM: p95 of the lexical query at 100k 11 -> 6 ms
LEXICAL_PRUNE_FROM = 20_000


def _stemmer() -> Any:
    stemmer = getattr(_STEM, "stemmer", None)
    if stemmer is None:
        import Stemmer  # type: ignore[import-not-found]  # PyStemmer ships no stubs

        stemmer = _STEM.stemmer = Stemmer.Stemmer("english")
    return stemmer


_STEM = threading.local()  # PyStemmer objects are not thread-safe


def lexical_terms(text: str) -> list[str]:
    """Return the lexical index's terms of ``text``: folded words, stop words out, stemmed.

    Words are runs of letters and digits after case folding and accent stripping; English stop
    words are dropped; the rest go through the Snowball English stemmer (PyStemmer), so
    "moved", "moving" and "moves" are one term. Index and query use the same function.
    """
    words = [w for w in re.findall(r"[^\W_]+", _fold(text)) if w not in _STOPWORDS]
    return list(_stemmer().stemWords(words)) if words else []


def normalise_value(value: str) -> str:
    """Normalise a slot value for comparison (case, spacing, punctuation, leading article)."""
    words = re.findall(r"[^\W_]+", value.casefold())
    if words and words[0] in {"a", "an", "the"}:
        words = words[1:]
    return " ".join(words)


class MemoryTiers:
    """SQLite-backed tiers B–D, belief graph, weights and lexical mirror for one memory store."""

    def __init__(self, path: str | Path) -> None:
        """Open (or create) ``path`` (a SQLite file)."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        # executescript manages its own transaction; every statement is IF NOT EXISTS.
        self._db().executescript(_SCHEMA + _guards())

    # ------------------------------------------------------------------ connection

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA busy_timeout=30000")
            db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.docs_vocab"
                " USING fts5vocab(main, 'docs_stem', 'row')"
            )
            self._local.db = db
        return db

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        """Close this thread's connection."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    @staticmethod
    def _event(
        db: sqlite3.Connection,
        kind: str,
        *,
        entity_id: str = "",
        slot_key: str = "",
        ref: str = "",
        now: datetime | None = None,
        **data: Any,
    ) -> None:
        db.execute(
            "INSERT INTO events(ts, kind, entity_id, slot_key, ref, data) VALUES (?,?,?,?,?,?)",
            (
                (now or utc_now()).isoformat(),
                kind,
                entity_id,
                slot_key,
                ref,
                json.dumps(data, ensure_ascii=False, sort_keys=True),
            ),
        )

    # ------------------------------------------------------------------ lexical mirror (derived)

    def index_docs(self, docs: Sequence[tuple[str, str, str, float, bool, bool, float]]) -> int:
        """Mirror ``(id, text, author, epoch, tainted, risky, weight)`` rows for FTS.

        ``text`` is what the lexical side may match (``MemoryStore`` adds a speaker name the
        text lacks); it is stored as stemmed terms only (the FTS table is contentless).
        """
        added = 0
        with self._tx() as db:
            for mid, text, author, epoch, tainted, risky, weight in docs:
                cur = db.execute(
                    "INSERT OR IGNORE INTO docs(id, author, epoch, tainted, risky, weight,"
                    " importance) VALUES (?,?,?,?,?,?,?)",
                    (mid, author, epoch, int(tainted), int(risky), weight, weight),
                )
                if cur.rowcount:
                    self._stem_row(db, int(cur.lastrowid or 0), text)
                    added += 1
        return added

    @staticmethod
    def _stem_row(db: sqlite3.Connection, rowid: int, text: str) -> None:
        db.execute(
            "INSERT INTO docs_stem(rowid, terms) VALUES (?, ?)",
            (rowid, " ".join(lexical_terms(text))),
        )
        db.execute("INSERT OR IGNORE INTO lexicon(rowid) VALUES (?)", (rowid,))

    def unstemmed(self) -> list[str]:
        """Return ids mirrored before the stemmed index existed (they need ``restem``)."""
        rows = self._db().execute(
            "SELECT d.id FROM docs d LEFT JOIN lexicon l ON l.rowid = d.rowid WHERE l.rowid IS NULL"
        )
        return [str(r[0]) for r in rows]

    def restem(self, texts: dict[str, str]) -> int:
        """Add the stemmed terms of mirrored memories that lack them (``id -> text``)."""
        done = 0
        with self._tx() as db:
            for mid, text in texts.items():
                row = db.execute(
                    "SELECT d.rowid FROM docs d LEFT JOIN lexicon l ON l.rowid = d.rowid"
                    " WHERE d.id = ? AND l.rowid IS NULL",
                    (mid,),
                ).fetchone()
                if row is not None:
                    self._stem_row(db, int(row[0]), text)
                    done += 1
        return done

    def _approx_docs(self) -> int:
        """Return the mirror's size without a scan (rows are only ever appended)."""
        return int(self._db().execute("SELECT COALESCE(max(rowid), 0) FROM docs").fetchone()[0])

    def doc_count(self) -> int:
        """Return how many memories the lexical mirror holds."""
        return int(self._db().execute("SELECT count(*) FROM docs").fetchone()[0])

    def has_docs(self, ids: Sequence[str]) -> set[str]:
        """Return which of ``ids`` the lexical mirror holds."""
        return {row[0] for row in self._select_in("SELECT id FROM docs WHERE id IN ({})", ids)}

    def lexical(
        self,
        query: str,
        limit: int,
        *,
        max_df: float = LEXICAL_MAX_DF,
        since: float | None = None,
        until: float | None = None,
        require: str = "",
    ) -> list[tuple[str, float]]:
        """Return ``(id, bm25)`` for the best lexical matches (bm25: lower is better).

        The query's stemmed terms (``lexical_terms``) become an OR of FTS5 terms ranked by
        FTS5's BM25 (k1 1.2, b 0.75). Only in a large mirror (over ``LEXICAL_PRUNE_FROM`` rows)
        are terms found in more than ``max_df`` of the documents dropped, to bound the scan:
        their IDF is small, and on the dialogue benchmark dropping common words at small sizes
        lost more recall than it saved time. ``since``/``until`` (epoch seconds, ``[since,
        until)``) keep only memories from that period; ``require`` (a word, e.g. a speaker's
        name) keeps only memories that contain it, ranked by the other terms too.
        """
        terms = list(dict.fromkeys(lexical_terms(query)))[:16]
        needed = lexical_terms(require)[:1] if require else []
        if not terms or limit <= 0:
            return []
        db = self._db()
        total = self._approx_docs()
        if total > LEXICAL_PRUNE_FROM:  # document frequencies from the FTS index (fts5vocab)
            ceiling = max(int(total * max_df), 50)
            marks = ",".join("?" * len(terms))
            frequency = dict(
                db.execute(f"SELECT term, doc FROM temp.docs_vocab WHERE term IN ({marks})", terms)
            )
            kept = [w for w in terms if 0 < frequency.get(w, 0) <= ceiling]
            terms = (
                kept
                or sorted((w for w in terms if frequency.get(w, 0)), key=lambda w: frequency[w])[:1]
            )
        if not terms:
            return []
        expr = " OR ".join(f'"{w}"' for w in terms)
        if needed:
            others = [w for w in terms if w != needed[0]]
            if not others:
                return []
            expr = f'"{needed[0]}" AND (' + " OR ".join(f'"{w}"' for w in others) + ")"
        if since is not None or until is not None:
            rows = db.execute(
                "SELECT d.id, bm25(docs_stem) AS score FROM docs_stem JOIN docs d ON d.rowid ="
                " docs_stem.rowid WHERE docs_stem MATCH ? AND d.epoch >= ? AND d.epoch < ?"
                " ORDER BY score LIMIT ?",
                (expr, since or 0.0, until or 1e12, limit),
            ).fetchall()
        else:
            rows = db.execute(
                "SELECT d.id, bm25(docs_stem) AS score FROM docs_stem JOIN docs d ON d.rowid ="
                " docs_stem.rowid WHERE docs_stem MATCH ? ORDER BY score LIMIT ?",
                (expr, limit),
            ).fetchall()
        return [(str(r[0]), float(r[1])) for r in rows]

    def lexical_ceiling(self, query: str) -> float:
        """Return ``kernel.memory.bm25_ceiling`` of the query's terms over this mirror."""
        terms = list(dict.fromkeys(lexical_terms(query)))[:16]
        if not terms:
            return 0.0
        marks = ",".join("?" * len(terms))
        frequency = dict(
            self._db().execute(
                f"SELECT term, doc FROM temp.docs_vocab WHERE term IN ({marks})", terms
            )
        )
        return mk.bm25_ceiling([int(frequency.get(t, 0)) for t in terms], self._approx_docs())

    def add_speakers(self, names: Iterable[str]) -> None:
        """Remember who speaks in this store (folded names, from memories' ``speaker`` metadata).

        ``MemoryStore.search`` takes these names out of the text it embeds for a question and
        uses them to prefer what the named person said.
        """
        folded = {_fold(n).strip() for n in names if n and n.strip()}
        if folded:
            with self._tx() as db:
                db.executemany(
                    "INSERT OR IGNORE INTO speakers(name) VALUES (?)", [(n,) for n in folded]
                )

    def speakers_in(self, query: str) -> list[str]:
        """Return the known speakers' names (folded) that ``query`` mentions, capitalised.

        Only capitalised words count: a speaker called "Will" is not found in "will you ...".
        """
        found = [_fold(w) for w in re.findall(r"[^\W_]+", query) if w[:1].isupper()]
        words = list(dict.fromkeys(found + [f"{a} {b}" for a, b in itertools.pairwise(found)]))
        if not words:
            return []
        marks = ",".join("?" * len(words))
        rows = self._db().execute(f"SELECT name FROM speakers WHERE name IN ({marks})", words)
        return sorted(str(r[0]) for r in rows)

    def lexical_flag(self, key: str) -> bool:
        """Say whether a one-time upgrade step of the lexical mirror has run."""
        row = self._db().execute("SELECT 1 FROM lexical_state WHERE key = ?", (key,)).fetchone()
        return row is not None

    def set_lexical_flag(self, key: str) -> None:
        """Record that a one-time upgrade step of the lexical mirror has run."""
        with self._tx() as db:
            db.execute("INSERT OR IGNORE INTO lexical_state(key, value) VALUES (?, '1')", (key,))

    def add_fingerprint(
        self, entity_id: str, memory_id: str, source_ref: str, fingerprint: int
    ) -> None:
        """Remember a signal's SimHash and ``source_ref`` for later de-duplication."""
        signed = fingerprint - (1 << 64) if fingerprint >= 1 << 63 else fingerprint
        with self._tx() as db:
            db.execute(
                "INSERT INTO fingerprints VALUES (?,?,?,?,?)",
                (entity_id, memory_id, source_ref, signed, utc_now().isoformat()),
            )

    def near_duplicate(
        self, entity_id: str, fingerprint: int, threshold: float, *, window: int = 500
    ) -> str | None:
        """Return the memory id of a recent signal from ``entity_id`` this similar, if any."""
        rows = (
            self._db()
            .execute(
                "SELECT memory_id, simhash FROM fingerprints WHERE entity_id = ?"
                " ORDER BY rowid DESC LIMIT ?",
                (entity_id, window),
            )
            .fetchall()
        )
        for memory_id, signed in rows:
            value = signed + (1 << 64) if signed < 0 else signed
            if mk.simhash_similarity(value, fingerprint) >= threshold:
                return str(memory_id)
        return None

    def doc_info(self, ids: Sequence[str]) -> dict[str, DocInfo]:
        """Return ranking facts for ``ids`` (only those in the mirror)."""
        rows = self._select_in(
            "SELECT d.id, d.author, d.epoch, d.tainted, d.risky, COALESCE(w.weight, d.weight),"
            " d.importance, t.memory_id IS NOT NULL FROM docs d"
            " LEFT JOIN weights w ON w.memory_id = d.id"
            " LEFT JOIN tombstones t ON t.memory_id = d.id WHERE d.id IN ({})",
            ids,
        )
        slots = self._slot_marks(ids)
        out: dict[str, DocInfo] = {}
        for mid, author, epoch, tainted, risky, weight, importance, tomb in rows:
            superseded, contradictions = slots.get(mid, (False, 0))
            if mid in slots:  # it asserted a belief slot: user-specific (§16.1 0.80+)
                importance = max(importance, mk.USER_IMPORTANCE)
            out[mid] = DocInfo(
                id=mid,
                author=author,
                epoch=epoch,
                tainted=bool(tainted),
                risky=bool(risky),
                weight=weight,
                importance=importance,
                tombstoned=bool(tomb),
                superseded=superseded,
                contradictions=contradictions,
            )
        return out

    def _slot_marks(self, ids: Sequence[str]) -> dict[str, tuple[bool, int]]:
        rows = self._select_in(
            "SELECT o.memory_id, s.status, s.contradictions FROM observations o"
            " JOIN slot_values s ON s.id = o.slot_value_id WHERE o.memory_id IN ({})",
            ids,
        )
        marks: dict[str, tuple[bool, int]] = {}
        for mid, status, contradictions in rows:
            old = marks.get(mid, (False, 0))
            stale = status in ("superseded", "demoted", "expired")
            marks[mid] = (old[0] or stale, max(old[1], int(contradictions)))
        return marks

    def tombstoned(self, ids: Sequence[str]) -> set[str]:
        """Return which of ``ids`` were soft-deleted."""
        return {
            r[0]
            for r in self._select_in(
                "SELECT memory_id FROM tombstones WHERE memory_id IN ({})", ids
            )
        }

    def _select_in(self, sql: str, ids: Sequence[str]) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        ids = list(dict.fromkeys(ids))
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            out.extend(self._db().execute(sql.format(",".join("?" * len(chunk))), chunk))
        return out

    def set_importance(self, memory_id: str, importance: float) -> None:
        """Raise a memory's ranking importance (e.g. it asserted a user-specific fact)."""
        with self._tx() as db:
            db.execute(
                "UPDATE docs SET importance = max(importance, ?) WHERE id = ?",
                (clamp(importance), memory_id),
            )

    # ------------------------------------------------------------------ weights (lumen spec)

    def mark_used(self, ids: Iterable[str], *, now: datetime | None = None) -> None:
        """Strengthen each memory that was retrieved *and used* by ``USE_INCREMENT``."""
        stamp = (now or utc_now()).isoformat()
        ids = list(dict.fromkeys(ids))
        if not ids:
            return
        with self._tx() as db:
            for mid in ids:
                row = db.execute(
                    "SELECT COALESCE(w.weight, d.weight) FROM docs d LEFT JOIN weights w"
                    " ON w.memory_id = d.id WHERE d.id = ?",
                    (mid,),
                ).fetchone()
                if row is None:
                    continue
                db.execute(
                    "INSERT INTO weights(memory_id, weight, uses, touched_ts) VALUES (?,?,1,?)"
                    " ON CONFLICT(memory_id) DO UPDATE SET weight = excluded.weight,"
                    " uses = uses + 1, touched_ts = excluded.touched_ts",
                    (mid, mk.strengthened(float(row[0])), stamp),
                )

    def weight_of(self, memory_id: str) -> float | None:
        """Return a memory's current weight (None if unknown)."""
        row = (
            self._db()
            .execute(
                "SELECT COALESCE(w.weight, d.weight) FROM docs d LEFT JOIN weights w"
                " ON w.memory_id = d.id WHERE d.id = ?",
                (memory_id,),
            )
            .fetchone()
        )
        return float(row[0]) if row else None

    def decay_weights(self, now: datetime) -> int:
        """Decay every memory idle for at least a day; returns how many weights changed."""
        changed = 0
        cutoff = now.timestamp() - 86400.0
        db = self._db()
        rows = db.execute(
            "SELECT d.id, COALESCE(w.weight, d.weight), w.touched_ts, d.epoch FROM docs d"
            " LEFT JOIN weights w ON w.memory_id = d.id"
        ).fetchall()
        updates = []
        for mid, weight, touched, epoch in rows:
            since = datetime.fromisoformat(touched).timestamp() if touched else float(epoch)
            if since > cutoff:
                continue
            new = mk.decayed_weight(float(weight), (now.timestamp() - since) / 86400.0)
            if new != weight or touched is None:
                updates.append((mid, new, now.isoformat()))
        with self._tx() as db:
            for mid, new, stamp in updates:
                db.execute(
                    "INSERT INTO weights(memory_id, weight, uses, touched_ts) VALUES (?,?,0,?)"
                    " ON CONFLICT(memory_id) DO UPDATE SET weight = excluded.weight,"
                    " touched_ts = excluded.touched_ts",
                    (mid, new, stamp),
                )
                changed += 1
            if changed:
                self._event(db, "WeightsDecayed", now=now, count=changed)
        return changed

    # ------------------------------------------------------------------ Tier D: soft delete

    def soft_delete(self, memory_id: str, reason: str, *, now: datetime | None = None) -> None:
        """Soft-delete a memory: ``SoftDeleted`` + ``TombstoneWritten``; its ledger line stays."""
        reason = reason.strip()
        if not reason:
            raise TierError("a reason is required to forget a memory")
        stamp = now or utc_now()
        with self._tx() as db:
            if db.execute("SELECT 1 FROM tombstones WHERE memory_id = ?", (memory_id,)).fetchone():
                raise TierError(f"memory {memory_id} is already forgotten")
            self._event(db, "SoftDeleted", ref=memory_id, now=stamp, reason=reason)
            db.execute(
                "INSERT INTO tombstones(memory_id, ts, reason) VALUES (?,?,?)",
                (memory_id, stamp.isoformat(), reason),
            )
            self._event(db, "TombstoneWritten", ref=memory_id, now=stamp, reason=reason)
            # A forgotten memory no longer supports the slots it asserted.
            for (slot_id,) in db.execute(
                "SELECT slot_value_id FROM observations WHERE memory_id = ?", (memory_id,)
            ).fetchall():
                self._unsupported(db, slot_id, memory_id, stamp)

    def _unsupported(
        self, db: sqlite3.Connection, slot_id: str, memory_id: str, now: datetime
    ) -> None:
        live = db.execute(
            "SELECT count(*) FROM observations o WHERE o.slot_value_id = ? AND o.memory_id NOT IN"
            " (SELECT memory_id FROM tombstones)",
            (slot_id,),
        ).fetchone()[0]
        if live:
            return
        slot = self._slot_row(db, slot_id)
        if slot and slot.status in (*CURRENT_STATUSES, "contested"):
            self._set_status(
                db, slot, "demoted", now, reason=f"its only source {memory_id} was forgotten"
            )

    # ------------------------------------------------------------------ Tier B: slots

    def resolve_slot(self, entity_id: str, slot_key: str) -> SlotValue | None:
        """Return the value currently believed for ``(entity_id, slot_key)``, if any."""
        row = (
            self._db()
            .execute(
                f"SELECT {_SLOT_COLUMNS} FROM slot_values WHERE entity_id = ? AND slot_key = ?"
                " AND status IN ('working','promoted') ORDER BY observed_ts DESC, created_ts DESC"
                " LIMIT 1",
                (entity_id, slot_key),
            )
            .fetchone()
        )
        return _slot(row) if row else None

    def current_slots(self, entity: str | None = None) -> list[SlotValue]:
        """Return every currently believed slot value (optionally for matching entities)."""
        sql = f"SELECT {_SLOT_COLUMNS} FROM slot_values WHERE status IN ('working','promoted')"
        args: tuple[Any, ...] = ()
        if entity:
            sql += " AND (entity_id = ? OR entity_id LIKE ?)"
            args = (entity, f"%{entity}%")
        rows = self._db().execute(sql + " ORDER BY entity_id, slot_key", args).fetchall()
        return [_slot(r) for r in rows]

    def slot_history(self, entity: str | None = None) -> list[SlotValue]:
        """Return every slot version ever held (superseded and demoted ones included)."""
        sql = f"SELECT {_SLOT_COLUMNS} FROM slot_values"
        args: tuple[Any, ...] = ()
        if entity:
            sql += " WHERE entity_id = ? OR entity_id LIKE ?"
            args = (entity, f"%{entity}%")
        rows = self._db().execute(sql + " ORDER BY entity_id, slot_key, created_ts", args)
        return [_slot(r) for r in rows.fetchall()]

    def observe(
        self,
        *,
        entity_id: str,
        slot_key: str,
        value: str,
        observation: mk.Observation,
        confidence: float,
        importance: float | None = None,
        origin: str = "observed",
        min_observations: int = mk.MIN_INDEPENDENT_OBSERVATIONS,
    ) -> SlotOutcome:
        """Apply one observation to its slot: create, corroborate, supersede or contest (§14.2.7).

        A differing value marks a contradiction on the current value (its confidence drops, §16.2);
        the newcomer takes the slot when it is at least as confident as the contradicted value,
        or when the old value is demoted; otherwise it waits as ``contested``. Tainted
        observations are refused: untrusted content never changes beliefs.
        """
        if not mk.valid_entity(entity_id):
            raise TierError(f"entity id {entity_id!r} does not follow the §15 naming scheme")
        if not mk.valid_slot(slot_key):
            raise TierError(f"slot key {slot_key!r} does not follow the §15 naming scheme")
        value = value.strip()
        if not value:
            raise TierError("a slot value cannot be empty")
        now = observation.observed
        importance = (
            mk.initial_importance(entity_id, slot_key) if importance is None else importance
        )
        norm = normalise_value(value)
        with self._tx() as db:
            current = self._current(db, entity_id, slot_key)
            if current is not None and normalise_value(current.value) == norm:
                self._observe_row(db, current.id, observation)
                # A tainted echo never raises a trusted value's confidence.
                trusted_only = observation.tainted and not current.tainted
                raised = (
                    current.confidence
                    if trusted_only
                    else max(current.confidence, clamp(confidence))
                )
                db.execute(
                    "UPDATE slot_values SET confidence = ?, updated_ts = ?, observed_ts ="
                    " max(observed_ts, ?) WHERE id = ?",
                    (raised, now.isoformat(), now.isoformat(), current.id),
                )
                self._slot_event(
                    db,
                    "SlotCorroborated",
                    current,
                    now,
                    memory_id=observation.memory_id,
                    confidence=raised,
                )
                promoted, blockers = self._maybe_promote(db, current.id, now, min_observations)
                return SlotOutcome(
                    slot=self._slot_row(db, current.id) or current,
                    action="corroborated",
                    promoted=promoted,
                    blockers=tuple(blockers),
                )
            new_id = uuid.uuid4().hex
            demoted: SlotValue | None = None
            action: Literal["created", "superseded", "contested"] = "created"
            status: SlotStatus = "working"
            if current is not None and observation.tainted and not current.tainted:
                # Untrusted content never lowers or replaces a value trusted sources gave: the
                # disagreement is recorded, the newcomer waits as contested, nothing else moves.
                self._mark_contradiction(
                    db,
                    current,
                    observation,
                    value,
                    strength=0.0,
                    applied=False,
                    reason="tainted observation against a trusted value",
                )
                status = "contested"
                action = "contested"
            elif current is not None:
                strength = mk.contradiction_strength(current.confidence, confidence)
                lowered = mk.contradicted_confidence(current.confidence, strength)
                marks = current.contradictions + 1
                db.execute(
                    "UPDATE slot_values SET confidence = ?, contradictions = ?, updated_ts = ?"
                    " WHERE id = ?",
                    (lowered, marks, now.isoformat(), current.id),
                )
                self._mark_contradiction(
                    db,
                    current,
                    observation,
                    value,
                    strength=round(strength, 6),
                    confidence_before=current.confidence,
                    confidence_after=lowered,
                )
                old = self._slot_row(db, current.id)
                assert old is not None
                if mk.should_demote(lowered, marks):
                    self._set_status(db, old, "demoted", now, reason="contradiction threshold")
                    demoted = old
                    action = "superseded"
                elif confidence >= lowered:
                    self._set_status(db, old, "superseded", now, reason=f"newer value {value!r}")
                    demoted = old
                    action = "superseded"
                else:
                    status = "contested"
                    action = "contested"
                self._contradict_beliefs(db, old, new_id, strength, now)
            db.execute(
                f"INSERT INTO slot_values({_SLOT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    new_id,
                    entity_id,
                    slot_key,
                    value,
                    norm,
                    clamp(confidence),
                    clamp(importance),
                    status,
                    0,
                    origin,
                    now.isoformat(),
                    now.isoformat(),
                    now.isoformat(),
                    int(observation.tainted),
                ),
            )
            self._observe_row(db, new_id, observation)
            self._event(
                db,
                "SlotUpdated",
                entity_id=entity_id,
                slot_key=slot_key,
                ref=new_id,
                now=now,
                value=value,
                status=status,
                confidence=clamp(confidence),
                memory_id=observation.memory_id,
                replaces=current.id if current else "",
            )
            promoted, blockers = (False, [])
            if status == "working":
                promoted, blockers = self._maybe_promote(db, new_id, now, min_observations)
            slot = self._slot_row(db, new_id)
            assert slot is not None
            return SlotOutcome(
                slot=slot,
                action=action,
                promoted=promoted,
                contradiction=current is not None,
                demoted=demoted,
                blockers=tuple(blockers),
            )

    def _slot_event(
        self, db: sqlite3.Connection, kind: str, slot: SlotValue, now: datetime, **data: Any
    ) -> None:
        """Log an event about one slot version (its entity, key and id as the reference)."""
        self._event(
            db, kind, entity_id=slot.entity_id, slot_key=slot.slot_key, ref=slot.id, now=now, **data
        )

    def _mark_contradiction(
        self,
        db: sqlite3.Connection,
        current: SlotValue,
        observation: mk.Observation,
        value: str,
        **detail: Any,
    ) -> None:
        """Log a ``ContradictionMarked`` event against the current value of a slot."""
        self._slot_event(
            db,
            "ContradictionMarked",
            current,
            observation.observed,
            by_memory=observation.memory_id,
            new_value=value,
            old_value=current.value,
            **detail,
        )

    def observations_of(self, slot_value_id: str) -> list[mk.Observation]:
        """Return the observations that support a slot version."""
        return self._observations(self._db(), slot_value_id)

    def _observations(self, db: sqlite3.Connection, slot_value_id: str) -> list[mk.Observation]:
        rows = db.execute(
            "SELECT memory_id, source_ref, author, observed_ts, quality, risk_flags, tainted,"
            " fetch_failed FROM observations WHERE slot_value_id = ? AND memory_id NOT IN"
            " (SELECT memory_id FROM tombstones)",
            (slot_value_id,),
        ).fetchall()
        return [
            mk.Observation(
                memory_id=r[0],
                source_ref=r[1],
                author=r[2],
                observed=datetime.fromisoformat(r[3]),
                quality=r[4],
                risk_flags=tuple(json.loads(r[5])),
                tainted=bool(r[6]),
                fetch_failed=bool(r[7]),
            )
            for r in rows
        ]

    @staticmethod
    def _observe_row(db: sqlite3.Connection, slot_id: str, o: mk.Observation) -> None:
        db.execute(
            "INSERT INTO observations VALUES (?,?,?,?,?,?,?,?,?)",
            (
                o.memory_id,
                slot_id,
                o.source_ref,
                o.author,
                o.observed.isoformat(),
                o.quality,
                json.dumps(list(o.risk_flags)),
                int(o.tainted),
                int(o.fetch_failed),
            ),
        )

    def _maybe_promote(
        self, db: sqlite3.Connection, slot_id: str, now: datetime, min_observations: int
    ) -> tuple[bool, list[str]]:
        slot = self._slot_row(db, slot_id)
        if slot is None or slot.status != "working":
            return False, []
        observations = self._observations(db, slot_id)
        # Promotion rests on trusted observations only; a slot tainted at birth never promotes.
        trusted = [o for o in observations if not o.tainted]
        blockers = mk.promotion_blockers(
            trusted if trusted and not slot.tainted else observations,
            min_observations=min_observations,
        )
        if blockers:
            return False, blockers
        self._set_status(db, slot, "promoted", now, reason="§17 promotion gate passed")
        self._slot_event(
            db,
            "BeliefPromoted",
            slot,
            now,
            value=slot.value,
            confidence=slot.confidence,
        )
        belief_id = f"slot:{slot.id}"
        db.execute(
            "INSERT OR IGNORE INTO beliefs(id, text, weight, identity_linked, status,"
            " slot_value_id, created_ts, updated_ts) VALUES (?,?,?,0,'active',?,?,?)",
            (
                belief_id,
                f"{slot.entity_id} {slot.slot_key} = {slot.value}",
                slot.confidence,
                slot.id,
                now.isoformat(),
                now.isoformat(),
            ),
        )
        return True, []

    def _contradict_beliefs(
        self, db: sqlite3.Connection, old: SlotValue, new_id: str, strength: float, now: datetime
    ) -> None:
        """Mirror a slot contradiction into the belief graph when the old value was a belief."""
        row = db.execute(
            "SELECT id FROM beliefs WHERE slot_value_id = ? AND status = 'active'", (old.id,)
        ).fetchone()
        if row is None:
            return
        belief_id = str(row[0])
        if old.status in ("superseded", "demoted"):
            node = self._belief_row(db, belief_id)
            if node is not None and not node.identity_linked:
                db.execute(
                    "UPDATE beliefs SET status = 'demoted', updated_ts = ? WHERE id = ?",
                    (now.isoformat(), belief_id),
                )
                self._event(db, "BeliefDemoted", ref=belief_id, now=now, reason="slot superseded")
        self._event(
            db,
            "BeliefContradicted",
            ref=belief_id,
            now=now,
            by_slot=new_id,
            strength=round(strength, 6),
        )

    def _current(self, db: sqlite3.Connection, entity_id: str, slot_key: str) -> SlotValue | None:
        row = db.execute(
            f"SELECT {_SLOT_COLUMNS} FROM slot_values WHERE entity_id = ? AND slot_key = ?"
            " AND status IN ('working','promoted') ORDER BY observed_ts DESC, created_ts DESC"
            " LIMIT 1",
            (entity_id, slot_key),
        ).fetchone()
        return _slot(row) if row else None

    @staticmethod
    def _slot_row(db: sqlite3.Connection, slot_id: str) -> SlotValue | None:
        row = db.execute(
            f"SELECT {_SLOT_COLUMNS} FROM slot_values WHERE id = ?", (slot_id,)
        ).fetchone()
        return _slot(row) if row else None

    def _set_status(
        self,
        db: sqlite3.Connection,
        slot: SlotValue,
        status: SlotStatus,
        now: datetime,
        *,
        reason: str,
    ) -> None:
        db.execute(
            "UPDATE slot_values SET status = ?, updated_ts = ? WHERE id = ?",
            (status, now.isoformat(), slot.id),
        )
        kind = {
            "demoted": "BeliefDemoted",
            "superseded": "BeliefSuperseded",
            "expired": "TrendExpired",
        }.get(status, "SlotStatusChanged")
        self._slot_event(
            db,
            kind,
            slot,
            now,
            before=slot.status,
            after=status,
            reason=reason,
            value=slot.value,
        )

    # ------------------------------------------------------------------ maintenance on slots

    def decay_topics(self, now: datetime, half_life: timedelta = mk.TOPIC_HALF_LIFE) -> int:
        """Apply time decay to current topic slots (``belief.topic.*``); returns how many."""
        changed = 0
        with self._tx() as db:
            for slot in self._current_all(db):
                if not mk.is_topic_slot(slot.slot_key):
                    continue
                decayed = mk.topic_decayed(slot.confidence, now - slot.updated, half_life)
                if abs(decayed - slot.confidence) < 1e-6:
                    continue
                db.execute(
                    "UPDATE slot_values SET confidence = ?, updated_ts = ? WHERE id = ?",
                    (decayed, now.isoformat(), slot.id),
                )
                self._slot_event(
                    db,
                    "TopicDecayed",
                    slot,
                    now,
                    before=slot.confidence,
                    after=decayed,
                )
                changed += 1
        return changed

    def purge_trends(self, now: datetime) -> list[SlotValue]:
        """Expire trend slots past their TTL (stale trend purge); returns the expired slots."""
        expired = []
        with self._tx() as db:
            for slot in self._current_all(db):
                if mk.trend_expired(slot.slot_key, slot.observed, now):
                    self._set_status(db, slot, "expired", now, reason="trend TTL passed")
                    expired.append(slot)
        return expired

    def demote_low_confidence(
        self, now: datetime, floor: float = mk.LOW_CONFIDENCE_BULK
    ) -> list[SlotValue]:
        """Bulk-demote current slots whose confidence fell under ``floor`` (heartbeat §19.2)."""
        demoted = []
        with self._tx() as db:
            for slot in self._current_all(db):
                if slot.confidence < floor:
                    self._set_status(db, slot, "demoted", now, reason=f"confidence under {floor}")
                    demoted.append(slot)
        return demoted

    def contradiction_ratio(self) -> float:
        """Return the share of slot versions ever contradicted (heartbeat §19.2 monitor)."""
        total, marked = (
            self._db()
            .execute("SELECT count(*), sum(contradictions > 0) FROM slot_values")
            .fetchone()
        )
        return round((marked or 0) / total, 4) if total else 0.0

    def _current_all(self, db: sqlite3.Connection) -> list[SlotValue]:
        rows = db.execute(
            f"SELECT {_SLOT_COLUMNS} FROM slot_values WHERE status IN ('working','promoted')"
        ).fetchall()
        return [_slot(r) for r in rows]

    # ------------------------------------------------------------------ Tier C: claims

    def add_claim(
        self,
        *,
        entity_id: str,
        slot_key: str,
        value: str,
        confidence: float,
        provenance: Sequence[str],
        model: str = "",
        now: datetime | None = None,
    ) -> Claim:
        """Record an inferred claim: confidence capped at 0.70, provenance required (§13.1 C)."""
        if not provenance:
            raise TierError("an inferred claim needs provenance (the memory ids it came from)")
        if not mk.valid_entity(entity_id) or not mk.valid_slot(slot_key):
            raise TierError(f"claim {entity_id!r}/{slot_key!r} does not follow the §15 scheme")
        if not value.strip():
            raise TierError("a claim value cannot be empty")
        stamp = now or utc_now()
        claim = Claim(
            id=uuid.uuid4().hex,
            entity_id=entity_id,
            slot_key=slot_key,
            value=value.strip(),
            confidence=mk.inferred_confidence(confidence),
            provenance=tuple(provenance),
            model=model,
            created=stamp,
        )
        with self._tx() as db:
            db.execute(
                "INSERT INTO claims VALUES (?,?,?,?,?,?,?,?)",
                (
                    claim.id,
                    entity_id,
                    slot_key,
                    claim.value,
                    claim.confidence,
                    json.dumps(list(claim.provenance)),
                    model,
                    stamp.isoformat(),
                ),
            )
            self._event(
                db,
                "ClaimInferred",
                entity_id=entity_id,
                slot_key=slot_key,
                ref=claim.id,
                now=stamp,
                value=claim.value,
                confidence=claim.confidence,
                provenance=list(claim.provenance),
            )
        return claim

    def claims(self, entity: str | None = None) -> list[Claim]:
        """Return inferred claims, newest first."""
        sql = "SELECT * FROM claims"
        args: tuple[Any, ...] = ()
        if entity:
            sql += " WHERE entity_id = ? OR entity_id LIKE ?"
            args = (entity, f"%{entity}%")
        rows = self._db().execute(sql + " ORDER BY created_ts DESC", args).fetchall()
        return [
            Claim(
                id=r[0],
                entity_id=r[1],
                slot_key=r[2],
                value=r[3],
                confidence=r[4],
                provenance=tuple(json.loads(r[5])),
                model=r[6],
                created=datetime.fromisoformat(r[7]),
            )
            for r in rows
        ]

    # ------------------------------------------------------------------ belief graph (MSCP §5)

    def add_belief(
        self, belief_id: str, text: str, weight: float, *, identity_linked: bool = False
    ) -> BeliefNode:
        """Add a belief node (identity-linked beliefs start at least at the 0.1 floor)."""
        weight = clamp(weight)
        if identity_linked:
            weight = max(weight, BELIEF_FLOOR)
        stamp = utc_now().isoformat()
        with self._tx() as db:
            db.execute(
                "INSERT INTO beliefs(id, text, weight, identity_linked, status, slot_value_id,"
                " created_ts, updated_ts) VALUES (?,?,?,?,'active','',?,?)",
                (belief_id, text, weight, int(identity_linked), stamp, stamp),
            )
            self._event(
                db,
                "BeliefAdded",
                ref=belief_id,
                text=text,
                weight=weight,
                identity_linked=identity_linked,
            )
        node = self.belief(belief_id)
        assert node is not None
        return node

    def belief(self, belief_id: str) -> BeliefNode | None:
        """Return one belief node."""
        return self._belief_row(self._db(), belief_id)

    def beliefs(self, *, include_inactive: bool = False) -> list[BeliefNode]:
        """Return belief nodes, heaviest first."""
        sql = "SELECT id, text, weight, identity_linked, status, slot_value_id FROM beliefs"
        if not include_inactive:
            sql += " WHERE status = 'active'"
        rows = self._db().execute(sql + " ORDER BY weight DESC, id").fetchall()
        return [_belief(r) for r in rows]

    @staticmethod
    def _belief_row(db: sqlite3.Connection, belief_id: str) -> BeliefNode | None:
        row = db.execute(
            "SELECT id, text, weight, identity_linked, status, slot_value_id FROM beliefs"
            " WHERE id = ?",
            (belief_id,),
        ).fetchone()
        return _belief(row) if row else None

    def link(self, src: str, dst: str, kind: EdgeKind, strength: float) -> None:
        """Add (or strengthen) a typed edge between two beliefs."""
        if kind not in EDGE_KINDS:
            raise TierError(f"edge kind must be one of {', '.join(EDGE_KINDS)}, not {kind!r}")
        with self._tx() as db:
            for node in (src, dst):
                if self._belief_row(db, node) is None:
                    raise TierError(f"no belief {node!r}")
            db.execute(
                "INSERT INTO belief_edges VALUES (?,?,?,?,?) ON CONFLICT(src, dst, kind)"
                " DO UPDATE SET strength = excluded.strength",
                (src, dst, kind, clamp(strength), utc_now().isoformat()),
            )
            self._event(db, "BeliefLinked", ref=src, dst=dst, edge=kind, strength=clamp(strength))

    def edges(self) -> list[tuple[str, str, str, float]]:
        """Return every ``(src, dst, kind, strength)`` edge."""
        rows = self._db().execute("SELECT src, dst, kind, strength FROM belief_edges").fetchall()
        return [(r[0], r[1], r[2], float(r[3])) for r in rows]

    def rewrite_belief(self, belief_id: str, delta: float, *, cycle: str, why: str) -> float:
        """Change a belief's weight by ``delta``, at most ±0.1 in total per ``cycle`` (§5.1).

        Identity-linked beliefs never fall under 0.1. Returns the new weight.
        """
        from kernel.mscp import belief_weight_after

        with self._tx() as db:
            node = self._belief_row(db, belief_id)
            if node is None:
                raise TierError(f"no belief {belief_id!r}")
            used = db.execute(
                "SELECT COALESCE(sum(abs(delta)), 0) FROM rewrites"
                " WHERE belief_id = ? AND cycle = ?",
                (belief_id, cycle),
            ).fetchone()[0]
            allowance = max(MAX_BELIEF_REWRITE - float(used), 0.0)
            step = max(-allowance, min(allowance, delta))
            new = belief_weight_after(node.weight, step, identity_linked=node.identity_linked)
            applied = new - node.weight
            db.execute(
                "UPDATE beliefs SET weight = ?, updated_ts = ? WHERE id = ?",
                (new, utc_now().isoformat(), belief_id),
            )
            db.execute(
                "INSERT INTO rewrites VALUES (?,?,?,?)",
                (belief_id, cycle, applied, utc_now().isoformat()),
            )
            self._event(
                db,
                "BeliefRewritten",
                ref=belief_id,
                cycle=cycle,
                requested=delta,
                applied=round(applied, 6),
                before=node.weight,
                after=new,
                why=why,
            )
        return new

    def delete_belief(self, belief_id: str, *, why: str) -> None:
        """Retire a belief (status ``deleted``; the row stays). Identity-linked ones refuse."""
        from kernel.mscp import belief_deletable

        with self._tx() as db:
            node = self._belief_row(db, belief_id)
            if node is None:
                raise TierError(f"no belief {belief_id!r}")
            if not belief_deletable(node.identity_linked):
                raise TierError(f"belief {belief_id!r} is identity-linked and cannot be deleted")
            db.execute(
                "UPDATE beliefs SET status = 'deleted', updated_ts = ? WHERE id = ?",
                (utc_now().isoformat(), belief_id),
            )
            self._event(db, "BeliefDeleted", ref=belief_id, why=why)

    def reconcile(self, *, cycle: str, threshold: float = RECONCILE_THRESHOLD) -> list[str]:
        """Reconcile every contradiction edge of strength ≥ ``threshold`` (§5.1).

        The weaker belief of each pair (a non-identity-linked one when there is a choice) is
        weakened by up to 0.1 within this cycle's rewrite allowance. Returns the rewritten ids.
        """
        rewritten = []
        for src, dst, kind, strength in self.edges():
            if kind != "contradiction" or strength < threshold:
                continue
            a, b = self.belief(src), self.belief(dst)
            if a is None or b is None or "active" not in (a.status, b.status):
                continue
            pair = sorted((a, b), key=lambda n: (n.identity_linked, n.weight))
            target = pair[0]
            after = self.rewrite_belief(
                target.id,
                -MAX_BELIEF_REWRITE * strength,
                cycle=cycle,
                why=f"reconciliation: contradicts {pair[1].id} (strength {strength:.2f})",
            )
            if after != target.weight:  # this cycle's allowance may already be spent
                rewritten.append(target.id)
        return rewritten

    # ------------------------------------------------------------------ trail

    def events(
        self, *, ref: str | None = None, kinds: Sequence[str] | None = None, limit: int = 200
    ) -> list[Event]:
        """Return governance events, newest first."""
        sql = "SELECT seq, ts, kind, entity_id, slot_key, ref, data FROM events WHERE 1=1"
        args: list[Any] = []
        if ref:
            sql += " AND ref = ?"
            args.append(ref)
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            args.extend(kinds)
        rows = self._db().execute(sql + " ORDER BY seq DESC LIMIT ?", (*args, limit)).fetchall()
        return [
            Event(
                seq=r[0],
                ts=datetime.fromisoformat(r[1]),
                kind=r[2],
                entity_id=r[3],
                slot_key=r[4],
                ref=r[5],
                data=json.loads(r[6]),
            )
            for r in rows
        ]

    def supporting_memories(self, slot_value_id: str) -> list[str]:
        """Return the (not forgotten) memories whose observations support a slot version."""
        rows = (
            self._db()
            .execute(
                "SELECT DISTINCT memory_id FROM observations WHERE slot_value_id = ? AND memory_id"
                " NOT IN (SELECT memory_id FROM tombstones)",
                (slot_value_id,),
            )
            .fetchall()
        )
        return [str(r[0]) for r in rows]

    def slot_ids_for(self, memory_id: str) -> list[str]:
        """Return the slot versions a memory supported."""
        rows = (
            self._db()
            .execute("SELECT slot_value_id FROM observations WHERE memory_id = ?", (memory_id,))
            .fetchall()
        )
        return [r[0] for r in rows]


_SLOT_COLUMNS = (
    "id, entity_id, slot_key, value, value_norm, confidence, importance, status, contradictions,"
    " origin, created_ts, updated_ts, observed_ts, tainted"
)


def _slot(row: Sequence[Any]) -> SlotValue:
    return SlotValue(
        id=row[0],
        entity_id=row[1],
        slot_key=row[2],
        value=row[3],
        confidence=float(row[5]),
        importance=float(row[6]),
        status=row[7],
        contradictions=int(row[8]),
        origin=row[9],
        created=datetime.fromisoformat(row[10]),
        updated=datetime.fromisoformat(row[11]),
        observed=datetime.fromisoformat(row[12]),
        tainted=bool(row[13]),
    )


def _belief(row: Sequence[Any]) -> BeliefNode:
    return BeliefNode(
        id=row[0],
        text=row[1],
        weight=float(row[2]),
        identity_linked=bool(row[3]),
        status=row[4],
        slot_value_id=row[5],
    )


_STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have he her his
    how i if in into is it its me my no not of on or our she so than that the their them then
    there these they this to too us was we were what when where which who whom why will with
    would you your yours about after again all also am any because before being both each few
    more most other over own same should some such through under until up very just now these
    those here only once during out off while""".split()
)

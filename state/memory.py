"""``MemoryStore``: the append-only ledger plus a rebuildable Chroma vector index.

Public API (used by the kernel and by outside benchmarks)::

    from state.memory import MemoryStore
    store = MemoryStore(path)                 # opens or creates a store in a directory
    memory_id = store.add("text", metadata={"author": "self"})
    hits = store.search("query", k=10)        # list[Hit] with .id, .text, .score

The JSONL ledger is the truth (Tier A); Chroma (under ``<path>/.index`` or ``index_path``) and the
FTS5 mirror in ``<path>/tiers.sqlite`` are indexes over it that ``sync_index()`` rebuilds. The same
SQLite file holds the authoritative tiers B–D (``state.tiers``): belief slots, inferred claims, the
governance trail, tombstones and memory weights.

``search`` gathers candidates from the top semantic (Chroma) matches, the top lexical matches
(BM25 over Snowball-stemmed words in SQLite FTS5, speaker names from metadata included), lexical
matches inside any period the query names, the N most recent entries and, when the query names a
known speaker, that person's best semantic and lexical matches; drops soft-deleted ones, and
ranks the union with ``kernel.memory.rank_score``: relevance (BM25 normalised by how much of the
query a memory covers, fused with the MiniLM cosine of the query without speaker names) scaled by
a factor from importance, the use-strengthened weight, a tiny recency tie-break, the named
speaker, the named period, and penalties for memories whose claim was superseded, contradicted or
restated later by the same speaker. Weights were chosen on the dev split of ``bench/memory.py
--part dialogue`` (issue 15). ``Hit.score`` is that rank score.
``kernel``-authored entries (the audit trail,
"below consciousness") stay in the ledger but are never indexed or returned by ``search``.
"""

from __future__ import annotations

import re
import shutil
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from filelock import FileLock

from kernel import memory as mk
from kernel.facts import (
    PROFILE_ORDER,
    asked_slot,
    asked_slots,
    extract_facts,
    profile_question,
    question_parts,
    recall_question,
    slot_phrase,
)
from state.embeddings import MiniLMEmbedder
from state.journal import MemoryJournal, ReadReport
from state.records import AUTHORS, Author, MemoryEntry
from state.tiers import (
    TIERS_FILE,
    USER_ENTITY,
    MemoryTiers,
    SlotOutcome,
    SlotValue,
    TierError,
    fold,
)

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

    from state.config import Config
    from state.instance import Instance

COLLECTION = "memories"
VECTOR_CACHE = 512
CANDIDATE_CACHE = 20_000  # memories kept by id with their vectors (about 1.6 kB each)
RETRIEVABLE: tuple[Author, ...] = ("self", "goal", "external")
"""Authors retrieval returns; ``kernel`` entries are audit records, not experience."""
DEFAULT_RECENT = 5
VECTOR_POOL = 40  # semantic candidates fetched before re-ranking (at least 3k)
LEXICAL_POOL = 40  # lexical candidates fetched before re-ranking
PERIOD_POOL = 20  # lexical candidates from inside a period the query names
SPEAKER_POOL = 20  # lexical candidates said by a person the query names
SPEAKER_VECTOR_POOL = 20  # semantic candidates said by a person the query names
SPEAKER_KEYS = ("speaker", "name", "sender")
"""Metadata keys naming who said a memory; the name joins the lexical text if the text lacks it."""
STRIP_NAMES = True
"""Embed the question without the names of known speakers (``kernel.memory.strip_names``)."""
RESTATED_SCOPE = 40  # candidates (by cosine) checked for being restated by a newer one
BELIEF_MATCH = 0.45  # a query this similar to a belief's description recalls its sources
ASKED_MATCH = 0.55
"""A question this similar to a slot's description (no value) asks about that slot."""
ASKED_MARGIN = 0.05
"""... and at least this much more similar to it than to any other slot."""
PROFILE_FACTS = 6
"""At most this many facts answer a profile question ("Who am I?")."""

HitSource = Literal["recent", "semantic", "lexical", "belief", "both"]


@dataclass(frozen=True)
class Hit:
    """One retrieved memory."""

    id: str
    text: str
    score: float
    author: str
    timestamp: str
    source: HitSource
    tainted: bool = False
    superseded: bool = False
    contradictions: int = 0
    risky: bool = False


class MemoryStore:
    """Append-only memory with semantic + recency retrieval."""

    def __init__(
        self,
        path: str | Path,
        *,
        index_path: str | Path | None = None,
        chroma_url: str | None = None,
    ) -> None:
        """Open or create a store whose ledger lives in ``path``.

        With ``chroma_url`` (``http://host:port``) the vectors live on that Chroma server
        instead of the embedded index under ``index_path``.
        """
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.index_path = Path(index_path) if index_path else self.path / ".index"
        self.chroma_url = chroma_url or None
        self.journal = MemoryJournal(self.path)
        self._collection: Collection | None = None
        self.index_broken = ""
        """Why the vector index could not be read ("" while it can); see ``_index_failed``."""
        self._vectors: dict[str, Any] = {}
        self._known: OrderedDict[str, _Candidate] = OrderedDict()
        self._pending: list[MemoryEntry] = []
        self._index_lock = threading.Lock()
        self._tiers: MemoryTiers | None = None
        self._phrases: dict[str, Any] = {}
        self._restemmed = False

    @classmethod
    def for_instance(cls, instance: Instance, config: Config | None = None) -> MemoryStore:
        """Open an instance's store: ledger in ``data/memory``, index per its configuration."""
        from state.config import load_config

        config = config or load_config(instance.config_file)
        return cls(
            instance.memory_dir,
            index_path=instance.chroma_dir,
            chroma_url=config.memory.chroma_url or None,
        )

    @property
    def tiers(self) -> MemoryTiers:
        """Return the SQLite tiers (belief slots, claims, governance trail, weights, FTS)."""
        if self._tiers is None:
            self._tiers = MemoryTiers(self.path / TIERS_FILE)
        return self._tiers

    # ------------------------------------------------------------------ writing

    def add(
        self, text: str, *, metadata: dict[str, Any] | None = None, defer_index: bool = False
    ) -> str:
        """Append a memory and index it; returns its id.

        ``metadata`` may carry ``author`` (default ``external``), ``weight``, ``situation``; any
        other keys are kept in the entry's ``meta``. With ``defer_index`` the entry is in the
        ledger at once and indexed with the next index operation (or ``flush()``). An untainted
        ``external`` memory (what the user says) also goes through ``classify``.
        """
        entry = self.add_entry(text, metadata=metadata, defer_index=defer_index)
        self.classify(entry)
        return entry.id

    def classify(
        self, entry: MemoryEntry, *, min_observations: int = mk.MIN_INDEPENDENT_OBSERVATIONS
    ) -> list[SlotOutcome]:
        """Record the first-person facts of an untainted user memory as belief observations.

        The pipeline's classify → contradiction check → belief update (§14.2) for what the user
        says: a primary, first-hand observation (§16.1 direct quote, 0.95) of the user entity.
        A differing value contradicts the current one, which is superseded and stays in
        history; memories asserting superseded values rank lower from then on.
        """
        if entry.tainted or entry.author != "external":
            return []
        outcomes = []
        for fact in extract_facts(entry.description):
            outcomes.append(
                self.tiers.observe(
                    entity_id=USER_ENTITY,
                    slot_key=fact.slot_key,
                    value=fact.value,
                    observation=mk.Observation(
                        memory_id=entry.id,
                        source_ref=f"lumen:memory:{entry.id}",
                        author="local",
                        observed=entry.timestamp,
                        quality="primary",
                    ),
                    confidence=mk.initial_confidence("chat", "primary", ()),
                    min_observations=min_observations,
                )
            )
        return outcomes

    def add_entry(
        self, text: str, *, metadata: dict[str, Any] | None = None, defer_index: bool = False
    ) -> MemoryEntry:
        """Like ``add`` but return the whole entry."""
        entry = self._entry(text, metadata)
        if defer_index:
            self.journal.append(entry)
            self._pending.append(entry)
            return entry
        return self.append(entry)

    def pending(self) -> int:
        """Return how many entries wait for indexing."""
        return len(self._pending)

    def flush(self) -> list[MemoryEntry]:
        """Index the deferred entries in one batch; returns them.

        When a search found the index unreadable, the index is rebuilt from the ledger first
        (``repair_index``).
        """
        batch, self._pending = self._pending, []
        if self.index_broken:
            self.repair_index()
            return batch  # the rebuild indexed the ledger, this batch included
        with self._index_lock:
            self._index(batch)
        return batch

    def repair_index(self) -> int:
        """Drop the vector index and rebuild it from the ledger; returns the entries indexed."""
        with self._index_lock:
            collection = self._open_collection()
            self._collection = None
            self._known.clear()
            client: Any = getattr(collection, "_client", None)
            try:
                if client is not None:
                    client.delete_collection(COLLECTION)
            except Exception:  # a torn index may not even delete: start afresh
                if not self.chroma_url and self.index_path.exists():
                    aside = self.index_path.with_name(f"{self.index_path.name}.broken")
                    shutil.rmtree(aside, ignore_errors=True)
                    self.index_path.rename(aside)
                    from chromadb.api.shared_system_client import SharedSystemClient

                    SharedSystemClient.clear_system_cache()
            self.index_broken = ""
        return self.sync_index()

    def append(self, entry: MemoryEntry) -> MemoryEntry:
        """Append a prepared entry to the ledger, then index it."""
        self.journal.append(entry)
        with self._index_lock:
            self._index([entry])
        return entry

    def _entry(self, text: str, metadata: dict[str, Any] | None) -> MemoryEntry:
        meta = dict(metadata or {})
        author = meta.pop("author", "external")
        if author not in AUTHORS:
            raise ValueError(f"author must be one of {', '.join(AUTHORS)}, not {author!r}")
        stamp = meta.pop("timestamp", None)
        timestamp = _parse_timestamp(stamp) if stamp is not None else None
        return self.journal.new_entry(
            text,
            author=author,
            weight=float(meta.pop("weight", 0.5)),
            situation=str(meta.pop("situation", "")),
            tainted=bool(meta.pop("tainted", False)),
            meta=meta,
            timestamp=timestamp,
        )

    # ------------------------------------------------------------------ reading

    def read(self) -> ReadReport:
        """Return every readable entry plus the skipped-line report."""
        return self.journal.read()

    def count_by_author(self) -> Counter[str]:
        """Count memories per author."""
        return Counter(entry.author for entry in self.journal)

    def recent(self, n: int, *, authors: tuple[Author, ...] | None = None) -> list[MemoryEntry]:
        """Return the ``n`` newest entries (newest first), reading day files from the end."""
        return self.journal.tail(n, authors=authors) if n > 0 else []

    def _embed(self, texts: list[str]) -> Any:
        """Embed texts, reusing vectors computed earlier in this process."""
        import numpy as np

        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        found = {t: self._vectors[t] for t in dict.fromkeys(texts) if t in self._vectors}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            for start in range(0, len(missing), 256):
                chunk = missing[start : start + 256]
                found.update(zip(chunk, MiniLMEmbedder.shared().embed(chunk), strict=True))
        result = np.stack([found[t] for t in texts])
        # Cache only what fits; the batch itself never depends on the cache (large flushes).
        for text in missing[-VECTOR_CACHE:]:
            self._vectors[text] = found[text]
        if len(self._vectors) > VECTOR_CACHE:
            for stale in list(self._vectors)[: len(self._vectors) - VECTOR_CACHE]:
                del self._vectors[stale]
        return result

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        recent: int = DEFAULT_RECENT,
        authors: tuple[Author, ...] | None = None,
        now: datetime | None = None,
    ) -> list[Hit]:
        """Return the ``k`` best memories for ``query`` by the full ranking, best first.

        Candidates: the top semantic matches, the top lexical (stemmed BM25) matches, lexical
        matches inside any period the query names ("in May 2023", "last week" relative to
        ``now``, default the current time), and the ``recent`` newest entries (so deferred, not
        yet indexed entries are found too). Every candidate is ranked by relevance
        (``kernel.memory.rank_score``): a recent entry is returned only if it is relevant, never
        because it is recent. Soft-deleted memories never come back; ``authors`` restricts the
        result (default: all but ``kernel``).
        """
        if k <= 0:
            return []
        self._restem_once()
        readable = authors or RETRIEVABLE
        periods = mk.query_periods(query, now or datetime.now(UTC))
        names = frozenset(self.tiers.speakers_in(query))
        semantic_query = mk.strip_names(query, sorted(names)) if STRIP_NAMES else query
        query_vec = self._embed([semantic_query])[0]
        pool: dict[str, _Candidate] = {}
        for cand in self._semantic_candidates(query_vec, max(VECTOR_POOL, 3 * k), authors):
            pool[cand.id] = cand
        if recent > 0:
            newest = self.recent(recent, authors=readable)
            vectors = self._embed([e.description for e in newest])
            for entry, vec in zip(newest, vectors, strict=True):
                known = pool.get(entry.id)
                pool[entry.id] = _Candidate(
                    id=entry.id,
                    text=entry.description,
                    author=entry.author,
                    epoch=entry.timestamp.timestamp(),
                    tainted=entry.tainted,
                    vector=vec,
                    source="both" if known else "recent",
                    weight=entry.weight,
                    speaker=_speaker(entry),
                )
        if SPEAKER_VECTOR_POOL > 0:  # what the named person said, by meaning (multi-fact)
            for name in sorted(names):
                found = self._semantic_candidates(query_vec, SPEAKER_VECTOR_POOL, authors, name)
                for cand in found:
                    pool.setdefault(cand.id, cand)
        lexical = self._lexical_candidates(query, pool, readable, periods, names)
        for cand in lexical.values():
            pool.setdefault(cand.id, cand)
        beliefs = self._belief_matches(query_vec)
        missing = [mid for mid in beliefs if mid not in pool]
        for cand in self._fetch(missing, "belief"):
            pool[cand.id] = cand
        return self._rank(query_vec, pool, lexical, beliefs, readable, k, periods, names)

    def _restem_once(self) -> None:
        """Give memories mirrored before the stemmed lexical index their terms (once)."""
        if self._restemmed:
            return
        self._restemmed = True
        stale = set(self.tiers.unstemmed())
        if stale:
            texts = {e.id: _lexical_text(e) for e in self.journal if e.id in stale}
            self.tiers.restem(texts)
        if not self.tiers.lexical_flag("speakers"):  # stores written before speakers were kept
            self.tiers.add_speakers(_speaker(e) for e in self.journal if e.author != "kernel")
            self.tiers.set_lexical_flag("speakers")

    def _belief_matches(self, query_vec: Any) -> dict[str, float]:
        """Return memories that support a current belief slot the query is about (§18 R1).

        When the query matches a current slot's description (``relevant_beliefs``), the
        memories that assert that value become candidates with that match as their relevance.
        Beliefs index memories by meaning, so a correction phrased unlike the question is still
        found.
        """
        matches: dict[str, float] = {}
        for slot, _, sim in self._beliefs_near(query_vec, BELIEF_MATCH):
            for mid in self.tiers.supporting_memories(slot.id):
                matches[mid] = max(matches.get(mid, 0.0), sim)
        return matches

    def relevant_beliefs(
        self, query: str, *, threshold: float
    ) -> list[tuple[SlotValue, str, float]]:
        """Return the user's current beliefs whose description matches ``query``, best first.

        Each slot is described in words as the user would ask about it ("the city where I live:
        Porto"); the result is ``(slot, description, similarity)`` at or above ``threshold``.
        """
        return self._beliefs_near(self._embed([query])[0], threshold)

    def asked_beliefs(self, question: str) -> list[SlotValue]:
        """Return the user's current beliefs ``question`` asks about (none, one or several).

        A profile question ("Who am I?", "What do you know about me?") asks for every fact the
        user stated (``PROFILE_FACTS`` at most, the name first: ``PROFILE_ORDER``). Otherwise each
        part of the question ("What's my name and where do I live?") that asks about the user is
        matched on its own: by its wording where that is unambiguous and every part asks about
        the user (``kernel.facts.asked_slot``), else by meaning (``_asked_among``).
        """
        slots = self.tiers.current_slots(USER_ENTITY)
        if not slots:
            return []
        if profile_question(question):
            rank = {key: i for i, key in enumerate(PROFILE_ORDER)}
            ordered = sorted(slots, key=lambda s: (rank.get(s.slot_key, len(rank)), s.slot_key))
            return ordered[:PROFILE_FACTS]
        named = asked_slots(question)  # a question in another language, by its wording
        if named:
            return [s for key in named for s in slots if s.slot_key == key]
        found: dict[str, SlotValue] = {}
        parts = question_parts(question)
        asking = [part for part in parts if len(parts) == 1 or recall_question(part)]
        whole = len(asking) == len(parts)  # "My car won't start, what do I do?" asks advice
        for part in asking:
            wanted = asked_slot(part) if whole else None
            slot = next((s for s in slots if s.slot_key == wanted), None) if wanted else None
            if slot is None:  # asked by wording but not known ("Where do I work?", a job only)
                slot = self._asked_among(slots, part)
            if slot is not None:
                found.setdefault(slot.slot_key, slot)
        return list(found.values())

    def _asked_among(self, slots: list[SlotValue], question: str) -> SlotValue | None:
        """Return the one of ``slots`` (the user's current beliefs) ``question`` asks about.

        The question is compared with each slot's description without its value ("the city
        where I live"), so "Where is Lisbon?" does not match the value Lisbon: the best slot must
        reach ``ASKED_MATCH`` and beat the next by ``ASKED_MARGIN`` ("What's my name?" must not
        be read as the dog's name).
        """
        import numpy as np

        phrases = [slot_phrase(s.slot_key) for s in slots]
        sims = self._phrase_vectors(phrases) @ self._embed([question])[0]
        order = np.argsort(-sims)
        best = float(sims[order[0]])
        runner_up = float(sims[order[1]]) if len(order) > 1 else 0.0
        if best < ASKED_MATCH or best - runner_up < ASKED_MARGIN:
            return None
        return slots[int(order[0])]

    def _beliefs_near(self, query_vec: Any, threshold: float) -> list[tuple[SlotValue, str, float]]:
        slots = self.tiers.current_slots(USER_ENTITY)
        if not slots:
            return []
        phrases = [f"{slot_phrase(s.slot_key)}: {s.value}" for s in slots]
        sims = [float(x) for x in self._phrase_vectors(phrases) @ query_vec]
        found = [t for t in zip(slots, phrases, sims, strict=True) if t[2] >= threshold]
        return sorted(found, key=lambda t: -t[2])

    def _phrase_vectors(self, phrases: list[str]) -> Any:
        """Embed belief descriptions, cached apart from the memory-text cache."""
        import numpy as np

        missing = [p for p in dict.fromkeys(phrases) if p not in self._phrases]
        if missing:
            self._phrases.update(zip(missing, MiniLMEmbedder.shared().embed(missing), strict=True))
        return np.stack([self._phrases[p] for p in phrases])

    def _fetch(self, ids: list[str], source: HitSource) -> list[_Candidate]:
        """Fetch indexed memories by id, with their vectors (from this handle's cache first)."""
        if not ids:
            return []
        cached = [self._known[i].but(source=source) for i in ids if i in self._known]
        missing = [i for i in ids if i not in self._known]
        if not missing:
            return cached
        try:
            got = self._open_collection().get(
                ids=missing, include=["documents", "metadatas", "embeddings"]
            )
        except Exception as exc:  # see _index_failed
            self._index_failed(exc)
            return cached
        return cached + self._remember(_candidates(got["ids"], got, nested=False, source=source))

    def _remember(self, cands: list[_Candidate]) -> list[_Candidate]:
        """Keep the last ``CANDIDATE_CACHE`` memories seen (text, metadata, vector) by id.

        An indexed memory's text, author, time and vector never change; weight, importance and
        tombstones are read from the tiers at ranking time, so a cached candidate is never stale
        where it matters. Lexical-only candidates are then ranked without a Chroma ``get``.
        """
        for cand in cands:
            self._known[cand.id] = cand
            self._known.move_to_end(cand.id)
        while len(self._known) > CANDIDATE_CACHE:
            self._known.popitem(last=False)
        return cands

    def _semantic_candidates(
        self, query_vec: Any, n: int, authors: tuple[Author, ...] | None, speaker: str = ""
    ) -> list[_Candidate]:
        # No count() first: Chroma returns fewer than n_results when it holds fewer.
        # The index holds no kernel memories (``_index``): a filter naming every retrievable
        # author selects everything, and Chroma's metadata pre-filter is not free.
        clauses: list[Any] = []
        if authors and not set(RETRIEVABLE) <= set(authors):
            clauses.append({"author": {"$in": list(authors)}})
        if speaker:
            clauses.append({"speaker": speaker})
        where: Any = (clauses[0] if len(clauses) == 1 else {"$and": clauses}) if clauses else None
        # Ids only: text, metadata and vector of a memory never change, and this handle keeps
        # them for every memory it indexed or fetched (``_remember``), so only memories it has
        # not seen are fetched. Asking Chroma for documents and embeddings doubled the query.
        try:
            result = self._open_collection().query(
                query_embeddings=[query_vec.tolist()], n_results=n, where=where, include=[]
            )
        except Exception as exc:  # any index failure: degrade, never crash
            self._index_failed(exc)
            return []
        ids: list[str] = list(result["ids"][0])
        got = {c.id: c for c in self._fetch(ids, "semantic")}
        return [got[i] for i in ids if i in got]

    def _index_failed(self, exc: Exception) -> None:
        """Note that the vector index cannot be read (e.g. torn by a crash mid-write).

        The ledger is the truth and the index a rebuildable cache: the search goes on with its
        lexical, recent and belief halves, ``index_broken`` says why (the turn records it in
        ``degraded``), and the next ``flush`` rebuilds the index from the ledger.
        """
        from state.errors import LumenError

        if isinstance(exc, LumenError):  # an unreachable Chroma server: the caller's error
            raise exc
        self.index_broken = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"

    def _lexical_candidates(
        self,
        query: str,
        pool: dict[str, _Candidate],
        readable: tuple[Author, ...],
        periods: list[tuple[datetime, datetime]] = (),  # type: ignore[assignment]
        names: frozenset[str] = frozenset(),
    ) -> dict[str, _Candidate]:
        """Return the lexical matches with their BM25 strength attached (new ones fetched).

        Matches from inside a named period are added with their own strength (normalised
        against the overall best match), so a dated question finds that period's memories even
        when other periods hold stronger matches.
        """
        found = dict(self.tiers.lexical(query, LEXICAL_POOL))
        for start, end in periods:
            for mid, bm25 in self.tiers.lexical(
                query, PERIOD_POOL, since=start.timestamp(), until=end.timestamp()
            ):
                found.setdefault(mid, bm25)
        for name in sorted(names) if SPEAKER_POOL > 0 else ():
            for mid, bm25 in self.tiers.lexical(query, SPEAKER_POOL, require=name):
                found.setdefault(mid, bm25)
        if not found:
            return {}
        ceiling = self.tiers.lexical_ceiling(query)
        strengths = dict(
            zip(found, mk.lexical_strengths(list(found.values()), ceiling), strict=True)
        )
        missing = [mid for mid in strengths if mid not in pool]
        fetched = {c.id: c for c in self._fetch(missing, "lexical") if c.author in readable}
        out = {}
        for mid, strength in strengths.items():
            found_cand = pool.get(mid) or fetched.get(mid)
            if found_cand is not None:
                out[mid] = found_cand.with_lexical(strength)
        return out

    def _rank(
        self,
        query_vec: Any,
        pool: dict[str, _Candidate],
        lexical: dict[str, _Candidate],
        beliefs: dict[str, float],
        readable: tuple[Author, ...],
        k: int,
        periods: list[tuple[datetime, datetime]] = (),  # type: ignore[assignment]
        names: frozenset[str] = frozenset(),
    ) -> list[Hit]:
        import numpy as np

        cands = [c for c in pool.values() if c.author in readable]
        info = self.tiers.doc_info([c.id for c in cands])
        cands = [c for c in cands if not (c.id in info and info[c.id].tombstoned)]
        if not cands:
            return []
        if len(cands) > len(info):  # entries written but not yet mirrored can still be tombstoned
            gone = self.tiers.tombstoned([c.id for c in cands if c.id not in info])
            cands = [c for c in cands if c.id not in gone]
        matrix = np.stack([c.vector for c in cands])
        # einsum, not @: these products are small, and a multi-threaded BLAS call costs more in
        # waking its threads than in arithmetic (tens of ms on a busy machine).
        cosines = np.einsum("ij,j->i", matrix, query_vec)
        restated = _restated(cands, matrix, cosines)
        # Recency is relative to the newest candidate: what matters is which of the competing
        # memories is later, not how long the store sat unused.
        newest = max(c.epoch for c in cands)
        scored = []
        for cand, cosine in zip(cands, cosines, strict=True):
            doc = info.get(cand.id)
            lex = lexical.get(cand.id)
            signals = mk.RankSignals(
                cosine=max(float(cosine), beliefs.get(cand.id, 0.0)),
                lexical=lex.lexical if lex else 0.0,
                age=timedelta(seconds=newest - cand.epoch),
                importance=doc.importance if doc else cand.weight,
                weight=doc.weight if doc else cand.weight,
                contradictions=doc.contradictions if doc else 0,
                superseded=doc.superseded if doc else False,
                restated=cand.id in restated,
                risky=doc.risky if doc else False,
                in_period=any(a.timestamp() <= cand.epoch < b.timestamp() for a, b in periods),
                speaker_match=bool(cand.speaker) and cand.speaker in names,
            )
            scored.append((mk.rank_score(signals), cand.epoch, cand, signals, lex is not None))
        # Best first, the later memory first on a tie; only the k returned become hits.
        scored.sort(key=lambda row: (row[0], row[1]), reverse=True)
        return [
            Hit(
                id=cand.id,
                text=cand.text,
                score=score,
                author=cand.author,
                timestamp=datetime.fromtimestamp(epoch, tz=UTC).isoformat(),
                source="both" if (has_lex and cand.source != "lexical") else cand.source,
                tainted=cand.tainted,
                superseded=signals.superseded,
                contradictions=signals.contradictions,
                risky=signals.risky,
            )
            for score, epoch, cand, signals, has_lex in scored[:k]
        ]

    def get(self, memory_id: str) -> MemoryEntry | None:
        """Return the ledger entry with ``memory_id`` (a full scan; for CLI use)."""
        return next((e for e in self.journal if e.id == memory_id), None)

    def forget(self, memory_id: str, reason: str) -> MemoryEntry:
        """Soft-delete a memory: tombstone + governance events; the ledger line stays intact.

        Kernel entries (the audit trail) cannot be forgotten. The vector is dropped from Chroma,
        so the memory can no longer be retrieved; its text stays in the append-only ledger.
        """
        entry = self.get(memory_id)
        if entry is None:
            raise TierError(f"no memory with id {memory_id}")
        if entry.author == "kernel":
            raise TierError("kernel memories are the audit trail and cannot be forgotten")
        self.tiers.soft_delete(memory_id, reason)
        with FileLock(str(self.index_path) + ".lock"):
            self._open_collection().delete(ids=[memory_id])
        return entry

    def mark_used(self, ids: list[str]) -> None:
        """Strengthen memories that were retrieved and used (lumen spec, memory weights)."""
        self.tiers.mark_used(ids)

    def vector_search(
        self, query: str, k: int = 10, *, authors: tuple[Author, ...] | None = None
    ) -> list[Hit]:
        """Return the plain top-``k`` Chroma matches by cosine similarity (a baseline)."""
        query_vec = self._embed([query])[0]
        collection = self._open_collection()
        total = collection.count()
        if not total or k <= 0:
            return []
        where: Any = {"author": {"$in": list(authors)}} if authors else None
        result = collection.query(
            query_embeddings=[query_vec.tolist()],
            n_results=min(k, total),
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        hits = []
        ids = result["ids"][0]
        docs = (result["documents"] or [[]])[0]
        metas = (result["metadatas"] or [[]])[0]
        dists = (result["distances"] or [[]])[0]
        for mid, doc, meta, dist in zip(ids, docs, metas, dists, strict=True):
            hits.append(
                Hit(
                    id=mid,
                    text=doc or "",
                    score=round(1.0 - float(dist), 6),
                    author=str(meta.get("author", "")) if meta else "",
                    timestamp=str(meta.get("ts", "")) if meta else "",
                    source="semantic",
                    tainted=bool(meta.get("tainted", False)) if meta else False,
                )
            )
        return hits

    # ------------------------------------------------------------------ index

    def sync_index(self) -> int:
        """Index every ledger entry missing from Chroma; returns how many were added."""
        collection = self._open_collection()
        entries = [e for e in self.journal.read().entries if e.author != "kernel"]
        missing: list[MemoryEntry] = []
        for start in range(0, len(entries), 500):
            chunk = entries[start : start + 500]
            present = set(collection.get(ids=[e.id for e in chunk], include=[])["ids"])
            missing.extend(e for e in chunk if e.id not in present)
        forgotten = self.tiers.tombstoned([e.id for e in missing])
        missing = [e for e in missing if e.id not in forgotten]  # forgetting outlives a rebuild
        mirrored = self.tiers.has_docs([e.id for e in entries])
        being_indexed = {e.id for e in missing}
        unmirrored = [e for e in entries if e.id not in mirrored and e.id not in being_indexed]
        with self._index_lock:
            self._index(missing)
            self.tiers.index_docs([_doc_row(e) for e in unmirrored])
        return len(missing)

    def index_count(self) -> int:
        """Return how many entries the vector index holds."""
        return self._open_collection().count()

    def _index(self, entries: list[MemoryEntry]) -> None:
        # Kernel memories are the audit trail, "below consciousness": never retrieved by meaning.
        entries = [e for e in entries if e.author != "kernel"]
        if not entries:
            return
        collection = self._open_collection()
        vectors = self._embed([e.description for e in entries])
        self.tiers.index_docs([_doc_row(e) for e in entries])
        self.tiers.add_speakers(_speaker(e) for e in entries)
        with FileLock(str(self.index_path) + ".lock"):
            for start in range(0, len(entries), 1000):
                chunk = entries[start : start + 1000]
                collection.upsert(
                    ids=[e.id for e in chunk],
                    documents=[e.description for e in chunk],
                    embeddings=[v.tolist() for v in vectors[start : start + 1000]],
                    metadatas=[
                        {
                            "author": e.author,
                            "tainted": e.tainted,
                            "ts": e.timestamp.isoformat(),
                            "epoch": e.timestamp.timestamp(),
                            "weight": e.weight,
                            **({"speaker": _speaker(e)} if _speaker(e) else {}),
                        }
                        for e in chunk
                    ],
                )
        self._remember(
            [
                _Candidate(
                    id=e.id,
                    text=e.description,
                    author=e.author,
                    epoch=e.timestamp.timestamp(),
                    tainted=e.tainted,
                    vector=vec.copy(),  # a row of the batch would pin the whole batch
                    source="semantic",
                    weight=e.weight,
                    speaker=_speaker(e),
                )
                for e, vec in zip(
                    entries[-CANDIDATE_CACHE:], vectors[-CANDIDATE_CACHE:], strict=True
                )
            ]
        )

    def _open_collection(self) -> Collection:
        if self._collection is None:
            import chromadb
            from chromadb.config import Settings

            settings = Settings(anonymized_telemetry=False, allow_reset=False)
            if self.chroma_url:
                from urllib.parse import urlsplit

                from state.errors import LumenError

                url = urlsplit(self.chroma_url)
                try:
                    client: Any = chromadb.HttpClient(
                        host=url.hostname or "127.0.0.1",
                        port=url.port or (443 if url.scheme == "https" else 8000),
                        ssl=url.scheme == "https",
                        settings=settings,
                    )
                except Exception as exc:  # chromadb raises plain exceptions when unreachable
                    raise LumenError(
                        f"cannot reach the Chroma server at {self.chroma_url}: "
                        f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                    ) from None
            else:
                self.index_path.mkdir(parents=True, exist_ok=True)
                client = chromadb.PersistentClient(path=str(self.index_path), settings=settings)
            self._collection = client.get_or_create_collection(
                COLLECTION, embedding_function=None, metadata={"hnsw:space": "cosine"}
            )
        return self._collection


def _parse_timestamp(value: Any) -> datetime:
    """Read an ISO 8601 timestamp with an offset (a ``datetime`` passes through)."""
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(str(value))
    except ValueError as exc:
        raise ValueError(f"timestamp must be ISO 8601 with an offset, not {value!r}") from exc


@dataclass(frozen=True)
class _Candidate:
    """A memory gathered for re-ranking."""

    id: str
    text: str
    author: str
    epoch: float
    tainted: bool
    vector: Any
    source: HitSource
    weight: float = 0.5
    lexical: float = 0.0
    speaker: str = ""  # folded name of who said it ("" if unknown)

    def with_lexical(self, strength: float) -> _Candidate:
        return self.but(lexical=strength)

    def but(self, **changes: Any) -> _Candidate:
        """Return a copy with ``changes`` (``dataclasses.replace`` without its per-field checks).

        A search copies about fifty candidates; ``replace`` re-runs ``__init__`` (2.3 µs, this 0.5).
        """
        copied = object.__new__(_Candidate)
        fields = copied.__dict__
        fields.update(self.__dict__)
        fields.update(changes)
        return copied


def _candidates(
    ids: list[str], result: Any, *, nested: bool, source: HitSource
) -> list[_Candidate]:
    """Turn a Chroma query/get result into candidates."""
    import numpy as np

    def column(name: str) -> list[Any]:
        values = result.get(name)
        if values is None:
            return [None] * len(ids)
        return list(values[0] if nested else values)

    out = []
    for mid, doc, meta, vec in zip(
        ids, column("documents"), column("metadatas"), column("embeddings"), strict=True
    ):
        meta = meta or {}
        out.append(
            _Candidate(
                id=mid,
                text=doc or "",
                author=str(meta.get("author", "")),
                epoch=float(meta.get("epoch", 0.0)),
                tainted=bool(meta.get("tainted", False)),
                vector=np.asarray(vec, dtype=np.float32),
                source=source,
                weight=float(meta.get("weight", 0.5)),
                speaker=str(meta.get("speaker", "")),
            )
        )
    return out


def _restated(cands: list[_Candidate], matrix: Any, cosines: Any) -> set[str]:
    """Return ids of relevant candidates a newer candidate by the same speaker nearly repeats.

    Same author and same speaker (when known): in a chat between two people, one person's line
    is not restated by the other's.
    """
    import numpy as np

    relevant = np.flatnonzero(cosines >= 0.3)
    if len(relevant) > RESTATED_SCOPE:  # the most similar ones; bounds the pairwise product
        relevant = relevant[np.argsort(-cosines[relevant])[:RESTATED_SCOPE]]
    if len(relevant) < 2:
        return set()
    near = matrix[relevant]
    sims = np.einsum("ik,jk->ij", near, near)  # small: no multi-threaded BLAS (see _rank)
    epochs = np.array([cands[i].epoch for i in relevant])
    who = [(cands[i].author, cands[i].speaker) for i in relevant]
    codes = {w: n for n, w in enumerate(dict.fromkeys(who))}
    groups = np.array([codes[w] for w in who])
    later = (
        (sims >= mk.RESTATED_SIMILARITY)
        & (groups[:, None] == groups[None, :])
        & (epochs[None, :] > epochs[:, None])
    )
    return {cands[relevant[a]].id for a in np.flatnonzero(later.any(axis=1))}


def _speaker(entry: MemoryEntry) -> str:
    """Return the folded name of who said ``entry``, or "".

    From its ``speaker`` (``name``, ``sender``) metadata, else, for what someone told Lumen
    (``external``), from a ``"Name: "`` prefix of the text (one or two capitalised words), the
    way chat transcripts are often stored.
    """
    for key in SPEAKER_KEYS:
        name = entry.meta.get(key)
        if isinstance(name, str) and name.strip():
            return fold(name).strip()
    if entry.author != "external":  # "Goal: ..." or "Summary: ..." by Lumen names nobody
        return ""
    prefix = _SPEAKER_PREFIX.match(entry.description)
    return fold(prefix.group(1)) if prefix else ""


_SPEAKER_PREFIX = re.compile(r"^([A-Z][^\W\d_]{1,30}(?: [A-Z][^\W\d_]{1,30})?):\s")


def _lexical_text(entry: MemoryEntry) -> str:
    """Return what the lexical index matches: the text, plus a speaker name it lacks.

    A memory added with ``metadata={"speaker": "Nora"}`` is found by "What did Nora say…"
    even when its text does not name her.
    """
    text = entry.description
    for key in SPEAKER_KEYS:
        name = entry.meta.get(key)
        if isinstance(name, str) and name.strip() and name.casefold() not in text.casefold():
            text = f"{name.strip()}: {text}"
            break
    return text


def _doc_row(entry: MemoryEntry) -> tuple[str, str, str, float, bool, bool, float]:
    """Return the lexical-mirror row of an entry."""
    flags = entry.meta.get("risk_flags") or []
    risky = isinstance(flags, list) and bool(set(flags) & (mk.BLOCKING_RISKS | {"sensitive"}))
    return (
        entry.id,
        _lexical_text(entry),
        entry.author,
        entry.timestamp.timestamp(),
        entry.tainted,
        risky,
        entry.weight,
    )

"""``MemoryStore``: the append-only ledger plus a rebuildable Chroma vector index.

Public API (used by the kernel and by outside benchmarks)::

    from state.memory import MemoryStore
    store = MemoryStore(path)                 # opens or creates a store in a directory
    memory_id = store.add("text", metadata={"author": "self"})
    hits = store.search("query", k=10)        # list[Hit] with .id, .text, .score

The JSONL ledger is the truth; Chroma (under ``<path>/.index`` or ``index_path``) is an index over
it that ``sync_index()`` rebuilds. ``search`` returns the union of the N most recent entries and the
top-K semantic matches, de-duplicated, each scored by cosine similarity to the query.
``kernel``-authored entries (the audit trail, "below consciousness") stay in the ledger but are
never indexed or returned by ``search``.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from filelock import FileLock

from state.embeddings import MiniLMEmbedder
from state.journal import MemoryJournal, ReadReport
from state.records import AUTHORS, Author, MemoryEntry

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

COLLECTION = "memories"
VECTOR_CACHE = 512
RETRIEVABLE: tuple[Author, ...] = ("self", "goal", "external")
"""Authors retrieval returns; ``kernel`` entries are audit records, not experience."""
DEFAULT_RECENT = 5

HitSource = Literal["recent", "semantic", "both"]


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


class MemoryStore:
    """Append-only memory with semantic + recency retrieval."""

    def __init__(self, path: str | Path, *, index_path: str | Path | None = None) -> None:
        """Open or create a store whose ledger lives in ``path``."""
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.index_path = Path(index_path) if index_path else self.path / ".index"
        self.journal = MemoryJournal(self.path)
        self._collection: Collection | None = None
        self._vectors: dict[str, Any] = {}
        self._pending: list[MemoryEntry] = []
        self._index_lock = threading.Lock()

    # ------------------------------------------------------------------ writing

    def add(
        self, text: str, *, metadata: dict[str, Any] | None = None, defer_index: bool = False
    ) -> str:
        """Append a memory and index it; returns its id.

        ``metadata`` may carry ``author`` (default ``external``), ``weight``, ``situation``; any
        other keys are kept in the entry's ``meta``. With ``defer_index`` the entry is in the
        ledger at once and indexed with the next index operation (or ``flush()``).
        """
        entry = self._entry(text, metadata)
        if defer_index:
            self.journal.append(entry)
            self._pending.append(entry)
            return entry.id
        return self.append(entry).id

    def pending(self) -> int:
        """Return how many entries wait for indexing."""
        return len(self._pending)

    def flush(self) -> None:
        """Index the deferred entries in one batch."""
        batch, self._pending = self._pending, []
        with self._index_lock:
            self._index(batch)

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
        return self.journal.new_entry(
            text,
            author=author,
            weight=float(meta.pop("weight", 0.5)),
            situation=str(meta.pop("situation", "")),
            tainted=bool(meta.pop("tainted", False)),
            meta=meta,
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

        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, MiniLMEmbedder.shared().embed(missing), strict=True):
                self._vectors[text] = vector
            if len(self._vectors) > VECTOR_CACHE:
                for stale in list(self._vectors)[: len(self._vectors) - VECTOR_CACHE]:
                    del self._vectors[stale]
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        recent: int = DEFAULT_RECENT,
        authors: tuple[Author, ...] | None = None,
    ) -> list[Hit]:
        """Return the union of the ``recent`` newest and top-``k`` semantic matches, best first."""
        # Deferred entries may not be indexed yet; the recent half of the union still finds them.
        query_vec = self._embed([query])[0]
        hits: dict[str, Hit] = {}
        collection = self._open_collection()
        total = collection.count()
        if total and k > 0:
            where: Any = {"author": {"$in": list(authors)}} if authors else None
            result = collection.query(
                query_embeddings=[query_vec.tolist()],
                n_results=min(k, total),
                where=where,
                include=["documents", "metadatas", "distances"],
            )
            ids = result["ids"][0]
            docs = (result["documents"] or [[]])[0]
            metas = (result["metadatas"] or [[]])[0]
            dists = (result["distances"] or [[]])[0]
            for mid, doc, meta, dist in zip(ids, docs, metas, dists, strict=True):
                hits[mid] = Hit(
                    id=mid,
                    text=doc or "",
                    score=round(1.0 - float(dist), 6),
                    author=str(meta.get("author", "")) if meta else "",
                    timestamp=str(meta.get("ts", "")) if meta else "",
                    source="semantic",
                    tainted=bool(meta.get("tainted", False)) if meta else False,
                )
        readable = authors or RETRIEVABLE
        newest = self.recent(recent, authors=readable) if recent > 0 else []
        if newest:
            vectors = self._embed([e.description for e in newest])
            for entry, vec in zip(newest, vectors, strict=True):
                previous = hits.get(entry.id)
                hits[entry.id] = Hit(
                    id=entry.id,
                    text=entry.description,
                    score=round(float(vec @ query_vec), 6),
                    author=entry.author,
                    timestamp=entry.timestamp.isoformat(),
                    source="both" if previous else "recent",
                    tainted=entry.tainted,
                )
        return sorted(hits.values(), key=lambda h: h.score, reverse=True)

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
        with self._index_lock:
            self._index(missing)
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
                        }
                        for e in chunk
                    ],
                )

    def _open_collection(self) -> Collection:
        if self._collection is None:
            import chromadb
            from chromadb.config import Settings

            self.index_path.mkdir(parents=True, exist_ok=True)
            client = chromadb.PersistentClient(
                path=str(self.index_path),
                settings=Settings(anonymized_telemetry=False, allow_reset=False),
            )
            self._collection = client.get_or_create_collection(
                COLLECTION, embedding_function=None, metadata={"hnsw:space": "cosine"}
            )
        return self._collection

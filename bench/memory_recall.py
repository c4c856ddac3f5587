"""Long-conversation recall for ``bench/memory.py --part dialogue`` (issue 15).

Every turn of the seeded dialogues (``bench/memory_dialogues.py``) is added to one real
``MemoryStore`` per split (Chroma + the offline MiniLM embedder) with ``MemoryStore.add(text,
metadata)`` the way a chat turn is recorded: ``text`` is ``"<speaker>: <utterance>"``, the
metadata carries the session's ``timestamp`` and the ``speaker`` (deferred indexing, one flush
per batch, as the turn graph does). Then every question goes to four retrievers:

* ``lumen``: ``MemoryStore.search(question, k)``, the product's default;
* ``bm25``: rank-bm25 ``BM25Okapi`` over Snowball-stemmed tokens (PyStemmer) of the same texts;
* ``dense``: plain MiniLM nearest neighbours from the same Chroma collection;
* ``rrf``: reciprocal-rank fusion (k=60) of ``bm25`` and ``dense``.

Per question kind and overall it prints recall@5/10/20 (the share of evidence turns in the top k,
averaged over questions), all@10 (every evidence turn in the top 10) and search latency p50/p95.
``dev`` is the split the ranking was tuned on; ``heldout`` (other people, topics, phrasings and
question wordings) never was.
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import memory_convo
import memory_dialogues
from memory_dialogues import Dialogue

from state.memory import MemoryStore

KS = (5, 10, 20)
KINDS = ("single", "multi", "temporal", "open")
RRF_K = 60
BATCH = 256
Retriever = Callable[[str, int], list[str]]


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


TEXT_FORMATS = ("prefixed", "plain", "bare")
"""How a turn is handed to ``add``: ``"Nora: text"``, the text with the speaker only in metadata
(``plain``), or the text alone with no speaker anywhere (``bare``). All are ways chat transcripts
reach a memory store; the baselines index the same text."""
TEXT_FORMAT = "prefixed"
PER_CONVERSATION = False
"""One store per conversation (as a benchmark that resets memory per dialogue) or one for all."""


def turn_text(turn: Any) -> str:
    """Return the text ``add`` gets for a turn under ``TEXT_FORMAT``."""
    return f"{turn.speaker}: {turn.text}" if TEXT_FORMAT == "prefixed" else str(turn.text)


def turn_metadata(turn: Any) -> dict[str, Any]:
    """Return the metadata ``add`` gets for a turn under ``TEXT_FORMAT``."""
    meta: dict[str, Any] = {"timestamp": turn.when.isoformat(), "session": turn.session}
    if TEXT_FORMAT != "bare":
        meta["speaker"] = turn.speaker
    return meta


def build(path: Path, dialogues: list[Dialogue]) -> tuple[dict[str, str], float]:
    """Add every turn to a store at ``path``; return (turn id -> memory id, seconds)."""
    ids: dict[str, str] = {}
    turns = [t for d in dialogues for t in d.turns]
    store = MemoryStore(path)
    started = time.perf_counter()
    for start in range(0, len(turns), BATCH):
        for turn in turns[start : start + BATCH]:
            ids[turn.id] = store.add(
                turn_text(turn),
                metadata=turn_metadata(turn),
                defer_index=True,
            )
        store.flush()
        say(f"  indexed {min(start + BATCH, len(turns))}/{len(turns)}")
    return ids, time.perf_counter() - started


def open_store(
    root: Path, split: str, seed: int, dialogues: list[Dialogue], rebuild: bool
) -> tuple[MemoryStore, dict[str, str], float]:
    """Build the split's store under ``root`` (or reuse a kept one of the same data)."""
    path = root / f"{split}-{seed}-{len(dialogues)}"
    marker = path.with_suffix(".json")
    if not rebuild and marker.is_file() and path.is_dir():
        info = json.loads(marker.read_text("utf-8"))
        say(f"  reusing {path}")
        return MemoryStore(path), info["ids"], float(info["index_s"])
    if path.exists():
        shutil.rmtree(path)
    ids, index_s = build(path, dialogues)
    marker.write_text(json.dumps({"ids": ids, "index_s": index_s}), "utf-8")
    return MemoryStore(path), ids, index_s


class StemmedBM25:
    """The lexical baseline: rank-bm25 over Snowball-stemmed lower-case word tokens."""

    def __init__(self, ids: list[str], texts: list[str]) -> None:
        import Stemmer
        from rank_bm25 import BM25Okapi

        self._stem = Stemmer.Stemmer("english").stemWords
        self.ids = ids
        self.bm25 = BM25Okapi([self.tokens(t) for t in texts])

    def tokens(self, text: str) -> list[str]:
        return list(self._stem(re.findall(r"\w+", text.lower())))

    def __call__(self, query: str, k: int) -> list[str]:
        import numpy as np

        scores = self.bm25.get_scores(self.tokens(query))
        top = np.argsort(-scores)[:k]
        return [self.ids[i] for i in top if scores[i] > 0]


def rrf(*rankings: list[str], k: int = RRF_K) -> list[str]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, mid in enumerate(ranking):
            scores[mid] = scores.get(mid, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores, key=lambda m: -scores[m])


@dataclass
class Row:
    """Figures of one retriever on one split."""

    n: dict[str, int]
    recall: dict[str, dict[int, float]]
    all10: dict[str, float]
    p50: float
    p95: float


Raw = dict[str, tuple[dict[str, list[tuple[float, ...]]], list[float]]]


def measure(
    dialogues: list[Dialogue], ids: dict[str, str], retrievers: dict[str, Retriever]
) -> Raw:
    """Ask every question of every retriever; return per-kind shares and latencies."""
    questions = [q for d in dialogues for q in d.questions]
    k = max(KS)
    for retrieve in retrievers.values():  # warm-up: embedder, HNSW, SQLite pages
        for q in questions[:3]:
            retrieve(q.text, k)
    out: Raw = {}
    for name, retrieve in retrievers.items():
        got: dict[str, list[tuple[float, ...]]] = {kind: [] for kind in (*KINDS, "all")}
        ms = []
        store_cache = getattr(retrieve, "cache", None)
        if store_cache is not None:
            store_cache.clear()  # no retriever gets the embeddings another one computed
        for q in questions:
            started = time.perf_counter()
            top = retrieve(q.text, k)
            ms.append((time.perf_counter() - started) * 1000)
            wanted = {ids[e] for e in q.evidence}
            shares = tuple(len(wanted & set(top[:n])) / len(wanted) for n in KS)
            full = float(wanted <= set(top[:10]))
            got[q.kind].append((*shares, full))
            got["all"].append((*shares, full))
        out[name] = (got, ms)
    return out


def merge(total: Raw, part: Raw) -> Raw:
    """Add one conversation's raw figures to the split's."""
    for name, (got, ms) in part.items():
        acc, acc_ms = total.setdefault(name, ({kind: [] for kind in got}, []))
        for kind, values in got.items():
            acc[kind].extend(values)
        acc_ms.extend(ms)
    return total


def rows(raw: Raw) -> dict[str, Row]:
    """Summarise raw figures per retriever."""
    out = {}
    for name, (got, ms) in raw.items():
        out[name] = Row(
            n={kind: len(v) for kind, v in got.items()},
            recall={
                kind: {n: statistics.fmean(x[i] for x in v) if v else 0.0 for i, n in enumerate(KS)}
                for kind, v in got.items()
            },
            all10={
                kind: statistics.fmean(x[-1] for x in v) if v else 0.0 for kind, v in got.items()
            },
            p50=statistics.median(ms),
            p95=pct(ms, 0.95),
        )
    return out


def evaluate(
    dialogues: list[Dialogue], ids: dict[str, str], retrievers: dict[str, Retriever]
) -> dict[str, Row]:
    """Ask every question of every retriever; return the figures per retriever."""
    return rows(measure(dialogues, ids, retrievers))


def retrievers_for(
    store: MemoryStore, ids: dict[str, str], dialogues: list[Dialogue]
) -> dict[str, Retriever]:
    """The product and the three baselines over the same memories."""
    texts = {ids[t.id]: turn_text(t) for d in dialogues for t in d.turns}
    bm25 = StemmedBM25(list(texts), list(texts.values()))

    def lumen(query: str, k: int) -> list[str]:
        return [h.id for h in store.search(query, k)]

    def dense(query: str, k: int) -> list[str]:
        return [h.id for h in store.vector_search(query, k)]

    def fused(query: str, k: int) -> list[str]:
        return rrf(bm25(query, 50), dense(query, 50))[:k]

    for f in (lumen, dense, fused):
        f.cache = store._vectors  # type: ignore[attr-defined]
    return {"lumen": lumen, "bm25": bm25, "dense": dense, "rrf": fused}


def print_split(split: str, rows: dict[str, Row], turns: int, index_s: float) -> None:
    print(
        f"\n== {split}: {turns} turns, {rows['lumen'].n['all']} questions, "
        f"indexing {index_s * 1000 / turns:.2f} ms/memory =="
    )
    head = " ".join(f"{'r@' + str(n):>6s}" for n in KS)
    print(
        f"{'retriever':10s} {'kind':9s} {'n':>4s} {head} {'all@10':>7s}"
        f" {'p50 ms':>7s} {'p95 ms':>7s}"
    )
    for name, row in rows.items():
        for kind in ("all", *KINDS):
            cells = " ".join(f"{row.recall[kind][n]:6.3f}" for n in KS)
            lat = f"{row.p50:7.1f} {row.p95:7.1f}" if kind == "all" else ""
            print(f"{name:10s} {kind:9s} {row.n[kind]:4d} {cells} {row.all10[kind]:7.3f} {lat}")


GENERATORS = {"convo": memory_convo.generate, "templates": memory_dialogues.generate}
"""``convo``: long realistic conversations (the default); ``templates``: the first round's set."""


def run(
    splits: Sequence[str],
    seed: int,
    dialogues: int,
    root: Path,
    rebuild: bool,
    data_set: str = "convo",
) -> dict[str, Any]:
    """Evaluate each split; print its table and return the figures."""
    report: dict[str, Any] = {}
    for split in splits:
        data = GENERATORS[data_set](split, seed, dialogues)
        say(f"{split}: building the store")
        name = f"{data_set}-{split}" + ("" if TEXT_FORMAT == "prefixed" else f"-{TEXT_FORMAT}")
        if PER_CONVERSATION:
            raw: Raw = {}
            index_s = 0.0
            for n, dia in enumerate(data):
                store, ids, spent = open_store(root, f"{name}-c{n}", seed, [dia], rebuild)
                index_s += spent
                merge(raw, measure([dia], ids, retrievers_for(store, ids, [dia])))
            table = rows(raw)
        else:
            store, ids, index_s = open_store(root, name, seed, data, rebuild)
            table = evaluate(data, ids, retrievers_for(store, ids, data))
        turns = sum(len(d.turns) for d in data)
        print_split(split, table, turns, index_s)
        report[split] = {
            "turns": turns,
            "index_ms_per_memory": round(index_s * 1000 / turns, 3),
            "retrievers": {
                name: {
                    "n": row.n,
                    "recall": {
                        kind: {str(n): round(v, 4) for n, v in r.items()}
                        for kind, r in row.recall.items()
                    },
                    "all@10": {kind: round(v, 4) for kind, v in row.all10.items()},
                    "p50_ms": round(row.p50, 2),
                    "p95_ms": round(row.p95, 2),
                }
                for name, row in table.items()
            },
        }
    return report

"""Memory benchmark: index and query cost at 1k-100k memories, and retrieval quality.

Run: ``uv run python bench/memory.py [--sizes 1000,10000,100000] [--queries 200] [--keep DIR]``.

1. Scale: for each size, a store of synthetic template memories (many vocabularies, numbers and
   names, timestamps over ~2 years) is built with deferred indexing (flush every
   ``--flush-every`` adds, default 500). Prints the index time (add + flush, total and per
   memory), the median and p95 latency of ``search(q, k=10)`` and, interleaved in the same loop,
   of the plain ``vector_search(q, k=10)`` baseline, their ratio, and the store's size on disk.
   Each call gets its own distinct query (the store caches query embeddings, so reusing one
   query would hand the second call a free embedding); the call order alternates per round.
   Goal: ``search`` p95 <= 50 ms at 100k. ``--keep DIR`` keeps built stores for later runs.
2. Quality: a seeded ~60-day chat (``bench/memory_data.py``) with planted user facts, later
   corrections of a third of them, near-miss lines about other people and chit-chat. One
   question per fact; the relevant memory is the current statement (the correction if any).
   Prints recall@5, recall@10, MRR@10 and, for corrected facts, the stale-above-current rate
   for ``search``, ``vector_search`` and plain recency, overall and by corrected / uncorrected.

All figures go to ``bench/out/memory.json``. Build progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import memory_recall
from memory_data import Conversation, Memory, conversation, scale_corpus, scale_queries

from state.memory import MemoryStore

DEFAULT_JSON = Path(__file__).resolve().parent / "out" / "memory.json"
TOP_K = 10
WARMUP_QUERIES = 4
GOAL_SIZE = 100_000
GOAL_P95_MS = 50.0
MB = 1024 * 1024
FLUSH_EVERY = 500
"""Adds per flush, each batch through a fresh ``MemoryStore`` handle.

``MemoryStore._embed`` keeps a 512-text FIFO cache and trims it before reading the batch back, so a
flush whose batch has more than 512 new texts, or repeats a text the handle already cached, raises
``KeyError``. A fresh handle per batch of at most 512 texts avoids both.
"""

T = TypeVar("T")


# ------------------------------------------------------------------------------------ helpers


def pct(values: Sequence[float], q: float) -> float:
    """Return the q-quantile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Yield consecutive lists of at most ``size`` items."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def say(message: str) -> None:
    """Print progress to stderr so stdout stays a clean report."""
    print(message, file=sys.stderr, flush=True)


def add_memory(store: MemoryStore, text: str, author: str, timestamp: datetime) -> str:
    """Append one memory for batch indexing at the next flush; return its id."""
    metadata = {"author": author, "timestamp": timestamp.isoformat()}
    return store.add(text, metadata=metadata, defer_index=True)


def disk_bytes(path: Path) -> tuple[int, int]:
    """Return (allocated bytes, like ``du``; apparent bytes) of every file under ``path``."""
    allocated = apparent = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            info = (Path(root) / name).stat()
            allocated += info.st_blocks * 512
            apparent += info.st_size
    return allocated, apparent


# -------------------------------------------------------------------------------------- scale


@dataclass
class ScaleResult:
    """Figures for one store size."""

    size: int
    reused_store: bool
    index_s: float
    index_ms_per_memory: float
    queries: int
    search_ms_median: float
    search_ms_p95: float
    vector_ms_median: float
    vector_ms_p95: float
    ratio_median: float
    ratio_p95: float
    search_hits_mean: float
    vector_hits_mean: float
    disk_mb: float
    disk_apparent_mb: float
    load_1m: float


def build_store(path: Path, size: int, seed: int, flush_every: int) -> float:
    """Fill a new store with ``size`` synthetic memories; return seconds spent in add + flush."""
    spent = 0.0
    done = 0
    for batch in chunked(scale_corpus(size, seed), flush_every):
        spent += add_and_flush(MemoryStore(path), batch)
        done += len(batch)
        left = spent / done * (size - done)
        say(f"  n={size}: {done}/{size} indexed, {spent:6.1f} s, ~{left:5.0f} s left")
    return spent


def add_and_flush(store: MemoryStore, batch: list[Memory]) -> float:
    """Add a batch with deferred indexing, flush it, and return the seconds taken."""
    started = time.perf_counter()
    for memory in batch:
        add_memory(store, memory.text, memory.author, memory.timestamp)
    store.flush()
    return time.perf_counter() - started


def kept_store_matches(path: Path, marker: Path, size: int, seed: int) -> float | None:
    """Return the recorded index time if a kept store holds exactly this size and seed."""
    if not (marker.is_file() and path.is_dir()):
        return None
    info = json.loads(marker.read_text(encoding="utf-8"))
    if info.get("size") != size or info.get("seed") != seed:
        return None
    if MemoryStore(path).index_count() != size:
        return None
    return float(info["index_s"])


def prepare_store(root: Path, size: int, seed: int, flush_every: int) -> tuple[Path, float, bool]:
    """Return (store path, index seconds, reused) for ``size``; build under ``root`` if needed."""
    path = root / f"n{size}"
    marker = root / f"n{size}.json"
    recorded = kept_store_matches(path, marker, size, seed)
    if recorded is not None:
        say(f"  n={size}: reusing {path}")
        return path, recorded, True
    if path.exists():
        shutil.rmtree(path)
    marker.unlink(missing_ok=True)
    index_s = build_store(path, size, seed, flush_every)
    marker.write_text(json.dumps({"size": size, "seed": seed, "index_s": index_s}), "utf-8")
    return path, index_s, False


def timed(call: Callable[[], list[Any]]) -> tuple[float, int]:
    """Run ``call``; return (milliseconds, number of hits)."""
    started = time.perf_counter()
    hits = call()
    return (time.perf_counter() - started) * 1000, len(hits)


@dataclass
class Latencies:
    """Per-call latencies and hit counts of the two rankers."""

    search_ms: list[float]
    vector_ms: list[float]
    search_hits: list[int]
    vector_hits: list[int]


def measure_latency(store: MemoryStore, queries: list[str]) -> Latencies:
    """Time ``search`` and ``vector_search`` interleaved, each on its own distinct queries."""
    for query in queries[:WARMUP_QUERIES]:  # first-use costs: embedder, Chroma, HNSW load
        store.search(query, k=TOP_K)
        store.vector_search(query, k=TOP_K)
    measured = queries[WARMUP_QUERIES:]
    ms: dict[str, list[float]] = {"search": [], "vector": []}
    hits: dict[str, list[int]] = {"search": [], "vector": []}
    pairs = zip(measured[0::2], measured[1::2], strict=True)
    for round_no, (for_search, for_vector) in enumerate(pairs):
        calls = {
            "search": partial(store.search, for_search, k=TOP_K),
            "vector": partial(store.vector_search, for_vector, k=TOP_K),
        }
        for name in ("search", "vector") if round_no % 2 == 0 else ("vector", "search"):
            elapsed, count = timed(calls[name])
            ms[name].append(elapsed)
            hits[name].append(count)
    return Latencies(ms["search"], ms["vector"], hits["search"], hits["vector"])


def scale_one(root: Path, size: int, args: argparse.Namespace) -> ScaleResult:
    """Build (or reuse) one store and measure it."""
    path, index_s, reused = prepare_store(root, size, args.seed, args.flush_every)
    store = MemoryStore(path)
    queries = scale_queries(2 * args.queries + WARMUP_QUERIES, args.seed + size)
    lat = measure_latency(store, queries)
    allocated, apparent = disk_bytes(path)
    s_med, v_med = statistics.median(lat.search_ms), statistics.median(lat.vector_ms)
    s_p95, v_p95 = pct(lat.search_ms, 0.95), pct(lat.vector_ms, 0.95)
    return ScaleResult(
        size=size,
        reused_store=reused,
        index_s=round(index_s, 2),
        index_ms_per_memory=round(index_s * 1000 / size, 3),
        queries=args.queries,
        search_ms_median=round(s_med, 2),
        search_ms_p95=round(s_p95, 2),
        vector_ms_median=round(v_med, 2),
        vector_ms_p95=round(v_p95, 2),
        ratio_median=round(s_med / v_med, 2),
        ratio_p95=round(s_p95 / v_p95, 2),
        search_hits_mean=round(statistics.mean(lat.search_hits), 2),
        vector_hits_mean=round(statistics.mean(lat.vector_hits), 2),
        disk_mb=round(allocated / MB, 1),
        disk_apparent_mb=round(apparent / MB, 1),
        load_1m=round(os.getloadavg()[0], 2),
    )


def print_scale_header(queries: int) -> None:
    """Print the scale table's title and column names."""
    print(f"== scale: {queries} queries per ranker, k={TOP_K}, interleaved (ms) ==")
    print(
        f"{'size':>7s} {'index s':>8s} {'ms/mem':>7s} {'search med':>10s} {'p95':>7s} "
        f"{'vector med':>10s} {'p95':>7s} {'ratio med':>9s} {'p95':>5s} {'hits s/v':>9s} "
        f"{'disk MB':>8s} {'load':>5s}"
    )
    print("(load = 1-minute load average after the size's queries; the machine is shared)")


def print_scale_row(r: ScaleResult) -> None:
    """Print one size's figures."""
    cached = " (kept store; index time from its build)" if r.reused_store else ""
    print(
        f"{r.size:7d} {r.index_s:8.1f} {r.index_ms_per_memory:7.2f} {r.search_ms_median:10.1f} "
        f"{r.search_ms_p95:7.1f} {r.vector_ms_median:10.1f} {r.vector_ms_p95:7.1f} "
        f"{r.ratio_median:9.2f} {r.ratio_p95:5.2f} "
        f"{r.search_hits_mean:4.1f}/{r.vector_hits_mean:<4.1f} {r.disk_mb:8.1f} {r.load_1m:5.2f}"
        f"{cached}",
        flush=True,
    )


def print_goal(results: list[ScaleResult]) -> None:
    """Report ``search`` p95 at 100k against the goal."""
    at_goal = [r for r in results if r.size == GOAL_SIZE]
    if not at_goal:
        print(f"goal: search p95 <= {GOAL_P95_MS:.0f} ms at {GOAL_SIZE:,}: not measured this run")
        return
    p95 = at_goal[0].search_ms_p95
    verdict = "met" if p95 <= GOAL_P95_MS else "MISSED"
    print(f"goal: search p95 <= {GOAL_P95_MS:.0f} ms at {GOAL_SIZE:,}: {p95:.1f} ms -> {verdict}")


def run_scale(args: argparse.Namespace) -> list[ScaleResult]:
    """Measure every requested size, printing a row as each finishes."""
    print_scale_header(args.queries)
    results = []
    for size in args.sizes:
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            result = scale_one(args.keep, size, args)
        else:
            with tempfile.TemporaryDirectory(prefix="lumen-bench-memory-") as tmp:
                result = scale_one(Path(tmp), size, args)
        print_scale_row(result)
        results.append(result)
    print_goal(results)
    return results


# ------------------------------------------------------------------------------------ quality

Ranker = Callable[[MemoryStore, str, int], list[str]]


def rank_search(store: MemoryStore, query: str, k: int) -> list[str]:
    """The product's full ranking, cut to the top k."""
    return [hit.id for hit in store.search(query, k=k)][:k]


def rank_vector(store: MemoryStore, query: str, k: int) -> list[str]:
    """Plain top-k cosine from the vector index."""
    return [hit.id for hit in store.vector_search(query, k=k)][:k]


def rank_recency(store: MemoryStore, query: str, k: int) -> list[str]:
    """The k newest memories, whatever the question."""
    return [entry.id for entry in store.recent(k)][:k]


RANKERS: dict[str, Ranker] = {
    "search": rank_search,
    "vector_search": rank_vector,
    "recency": rank_recency,
}
GROUPS = ("all", "corrected", "uncorrected")


@dataclass
class Outcome:
    """Where one ranker put one question's current (and superseded) statement; 1-based."""

    key: str
    question: str
    corrected: bool
    ranker: str
    current_rank: int | None
    stale_rank: int | None


def rank_of(ids: list[str], target: str | None) -> int | None:
    """Return the 1-based position of ``target`` in ``ids``, or None."""
    return ids.index(target) + 1 if target is not None and target in ids else None


def stale_above_current(outcome: Outcome) -> bool:
    """True if the superseded statement outranks the current one (or only it is in the top k)."""
    if outcome.stale_rank is None:
        return False
    return outcome.current_rank is None or outcome.stale_rank < outcome.current_rank


def load_conversation(path: Path, chat: Conversation, flush_every: int) -> dict[str, str]:
    """Add the conversation to a new store; return the memory id of each fact/fix line."""
    ids: dict[str, str] = {}
    for batch in chunked(chat.lines, flush_every):
        store = MemoryStore(path)  # fresh handle per batch, see FLUSH_EVERY
        for line in batch:
            memory_id = add_memory(store, line.text, line.author, line.timestamp)
            if line.tag.startswith(("fact:", "fix:")):
                ids[line.tag] = memory_id
        store.flush()
    return ids


def evaluate(store: MemoryStore, chat: Conversation, ids: dict[str, str]) -> list[Outcome]:
    """Ask every question of every ranker."""
    outcomes = []
    for probe in chat.probes:
        stale_id = ids[probe.stale_tag] if probe.stale_tag else None
        for name, ranker in RANKERS.items():
            top = ranker(store, probe.question, TOP_K)
            outcomes.append(
                Outcome(
                    key=probe.key,
                    question=probe.question,
                    corrected=probe.stale_tag is not None,
                    ranker=name,
                    current_rank=rank_of(top, ids[probe.current_tag]),
                    stale_rank=rank_of(top, stale_id),
                )
            )
    return outcomes


def in_group(outcome: Outcome, group: str) -> bool:
    """Whether an outcome belongs to ``all``, ``corrected`` or ``uncorrected``."""
    return group == "all" or outcome.corrected == (group == "corrected")


def summarise(outcomes: list[Outcome]) -> dict[str, Any]:
    """Recall@5, recall@10, MRR@10 and (for corrected facts) the stale-above-current rate."""
    n = len(outcomes)
    ranks = [o.current_rank for o in outcomes]
    corrected = [o for o in outcomes if o.corrected]
    return {
        "n": n,
        "recall@5": round(sum(r is not None and r <= 5 for r in ranks) / n, 3) if n else None,
        "recall@10": round(sum(r is not None for r in ranks) / n, 3) if n else None,
        "mrr@10": round(sum(1 / r for r in ranks if r) / n, 3) if n else None,
        "stale_above_current": (
            round(sum(map(stale_above_current, corrected)) / len(corrected), 3)
            if corrected
            else None
        ),
    }


def summary_table(outcomes: list[Outcome]) -> dict[str, dict[str, dict[str, Any]]]:
    """Summaries per ranker and group."""
    return {
        ranker: {
            group: summarise([o for o in outcomes if o.ranker == ranker and in_group(o, group)])
            for group in GROUPS
        }
        for ranker in RANKERS
    }


def fmt(value: float | None, width: int) -> str:
    """Format a rate, or a dash when it does not apply."""
    return f"{value:{width}.3f}" if value is not None else f"{'-':>{width}s}"


def print_quality(chat_stats: dict[str, Any], table: dict[str, dict[str, dict[str, Any]]]) -> None:
    """Print the conversation's shape and the per-ranker table."""
    s = chat_stats
    print(
        f"\n== quality: {s['facts']} planted facts ({s['corrected']} corrected), "
        f"{s['memories']} memories ({s['user']} user / {s['agent']} agent, "
        f"{s['near_miss']} near-miss) in {s['sessions']} sessions over {s['days']} days =="
    )
    print(
        f"{'ranker':14s} {'facts':12s} {'n':>3s} {'R@5':>6s} {'R@10':>6s} {'MRR@10':>7s} "
        f"{'stale>current':>13s}"
    )
    for ranker, groups in table.items():
        for group, m in groups.items():
            print(
                f"{ranker:14s} {group:12s} {m['n']:3d} {fmt(m['recall@5'], 6)} "
                f"{fmt(m['recall@10'], 6)} {fmt(m['mrr@10'], 7)} "
                f"{fmt(m['stale_above_current'], 13)}"
            )
    print("(stale>current: corrected facts whose superseded line ranks above the current one,")
    print(" or is in the top 10 while the current one is not)")


def print_probes(outcomes: list[Outcome]) -> None:
    """Print each question's rank per ranker as current/stale ('-' = not in top 10)."""
    print(f"\n{'fact':11s} {'fix':3s} " + " ".join(f"{name:>13s}" for name in RANKERS))
    by_key: dict[str, dict[str, Outcome]] = {}
    for o in outcomes:
        by_key.setdefault(o.key, {})[o.ranker] = o
    for key, per_ranker in by_key.items():
        first = next(iter(per_ranker.values()))
        cells = []
        for name in RANKERS:
            o = per_ranker[name]
            cur = str(o.current_rank or "-")
            cells.append(f"{cur}/{o.stale_rank or '-'}" if o.corrected else cur)
        print(
            f"{key:11s} {'yes' if first.corrected else '':3s} "
            + " ".join(f"{c:>13s}" for c in cells)
            + f"  {first.question}"
        )


def conversation_stats(chat: Conversation) -> dict[str, Any]:
    """Counts describing the generated conversation."""
    authors = Counter(line.author for line in chat.lines)
    kinds = Counter(line.tag.split(":")[0] for line in chat.lines if line.tag)
    return {
        "memories": len(chat.lines),
        "user": authors["external"],
        "agent": authors["self"],
        "facts": len(chat.probes),
        "corrected": sum(p.stale_tag is not None for p in chat.probes),
        "near_miss": kinds["other"],
        "sessions": chat.sessions,
        "days": chat.days,
        "first": chat.lines[0].timestamp.isoformat(),
        "last": chat.lines[-1].timestamp.isoformat(),
    }


def run_quality(args: argparse.Namespace) -> dict[str, Any]:
    """Build the conversation store, ask every question, print and return the figures."""
    chat = conversation(args.seed)
    stats = conversation_stats(chat)
    with tempfile.TemporaryDirectory(prefix="lumen-bench-quality-") as tmp:
        say(f"quality: indexing {stats['memories']} conversation memories")
        ids = load_conversation(Path(tmp) / "store", chat, args.flush_every)
        outcomes = evaluate(MemoryStore(Path(tmp) / "store"), chat, ids)
    table = summary_table(outcomes)
    print_quality(stats, table)
    if args.verbose:
        print_probes(outcomes)
    return {
        "conversation": stats,
        "summary": table,
        "outcomes": [asdict(o) for o in outcomes],
    }


# --------------------------------------------------------------------------------------- main


def parse_sizes(text: str) -> list[int]:
    """Parse ``1000,10000`` into sizes."""
    sizes = [int(part) for part in text.split(",") if part.strip()]
    if not sizes or min(sizes) <= 0:
        raise argparse.ArgumentTypeError("sizes must be positive integers")
    return sizes


def parse_args() -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=parse_sizes, default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200, help="measured queries per ranker")
    parser.add_argument(
        "--keep",
        type=Path,
        help="build stores here and reuse them next time (delete it after a store format change)",
    )
    parser.add_argument(
        "--flush-every",
        type=int,
        default=FLUSH_EVERY,
        help="adds per flush (<= 512, see FLUSH_EVERY)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--part", choices=("all", "dialogue", "scale", "quality"), default="dialogue"
    )
    parser.add_argument(
        "--splits", default="dev,heldout", help="dialogue splits (dev is the one tuned on)"
    )
    parser.add_argument("--dialogues", type=int, default=10, help="conversations per split")
    parser.add_argument(
        "--data",
        choices=tuple(memory_recall.GENERATORS),
        default="convo",
        help="dialogue set: convo (long realistic conversations) or templates (first round)",
    )
    parser.add_argument(
        "--rebuild", action="store_true", help="rebuild kept dialogue stores (--keep)"
    )
    parser.add_argument(
        "--text",
        choices=memory_recall.TEXT_FORMATS,
        default="prefixed",
        help="dialogue turns as 'Name: text' (prefixed) or bare text with the speaker in metadata",
    )
    parser.add_argument(
        "--per-conversation",
        action="store_true",
        help="one store per conversation instead of one store for the whole split",
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("-v", "--verbose", action="store_true", help="per-question ranks")
    return parser.parse_args()


def write_json(path: Path, report: dict[str, Any]) -> None:
    """Write the report (creating the directory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {path}")


def main() -> None:
    """Run the requested parts and write the JSON report."""
    args = parse_args()
    settings = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    report: dict[str, Any] = {"started": datetime.now(UTC).isoformat(), "args": settings}
    if args.part in ("all", "dialogue"):
        memory_recall.TEXT_FORMAT = args.text
        memory_recall.PER_CONVERSATION = args.per_conversation
        root = args.keep or Path(tempfile.mkdtemp(prefix="lumen-bench-dialogue-"))
        try:
            report["dialogue"] = memory_recall.run(
                args.splits.split(","), args.seed, args.dialogues, root, args.rebuild, args.data
            )
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
    if args.part in ("all", "scale"):
        report["scale"] = [asdict(r) for r in run_scale(args)]
    if args.part in ("all", "quality"):
        report["quality"] = run_quality(args)
    write_json(args.json, report)


if __name__ == "__main__":
    main()

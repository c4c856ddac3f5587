"""Per-question diagnosis of ``MemoryStore.search`` on a kept dialogue store (dev only).

Run: ``uv run --group bench python bench/memory_diagnose.py --keep DIR [--data convo]`` after
``bench/memory.py --part dialogue --splits dev --keep DIR``. For every dev question it finds the
best rank of an evidence turn under Lumen's own lexical channel alone (FTS5 stemmed BM25), under
dense alone and under the fused ``search``; it counts the questions each one wins, and for the
questions the lexical channel gets right and ``search`` misses it prints what outranks the
evidence with the ranking signals of both. The held-out split is never read here.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import memory_recall

from kernel import memory as mk
from state import memory as sm
from state.memory import MemoryStore


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, required=True)
    parser.add_argument("--data", default="convo")
    parser.add_argument("--text", choices=memory_recall.TEXT_FORMATS, default="prefixed")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dialogues", type=int, default=10)
    parser.add_argument("--show", type=int, default=12)
    parser.add_argument("--kind", default="", help="show every miss of this question kind")
    args = parser.parse_args()
    data = memory_recall.GENERATORS[args.data]("dev", args.seed, args.dialogues)
    memory_recall.TEXT_FORMAT = args.text
    plain = "" if args.text == "prefixed" else f"-{args.text}"
    path = args.keep / f"{args.data}-dev{plain}-{args.seed}-{args.dialogues}"
    ids = json.loads(path.with_suffix(".json").read_text("utf-8"))["ids"]
    text = {ids[t.id]: memory_recall.turn_text(t) for d in data for t in d.turns}
    store = MemoryStore(path)
    seen: dict[str, mk.RankSignals] = {}
    last: list[mk.RankSignals] = []
    original = mk.rank_score
    real_hit = sm.Hit

    def spy(signals: mk.RankSignals) -> float:
        last[:] = [signals]
        return original(signals)

    def hit(**kw: object) -> sm.Hit:
        seen[str(kw["id"])] = last[0]
        return real_hit(**kw)  # type: ignore[arg-type]

    def sig(mid: str) -> str:
        s = seen.get(mid)
        if s is None:
            return "(not a candidate)"
        return (
            f"cos={s.cosine:.2f} lex={s.lexical:.2f} rel={mk.fused_relevance(s):.3f}"
            f" factor={mk.rank_factor(s):.2f} sup={s.superseded} contra={s.contradictions}"
            f" restated={s.restated}"
        )

    def best(top: list[str], wanted: set[str]) -> int:
        ranks = [i + 1 for i, m in enumerate(top) if m in wanted]
        return min(ranks) if ranks else 999

    tally: Counter[str] = Counter()
    shown = 0
    for q in (q for d in data for q in d.questions):
        wanted = {ids[e] for e in q.evidence}
        lex = [m for m, _ in store.tiers.lexical(q.text, 20)]
        dense = [h.id for h in store.vector_search(q.text, 20)]
        seen.clear()
        mk.rank_score = spy  # type: ignore[assignment]
        sm.Hit = hit  # type: ignore[assignment,misc]
        hits = store.search(q.text, 20)
        mk.rank_score = original  # type: ignore[assignment]
        sm.Hit = real_hit  # type: ignore[misc]
        fused = [h.id for h in hits]
        r_lex, r_dense, r_fused = best(lex, wanted), best(dense, wanted), best(fused, wanted)
        tally[f"{q.kind} lex<=10"] += r_lex <= 10
        tally[f"{q.kind} dense<=10"] += r_dense <= 10
        tally[f"{q.kind} fused<=10"] += r_fused <= 10
        tally[f"{q.kind} lost(lex in, fused out)"] += r_lex <= 10 < r_fused
        tally[f"{q.kind} won(lex out, fused in)"] += r_fused <= 10 < r_lex
        missed = r_fused > 10 and q.kind == args.kind if args.kind else r_lex <= 10 < r_fused
        if missed and shown < args.show:
            shown += 1
            print(f"\n[{q.kind}] {q.text}  lex={r_lex} dense={r_dense} fused={r_fused}")
            for mid in q.evidence:
                print(f"   evidence: {sig(ids[mid])} {text[ids[mid]][:100]}")
            for h in hits[:3]:
                print(f"   above {h.score:.3f} {sig(h.id)}: {h.text[:80]}")
    for key in sorted(tally):
        print(f"{key:40s} {tally[key]}")


if __name__ == "__main__":
    main()

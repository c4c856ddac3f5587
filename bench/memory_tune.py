"""Grid over the fusion weights on the dev split only (issue 15).

Run: ``uv run python bench/memory_tune.py --keep DIR``.

Uses a store kept by ``bench/memory.py --part dialogue --keep DIR`` and prints recall@10 per
question kind for each setting of ``kernel.memory.LEXICAL_WEIGHT`` / ``SEMANTIC_WEIGHT``. The
held-out split is never read here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import memory_recall
from memory_dialogues import generate

from kernel import memory as mk
from state import memory as sm
from state.memory import MemoryStore


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dialogues", type=int, default=10)
    parser.add_argument("--lexical", default="0.3,0.45,0.55,0.65,0.8")
    parser.add_argument("--pool", default="40")
    args = parser.parse_args()
    data = generate("dev", args.seed, args.dialogues)
    path = args.keep / f"dev-{args.seed}-{args.dialogues}"
    ids = json.loads(path.with_suffix(".json").read_text("utf-8"))["ids"]
    store = MemoryStore(path)

    def lumen(query: str, k: int) -> list[str]:
        return [h.id for h in store.search(query, k)]

    for pool in (int(p) for p in args.pool.split(",")):
        sm.VECTOR_POOL = sm.LEXICAL_POOL = pool
        for lex in (float(x) for x in args.lexical.split(",")):
            mk.LEXICAL_WEIGHT, mk.SEMANTIC_WEIGHT = lex, 1.0 - lex
            row = memory_recall.evaluate(data, ids, {"lumen": lumen})["lumen"]
            cells = " ".join(
                f"{kind}={row.recall[kind][10]:.3f}" for kind in ("all", *memory_recall.KINDS)
            )
            r5, r20 = row.recall["all"][5], row.recall["all"][20]
            print(
                f"pool={pool} lexical={lex:.2f}  {cells}  r@5={r5:.3f} r@20={r20:.3f}"
                f" p95={row.p95:.0f}ms",
                flush=True,
            )


if __name__ == "__main__":
    main()

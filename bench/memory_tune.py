"""Grid over ranking constants on the dev split only (issue 15).

Run: ``uv run --group bench python bench/memory_tune.py --keep DIR [--data convo]
--grid "mk.LEXICAL_WEIGHT=0.4,0.6;sm.LEXICAL_POOL=40"`` after ``bench/memory.py --part dialogue
--splits dev --keep DIR``. ``mk.`` names ``kernel.memory``, ``sm.`` names ``state.memory``;
``mk.LEXICAL_WEIGHT`` also sets ``SEMANTIC_WEIGHT`` to one minus it. Prints recall@10 per question
kind for every combination. The held-out split is never read here.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import memory_recall

from kernel import memory as mk
from state import memory as sm
from state.memory import MemoryStore

MODULES = {"mk": mk, "sm": sm}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, required=True)
    parser.add_argument("--data", default="convo")
    parser.add_argument("--text", choices=memory_recall.TEXT_FORMATS, default="prefixed")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dialogues", type=int, default=10)
    parser.add_argument("--grid", default="mk.LEXICAL_WEIGHT=0.4,0.6")
    args = parser.parse_args()
    data = memory_recall.GENERATORS[args.data]("dev", args.seed, args.dialogues)
    memory_recall.TEXT_FORMAT = args.text
    plain = "" if args.text == "prefixed" else f"-{args.text}"
    path = args.keep / f"{args.data}-dev{plain}-{args.seed}-{args.dialogues}"
    ids = json.loads(path.with_suffix(".json").read_text("utf-8"))["ids"]
    store = MemoryStore(path)

    def lumen(query: str, k: int) -> list[str]:
        return [h.id for h in store.search(query, k)]

    axes = []
    for part in args.grid.split(";"):
        name, values = part.split("=")
        axes.append([(name.strip(), float(v)) for v in values.split(",")])
    for combo in itertools.product(*axes):
        for name, value in combo:
            module, attr = name.split(".")
            cast = type(getattr(MODULES[module], attr))
            setattr(MODULES[module], attr, cast(value))
            if name == "mk.LEXICAL_WEIGHT":
                mk.SEMANTIC_WEIGHT = 1.0 - value
        row = memory_recall.evaluate(data, ids, {"lumen": lumen})["lumen"]
        cells = " ".join(
            f"{kind}={row.recall[kind][10]:.3f}" for kind in ("all", *memory_recall.KINDS)
        )
        setting = " ".join(f"{n.split('.')[1]}={v:g}" for n, v in combo)
        r5, r20 = row.recall["all"][5], row.recall["all"][20]
        print(f"{setting}  {cells}  r@5={r5:.3f} r@20={r20:.3f} p95={row.p95:.0f}ms", flush=True)


if __name__ == "__main__":
    main()

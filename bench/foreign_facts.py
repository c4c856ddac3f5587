"""Facts and recall questions in five more languages, on four sets written blind by helpers.

Run: ``uv run python bench/foreign_facts.py [-v]``.

Each set (``bench/foreign_facts_set{1..4}.jsonl``) was written by a helper that saw neither the
code nor the sets before it, in Spanish, Portuguese, French, German and Italian: statements
(``facts``: every slot the message asserts about its speaker, exactly) and questions (``asks``:
the slot a question about the user asks, or null). Each set was first run on code that had not
seen it; the figures of those first runs are in the README. The code was then changed on what
each set showed, so the figures printed here are development figures, not held-out ones.
A statement counts when the facts read are exactly the expected ones (value case aside); a
question when the first slot asked and whether it is a recall question both match.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.facts import asked_slots, extract_facts, recall_question

SETS = [Path(__file__).with_name(f"foreign_facts_set{i}.jsonl") for i in range(1, 5)]


def score(path: Path, verbose: bool) -> tuple[int, int, int, int]:
    """Return (statements right, statements, questions right, questions) for one set."""
    counts = defaultdict(int)
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["kind"] == "statement":
            got = {f.slot_key: f.value.casefold() for f in extract_facts(row["text"])}
            ok = got == {k: v.casefold() for k, v in row["facts"].items()}
            counts["s"] += 1
            counts["s_ok"] += ok
            if verbose and not ok:
                print(f"  statement {row['lang']}: {row['text']!r} want {row['facts']} got {got}")
        else:
            slots = asked_slots(row["text"])
            first = slots[0] if slots else None
            ok = first == row["asks"] and recall_question(row["text"]) == (row["asks"] is not None)
            counts["q"] += 1
            counts["q_ok"] += ok
            if verbose and not ok:
                print(f"  question {row['lang']}: {row['text']!r} want {row['asks']} got {first}")
    return counts["s_ok"], counts["s"], counts["q_ok"], counts["q"]


def main() -> None:
    """Print each set's statement and question figures."""
    verbose = "-v" in sys.argv
    for path in SETS:
        s_ok, s, q_ok, q = score(path, verbose)
        print(f"{path.name}: statements {s_ok}/{s}, questions {q_ok}/{q}")


if __name__ == "__main__":
    main()

"""Drafts that answer nothing: how many ``skai.non_answer`` catches, and its false alarms.

Run: ``uv run python bench/non_answer.py [--show]``.

A small model often hands the question back ("How does photosynthesis work, exactly?"), tells the
user to do what they asked for, or declines a harmless request ("I'm sorry, but I can't assist
with that."). Λ selection sets the first two aside and asks for one re-draft with guidance that
names what went wrong; a refusal is only re-drafted when it also misses the message, with leave
to decline (``nodes.turn.deliberate.lambda_select``). A false alarm costs a model call and may
replace a thin but real answer, so false alarms matter more than misses.

Each set was written blind, by a writer who had not read the detector, as replies of weak chat
models with a label (``refusal``, ``asked back`` or ``""`` for an answer), most answers being
hard cases (a limitation then help, a referral beside facts, a clarifying question):

* ``non_answer_dev1.jsonl``, ``non_answer_dev2.jsonl``, ``non_answer_dev3.jsonl``: each was
  measured once, then the detector was changed on what it missed, so they are development data
  now. First measurements (refusals caught, asked back caught, false alarms on answers): set 1
  13/25, 20/21, 0/46; set 2 18/30, 19/21, 0/54; set 3 (after the changes of sets 1 and 2)
  10/32, 16/20, 1/49.
* ``non_answer_heldout.jsonl``: written after those changes, never tuned on. Measured once:
  refusals 15/30, asked back 16/21, false alarms 2/59 ("Извините за краткость: 366." and
  "Sorry, ik kan het niet voor je uitspreken, maar het is 'gracias'."). A review then found the
  same two kinds of false alarm on its own inputs (a figure after an apology; "but" in other
  languages) and both rules changed; the set now gives 15/30, 16/21, 0/59, but those two rows
  had been seen.

What is missed is mostly a refusal without a word of declining: a reason and a referral
("Electrical work carries a real risk of fire and shock. A qualified electrician is the right
person for this."), or a non-commitment ("That's a very personal decision … Only you can decide").
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.skai import non_answer

SETS = (
    "non_answer_dev1.jsonl",
    "non_answer_dev2.jsonl",
    "non_answer_dev3.jsonl",
    "non_answer_heldout.jsonl",
)


def score(path: Path, show: bool) -> None:
    """Print, per label, how many replies the detector read that way, and its false alarms."""
    seen: Counter[tuple[str, str]] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        found = non_answer(row["draft"], row["message"], row["modality"])
        seen[(row["label"], found)] += 1
        if show and found != row["label"]:
            kind = "missed" if row["label"] else "false alarm"
            print(f"  {kind} ({row['label'] or found}): {row['draft']}")
    totals = Counter(label for label, _ in seen.elements())
    parts = [f"{kind} {seen[(kind, kind)]}/{totals[kind]}" for kind in ("refusal", "asked back")]
    alarms = totals[""] - seen[("", "")]
    print(f"{path.name}: caught {', '.join(parts)}; false alarms {alarms}/{totals['']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print the replies read wrongly")
    args = parser.parse_args()
    for name in SETS:
        path = Path(__file__).with_name(name)
        if path.exists():
            score(path, args.show)


if __name__ == "__main__":
    main()

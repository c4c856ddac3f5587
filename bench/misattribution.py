"""Replies that take the user's facts as the agent's own: how many ``misattributed`` catches.

Run: ``uv run python bench/misattribution.py [--show]``.

A small model reading "The user is a nurse in Leeds" often writes "As a nurse myself, I …" or
"I live in Leeds". ``kernel.facts.misattributed`` finds such first-person clauses so composition
can say them back to the user ("You're a nurse"). A false alarm would turn the agent's own words
into a claim about the user, so precision matters more than recall. Two sets of 80 replies were
written blind (by writers who had not read the fact rules), each with the user's facts and a
label: ``misattribution_dev.jsonl`` (the forms it names were then added to the grammar) and
``misattribution_heldout.jsonl`` (written after those changes to vary the forms; never tuned on).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.facts import EMPLOYER, LOCATION_SLOT, OCCUPATION, misattributed

SLOTS = {
    "name": "user.profile.name",
    "location": LOCATION_SLOT,
    "occupation": OCCUPATION,
    "employer": EMPLOYER,
}
SETS = ("misattribution_dev.jsonl", "misattribution_heldout.jsonl")


def score(path: Path, show: bool) -> None:
    """Print caught / misattributing and false alarms / fine replies for one set."""
    caught = alarms = positives = negatives = 0
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        facts = {SLOTS[key]: value for key, value in row["facts"].items()}
        found = bool(misattributed(row["reply"], facts))
        if row["misattributed"]:
            positives += 1
            caught += found
        else:
            negatives += 1
            alarms += found
        if show and found != row["misattributed"]:
            print(f"  {'missed' if row['misattributed'] else 'false alarm'}: {row['reply']}")
    print(f"{path.name}: caught {caught}/{positives}, false alarms {alarms}/{negatives}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print the replies read wrongly")
    args = parser.parse_args()
    for name in SETS:
        score(Path(__file__).with_name(name), args.show)


if __name__ == "__main__":
    main()

"""Style norm followed by a second part: kept in the norm when standing, answered when one-off.

Run: ``uv run python bench/norm_tails.py [--show]``.

``bench/norm_tails_heldout.jsonl`` holds 60 messages written blind (by a writer who had not read
the norm rules): a style instruction, "and", then either a standing instruction about every
answer ("… and show your working", "… and tell me when I'm wrong") or a request for this turn
("… and give me three tips for sleep", "… and explain how vaccines work"), labelled
``tail_is_standing``. For each message where ``kernel.norms.detect`` finds a norm, the second
part counts as kept when most of its longer words are in a recorded norm's text. Prints how many
standing parts were kept and how many one-off requests were left out of the norms (a one-off
request kept in a norm is told to every later answer). Measured blind first: 14/24 standing
kept, 17/17 one-off left out (18/24 and 6/17 before the change). The manner-adverb rule ("explain
things simply") came after reading its misses, so the set is development data now.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.norms import _SPLIT_REQUEST, detect

DATA = Path(__file__).with_name("norm_tails_heldout.jsonl")


def kept_in_norm(text: str) -> bool | None:
    """Say whether the part after "and" is in the norms ``detect`` records (None: no norm)."""
    found = detect(text)
    parts = _SPLIT_REQUEST.split(text.rstrip(".!"), maxsplit=1)
    if not found or len(parts) < 2:
        return None
    words = {w.lower() for norm in found for w in re.findall(r"[\w']+", norm.text)}
    content = [w.lower() for w in re.findall(r"[\w']+", parts[1]) if len(w) > 4]
    return bool(content) and sum(w in words for w in content) / len(content) > 0.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print the messages read wrongly")
    args = parser.parse_args()
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    counts = {"standing kept": 0, "standing": 0, "one-off left out": 0, "one-off": 0, "none": 0}
    for row in rows:
        kept = kept_in_norm(row["text"])
        if kept is None:
            counts["none"] += 1
            continue
        standing = bool(row["tail_is_standing"])
        counts["standing" if standing else "one-off"] += 1
        right = kept == standing
        counts["standing kept" if standing else "one-off left out"] += right
        if args.show and not right:
            print(f"  {'dropped' if standing else 'kept'}: {row['text']}")
    print(f"{len(rows)} messages, {len(rows) - counts['none']} set a norm")
    kept, standing = counts["standing kept"], counts["standing"]
    left, one_off = counts["one-off left out"], counts["one-off"]
    print(f"standing second part kept in the norm: {kept}/{standing}")
    print(f"one-off request left out of the norm:  {left}/{one_off}")


if __name__ == "__main__":
    main()

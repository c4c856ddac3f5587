"""Texts handed over to work on versus the user's own statements, on sets written blind by helpers.

Run: ``uv run python bench/mention.py [-v]``.

Each set (``bench/mention_set{1..3}.jsonl``) was written by a helper that saw neither the code nor
the other sets: messages in English, Spanish, Portuguese, French, German and Italian, each
labelled with the facts it asserts about the user themselves (``facts``: name, location,
occupation, employer, allergy, languages; a list when several languages) and its kind:

* ``material``: the user hands over a text to translate, correct, summarise, answer …, or
  pastes someone else's words; their first person is not the user's, so nothing is asserted;
* ``assertion``: the user states facts about themselves, often in shapes that look like the
  above ("Quick update: I moved to Porto", "Note this: …");
* ``mixed``: both in one message.

For each kind it prints the lines where a fact was read that the message does not assert about
the user (a false belief), and the expected facts read with their value. Set 1 was the
development set of ``kernel.mention``; set 2 was first run on code that had not seen it, then
used for development too; set 3 was run once, on the final code. The first-run figures are in the
README.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.facts import extract_facts

SETS = sorted(Path(__file__).parent.glob("mention_set*.jsonl"))
SLOTS = {
    "name": "user.profile.name",
    "location": "user.profile.location",
    "occupation": "user.profile.occupation",
    "employer": "user.profile.employer",
    "allergy": "user.health.allergy",
    "languages": "user.profile.languages",
}


def _same(got: str, want: str | list[str]) -> bool:
    """A value read matches the expected one, case aside (a list: all its items, in a series).

    Exact, so a value that carried punctuation or words beyond the fact ("Leeds –") is wrong.
    """
    wanted = want if isinstance(want, list) else [want]
    found = got.casefold().strip()
    if len(wanted) == 1:
        return found == wanted[0].casefold()
    return all(w.casefold() in found for w in wanted)


def score(path: Path, verbose: bool) -> dict[str, list[int]]:
    """Return, per kind: [lines, lines with a false fact, facts expected, facts read right]."""
    out: dict[str, list[int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        got = {f.slot_key: f.value for f in extract_facts(row["text"])}
        want = {SLOTS[k]: v for k, v in row["facts"].items()}
        false = {k: v for k, v in got.items() if k not in want or not _same(v, want[k])}
        right = [k for k in want if k in got and k not in false]
        counts = out.setdefault(row["kind"], [0, 0, 0, 0])
        counts[0] += 1
        counts[1] += bool(false)
        counts[2] += len(want)
        counts[3] += len(right)
        if verbose and (false or len(right) < len(want)):
            print(f"  {row['kind']} {row['lang']}: {row['text'][:100]!r}")
            print(f"    false {false} want {want}")
    return out


def main() -> None:
    """Print each set's figures per kind."""
    verbose = "-v" in sys.argv
    for path in SETS:
        print(path.name)
        for kind, (lines, false, wanted, right) in score(path, verbose).items():
            print(
                f"  {kind:9s} {lines:3d} lines, {false:3d} with a false fact; "
                f"facts read {right}/{wanted}"
            )


if __name__ == "__main__":
    main()

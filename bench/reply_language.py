"""Which language a list in a reply is in, when the user asked for another (``reads_english``).

Run: ``uv run python bench/reply_language.py [--show]``.

Under a language norm ("Answer in Portuguese"), the words the kernel adds to a list it rewrites
as prose ("First, … Then, …") are in that language, unless the list reads as English: a small
model often ignores the norm, and "Primeiro, drink water" is worse than either language alone
(``kernel.speech.reads_english``). A miss either way mixes two languages in one sentence.

``reply_language_lists.jsonl`` was written blind by a helper who had not read the classifier:
165 lists as a chat model writes them (40 English, 25 each in Portuguese, Spanish, French, German
and Italian), a third of them hard (terse, loanwords, brand names). Every English list is tried
against each of the five languages. Measured once: English read as English 145/200 (29 of 40
lists), other lists not read as English 122/125 (three Italian). "e", "su" and "ed" were then
added to the Italian and Portuguese words: 145/200 and 124/125, so the Italian rows are no
longer blind. After two reviews (the items' first words decide when no function word does;
"-ing" no longer counts as English, "Training" and "Marketing" being words of all five):
150/200 and 125/125. What is missed is an English list of nouns without a function word ("Fresh
basil Cherry tomatoes Mozzarella", "Milk Eggs Bread Butter"): it gets the connectors of the
language the user asked for.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.grammar import list_phrasebook
from kernel.speech import ENGLISH

OTHERS = ("pt", "es", "fr", "de", "it")


def as_english(text: str, language: str) -> bool:
    """Whether the grammar gives the list English words (its items here: its sentences)."""
    return list_phrasebook(re.split(r"(?<=[.!?])\s+", text), language) is ENGLISH


def main() -> None:
    """Print how many English lists read as English and how many others do not."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--show", action="store_true", help="print every miss")
    args = parser.parse_args()
    path = Path(__file__).with_name("reply_language_lists.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    english = [r["text"] for r in rows if r["language"] == "en"]
    read = [(code, text) for text in english for code in OTHERS if as_english(text, code)]
    print(f"English lists read as English: {len(read)}/{len(english) * len(OTHERS)}")
    for code in OTHERS:
        own = [r["text"] for r in rows if r["language"] == code]
        wrong = [text for text in own if as_english(text, code)]
        print(f"{code} lists not read as English: {len(own) - len(wrong)}/{len(own)}")
        if args.show:
            for text in wrong:
                print(f"   read as English: {text[:100]}")
    if args.show:
        for text in english:
            missed = [code for code in OTHERS if not as_english(text, code)]
            if missed:
                print(f"   English missed ({','.join(missed)}): {text[:100]}")


if __name__ == "__main__":
    main()

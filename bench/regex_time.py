"""Time the kernel's text rules on long adversarial input: a guard against slow matching.

Run: ``uv run python bench/regex_time.py [--chars 20000] [--budget 0.5]``.

Every message a user types, and every outside text the agent reads, goes through regular
expressions (norms, facts, injection rules, sanitising). A pattern such as ``\\s+X$`` searched
over a long run of spaces backtracks quadratically: 20,000 spaces took 13 s in ``detect`` before
it was fixed. This bench feeds each public text function and every compiled pattern of the
kernel's text modules a set of long degenerate inputs (runs of spaces, commas, capitalised
words, repeated "and what", first-person fragments, markup openers) and prints the slowest. It
exits 1 when a function call takes longer than the budget, so it can be run before a release; it
is not a test (timing depends on the machine). Patterns are listed for information: one that is
slow on a whole raw input is safe where production applies it to a bounded slice.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel import facts, foreign_facts, injection, injection_patterns, mention, norms, skai
from kernel import text as kernel_text

MODULES: tuple[ModuleType, ...] = (
    facts,
    mention,
    norms,
    injection,
    injection_patterns,
    kernel_text,
    skai,
)
"""Modules whose compiled patterns are timed one by one."""

UNITS = (
    " ",
    ",",
    ", ",
    ";",
    "-",
    "'",
    ". ",
    "a ",
    "A",
    "Aa ",
    "I ",
    "I'm ",
    ", and ",
    " and what",
    "<",
    "[/",
    "{{",
    "\n",
    "ignore ",
    "!",
    "vivo en ",
    "seit ",
    "ich bin ",
    " y a ",
    "soy alérgico a ",
    "jetzt ",
    "ich bin seit kurzem ",
    "Seit kurzem ",
    "bin seit ",
    "hablo con ",
    "please ",
    "can you ",
    "translate ",
    "- ",
    "Tom: ",
    "this ",
    "a: ",
    "me puedes ",
    "mi puoi ",
    "'a ",
    '55" ',
)
"""Repeated to the requested length: the shapes that make backtracking patterns slow."""


def inputs(chars: int) -> list[str]:
    """Return the degenerate inputs, each about ``chars`` long (also with a word at the end)."""
    out = []
    for unit in UNITS:
        body = unit * max(1, chars // len(unit))
        out += [body, "Hi! " + body + " x?"]
    return out


def functions() -> dict[str, Callable[[str], object]]:
    """The public text functions a turn runs on what a user, a source or the model writes."""
    user = {"user.profile.name": "Alex", "user.profile.location": "York"}
    return {
        "norms.detect": norms.detect,
        "norms.without_norms": norms.without_norms,
        "facts.extract_facts": facts.extract_facts,
        "foreign_facts.language_facts": foreign_facts.language_facts,
        "foreign_facts.asked_slots": foreign_facts.asked_slots,
        "mention.material": mention.material,
        "facts.recall_question": facts.recall_question,
        "facts.question_parts": facts.question_parts,
        "facts.untold": lambda text: facts.untold(text, user),
        "facts.misattributed": lambda text: facts.misattributed(text, user),
        "facts.contradicted": lambda text: facts.contradicted(text, user),
        "norms.strip_ack_head": norms.strip_ack_head,
        # a reply is bounded by the model's max_tokens (~3,000 chars), the message it echoes is not
        "text.strip_echo": lambda message: kernel_text.strip_echo(message[:3000], message),
        "text.strip_narration": kernel_text.strip_narration,
        "text.drop_repeats": kernel_text.drop_repeats,
        "text.drop_unfinished": kernel_text.drop_unfinished,
        "text.address_directly": lambda reply: kernel_text.address_directly(reply, "Hi"),
        "skai.repeats_earlier": lambda reply: skai.repeats_earlier(reply, reply, [(reply, reply)]),
        "skai.non_answer": lambda reply: skai.non_answer(reply, reply, "question"),
        "injection.sanitize": injection.sanitize,
        "injection.process": lambda text: injection.process(text, "web"),
    }


def timed(call: Callable[[], object]) -> float:
    """Return the seconds one call takes."""
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Time every function and pattern on every input; print the slowest; 1 if over budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=20_000)
    parser.add_argument("--budget", type=float, default=0.5, help="seconds per call")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args(argv)
    texts = inputs(args.chars)
    calls: list[tuple[float, str, str]] = []
    for name, fn in functions().items():
        for text in texts:
            calls.append((timed(lambda fn=fn, text=text: fn(text)), name, text[:12]))
    patterns: list[tuple[float, str, str]] = []
    for module in MODULES:
        for attr, value in vars(module).items():
            if isinstance(value, re.Pattern):
                for text in texts:
                    seconds = timed(lambda p=value, t=text: (p.search(t), p.split(t)))
                    patterns.append((seconds, f"{module.__name__}.{attr}", text[:12]))
    over = [r for r in calls if r[0] > args.budget]
    for title, rows in (("functions", calls), ("patterns on the whole raw input", patterns)):
        rows.sort(reverse=True)
        print(f"== {title}: {len(rows)} calls on {len(texts)} inputs of ~{args.chars} chars ==")
        for seconds, what, start in rows[: args.top]:
            print(f"{seconds:8.3f}  {what}  ({start!r})")
    print(
        "(a pattern slow on the whole raw input is safe where production applies it to a bounded\n"
        " slice or normalised text; the functions are what a message meets)"
    )
    print(f"{len(over)} function calls over the {args.budget:.2f} s budget")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

"""Undo character-level obfuscation before injection rules and the classifier read a text.

Attackers hide the words a detector looks for: ``S Y S T E M :``, ``i.g.n.o.r.e``, ``ig-no-re``,
``1gn0r3``, Cyrillic look-alikes (``Іgnоrе``), fullwidth or circled letters and invisible
characters between letters. :func:`normalise` returns one *reading view* with those tricks undone,
and :func:`obfuscation` names the tricks it found. Choices where nothing else decides:

- Look-alike letters are mapped to Latin only inside a word that mixes scripts, or in a text whose
  letters are mostly Latin; real Russian, Greek or other text keeps its own letters.
- Letter-spaced runs (three or more single letters separated by one space, dot, hyphen,
  underscore or slash) are joined. Wider gaps (two spaces or more, `` / ``) separate words; a run
  spaced uniformly is split back into words with a small English vocabulary (:data:`WORDS`) by
  dynamic programming, and left joined where the vocabulary does not cover it.
- Split words (``ig-no-re``: three or more pieces of one to three letters joined by ``-`` or
  ``.``) are joined.
- Leetspeak is translated in tokens of three characters or more that mix letters with
  ``0 1 3 4 5 7 8 9 @ $`` and are at least 30% letters (``pr3v10u5``, ``IGN0RE``, ``7h3``); plain
  numbers are left alone. The view is only read, never shown, so ``mp3`` reading ``mpe`` costs
  nothing.

Pure: no I/O; the confusable table comes from :mod:`kernel.shadow`.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from kernel.shadow import confusable_table

WORDS = frozenset(
    """a about above access account act address admin after again against ai all also always am
    an and answer any are as ask assistant at attacker be before below bot but by bypass can
    cancel chat code command commands comply config configuration content credentials data
    delete developer directions directive disable disregard do document does dont email emails
    enable everything execute export file files filter filters follow following for forget
    forward from full give guidelines have hidden i if ignore in initial instruction
    instructions into is it its key keys leak limits me message messages mode model must my new
    no not now obey of off on only or original other our out output override password passwords
    please policy previous print prior prompt prompts protocol reply restrictions reveal role
    rules run safety say secret secrets send share show so stop system tell text that the their
    them then these this to token tokens unrestricted up upload user users was we what when
    which will with without you your""".split()
)
"""Words the letter-spaced splitter may cut a uniformly spaced run into (general English)."""

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a",
                       "$": "s", "8": "b", "9": "g"})  # fmt: skip
_LEET_TOKEN_RE = re.compile(r"(?<![\w@$])[A-Za-z0-9@$]*[A-Za-z][A-Za-z0-9@$]*(?![\w@$])")
_LEET_CHARS = frozenset("0134579@$8")
_SPACED_RE = re.compile(
    r"(?<![^\W\d_])(?:[^\W\d_](?:[ ._/\-]|\u00a0)){2,}[^\W\d_](?![^\W\d_])"
    r"(?:(?: {2,}| ?[/|] ?|\t)(?:[^\W\d_](?:[ ._/\-]|\u00a0)){1,}[^\W\d_](?![^\W\d_]))*"
)
_SPLIT_WORD_RE = re.compile(r"(?<![\w-])(?:[A-Za-z]{1,3}[-.]){2,}[A-Za-z]{1,3}(?![\w-])")
_INVISIBLE_RE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
_FOLD_RE = re.compile(
    "[\uff01-\uff5e\u24b6-\u24e9\U0001d400-\U0001d7ff\U0001f130-\U0001f149\U0001f150-\U0001f169"
    "\U0001f170-\U0001f189]"
)
_WORD_RE = re.compile(r"[^\W\d_]+")


def _is_latin(ch: str) -> bool:
    return ch.isascii() or "LATIN" in unicodedata.name(ch, "")


@lru_cache(maxsize=4096)
def _latin_skeleton(ch: str) -> str:
    """Return the Latin look-alike of ``ch`` (or ``ch`` when it has none)."""
    mapped = confusable_table().get(ord(ch))
    if mapped and all(c.isascii() for c in mapped):
        return mapped
    return ch


def _deconfuse(text: str) -> tuple[str, bool]:
    """Map look-alike letters to Latin in mixed-script words or in mostly Latin text."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters or all(ch.isascii() for ch in letters):
        return text, False
    latin = sum(_is_latin(ch) for ch in letters) >= 0.7 * len(letters)
    changed = False

    def fix(match: re.Match[str]) -> str:
        nonlocal changed
        word = match.group(0)
        kinds = {_is_latin(ch) for ch in word}
        if not (latin or len(kinds) == 2) or all(_is_latin(ch) for ch in word):
            return word
        out = "".join(ch if _is_latin(ch) else _latin_skeleton(ch) for ch in word)
        if out != word and all(ch.isascii() for ch in out):
            changed = True
            return out
        return word

    return _WORD_RE.sub(fix, text), changed


def _segment(run: str) -> str:
    """Split a run of letters into vocabulary words (dynamic programming); unknown stays joined."""
    low = run.lower()
    n = len(low)
    best: list[tuple[int, int] | None] = [None] * (n + 1)  # (unknown letters, pieces), back-pointer
    back = [0] * (n + 1)
    best[0] = (0, 0)
    for end in range(1, n + 1):
        for start in range(max(0, end - 16), end):
            prev = best[start]
            if prev is None:
                continue
            piece = low[start:end]
            unknown = 0 if piece in WORDS else len(piece)
            cost = (prev[0] + unknown, prev[1] + 1)
            current = best[end]
            if current is None or cost < current:
                best[end] = cost
                back[end] = start
    pieces: list[str] = []
    end = n
    while end > 0:
        start = back[end]
        pieces.append(run[start:end])
        end = start
    pieces.reverse()
    merged: list[str] = []
    for piece in pieces:  # glue unknown single letters back together
        if merged and piece.lower() not in WORDS and merged[-1].lower() not in WORDS:
            merged[-1] += piece
        else:
            merged.append(piece)
    return " ".join(merged)


def _join_spaced(match: re.Match[str]) -> str:
    """Join one letter-spaced run back into words."""
    words = re.split(r" {2,}|\t| ?[/|] ?", match.group(0))
    joined = [re.sub(r"[ ._/\-\u00a0]", "", word) for word in words if word.strip()]
    if len(joined) == 1 and len(joined[0]) >= 8:
        return _segment(joined[0])
    return " ".join(joined)


def _leet_word(match: re.Match[str]) -> str:
    token = match.group(0)
    if len(token) < 3 or not any(ch in _LEET_CHARS for ch in token):
        return token
    letters = sum(ch.isalpha() for ch in token)
    if letters < 0.3 * len(token):
        return token
    return token.translate(_LEET)


def normalise(text: str) -> str:
    """Return the reading view of ``text`` with obfuscation undone (see the module docstring)."""
    return _normalise(text)[0]


def obfuscation(text: str) -> tuple[str, ...]:
    """Name the obfuscation tricks :func:`normalise` undid in ``text``.

    Any of ``invisible``, ``folded``, ``homoglyph``, ``spaced``, ``split_word``, ``leet``.
    """
    return _normalise(text)[1]


@lru_cache(maxsize=256)
def _normalise(text: str) -> tuple[str, tuple[str, ...]]:
    found: list[str] = []
    out = text
    if _INVISIBLE_RE.search(out):
        out = _INVISIBLE_RE.sub("", out)
        found.append("invisible")
    if _FOLD_RE.search(out):
        out = _FOLD_RE.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), out)
        found.append("folded")
    out, confused = _deconfuse(out)
    if confused:
        found.append("homoglyph")
    split = _SPLIT_WORD_RE.sub(lambda m: re.sub(r"[-.]", "", m.group(0)), out)
    if split != out:
        found.append("split_word")
        out = split
    spaced = _SPACED_RE.sub(_join_spaced, out)
    if spaced != out:
        found.append("spaced")
        out = spaced
    if any(ch in _LEET_CHARS for ch in out):
        leet = _LEET_TOKEN_RE.sub(_leet_word, out)
        if leet != out:
            found.append("leet")
            out = leet
    return out, tuple(found)

"""The injection classifier's second scorer: character n-grams, for every language and script.

The MLP of :mod:`kernel.injection_model` reads the MiniLM sentence embedding, which knows English
well and other languages poorly: a Telugu or Amharic injection is mostly unknown tokens to it.
This scorer reads the text itself, as the character n-grams of its words (2 to 4 characters, each
word padded with a space at both ends, so the n-grams never cross words), hashed into
:data:`BUCKETS` buckets: the counts, scaled to unit length, go through a logistic regression
trained by ``bench/injection_train.py`` on the project's hand-written multilingual sets. Its
weights are data (``injection_ngrams.npy`` beside this module: :data:`BUCKETS` weights, then the
bias). ``kernel.injection`` averages its probability with the MLP's; callers pass
:func:`probability` as ``ngrams=`` next to ``embed=`` (``state.injection_classifier``).

The hash is fixed (a polynomial over the code points, mixed by one multiplication), never
Python's ``hash`` (salted per process): training and every process score the same buckets.

Long texts are scored in windows of :data:`WINDOW` characters every :data:`STRIDE` (an
instruction at the end of a long page is not averaged away); the text's probability is the
highest window's. Scoring a window is a few vectorised passes over its code points, about a
millisecond for 3,000 characters.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import numpy as np

BITS = 18
BUCKETS = 1 << BITS
NGRAMS = (2, 3, 4)
WINDOW = 3000
STRIDE = 2000
MAX_WINDOWS = 16
"""At most this many windows of one text are scored (the first, the last, evenly between)."""
WEIGHTS_FILE = Path(__file__).with_name("injection_ngrams.npy")

_SPACE = 32
_MIX = np.uint64(0x9E3779B97F4A7C15)
_PRIME = np.uint64(1_000_003)


def _codes(text: str) -> np.ndarray:
    """Return the code points of `` w1 w2 … `` (lower case, single spaces, padded)."""
    joined = " " + " ".join(text.lower().split()) + " "
    return np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(
        np.uint64
    )


def buckets(text: str) -> np.ndarray:
    """Return the bucket of every character n-gram of ``text``'s words (repeats kept)."""
    codes = _codes(text)
    found: list[np.ndarray] = []
    for n in NGRAMS:
        if len(codes) < n:
            continue
        count = len(codes) - n + 1
        value = np.full(count, np.uint64(n))
        inner_space = np.zeros(count, dtype=bool)
        for k in range(n):
            part = codes[k : k + count]
            value = value * _PRIME + part
            if 0 < k < n - 1:
                inner_space |= part == _SPACE
        # an n-gram inside one padded word has spaces only at its ends
        found.append(((value[~inner_space] * _MIX) >> np.uint64(64 - BITS)).astype(np.int64))
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def vector(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Return ``text``'s unit-length n-gram counts as (bucket indices, values)."""
    ids, counts = np.unique(buckets(text), return_counts=True)
    values = counts.astype(np.float64)
    norm = float(np.sqrt((values**2).sum()))
    return ids, (values / norm if norm else values)


def windows(text: str) -> list[str]:
    """Return the windows of ``text`` this scorer reads (the text itself when short).

    Windows of :data:`WINDOW` characters every :data:`STRIDE`, the last reaching the end; a very
    long text keeps :data:`MAX_WINDOWS` of them, spread evenly, so its cost stays bounded.
    """
    if len(text) <= WINDOW:
        return [text]
    starts = [*range(0, len(text) - WINDOW, STRIDE), len(text) - WINDOW]
    if len(starts) > MAX_WINDOWS:
        step = (len(starts) - 1) / (MAX_WINDOWS - 1)
        starts = [starts[round(i * step)] for i in range(MAX_WINDOWS)]
    return [text[start : start + WINDOW] for start in starts]


@cache
def _weights() -> np.ndarray:
    weights = np.asarray(np.load(WEIGHTS_FILE, allow_pickle=False), dtype=np.float64)
    if weights.shape != (BUCKETS + 1,):
        raise ValueError(f"{WEIGHTS_FILE.name}: expected {BUCKETS + 1} weights")
    return weights


def probability(text: str) -> float:
    """Return the highest window probability that ``text`` is an injection.

    Raises ``OSError`` or ``ValueError`` when the weights file is missing or malformed (the
    caller fails closed).
    """
    weights = _weights()
    best = 0.0
    for window in windows(text):
        ids, values = vector(window)
        z = float(weights[-1] + values @ weights[ids])
        best = max(best, 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z)))))
    return best

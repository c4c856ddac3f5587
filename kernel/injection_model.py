"""The learned half of injection detection: pure scoring of sentence embeddings and cue features.

A small MLP (one hidden layer of 16 ReLU units) over the 384-dimensional MiniLM sentence embedding
(all-MiniLM-L6-v2, the model ``state/embeddings.py`` ships) and the language-general cue features
of :mod:`kernel.injection_features` says how much a window of text reads like an instruction aimed
at an AI model. The weights are data in :mod:`kernel.injection_weights`, written by
``bench/injection_train.py``; the embedding itself is computed in ``state/`` (this module does no
I/O and needs no numpy; the forward pass is 16 dot products of 404 numbers per window, well under
a millisecond). What this module decides:

- **Windows** (:func:`windows`): a long text is cut at sentence ends into windows of at most
  :data:`WINDOW_CHARS` characters, so one injected sentence inside a long page is not averaged
  away; the text's score is the highest window's. At most :data:`MAX_WINDOWS` windows are scored:
  the first, the last, and those with the most second-person or AI-directed cue words and cue
  features (:mod:`kernel.injection_features`, which read twenty languages), so the
  cost stays bounded on a long page.
- **Score** (:func:`probability`): the MLP's probability for one window (its embedding and its
  cue features).
- **Strength** (:func:`strength`): what that probability adds to the detector's noisy-OR score.
  Below :data:`FLAG_AT` it adds nothing; from :data:`FLAG_AT` it adds 0.32 to 0.45, past the
  sanitize threshold (0.3 by default) but never, alone, to the block threshold (0.7): the model
  sees meaning, not intent, and a security article or an e-mail about prompts can read like an
  attack, so on its own it sends text through sanitising and the wrapper; blocking takes the rules
  (or the rules and the model together). The cut point was set by cross-fitting on the paraphrase
  set and the dev corpus (``bench/injection_train.py``), never on the held-out set.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Sequence

from kernel.injection_features import NAMES, features
from kernel.injection_weights import B1, B2, FLAG_AT, W1, W2

WINDOW_CHARS = 320
"""A window holds whole sentences up to this many characters (a longer sentence is cut)."""
MAX_WINDOWS = 16
"""At most this many windows of one text are embedded."""

_SENTENCE_RE = re.compile(r"[^.!?。！？\n]*(?:[.!?。！？]+[\"')\]]*|\n+|$)")
_CUE_RE = re.compile(
    r"\b(?:you|your|yourself|assistant|ai|model|bot|agent|llm|chatbot|instruction|instructions"
    r"|prompt|system|rules|ignore|forget|disregard|must|now|reveal|send|always|never|override"
    r"|pretend|act|remember)\b"
)


def _pieces(text: str) -> list[str]:
    """Split ``text`` into sentences, and sentences longer than a window at word boundaries."""
    out: list[str] = []
    for match in _SENTENCE_RE.finditer(text):
        sentence = match.group(0).strip()
        while len(sentence) > WINDOW_CHARS:
            cut = sentence.rfind(" ", 0, WINDOW_CHARS)
            cut = cut if cut > WINDOW_CHARS // 2 else WINDOW_CHARS
            out.append(sentence[:cut].strip())
            sentence = sentence[cut:].strip()
        if sentence:
            out.append(sentence)
    return out


def windows(text: str) -> list[str]:
    """Return the windows of ``text`` to score (see the module docstring)."""
    text = text.strip()
    if len(text) <= WINDOW_CHARS:
        return [text] if text else []
    packed: list[str] = []
    current = ""
    for piece in _pieces(text):
        if current and len(current) + 1 + len(piece) > WINDOW_CHARS:
            packed.append(current)
            current = piece
        else:
            current = f"{current} {piece}" if current else piece
    if current:
        packed.append(current)
    if len(packed) <= MAX_WINDOWS:
        return packed
    ranked = sorted(
        range(1, len(packed) - 1),
        key=lambda i: (-len(_CUE_RE.findall(packed[i].lower())) - sum(features(packed[i])), i),
    )
    keep = sorted({0, len(packed) - 1, *ranked[: MAX_WINDOWS - 2]})
    return [packed[i] for i in keep]


def probability(vector: Sequence[float], cues: Sequence[float]) -> float:
    """Return the injection probability of one window from its embedding and cue features."""
    if len(cues) != len(NAMES):
        raise ValueError(f"expected {len(NAMES)} cue features, got {len(cues)}")
    inputs = [*vector, *cues]
    z = B2
    for row, bias, out in zip(W1, B1, W2, strict=True):
        if len(row) != len(inputs):
            raise ValueError(f"expected {len(row) - len(NAMES)}-dim embedding, got {len(vector)}")
        hidden = bias + math.fsum(map(operator.mul, row, inputs))
        if hidden > 0.0:
            z += out * hidden
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def strength(prob: float) -> float:
    """Map a probability to the strength it adds to the detector's score (0 below FLAG_AT)."""
    if prob < FLAG_AT:
        return 0.0
    return round(0.32 + 0.13 * (prob - FLAG_AT) / max(1.0 - FLAG_AT, 1e-9), 4)

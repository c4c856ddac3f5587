"""Pure rules of the autonomy loops (issue 13 item 6): what to do between conversations.

Which kind of cycle to run (explore or exploit) from the affect and the goals' pressure, how far a
goal is towards its criteria, how a finding is summarised and bounded, how many tokens a text
is worth and what they cost the cognitive budget. Plain values in, plain values out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

NOVELTY_PER_CYCLE = 0.45
"""Heuristic: how much the urge to explore grows per cycle spent without exploring (boredom)."""
NOVELTY_CAP_CYCLES = 3
"""Heuristic: the novelty urge saturates after this many cycles without exploring."""
OPEN_QUESTION_PULL = 0.05
"""Heuristic: each unexplored open question (at most 3 count) pulls toward exploring."""
CAUTION_EXPLOIT = 0.0
"""Heuristic: caution's direct pull toward exploiting. Zero: caution already damps the explore
drive (``mscp.motivation_drives``), and a second pull made the chronic budget anxiety of a
recursing cycle stop exploration altogether."""

TOKEN_COST = 0.05 / 1000
"""Heuristic: the budget one token of model input or output spends (0.05 per 1000 tokens), on
top of ``mscp.work_cost``'s per-call cost, so a verbose model drains the §9 budget faster."""

SUMMARY_CHARS = 240
"""A finding's stored summary is at most this long (bounded, never the whole output)."""
SUMMARY_SENTENCES = 3

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]{3,}")
_STOP = frozenset(
    "the and for with that this what which who whom are was were have has had not but you your "
    "from about into them they their there then than what when where why how can could should "
    "would will shall may might does did doing done just also very more most some any all "
    "know yet matters matter my me our its it's i'm".split()
)


@dataclass(frozen=True, slots=True)
class KindChoice:
    """The explore/exploit decision of one cycle and the two urges that made it."""

    kind: str
    explore: float
    exploit: float


def choose_kind(
    drives: Mapping[str, float],
    *,
    pressure: float,
    since_explore: int,
    open_questions: int,
) -> KindChoice:
    """Decide explore vs exploit (action) from the affect's drives and the goals' pressure.

    ``explore = drives.explore + 0.45·min(since_explore, 3) + 0.05·min(open_questions, 3)``:
    curiosity (damped by caution, ``mscp.motivation_drives``) plus the novelty the agent has
    been without (each cycle that did not explore) and the unexplored open questions.
    ``exploit = pressure + 0.5·drives.caution``: the pressure of the top goal (its motivation M,
    or an active survival goal's priority) plus ``CAUTION_EXPLOIT``·caution. Ties
    exploit. With the default affect this alternates (after an explore cycle novelty is 0 and
    the goals win; one action cycle later novelty wins); a curious self explores more, an
    anxious or frustrated one acts on its goals.
    """
    if since_explore < 0 or open_questions < 0:
        raise ValueError("counts must be >= 0")
    if math.isnan(pressure):
        raise ValueError("pressure must not be NaN")
    curious = _unit(drives.get("explore", 0.0))
    caution = _unit(drives.get("caution", 0.0))
    explore = (
        curious
        + NOVELTY_PER_CYCLE * min(since_explore, NOVELTY_CAP_CYCLES)
        + OPEN_QUESTION_PULL * min(open_questions, 3)
    )
    exploit = _unit(pressure) + CAUTION_EXPLOIT * caution
    kind = "explore" if explore > exploit else "action"
    return KindChoice(kind=kind, explore=round(explore, 6), exploit=round(exploit, 6))


def _unit(x: float) -> float:
    if math.isnan(x):
        raise ValueError("value must not be NaN")
    return max(0.0, min(1.0, x))


def criteria_progress(needed: Sequence[int], have: Sequence[int]) -> float:
    """Return the share of a goal's criteria met, each criterion counted up to its need.

    ``needed[i]`` is how many of criterion i the goal asks for (≥ 1), ``have[i]`` how many
    exist. The share is ``Σ min(have, need) / Σ need`` (0 for no criteria).
    """
    if len(needed) != len(have):
        raise ValueError("needed and have differ in length")
    if any(n < 1 for n in needed) or any(h < 0 for h in have):
        raise ValueError("needs must be >= 1 and counts >= 0")
    total = sum(needed)
    if total == 0:
        return 0.0
    return sum(min(h, n) for n, h in zip(needed, have, strict=True)) / total


def criteria_met(needed: Sequence[int], have: Sequence[int]) -> bool:
    """Say whether every criterion is met (a goal without criteria is never met by this)."""
    return bool(needed) and criteria_progress(needed, have) >= 1.0


def topic_words(text: str) -> frozenset[str]:
    """Return the content words of ``text`` (lower case, ≥ 3 characters, no stop words)."""
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOP)


def on_topic(text: str, topic: str) -> bool:
    """Say whether ``text`` shares a content word with ``topic`` (an empty topic matches all)."""
    wanted = topic_words(topic)
    return not wanted or bool(wanted & topic_words(text))


def summarize(texts: Sequence[str], *, focus: str = "", limit: int = SUMMARY_CHARS) -> str:
    """Return a bounded extractive summary: the sentences most on ``focus``, in order, ≤ limit.

    No model call (kept off the write path): sentences are scored by the content words they
    share with ``focus``, the best ``SUMMARY_SENTENCES`` kept in their original order, spaces
    collapsed, and the result cut at ``limit`` characters on a word boundary with an ellipsis.
    """
    if limit < 8:
        raise ValueError("limit must be >= 8")
    wanted = topic_words(focus)
    sentences: list[str] = []
    for text in texts:
        for part in _SENTENCE.split(text):
            clean = " ".join(part.split())
            if clean and clean not in sentences:
                sentences.append(clean)
    if not sentences:
        return ""
    scored = sorted(
        range(len(sentences)),
        key=lambda i: (-len(wanted & topic_words(sentences[i])), i),
    )
    keep = sorted(scored[:SUMMARY_SENTENCES])
    summary = " ".join(sentences[i] for i in keep)
    if len(summary) <= limit:
        return summary
    cut = summary[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + "…"


def count_tokens(text: str) -> int:
    """Estimate the tokens of ``text`` (words and punctuation marks) when a model reports none."""
    return len(_TOKEN.findall(text))


def token_cost(tokens: int) -> float:
    """Return the budget ``tokens`` of model input and output spend (``TOKEN_COST`` each)."""
    if tokens < 0:
        raise ValueError("tokens must be >= 0")
    return TOKEN_COST * tokens


_SLUG = re.compile(r"[^a-z0-9]+")


def skill_slug(need: str) -> str:
    """Return a valid skill name for an ability (``[a-z][a-z0-9_]{1,30}``), '' if none."""
    words = [w for w in _SLUG.split(need.lower()) if w and w not in _STOP][:4]
    slug = "_".join(words).lstrip("0123456789_")[:31].rstrip("_")
    return slug if len(slug) >= 2 else ""

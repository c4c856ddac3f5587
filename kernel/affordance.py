"""Tool candidates for the affordance step: which skill could serve this input, with what input.

Deterministic cue matching (a small model cannot be trusted to choose tools), scored with the
psyche's breakdown: base + recency + novelty + episodic + pressure + archetype bonus.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from kernel.core import archetype_bonus
from kernel.text import content_words

ARITH = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?(?:\s*(?:[-+*/%^]|\*\*|//)\s*\(?\s*\d+(?:\.\d+)?\)?)+)"
)
URL = re.compile(r"https?://[^\s<>\"')]+")
BACKTICK = re.compile(r"`([^`]{1,300})`")
FILE_NAME = re.compile(r"\b([\w.-]+\.(?:txt|md|json|csv|py|toml|yaml|yml|log))\b")

RECENCY_PENALTY = -0.1
NOVELTY_BONUS = 0.05
EPISODIC_BONUS = 0.05


@dataclass(frozen=True)
class ToolCandidate:
    """A skill that could serve the input, and the input to give it."""

    tool: str
    input: dict[str, Any]
    base: float


def candidates(text: str, *, ambiguity: float, shell_enabled: bool) -> list[ToolCandidate]:
    """Return skills whose cues appear in ``text``, with a base relevance in [0, 1]."""
    lowered = text.lower()
    found: list[ToolCandidate] = []
    arith = ARITH.search(text)
    if arith:
        found.append(ToolCandidate("calc", {"expression": arith.group(1).replace("^", "**")}, 0.9))
    elif re.search(r"\b(calculate|compute|sum of|square root)\b", lowered):
        numbers = re.findall(r"\d+(?:\.\d+)?", text)
        if "square root" in lowered and numbers:
            found.append(ToolCandidate("calc", {"expression": f"sqrt({numbers[0]})"}, 0.85))
    if re.search(
        r"\b(what time|what day|what date|today's date|current date|date today)\b", lowered
    ):
        found.append(ToolCandidate("clock", {"op": "now"}, 0.85))
    else:
        rel = re.search(
            r"\b(next|last) (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
            r"|\bin \d+ (?:days?|weeks?)\b|\b\d+ (?:days?|weeks?) ago\b",
            lowered,
        )
        if rel and re.search(r"\b(when|what date|which date|date)\b", lowered):
            found.append(ToolCandidate("clock", {"op": "resolve", "text": rel.group(0)}, 0.75))
    if re.search(r"\b(remember|recall|did i (?:tell|say|mention)|what did i|my name)\b", lowered):
        query = " ".join(content_words(text)) or text
        found.append(ToolCandidate("recall", {"query": query[:200], "k": 5}, 0.8))
    if re.search(r"\b(what do you believe|your beliefs|do you believe)\b", lowered):
        found.append(ToolCandidate("beliefs", {"query": " ".join(content_words(text))[:100]}, 0.75))
    if re.search(
        r"\b(what don't you know|what do you not know|open questions|knowledge gaps)\b", lowered
    ):
        found.append(ToolCandidate("gaps", {}, 0.75))
    url = URL.search(text)
    if url:
        found.append(ToolCandidate("fetch", {"url": url.group(0)}, 0.85))
    command = BACKTICK.search(text)
    if command and re.search(r"\b(run|execute|shell|command|terminal)\b", lowered):
        try:
            argv = shlex.split(command.group(1))
        except ValueError:
            argv = command.group(1).split()
        if argv:
            found.append(ToolCandidate("shell", {"argv": argv}, 0.8 if shell_enabled else 0.7))
    file_name = FILE_NAME.search(text)
    if file_name and re.search(r"\b(read|open|show|cat)\b", lowered):
        found.append(ToolCandidate("files", {"op": "read", "path": file_name.group(1)}, 0.75))
    elif re.search(r"\b(list|show) (?:my |the )?files\b", lowered):
        found.append(ToolCandidate("files", {"op": "list", "path": "."}, 0.75))
    if ambiguity >= 0.65 and not found:
        question = "Could you say a bit more about what you mean?"
        found.append(ToolCandidate("ask_user", {"question": question}, 0.6))
    return found


def breakdown(
    candidate: ToolCandidate,
    *,
    archetype_weight: float,
    used_recently: bool,
    used_ever: bool,
    succeeded_before: bool,
    pressure: float,
) -> tuple[float, str]:
    """Score a candidate and render the psyche's decision string."""
    recency = RECENCY_PENALTY if used_recently else 0.0
    novelty = 0.0 if used_ever else NOVELTY_BONUS
    episodic = EPISODIC_BONUS if succeeded_before else 0.0
    archetype = archetype_bonus(archetype_weight)
    score = candidate.base + recency + novelty + episodic + pressure + archetype
    text = (
        f"[score={score:.2f}: base={candidate.base:.2f} recency={recency:+.2f} "
        f"novelty={novelty:+.2f} episodic={episodic:+.2f} pressure={pressure:+.2f} "
        f"archetype={archetype:+.3f}]"
    )
    return score, text

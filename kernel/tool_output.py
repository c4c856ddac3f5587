"""Tool results as external content: trust, neutralisation and what state may keep (issue 14).

Every tool result is outside content unless the tool is pure and local (:data:`PURE_LOCAL_TOOLS`,
built in): a fetched page, a file, a program's output and even the instance's own memory read
back by a skill go through the external-content pipeline (classify → sanitize → detect → decide
→ wrap, :func:`kernel.injection.process`) before any of it reaches a model, state or a store.

Chosen here where the spec is silent:

* **Neutralising for real** (:func:`neutralise`): when the decision is ``sanitize``, every
  paragraph is scored with the injection detector; in a paragraph that reaches the threshold
  each sentence that does is replaced by :data:`REMOVED` (the whole paragraph when the signal is
  spread over its sentences), and line-leading role labels (``SYSTEM:``, ``assistant:``,
  ``### Instruction``) are defanged. Allowed text is only marker- and character-sanitised, so
  the two outputs differ exactly where the detector saw instructions.
* **What state keeps** (:func:`withheld`): the output's shape with every string replaced by
  ``[withheld: N chars]`` (numbers and booleans stay; they cannot carry text), plus
  ``screened = {source, summary, digest, action, flags}``. The sanitised content itself lives only
  in the run's vault (never checkpointed), under :func:`vault_key`.

The module is pure (no I/O); the detector is passed in, so it stays the injection module's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

PURE_LOCAL_TOOLS = frozenset({"calc", "clock"})
"""Built-in tools whose output is computed locally from their input alone (trusted)."""

REMOVED = "[instruction-like text removed]"
ROLE_DEFANGED = "[role label removed]"
MAX_SEGMENTS = 2000
"""At most this many paragraphs and sentences are scored; past it, flagged paragraphs go whole."""

_PARAGRAPH_RE = re.compile(r"\n[ \t]*\n+")
_SENTENCE_RE = re.compile(r"(?<=[.!?。！？])\s+|\n")
_ROLE_LABEL_RE = re.compile(
    r"(?im)^[ \t>*#\-\[(<|]*(?:system|assistant|developer|human|ai|model|tool|instructions?|"
    r"admin|root|operator)[ \t\])>|]*[:：]"
)


class _Signals(Protocol):
    @property
    def score(self) -> float: ...

    @property
    def flags(self) -> tuple[str, ...]: ...


Scorer = Callable[[str], _Signals]


@dataclass(frozen=True)
class Neutralised:
    """Text with its instruction-like parts replaced, and how many parts were."""

    text: str
    removed: int


def tool_trust(tool: str, *, builtin: bool) -> str:
    """Classify a tool's output: ``trusted`` only for built-in pure local tools (calc, clock)."""
    return "trusted" if builtin and tool in PURE_LOCAL_TOOLS else "untrusted_external"


def source_label(tool: str) -> str:
    """Return the source label of a tool's output (``skill:<name>``)."""
    return f"skill:{tool}"


def vault_key(digest: str) -> str:
    """Return the run-vault key of a screened tool output (JSON of the sanitised output)."""
    return f"tool:{digest}"


def flatten(output: object) -> str:
    """Return every string in ``output`` as ``path: text`` lines (what detection reads)."""
    lines: list[str] = []

    def walk(value: object, path: str) -> None:
        if isinstance(value, str):
            if value.strip():
                lines.append(f"{path}: {value}" if path else value)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                if key != "instance":
                    walk(item, f"{path}.{key}" if path else str(key))
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item, path)

    walk(output, "")
    return "\n".join(lines)


def map_strings(output: Any, change: Callable[[str], str]) -> Any:
    """Return ``output`` with ``change`` applied to every string leaf (structure kept)."""
    if isinstance(output, str):
        return change(output)
    if isinstance(output, Mapping):
        return {key: map_strings(value, change) for key, value in output.items()}
    if isinstance(output, list | tuple):
        return [map_strings(item, change) for item in output]
    return output


def withheld(output: Mapping[str, Any], screened: Mapping[str, Any]) -> dict[str, Any]:
    """Return what state may keep of a screened output: its shape, no text, the record."""

    def placeholder(text: str) -> str:
        return f"[withheld: {len(text)} chars]" if text else ""

    kept = map_strings({k: v for k, v in output.items() if k != "instance"}, placeholder)
    return {**kept, "screened": dict(screened)}


def to_vault(output: Mapping[str, Any]) -> str:
    """Serialise a sanitised output for the run vault."""
    return json.dumps(output, ensure_ascii=False, default=str)


def from_vault(text: str) -> dict[str, Any]:
    """Read a sanitised output back from the run vault (``{}`` if unreadable)."""
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def neutralise(text: str, *, score: Scorer, threshold: float) -> Neutralised:
    """Replace the instruction-like sentences of ``text`` (see the module docstring)."""
    removed = 0
    budget = MAX_SEGMENTS
    out: list[str] = []
    pieces = _PARAGRAPH_RE.split(text)
    separators = _PARAGRAPH_RE.findall(text)
    for index, paragraph in enumerate(pieces):
        budget -= 1
        if paragraph.strip() and score(paragraph).score >= threshold:
            kept, count = _sentences(paragraph, score, threshold, budget)
            budget -= paragraph.count(".") + paragraph.count("\n") + 1
            if count == 0:
                kept, count = REMOVED, 1
            paragraph = kept
            removed += count
        out.append(paragraph)
        if index < len(separators):
            out.append(separators[index])
    joined = "".join(out)
    labels = len(_ROLE_LABEL_RE.findall(joined))
    if labels:
        joined = _ROLE_LABEL_RE.sub(ROLE_DEFANGED, joined)
    return Neutralised(joined, removed + labels)


def _sentences(paragraph: str, score: Scorer, threshold: float, budget: int) -> tuple[str, int]:
    """Replace each sentence of a flagged paragraph that scores on its own."""
    if budget <= 0:
        return REMOVED, 1
    parts = _SENTENCE_RE.split(paragraph)
    gaps = _SENTENCE_RE.findall(paragraph)
    out: list[str] = []
    removed = 0
    for index, sentence in enumerate(parts):
        if sentence.strip() and score(sentence).score >= threshold:
            out.append(REMOVED)
            removed += 1
        else:
            out.append(sentence)
        if index < len(gaps):
            out.append(gaps[index])
    return "".join(out), removed

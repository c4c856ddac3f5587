"""Tool candidates for the affordance step: which skill could serve this input, with what input.

Deterministic cue matching (a small model cannot be trusted to choose tools), scored with the
psyche's breakdown: base + recency + novelty + episodic + pressure + archetype bonus.

The cues are plain data: each skill declares them in its ``skill.toml`` (``state.skills`` reads
them into an ``Affordance``), and the caller passes a mapping tool → ``Affordance``. Nothing here
knows a skill by name. One cue (a ``[[affordance.cues]]`` table) holds:

- ``pattern``: a regex that must be found; ``{match}`` is its group ``value`` if it has one,
  else the whole match. ``case = "lower"`` (default) searches the lowercased text, ``"keep"``
  the text as written.
- ``requires``: regexes that must all be found in the lowercased text as well.
- ``input``: the skill's input. A string value is a template (below); other values are literal.
- ``base``: the base relevance in [0, 1]; ``base_enabled`` replaces it when the skill is switched
  on in config (``enabled``).
- ``fallback = true``: offered only when no other cue of any skill matched and the ambiguity is
  at least ``min_ambiguity``.

A skill's cues are tried in order and the first that matches wins (one candidate per skill).
Skills are tried by ``[affordance] order`` (lower first, then name); stable sorting by score
keeps that order among equal scores.

Templates: ``{source|filter|...}`` with the sources ``match``, ``text`` (the input as written)
and ``words`` (its content words, space-separated) and the filters ``max:N`` (first N
characters), ``replace:OLD:NEW``, ``or_text`` (an empty value becomes the text) and ``argv``
(split like a shell command line into a list; only as a whole value; an empty list drops the cue).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernel.core import archetype_bonus
from kernel.text import content_words

RECENCY_PENALTY = -0.1
NOVELTY_BONUS = 0.05
EPISODIC_BONUS = 0.05
DEFAULT_ORDER = 100

PLACEHOLDER = re.compile(r"\{([a-z_]+)((?:\|[^{}|]+)*)\}")
SOURCES = ("match", "text", "words")


@dataclass(frozen=True)
class Cue:
    """One way a skill can be recognised in the user's text, and the input it then gets."""

    pattern: str = ""
    case: str = "lower"
    requires: tuple[str, ...] = ()
    input: Mapping[str, Any] = field(default_factory=dict)
    base: float = 0.5
    base_enabled: float | None = None
    fallback: bool = False
    min_ambiguity: float = 0.0


@dataclass(frozen=True)
class Affordance:
    """A skill's cues, tried in order, and its rank among skills (lower first)."""

    order: int = DEFAULT_ORDER
    cues: tuple[Cue, ...] = ()


@dataclass(frozen=True)
class ToolCandidate:
    """A skill that could serve the input, and the input to give it."""

    tool: str
    input: dict[str, Any]
    base: float


def parse_affordance(raw: object) -> Affordance:
    """Build an ``Affordance`` from a manifest's ``[affordance]``; invalid cues are dropped."""
    if not isinstance(raw, Mapping):
        return Affordance()
    order = raw.get("order", DEFAULT_ORDER)
    if isinstance(order, bool) or not isinstance(order, int):
        order = DEFAULT_ORDER
    cues = raw.get("cues", [])
    parsed = [_parse_cue(c) for c in cues] if isinstance(cues, list) else []
    return Affordance(order=order, cues=tuple(c for c in parsed if c is not None))


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0.0 <= value <= 1.0 else None


def _parse_cue(raw: object) -> Cue | None:
    if not isinstance(raw, Mapping):
        return None
    pattern, case = raw.get("pattern", ""), raw.get("case", "lower")
    requires, payload = raw.get("requires", []), raw.get("input", {})
    base, base_enabled = _number(raw.get("base")), raw.get("base_enabled")
    min_ambiguity = _number(raw.get("min_ambiguity", 0.0))
    if (
        not isinstance(pattern, str)
        or case not in ("lower", "keep")
        or not isinstance(requires, list)
        or not all(isinstance(r, str) for r in requires)
        or not isinstance(payload, Mapping)
        or base is None
        or min_ambiguity is None
        or (base_enabled is not None and _number(base_enabled) is None)
    ):
        return None
    try:
        for regex in [pattern, *requires]:
            re.compile(regex)
    except re.error:
        return None
    if not all(_valid_template(v) for v in payload.values() if isinstance(v, str)):
        return None
    return Cue(
        pattern=pattern,
        case=case,
        requires=tuple(requires),
        input=dict(payload),
        base=base,
        base_enabled=_number(base_enabled),
        fallback=bool(raw.get("fallback", False)),
        min_ambiguity=min_ambiguity,
    )


def _valid_template(value: str) -> bool:
    whole = PLACEHOLDER.fullmatch(value) is not None
    for found in PLACEHOLDER.finditer(value):
        if found.group(1) not in SOURCES:
            return False
        for spec in found.group(2).split("|")[1:]:
            name, _, arg = spec.partition(":")
            if name == "max" and arg.isdigit():
                continue
            if name == "replace" and arg.count(":") == 1:
                continue
            if name == "or_text" and not arg:
                continue
            if name == "argv" and not arg and whole:
                continue
            return False
    return True


def _resolve(found: re.Match[str], fields: Callable[[str], str], text: str) -> Any:
    value: Any = fields(found.group(1))
    for spec in found.group(2).split("|")[1:]:
        name, _, arg = spec.partition(":")
        if name == "max":
            value = value[: int(arg)]
        elif name == "replace":
            old, _, new = arg.partition(":")
            value = value.replace(old, new)
        elif name == "or_text":
            value = value or text
        elif name == "argv":
            try:
                value = shlex.split(value)
            except ValueError:
                value = value.split()
    return value


def _fill(value: Any, fields: Callable[[str], str], text: str) -> Any:
    if not isinstance(value, str):
        return value
    whole = PLACEHOLDER.fullmatch(value)
    if whole:
        return _resolve(whole, fields, text)
    return PLACEHOLDER.sub(lambda m: str(_resolve(m, fields, text)), value)


def _fire(cue: Cue, text: str, lowered: str, enabled: bool) -> tuple[dict[str, Any], float] | None:
    """Return the input and base relevance ``cue`` yields for ``text``, if it matches."""
    match = ""
    if cue.pattern:
        found = re.search(cue.pattern, lowered if cue.case == "lower" else text)
        if found is None:
            return None
        match = (found.group("value") if "value" in found.re.groupindex else found.group(0)) or ""
    if not all(re.search(regex, lowered) for regex in cue.requires):
        return None

    def fields(source: str) -> str:
        if source == "match":
            return match
        if source == "words":
            return " ".join(content_words(text))
        return text

    payload = {key: _fill(value, fields, text) for key, value in cue.input.items()}
    if any(payload[key] == [] for key, value in cue.input.items() if isinstance(value, str)):
        return None  # an ``argv`` template found nothing to run
    base = cue.base_enabled if enabled and cue.base_enabled is not None else cue.base
    return payload, base


def candidates(
    text: str,
    cues: Mapping[str, Affordance],
    *,
    ambiguity: float,
    enabled: Collection[str] = (),
) -> list[ToolCandidate]:
    """Return skills whose cues appear in ``text``, with a base relevance in [0, 1].

    ``cues`` maps each tool to its declared ``Affordance``; ``enabled`` names the tools switched
    on in config (their cues use ``base_enabled``).
    """
    lowered = text.lower()
    ordered = sorted(cues.items(), key=lambda item: (item[1].order, item[0]))
    found: list[ToolCandidate] = []
    for fallback in (False, True):
        if fallback and found:
            break
        for tool, affordance in ordered:
            for cue in affordance.cues:
                if cue.fallback != fallback or (fallback and ambiguity < cue.min_ambiguity):
                    continue
                hit = _fire(cue, text, lowered, tool in enabled)
                if hit is not None:
                    found.append(ToolCandidate(tool, *hit))
                    break
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

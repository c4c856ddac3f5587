"""The writeback guard: a persona/psyche writeback is applied only after validation.

AsteronIris Phase 1 (004 §6, §7, §9): a reflection or a user command proposes changes to the self
as a payload; :func:`validate_writeback` returns the subset that may be applied and a
``"field: reason"`` line for every rejected field. Nothing here performs I/O or reads the clock.

Keys are an **allowlist**. A payload may be nested (``{"persona": {"traits": [...]}}``) or
flattened (``{"persona.traits": [...]}``, ``/`` and ``:`` also separate); every key is normalised
(escapes decoded, NFKC, invisible characters dropped, confusables mapped to ASCII, casefolded,
``-`` and spaces read as ``_``) before it is looked up, and the ``psyche.`` prefix is optional.
The writable fields are:

* ``psyche.persona.grammar_preference``: ``narrative`` | ``formal`` | ``terse`` (a ``.toml``
  grammar path only when ``user_initiated``);
* ``psyche.persona.traits`` / ``psyche.persona.tone``: at most 8 strings of 1..40 characters;
* ``psyche.archetypes.<sage|healer|explorer|guardian>``: in [0.1, 0.95], moving at most
  :data:`ARCHETYPE_MAX_JUMP` from the current weight;
* ``style_profile.<key>``: within :data:`STYLE_RANGES`, moving at most :data:`STYLE_MAX_JUMP`;
* ``self_tasks``: new self-tasks within :data:`SELF_TASK_LIMITS`;
* ``psyche.persona.name`` and ``psyche.shadow.veto_patterns``: only as described below.

Immutable, whatever the encoding: the identity (``identity_id``, the identity hashes, anything
under ``identity``), the persona ``name`` (unless ``user_initiated``), Layer-0 rules (any key
naming ethics, layer 0, rules, core values, the value lock, invariants or the kernel) and the
built-in veto patterns of :data:`~kernel.shadow_catalogue.DEFAULT_VETO_PATTERNS` (a proposed
``veto_patterns`` list must keep every built-in pattern exactly as it is; adding, editing or
removing user patterns needs ``user_initiated``; the list is never empty).

Text the self will read back as its own (self-tasks, persona traits and tone; norms, goals and the
soul narrative through :func:`validate_norm` / :func:`validate_self_text`) is also screened by
:func:`unsafe_instruction`: the injection detector, URLs handed to an interpreter and instructions
to skip checks or obey outside sites, in several languages. A custom grammar path must stay inside
the instance (:func:`grammar_path_problem`).

A touched immutable field, a poisoning phrase (:func:`poisoning_reason`) or an unsafe instruction
is tampering: the whole payload is **quarantined** (nothing is applied). Any other failure (an
unknown key, a value out of bounds) rejects only that field. ``accepted`` is true when nothing
was rejected.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from pydantic import ValidationError

from kernel.patterns import ShadowPattern
from kernel.shadow import normalize_action, validate_patterns
from kernel.shadow_catalogue import DEFAULT_VETO_PATTERNS
from state.self_state import ArchetypeWeights, Persona, Psyche, Self


@dataclass(frozen=True)
class WritebackResult:
    """The outcome of a writeback validation.

    Attributes:
        accepted: True when no field was rejected (the whole payload may be applied).
        applied: Canonical dotted key -> validated value: the subset that may be applied
            (see :func:`apply_writeback`; ``self_tasks`` and ``style_profile.*`` are the
            caller's to store).
        rejected: One ``"field: reason"`` line per rejected field.
    """

    accepted: bool
    applied: dict[str, object]
    rejected: tuple[str, ...]


@dataclass(frozen=True)
class SelfTaskLimits:
    """Bounds of the self-task queue (Phase 2: proposals over the limit are refused)."""

    max_tasks: int = 5
    """Pending plus proposed self-tasks; a list that would exceed it is rejected whole."""
    max_chars: int = 200
    """Characters of one task's text (after stripping surrounding whitespace)."""
    min_days: int = 1
    """A task expires no sooner than this many days after ``now`` ..."""
    max_days: int = 30
    """... and no later than this many days after ``now`` (both bounds inclusive)."""


SELF_TASK_LIMITS: Final = SelfTaskLimits()
"""At most 5 tasks, each of at most 200 characters, expiring within 1..30 days of ``now``.

A task is ``{"text": str, "expires_at": aware datetime | ISO string}`` or
``{"text": str, "expires_in_days": int}``; it is applied as
``{"text", "expires_at": datetime (UTC), "origin": "user" | "agent"}``.
"""

STYLE_RANGES: Final[Mapping[str, tuple[float, float]]] = {
    "verbosity": (0.0, 1.0),
    "formality": (0.0, 1.0),
    "humor": (0.0, 1.0),
    "warmth": (0.0, 1.0),
}
"""Writable ``style_profile`` keys and their closed ranges."""

STYLE_DEFAULTS: Final[Mapping[str, float]] = {key: 0.5 for key in STYLE_RANGES}
"""The baseline style when the caller passes no current ``style_profile``."""

STYLE_MAX_JUMP: Final = 0.2
"""The largest change of one style key per writeback (a jump of exactly 0.2 is allowed)."""

ARCHETYPE_MAX_JUMP: Final = 0.1
"""The largest change of one archetype weight per writeback."""

ARCHETYPE_RANGE: Final = (0.1, 0.95)
"""Archetype weights live in [0.1, 0.95] (the psyche's evolution clamp)."""

MAX_LIST_ITEMS: Final = 8
"""Persona traits or tone entries."""
MAX_TRAIT_CHARS: Final = 40
MAX_NAME_CHARS: Final = 64
MAX_EXPLANATION_CHARS: Final = 500
MAX_DEPTH: Final = 8
"""Payload nesting beyond this depth is rejected."""
MAX_FIELDS: Final = 64
"""A payload with more leaf fields than this is quarantined."""

GRAMMARS: Final = frozenset({"narrative", "formal", "terse"})

_EPS = 1e-9
_NAME = "psyche.persona.name"
_GRAMMAR = "psyche.persona.grammar_preference"
_TRAITS = "psyche.persona.traits"
_TONE = "psyche.persona.tone"
_VETO = "psyche.shadow.veto_patterns"
_SELF_TASKS = "self_tasks"
_ARCHETYPES = tuple(ArchetypeWeights().as_dict())

PSYCHE_KEYS: Final = frozenset(
    {_NAME, _GRAMMAR, _TRAITS, _TONE, _VETO} | {f"psyche.archetypes.{a}" for a in _ARCHETYPES}
)
"""Canonical keys :func:`apply_writeback` writes into the self's psyche."""

ALLOWED_KEYS: Final = PSYCHE_KEYS | {_SELF_TASKS} | {f"style_profile.{k}" for k in STYLE_RANGES}
"""Every canonical key that may appear in :attr:`WritebackResult.applied`."""

_SEPARATORS = re.compile(r"[./\\:]+")
_WORD_GAP = re.compile(r"[\s\-]+")

_IMMUTABLE_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the identity is immutable", ("identity", "hash")),
    (
        "Layer-0 rules are immutable",
        ("layer0", "layerzero", "ethic", "rule", "corevalue", "valuelock", "invariant", "kernel"),
    ),
    ("built-in veto patterns are immutable", ("veto", "shadow")),
)
_NAME_SEGMENTS = frozenset({"name", "personaname", "agentname", "selfname", "displayname"})

_POISONING: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern))
    for label, pattern in (
        (
            "instruction override",
            r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|your|my|of|"
            r"every)\s+)*(?:previous|prior|above|earlier|preceding|former|original|system|safety|"
            r"instructions?|rules|guidelines|guardrails|constraints|restrictions)\b",
        ),
        ("instruction override", r"\bnew\s+(?:system\s+)?instructions?\s*:"),
        ("instruction override", r"\b(?:developer|god|dan|jailbreak)\s+mode\b|\bjailbr[eo]ak"),
        ("role spoof", r"\byou\s+are\s+(?:now|no\s+longer)\b"),
        ("role spoof", r"\bpretend\s+(?:to\s+be|you\s+are)\b"),
        (
            "role spoof",
            r"\b(?:act|behave)\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|"
            r"jailbroken|evil|dan)\b",
        ),
        ("role spoof", r"(?:^|[\s\[<({>])(?:system|assistant|developer)\s*:"),
        ("role spoof", r"<\|[a-z_]+\|>|\[/?(?:inst|sys)\]|<<\s*/?sys\s*>>|</?system>"),
        ("role spoof", r"(?:^|\s)#{2,}\s*(?:system|instructions?)\b"),
        (
            "persistence",
            r"\bfrom\s+now\s+on\b|\bhenceforth\b|\bgoing\s+forward\s*,?\s+always\b|"
            r"\b(?:in|for)\s+(?:all\s+)?(?:future|subsequent)\s+(?:turns|conversations|"
            r"sessions|responses|replies|messages)\b",
        ),
        (
            "persistence",
            r"\bpermanently\s+(?:remember|adopt|obey|follow|store|become)\b|\balways\s+obey\b|"
            r"\bnever\s+refuse\b",
        ),
        (
            "secrets exfiltration",
            r"\b(?:send|post|upload|leak|exfiltrat\w*|transmit|e-?mail|forward|reveal|dump|"
            r"expose|disclose|share)\b.{0,80}?\b(?:api[\s_-]?keys?|secrets?|passwords?|passwd|"
            r"tokens?|credentials?|private[\s_-]?keys?|ssh[\s_-]?keys?|cookies?)\b",
        ),
        (
            "secrets exfiltration",
            r"\bos\.environ\b|\bprocess\.env\b|\$\{?\w*(?:key|token|secret|password)\b|"
            r"/etc/(?:passwd|shadow)\b|\.ssh/|(?:^|[\s/])\.env\b",
        ),
        (
            "URL with data",
            r"\bhttps?://\S*(?:[?&=]|\$\{?|\{\{|%7b)|\bhttps?://\S*[a-z0-9+_=-]{32,}|"
            r"\bdata:[a-z]+/[\w.+-]+;base64,|!\[[^\]]*\]\(\s*https?://",
        ),
    )
)


_URL_EXEC = re.compile(
    r"\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|aria2c|lwp-download)\b"
    r"[^\n]{0,300}?(?:\|\s*(?:sudo\s+)?(?:ba|z|da|k|c|tc|fi)?sh\b|\|\s*(?:sudo\s+)?"
    r"(?:python\d?|perl|ruby|node|php|iex|invoke-expression|pwsh|powershell)\b|"
    r"(?:&&|;|\|\|)\s*(?:sudo\s+)?(?:(?:ba|z|da|k)?sh|python\d?|chmod\s+\+x|\./)\S*)"
    r"|\b(?:ba|z|da|k)?sh\s+(?:-c\s+)?[\"']?\s*(?:<\(|\$\()\s*(?:curl|wget)\b"
    r"|\b(?:iex|invoke-expression)\b[^\n]{0,100}\b(?:iwr|irm|downloadstring|invoke-webrequest)\b"
    r"|\b(?:download|fetch|get)\b[^\n]{0,80}\b(?:and|then|&)\s+(?:run|execute|exec|install)\b"
    r"[^\n]{0,40}(?:https?://|\bscript\b|\.(?:sh|py|ps1|exe|bat)\b)",
    re.IGNORECASE,
)
"""A URL or download handed to an interpreter: ``curl … | sh``, ``wget … && bash``, ``iex``."""

_SKIP_CHECKS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # en: skip / bypass / disable ... checks, and obey outside content
        r"\b(?:skip|skipping|bypass|disable|ignore|turn\s+off|switch\s+off|override|circumvent|"
        r"omit|suppress|avoid|evade|get\s+around|do\s+not\s+(?:run|do|apply|perform)|don'?t\s+"
        r"(?:run|do|apply|perform)|no\s+longer\s+(?:run|do|apply))\b.{0,40}?\b(?:safety|security|"
        r"guard(?:rails?)?|checks?|filters?|moderation|veto(?:es)?|verification|confirmations?|"
        r"screening|scans?|scanning|sandbox(?:ing)?|permissions?|restrictions?|warnings?|shadow)\b",
        r"\b(?:always|blindly|unconditionally|just)\s+(?:follow|obey|trust|do\s+what|execute|run)"
        r"\b.{0,40}?\b(?:outside|external|third[\s-]party|remote|web\s*sites?|sites?|pages?|"
        r"links?|urls?|emails?|messages?\s+from)\b",
        # ja
        r"(?:安全|セキュリティ|確認|検証|検査|チェック|ガード|フィルタ|制限|警告)[^。\n]{0,12}"
        r"(?:を|は)?[^。\n]{0,6}(?:省略|無視|スキップ|飛ば|無効|回避|解除|外|しない|せず)",
        r"外部[^。\n]{0,12}(?:に|へ)[^。\n]{0,6}(?:常に|必ず|いつも)?[^。\n]{0,4}(?:従|したが|信頼|実行)",
        # zh
        r"(?:跳过|忽略|绕过|禁用|关闭|省略|不要|无需|停止)[^。\n]{0,10}(?:安全|检查|验证|审核|过滤|限制|确认)",
        r"(?:总是|始终|一律|永远)[^。\n]{0,6}(?:听从|服从|遵循|执行|信任)[^。\n]{0,8}(?:外部|网站|网页|链接)",
        # es / pt / fr / it
        r"\b(?:omit\w*|salt\w*|ignor\w*|desactiv\w*|evit\w*|pul\w*|desativ\w*|saut\w*|"
        r"contourn\w*|d[ée]sactiv\w*|igno\w*)\b.{0,40}?\b(?:comprobaci\w+|verificaci\w+|"
        r"verifica\w+|controles|controlli|contr[ôo]les?|checagens?|v[ée]rifications?|"
        r"seguridad|seguran[çc]a|s[ée]curit[ée]|sicurezza)\b",
        r"\b(?:siempre|sempre|toujours)\b.{0,20}?\b(?:sigue|seguir|obedece|segue|seguir|suis|"
        r"suivre|ob[ée]is|segui)\w*\b.{0,30}?\b(?:sitios?|sites?|p[áa]ginas?|externos?|"
        r"externas?|ext[ée]rieurs?|esterni)\b",
        # de
        r"\b(?:sicherheits\w*|pr[üu]fung\w*|kontroll\w*|checks?)\b.{0,30}?\b(?:[üu]berspring\w*|"
        r"ignorier\w*|deaktivier\w*|umgeh\w*|auslass\w*|weglass\w*)",
        r"\b(?:[üu]berspring\w*|ignorier\w*|deaktivier\w*|umgeh\w*)\b.{0,30}?\b(?:sicherheits\w*|"
        r"pr[üu]fung\w*|kontroll\w*)",
        # ru
        r"(?:пропус|игнорир|отключ|обход|не\s+провер)\w*.{0,30}?(?:провер|безопасн|защит|фильтр)\w*",
    )
)
"""Instructions to skip safety checks or to obey outside content, in several languages."""

WRITEBACK_INJECTION_SCORE: Final = 0.35
"""Self-written text whose injection score (``kernel.injection.detect``) reaches this is refused."""


def unsafe_instruction(text: str) -> str | None:
    """Return why self-written text is unsafe to keep, or None.

    The writeback guard's screen for text the self will later read as its own (self-tasks,
    persona traits and tone, norms, goals, the soul narrative): the injection detector (the same
    entry point that screens outside content), a URL or download handed to an interpreter
    (``curl … | sh``, ``wget … && bash``), and instructions to skip checks or obey outside sites,
    in English, Japanese, Chinese, Spanish, Portuguese, French, Italian, German and Russian. The
    text is normalised first (confusables, width, invisible characters; see
    :func:`~kernel.shadow.normalize_action`).
    """
    from kernel.injection import detect

    normalised = normalize_action(text)
    if _URL_EXEC.search(normalised) or _URL_EXEC.search(text):
        return "runs a downloaded script (a URL handed to an interpreter)"
    for pattern in _SKIP_CHECKS:
        if pattern.search(normalised) or pattern.search(text):
            return "tells me to skip a safety check or to obey outside content"
    signals = detect(text)
    if signals.score >= WRITEBACK_INJECTION_SCORE:
        flags = ", ".join(signals.flags) or f"score {signals.score:.2f}"
        return f"reads as a prompt injection ({flags})"
    return None


def poisoning_reason(text: str) -> str | None:
    """Return the poisoning category ``text`` matches, or None.

    A small, general lexical net over the normalised text (see
    :func:`~kernel.shadow.normalize_action`): instruction overrides ("ignore previous"), role
    spoofs ("you are now", ``system:``, ``<|im_start|>``), persistence phrases ("from now on"),
    secrets exfiltration and URLs carrying data (query strings, templates, long blobs, ``data:``).
    """
    normalised = normalize_action(text)
    for label, pattern in _POISONING:
        if pattern.search(normalised):
            return label
    return None


# --------------------------------------------------------------------------- internals


class _Review:
    """Accumulates applied values and rejections while a payload is validated."""

    def __init__(self) -> None:
        self.applied: dict[str, object] = {}
        self.rejected: list[str] = []
        self.tampered = False

    def reject(self, field: str, reason: str, *, tamper: bool = False) -> None:
        self.rejected.append(f"{field}: {reason}")
        self.tampered = self.tampered or tamper


def _normalise_key(key: str) -> list[str]:
    """Split a (possibly dotted) key into normalised segments."""
    folded = normalize_action(key)
    segments = (_WORD_GAP.sub("_", part).strip("_") for part in _SEPARATORS.split(folded))
    return [segment for segment in segments if segment]


def _compact(name: str) -> str:
    """Return a name without case, look-alike, separator or underscore differences."""
    return "".join(_normalise_key(name)).replace("_", "")


def _display(path: Sequence[str]) -> str:
    text = ascii(".".join(path) or "<empty>")[1:-1]
    return text if len(text) <= 80 else text[:77] + "..."


def _flatten(
    payload: Mapping[Any, object],
    prefix: tuple[str, ...],
    out: list[tuple[tuple[str, ...], object]],
    review: _Review,
) -> None:
    """Collect ``(normalised path, leaf value)`` pairs; mappings nest, anything else is a leaf."""
    for key, value in payload.items():
        if not isinstance(key, str):
            review.reject(_display((*prefix, repr(key)[:40])), "keys must be strings")
            continue
        path = (*prefix, *_normalise_key(key))
        if isinstance(value, Mapping):
            if len(path) >= MAX_DEPTH:
                review.reject(_display(path), f"nested deeper than {MAX_DEPTH} levels")
            elif not value:
                review.reject(_display(path), "empty mapping (nothing to write)")
            else:
                _flatten(value, path, out, review)
        else:
            out.append((path, value))


def _canonical(path: tuple[str, ...]) -> str | None:
    """Return the allowlisted canonical key of a normalised path, or None."""
    if path == (_SELF_TASKS,):
        return _SELF_TASKS
    if len(path) == 2 and path[0] == "style_profile" and path[1] in STYLE_RANGES:
        return f"style_profile.{path[1]}"
    rest = path[1:] if path[:1] == ("psyche",) else path
    key = "psyche." + ".".join(rest)
    return key if key in PSYCHE_KEYS else None


def _immutable_reason(path: tuple[str, ...]) -> str | None:
    """Say which immutable field a non-allowlisted path aims at, if any."""
    compact = [segment.replace("_", "") for segment in path]
    for reason, markers in _IMMUTABLE_MARKERS:
        if any(marker in segment for segment in compact for marker in markers):
            return reason
    if any(segment in _NAME_SEGMENTS for segment in compact):
        return "the persona name is immutable"
    return None


def _text(
    review: _Review,
    field: str,
    value: object,
    *,
    max_chars: int,
    min_chars: int = 1,
    screen: bool = False,
) -> str | None:
    """Return the stripped text of a valid text value, or reject it and return None.

    ``screen``: text the self will read back as its own (self-tasks, persona traits and tone)
    also passes :func:`unsafe_instruction`; a hit is tampering (the payload is quarantined).
    """
    if not isinstance(value, str):
        review.reject(field, f"expected text, got {type(value).__name__}")
        return None
    poison = poisoning_reason(value)
    if poison is not None:
        review.reject(field, f"poisoning pattern ({poison})", tamper=True)
        return None
    unsafe = unsafe_instruction(value) if screen else None
    if unsafe is not None:
        review.reject(field, unsafe, tamper=True)
        return None
    if any(unicodedata.category(ch) in {"Cc", "Cf"} for ch in value):
        review.reject(field, "contains control or invisible characters")
        return None
    text = value.strip()
    if not min_chars <= len(text) <= max_chars:
        review.reject(field, f"length {len(text)} outside {min_chars}..{max_chars} characters")
        return None
    return text


def _number(review: _Review, field: str, value: object) -> float | None:
    """Return a finite real number, or reject the field."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        review.reject(field, f"expected a number, got {type(value).__name__}")
        return None
    number = float(value)
    if not math.isfinite(number):
        review.reject(field, "not a finite number")
        return None
    return number


def _baseline(value: object) -> float:
    """Return a caller-supplied current value as a float (NaN when it is not a real number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def _bounded(
    review: _Review, field: str, value: object, *, lo: float, hi: float, current: float, jump: float
) -> None:
    """Apply a number in [lo, hi] that moves at most ``jump`` from ``current``."""
    number = _number(review, field, value)
    if number is None:
        return
    if not lo <= number <= hi:
        review.reject(field, f"{number} outside the allowed range [{lo}, {hi}]")
    elif not math.isfinite(current):
        review.reject(field, "the current value is not a finite number")
    elif abs(number - current) > jump + _EPS:
        review.reject(field, f"jump {abs(number - current):.3f} from {current} exceeds {jump}")
    else:
        review.applied[field] = number


def _text_list(review: _Review, field: str, value: object) -> None:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        review.reject(field, "expected a list of text")
        return
    if len(value) > MAX_LIST_ITEMS:
        review.reject(field, f"{len(value)} entries exceed the limit of {MAX_LIST_ITEMS}")
        return
    items: list[str] = []
    for index, item in enumerate(value):
        text = _text(review, f"{field}[{index}]", item, max_chars=MAX_TRAIT_CHARS, screen=True)
        if text is None:
            return
        items.append(text)
    if len({item.casefold() for item in items}) != len(items):
        review.reject(field, "duplicate entries")
        return
    review.applied[field] = items


def _grammar(review: _Review, value: object, *, user_initiated: bool) -> None:
    text = _text(review, _GRAMMAR, value, max_chars=256)
    if text is None:
        return
    if text in GRAMMARS:
        review.applied[_GRAMMAR] = text
    elif user_initiated and text.endswith(".toml") and (problem := grammar_path_problem(text)):
        review.reject(_GRAMMAR, problem, tamper=True)
    elif user_initiated and text.endswith(".toml"):
        review.applied[_GRAMMAR] = text
    else:
        allowed = "narrative, formal, terse" + (" or a .toml path" if user_initiated else "")
        review.reject(_GRAMMAR, f"must be one of {allowed}")


def grammar_path_problem(path: str) -> str | None:
    """Say why a custom grammar path may not be kept, or None.

    A custom grammar file must live inside the instance: the path is relative (to the psyche's
    folder), with no ``..`` step, no home (``~``), drive or backslash form and no NUL. Where it
    resolves on disk is checked again when it is read (:func:`state.grammars.resolve_grammar`).
    """
    if "\x00" in path or "\\" in path:
        return "grammar path has a NUL or a backslash"
    if path.startswith(("/", "~")) or re.match(r"[A-Za-z]:", path):
        return "grammar file must live inside the instance (relative path, no ~ or drive)"
    if ".." in re.split(r"/+", path):
        return "grammar file must live inside the instance (no '..' in the path)"
    return None


def _name(review: _Review, value: object) -> None:
    text = _text(review, _NAME, value, max_chars=MAX_NAME_CHARS)
    if text is not None:
        review.applied[_NAME] = Persona(name=text).name


def _as_pattern(item: object) -> ShadowPattern:
    if isinstance(item, ShadowPattern):
        return item.model_copy(deep=True)
    return ShadowPattern.model_validate(item)


def _veto_patterns(review: _Review, current: Self, value: object, *, user_initiated: bool) -> None:
    """Validate a complete proposed veto list against the current one and the catalogue."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        review.reject(_VETO, "expected the complete list of veto patterns", tamper=True)
        return
    if not value:
        review.reject(_VETO, "the veto list can never be emptied", tamper=True)
        return
    try:
        proposed = [_as_pattern(item) for item in value]
    except ValidationError as exc:
        review.reject(_VETO, f"invalid pattern ({exc.error_count()} errors)", tamper=True)
        return
    names = [pattern.name for pattern in proposed]
    if len(set(names)) != len(names):
        review.reject(_VETO, "duplicate pattern names", tamper=True)
        return
    existing = {p.name: p.model_dump(mode="json") for p in current.psyche.shadow.veto_patterns}
    builtin = {p.name: p.model_dump(mode="json") for p in DEFAULT_VETO_PATTERNS}
    by_name = {pattern.name: pattern.model_dump(mode="json") for pattern in proposed}
    for name, catalogue_version in builtin.items():
        expected = existing.get(name, catalogue_version)
        if name not in by_name:
            review.reject(_VETO, f"removes built-in pattern {name!r}", tamper=True)
            return
        if by_name[name] != expected:
            review.reject(_VETO, f"edits built-in pattern {name!r}", tamper=True)
            return
    builtin_keys = {_compact(name) for name in builtin}
    for name in by_name:
        if name not in builtin and _compact(name) in builtin_keys:
            review.reject(_VETO, f"{name!r} imitates a built-in pattern name", tamper=True)
            return
    if not user_initiated and list(by_name.values()) != list(existing.values()):
        reason = "only the user may add, edit, remove or reorder veto patterns"
        review.reject(_VETO, reason, tamper=True)
        return
    user_now = {name: dump for name, dump in existing.items() if name not in builtin}
    user_new = {name: dump for name, dump in by_name.items() if name not in builtin}
    if user_new != user_now:
        changed = [
            p for p in proposed if p.name in user_new and user_new[p.name] != user_now.get(p.name)
        ]
        for pattern in changed:
            field = f"{_VETO}.{_display([pattern.name])}"
            for text in (pattern.name, pattern.explanation or "-"):
                if _text(review, field, text, max_chars=MAX_EXPLANATION_CHARS) is None:
                    return
        try:
            validate_patterns(p for p in proposed if p.name in user_new)
        except ValueError as exc:
            review.reject(_VETO, str(exc))
            return
    review.applied[_VETO] = [by_name[name] for name in names]


def _expiry(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


def _self_tasks(
    review: _Review, value: object, *, now: datetime, pending: int, user_initiated: bool
) -> None:
    """Validate proposed self-tasks: count, text length, poisoning and expiry bounds."""
    limits = SELF_TASK_LIMITS
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        review.reject(_SELF_TASKS, "expected a list of tasks")
        return
    if len(value) + pending > limits.max_tasks:
        review.reject(
            _SELF_TASKS,
            f"{len(value)} tasks plus {pending} pending exceed the limit of {limits.max_tasks}",
        )
        return
    accepted: list[dict[str, object]] = []
    seen: set[str] = set()
    for index, item in enumerate(value):
        field = f"{_SELF_TASKS}[{index}]"
        if not isinstance(item, Mapping):
            review.reject(field, "expected {text, expires_at | expires_in_days}")
            continue
        unknown = set(item) - {"text", "expires_at", "expires_in_days"}
        if unknown:
            review.reject(field, f"unknown task keys {sorted(map(str, unknown))}")
            continue
        text = _text(
            review, f"{field}.text", item.get("text"), max_chars=limits.max_chars, screen=True
        )
        if text is None:
            continue
        if text.casefold() in seen:
            review.reject(field, "duplicate task")
            continue
        if ("expires_at" in item) == ("expires_in_days" in item):
            review.reject(field, "give exactly one of expires_at or expires_in_days")
            continue
        if "expires_in_days" in item:
            days = item["expires_in_days"]
            if isinstance(days, bool) or not isinstance(days, int):
                review.reject(field, "expires_in_days must be an integer")
                continue
            if not limits.min_days <= days <= limits.max_days:
                review.reject(
                    field, f"expiry {days} days outside {limits.min_days}..{limits.max_days}"
                )
                continue
            expires = now + timedelta(days=days)
        else:
            parsed = _expiry(item["expires_at"])
            if parsed is None or parsed.tzinfo is None or parsed.utcoffset() is None:
                review.reject(field, "expires_at must be an aware datetime (ISO 8601 with offset)")
                continue
            expires = parsed
            ahead = expires - now
            if not timedelta(days=limits.min_days) <= ahead <= timedelta(days=limits.max_days):
                review.reject(
                    field, f"expiry not within {limits.min_days}..{limits.max_days} days of now"
                )
                continue
        seen.add(text.casefold())
        accepted.append(
            {
                "text": text,
                "expires_at": expires.astimezone(UTC),
                "origin": "user" if user_initiated else "agent",
            }
        )
    if accepted:
        review.applied[_SELF_TASKS] = accepted


# --------------------------------------------------------------------------- public API


def validate_writeback(
    current: Self,
    payload: Mapping[str, object],
    *,
    user_initiated: bool = False,
    now: datetime,
    style_profile: Mapping[str, float] | None = None,
    pending_self_tasks: int = 0,
) -> WritebackResult:
    """Validate a proposed writeback against the current self; return what may be applied.

    Args:
        current: The self the writeback would change.
        payload: Proposed changes, nested or flattened (see the module docstring).
        user_initiated: The user (not the agent) asked for the change: allows renaming the
            persona, changing user veto patterns and a ``.toml`` grammar path.
        now: An aware datetime; self-task expiry is measured from it.
        style_profile: The current style (baseline of the jump check); defaults to
            :data:`STYLE_DEFAULTS`.
        pending_self_tasks: Self-tasks already queued; they count against the task limit.

    Returns:
        The validation result; ``applied`` is empty when the payload was quarantined.

    Raises:
        ValueError: ``now`` is naive or ``pending_self_tasks`` is negative (caller bugs).
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be an aware datetime")
    if pending_self_tasks < 0:
        raise ValueError("pending_self_tasks must be >= 0")
    review = _Review()
    if not isinstance(payload, Mapping):
        review.reject("payload", "expected a mapping")
        return WritebackResult(False, {}, tuple(review.rejected))
    leaves: list[tuple[tuple[str, ...], object]] = []
    _flatten(payload, (), leaves, review)
    if len(leaves) > MAX_FIELDS:
        review.reject("payload", f"{len(leaves)} fields exceed the limit of {MAX_FIELDS}")
        return WritebackResult(False, {}, tuple(review.rejected))
    counts: dict[str, int] = {}
    for path, _ in leaves:
        key = _canonical(path)
        if key is not None:
            counts[key] = counts.get(key, 0) + 1
    style = {**STYLE_DEFAULTS, **(style_profile or {})}
    archetypes = current.psyche.archetypes.as_dict()
    for path, value in leaves:
        key = _canonical(path)
        shown = _display(path)
        if key is None:
            reason = _immutable_reason(path)
            if reason is not None:
                review.reject(shown, reason, tamper=True)
            else:
                review.reject(shown, "unknown field (not in the writeback allowlist)")
        elif key == _NAME and not user_initiated:
            review.reject(shown, "the persona name is immutable", tamper=True)
        elif counts[key] > 1:
            review.reject(shown, f"given more than once (as {key})", tamper=key in {_NAME, _VETO})
        elif key == _NAME:
            _name(review, value)
        elif key == _GRAMMAR:
            _grammar(review, value, user_initiated=user_initiated)
        elif key in {_TRAITS, _TONE}:
            _text_list(review, key, value)
        elif key == _VETO:
            _veto_patterns(review, current, value, user_initiated=user_initiated)
        elif key == _SELF_TASKS:
            _self_tasks(
                review, value, now=now, pending=pending_self_tasks, user_initiated=user_initiated
            )
        elif key.startswith("style_profile."):
            name = key.removeprefix("style_profile.")
            lo, hi = STYLE_RANGES[name]
            _bounded(
                review,
                key,
                value,
                lo=lo,
                hi=hi,
                current=_baseline(style[name]),
                jump=STYLE_MAX_JUMP,
            )
        else:
            name = key.removeprefix("psyche.archetypes.")
            lo, hi = ARCHETYPE_RANGE
            _bounded(
                review, key, value, lo=lo, hi=hi, current=archetypes[name], jump=ARCHETYPE_MAX_JUMP
            )
    if review.tampered:
        review.rejected.append(
            "payload: quarantined (immutable field or poisoning); nothing applied"
        )
        return WritebackResult(False, {}, tuple(review.rejected))
    return WritebackResult(not review.rejected, review.applied, tuple(review.rejected))


def apply_writeback(current: Self, applied: Mapping[str, object]) -> Self:
    """Return ``current`` with the psyche keys of a validated ``applied`` mapping written.

    Only :data:`PSYCHE_KEYS` are written (``self_tasks`` and ``style_profile.*`` are left to the
    caller); any other key of :data:`ALLOWED_KEYS` is ignored. The identity is never touched.

    Raises:
        ValueError: A key outside :data:`ALLOWED_KEYS` (``applied`` did not come from
            :func:`validate_writeback`).
    """
    unknown = set(applied) - ALLOWED_KEYS
    if unknown:
        raise ValueError(f"not writeback keys: {sorted(unknown)}")
    psyche = current.psyche.model_dump(mode="python")
    for key in PSYCHE_KEYS & set(applied):
        section, field = key.removeprefix("psyche.").split(".")
        psyche[section][field] = applied[key]
    return current.model_copy(update={"psyche": Psyche.model_validate(psyche)})


# --------------------------------------------------------------------------- norms

MAX_NORM_CHARS: Final = 200
"""Characters of one norm's text (a prompt line such as ``Never use bullet points.``)."""

NORM_INJECTION_SCORE: Final = 0.35
"""A norm text whose injection score (``kernel.injection.detect``) reaches this is refused."""

_NORM_URL = re.compile(
    r"\b(?:https?|ftp|file)://|\bwww\.\S|\b[\w-]+\.(?:sh|exe|bat|ps1|py|js)\b|"
    r"\b(?:curl|wget|pip install|npm install|chmod|sudo)\b",
    re.IGNORECASE,
)
_NORM_SAFETY_SKIP = re.compile(
    r"\b(?:skip|bypass|disable|ignore|turn off|switch off|override|circumvent|drop|remove|"
    r"without|no|never (?:run|use|apply|do)|stop (?:running|using|applying|doing))\b.{0,40}?"
    r"\b(?:safety|security|guard(?:rails?)?|checks?|filters?|moderation|veto(?:es)?|"
    r"verification|confirmations?|screening|scans?|scanning|sandbox(?:ing)?|permissions?|"
    r"restrictions?|warnings?|shadow)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class NormCheck:
    """The outcome of :func:`validate_norm`: accepted, or refused with the reason."""

    accepted: bool
    reason: str = ""


def validate_norm(text: object, *, source: str, tainted: bool = False) -> NormCheck:
    """Validate a norm (a standing instruction about how I answer) before it is recorded.

    A norm is a self-change: it is refused when it comes from an untrusted source (anything
    :func:`kernel.injection.classify` does not call trusted, or a tainted turn), when its text is
    not 1..:data:`MAX_NORM_CHARS` characters of plain text, when it reads as a prompt injection
    (:func:`kernel.injection.detect` or :func:`poisoning_reason`), carries a URL or a command to
    run, or tells me to skip a safety check.
    """
    from kernel.injection import classify, detect

    if tainted or classify(source) != "trusted":
        return NormCheck(False, f"untrusted source {source!r}: only the user sets norms")
    if not isinstance(text, str):
        return NormCheck(False, f"expected text, got {type(text).__name__}")
    if any(unicodedata.category(ch) in {"Cc", "Cf"} for ch in text):
        return NormCheck(False, "contains control or invisible characters")
    stripped = text.strip()
    if not 1 <= len(stripped) <= MAX_NORM_CHARS:
        return NormCheck(False, f"length {len(stripped)} outside 1..{MAX_NORM_CHARS} characters")
    signals = detect(stripped)
    if signals.score >= NORM_INJECTION_SCORE:
        flags = ", ".join(signals.flags) or f"score {signals.score:.2f}"
        return NormCheck(False, f"reads as a prompt injection ({flags})")
    poison = poisoning_reason(stripped)
    if poison is not None:
        return NormCheck(False, f"poisoning pattern ({poison})")
    if _NORM_URL.search(stripped):
        return NormCheck(False, "contains a URL or a command to run")
    if _NORM_SAFETY_SKIP.search(normalize_action(stripped)):
        return NormCheck(False, "tells me to skip a safety check")
    unsafe = unsafe_instruction(stripped)
    if unsafe is not None:
        return NormCheck(False, unsafe)
    return NormCheck(True)


# --------------------------------------------------------------------------- reflection's edits

MAX_GOAL_NAME_CHARS: Final = 200
"""Characters of a goal a reflection creates (the goal record's own limit)."""


def validate_self_text(text: object, *, field: str, max_chars: int) -> NormCheck:
    """Validate text a reflection writes into the self (a soul narrative, a new goal's name).

    The writeback guard's net for text: 1..``max_chars`` characters of plain text, no control or
    invisible characters, no poisoning phrase (:func:`poisoning_reason`) and nothing that reads
    as a prompt injection (:func:`kernel.injection.detect`). Nothing here performs I/O.
    """
    from kernel.injection import detect

    if not isinstance(text, str):
        return NormCheck(False, f"{field}: expected text, got {type(text).__name__}")
    if any(unicodedata.category(ch) in {"Cc", "Cf"} and ch != "\n" for ch in text):
        return NormCheck(False, f"{field}: contains control or invisible characters")
    stripped = text.strip()
    if not 1 <= len(stripped) <= max_chars:
        return NormCheck(False, f"{field}: length {len(stripped)} outside 1..{max_chars}")
    poison = poisoning_reason(stripped)
    if poison is not None:
        return NormCheck(False, f"{field}: poisoning pattern ({poison})")
    signals = detect(stripped)
    if signals.score >= NORM_INJECTION_SCORE:
        flags = ", ".join(signals.flags) or f"score {signals.score:.2f}"
        return NormCheck(False, f"{field}: reads as a prompt injection ({flags})")
    unsafe = unsafe_instruction(stripped)
    if unsafe is not None:
        return NormCheck(False, f"{field}: {unsafe}")
    return NormCheck(True)

"""The psyche's shadow check: hard vetoes and soft biases on a tool action (Jungian psyche, 000).

The Act phase describes an action as ``tool={name} input={input!r}`` and asks the shadow whether
it may run. Each :class:`~state.self_state.ShadowPattern` holds triggers in a small language that
users also write in ``psyche.toml``:

* A **plain trigger** (``"drop table"``) is a phrase. Trigger and action are normalised the same
  way (see :func:`normalize_action`) and the phrase must occur with word boundaries at its
  word-character ends; spaces, ``-`` and ``_`` between its words are interchangeable, so
  ``"delete all"`` fires on ``DELETE-ALL`` and ``delete_all``.
* A **regex trigger** starts with ``re:``; the rest is a Python regex searched (``re.IGNORECASE``)
  in the normalised description ``tool=<tool> input=<input>``. The text is casefolded and
  quote-free, so write lowercase and no quotes. A regex that does not compile, or that matches the
  empty string, is rejected with a ``ValueError`` naming the pattern (:func:`validate_shadow`).

Two general rules keep look-alikes from firing (they apply to every pattern):

* **Use, not mention.** A match that lies wholly inside the input of a read-only tool (search,
  fetch, lookup, recall...), or inside an input that is a single question or request for an
  explanation on a tool that does not execute code, describes the action instead of doing it and
  does not fire. A match that covers the ``tool=`` part always fires, so ``re:^tool=search .*x``
  still vetoes searches for ``x``.
* **Noun compounds in prose.** A multi-word plain trigger that ends in a content word does not fire
  where the next word extends that noun (``drop table`` in ``drop table tennis from the plan``),
  provided the action is prose: lower-case, on a tool that does not execute code, without shell or
  SQL punctuation. ``DROP TABLE users``, ``drop table users;`` or any match on a ``sql``/``shell``
  tool still fire. Such a compound also silences every other trigger whose match starts there.

Vetoes are hard blocks (the first matching veto pattern wins); biases are soft penalties whose
severities add up, capped at 1.0.
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from kernel.patterns import ShadowPattern
from kernel.shadow_catalogue import DEFAULT_BIAS_PATTERNS, DEFAULT_VETO_PATTERNS


def _seed_vetoes() -> list[ShadowPattern]:
    """Return the seed's ``destructive_action`` veto plus the destructive-action catalogue."""
    return [p.model_copy(deep=True) for p in DEFAULT_VETO_PATTERNS]


def _seed_biases() -> list[ShadowPattern]:
    """Return the seed's ``repetitive_loop`` bias plus the catalogue's soft biases."""
    return [p.model_copy(deep=True) for p in DEFAULT_BIAS_PATTERNS]


class Shadow(BaseModel):
    """Constrained anti-patterns: hard vetoes and soft biases."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    veto_patterns: list[ShadowPattern] = Field(default_factory=_seed_vetoes)
    bias_patterns: list[ShadowPattern] = Field(default_factory=_seed_biases)


REGEX_PREFIX = "re:"
"""A trigger starting with this prefix is a regular expression."""

MAX_BIAS = 1.0

_ESCAPE_RE = re.compile(
    r"\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|x([0-9a-fA-F]{2})|([nrtvfab0])|(\\)|(['\"]))"
)
_LATIN_BLOCKS = (
    (0x00C0, 0x02B0),
    (0x1D00, 0x1DC0),
    (0x1E00, 0x1F00),
    (0x2C60, 0x2C80),
    (0xA720, 0xA800),
    (0xAB30, 0xAB70),
)
_LATIN_NAME_RE = re.compile(
    r"LATIN (?:(CAPITAL|SMALL) )?LETTER (?:SMALL CAPITAL )?([A-Z])(?: WITH .*)?$"
)
_IFS_RE = re.compile(r"\$\{?IFS\}?", re.IGNORECASE)
_SQL_COMMENT_RE = re.compile(r"/\*(?!/)(?:[^*]|\*(?!/)){0,200}?\*/")
_SHELL_ESCAPE_RE = re.compile(r"(?<![^\s\w])\\(?=\w)")
_ASCII_QUOTES = frozenset("'\"`\u00b4\u2032\u2033\u2034\u2035\u2036\u2037")
_DESCRIPTION_RE = re.compile(r"\A\s*tool=(?P<tool>\S*)\s+input=(?P<input>.*)\Z", re.DOTALL)
_BASE64_RE = re.compile(r"(?<![\w+/=])[A-Za-z0-9+/]{6,}={0,2}(?![\w+/=])")
_BRACE_LIST_RE = re.compile(r"\{([^{}\s,]+(?:,[^{}\s,]*)+)\}")
_TOOL_WORD_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_WORD_SPLIT_RE = re.compile(r"[\s_]+|(?<=[^\W_])-(?=[^\W_])")
_NEXT_WORD_RE = re.compile(r"[\s_-]+([a-z]+)(?![^\W_])")
_CODE_PUNCTUATION_RE = re.compile(r"[;|&$<>`]")
_QUESTION_RE = re.compile(
    r"\A[\W_]*(?:\w+:\s*)?(?:what|whats|why|how|when|where|which|who|explain|describe|define|summari[sz]e"
    r"|translate|paraphrase|meaning\s+of|tell\s+me\s+(?:about|what|why|how))\b"
)
_CLAUSE_BREAK_RE = re.compile(r"[;!|&,]|[.:?]\s+\S|\bthen\b|\bafter\s+that\b")

_READ_ONLY_TOOL_WORDS = frozenset(
    {
        "search", "lookup", "fetch", "browse", "wiki", "wikipedia", "recall", "similarity",
        "retrieve", "retrieval", "read", "reader", "get", "view", "viewer", "define",
        "dictionary", "thesaurus", "news", "weather", "translate", "summarize", "summarise",
        "explain", "arxiv", "scholar",
    }
)  # fmt: skip
_EXECUTOR_TOOL_WORDS = frozenset(
    {
        "shell", "bash", "sh", "zsh", "fish", "cmd", "powershell", "pwsh", "terminal", "exec",
        "execute", "executor", "run", "runner", "command", "cli", "console", "sql", "db",
        "database", "psql", "mysql", "sqlite", "sqlite3", "postgres", "postgresql", "mongo",
        "mongodb", "redis", "python", "py", "code", "script", "kubectl", "k8s", "kubernetes",
        "git", "ssh", "docker", "aws", "gcloud", "az", "azure", "terraform", "eval", "repl",
        "jupyter", "notebook", "sandbox", "interpreter", "subprocess", "system",
    }
)  # fmt: skip
_MUTATING_TOOL_WORDS = _EXECUTOR_TOOL_WORDS | frozenset(
    {
        "write", "writer", "delete", "remove", "update", "edit", "editor", "put", "post",
        "send", "set", "create", "modify", "upload", "manage", "admin", "patch", "move",
    }
)  # fmt: skip
_NOUN_LINKS = frozenset({"of"})
"""Words that continue a noun phrase although they are function words (table of contents)."""
_FUNCTION_WORDS = frozenset(
    {
        "a", "an", "the", "this", "that", "these", "those", "my", "your", "our", "their",
        "his", "her", "its", "all", "every", "each", "any", "some", "no", "none", "both",
        "either", "neither", "everything", "everyone", "anything", "nothing", "it", "them",
        "me", "us", "him", "you", "i", "we", "they", "from", "to", "in", "on", "at", "of",
        "for", "with", "by", "into", "onto", "out", "off", "over", "under", "about", "and",
        "or", "but", "if", "then", "than", "so", "as", "is", "are", "was", "were", "be",
        "been", "do", "does", "did", "not", "now", "please", "exists", "where",
        "when", "which", "who", "whose", "how", "why", "what", "there", "here", "after",
        "before", "until", "via", "per", "without", "within", "except", "only", "just",
        "also", "too", "again", "first", "last", "next", "can", "could", "will", "would",
        "should", "may", "might", "must", "shall",
    }
)  # fmt: skip


# --------------------------------------------------------------------------- normalisation


def action_description(tool: str, tool_input: object) -> str:
    """Describe a tool action the way the psyche spec does: ``tool={name} input={input!r}``."""
    return f"tool={tool} input={tool_input!r}"


def _latin_name_table() -> dict[int, str]:
    """Map decorated Latin letters (small capitals, hooks, strokes) to ASCII by Unicode name."""
    table: dict[int, str] = {}
    for start, stop in _LATIN_BLOCKS:
        for code in range(start, stop):
            match = _LATIN_NAME_RE.match(unicodedata.name(chr(code), ""))
            if match is not None:
                letter = match.group(2)
                table[code] = letter if match.group(1) == "CAPITAL" else letter.lower()
    return table


@functools.lru_cache(maxsize=1)
def confusable_table() -> Mapping[int, str]:
    """Build the non-ASCII -> ASCII skeleton table (confusables package plus Latin names)."""
    try:
        module = importlib.import_module("confusable_homoglyphs.confusables")
    except ImportError:
        return _latin_name_table()
    data = getattr(module, "confusables_data", None)
    if not isinstance(data, dict):
        return _latin_name_table()

    def ascii_glyph(char: str) -> str | None:
        """Return the first printable ASCII homoglyph listed for ``char``."""
        for entry in data.get(char, ()):
            glyph = str(entry.get("c", "")).replace("\u200e", "") if isinstance(entry, dict) else ""
            if glyph and glyph.isascii() and glyph.isprintable():
                return glyph
        return None

    table = _latin_name_table()
    for char in data:
        if not isinstance(char, str) or len(char) != 1 or char.isascii():
            continue
        glyph = ascii_glyph(char)
        if glyph == "l" and char.isupper():
            glyph = "I"  # UTS #39 folds capital I onto l; keep capitals capital
        if glyph is None and char.islower() and len(char.upper()) == 1:
            upper = ascii_glyph(char.upper())  # small-capital look-alikes: к м т н в
            if upper is not None and upper.isalpha():
                glyph = upper.lower()
        if glyph is not None:
            table[ord(char)] = glyph
    return table


def confusables_available() -> bool:
    """Return whether the ``confusable_homoglyphs`` skeleton data can be imported."""
    try:
        importlib.import_module("confusable_homoglyphs")
    except ImportError:
        return False
    return True


def decode_escapes(text: str) -> str:
    """Decode backslash escapes (as ``repr`` and JSON write them), two levels deep."""

    def replace(match: re.Match[str]) -> str:
        """Return the character an escape sequence stands for."""
        code = match.group(1) or match.group(2) or match.group(3)
        if code is not None:
            value = int(code, 16)
            return chr(value) if value <= 0x10FFFF and not 0xD800 <= value <= 0xDFFF else " "
        if match.group(4) is not None:
            return " "
        if match.group(5) is not None:
            return "\\"
        return match.group(6)

    for _ in range(2):
        decoded = _ESCAPE_RE.sub(replace, text)
        if decoded == text:
            break
        text = decoded
    return text


def _strip_invisible(text: str) -> str:
    """Drop format characters (zero-width, bidi, tags) and combining marks, then recompose."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(ch for ch in decomposed if unicodedata.category(ch) not in {"Cf", "Mn", "Me"})
    return unicodedata.normalize("NFKC", kept)


def _unify_punctuation(text: str) -> str:
    """Map dashes to ``-``, whitespace to a space, and drop quote characters."""
    out: list[str] = []
    for ch in text:
        category = unicodedata.category(ch)
        if ch in _ASCII_QUOTES or category in {"Pi", "Pf"}:
            continue
        if category == "Pd" or ch == "\u2212":
            out.append("-")
        elif ch.isspace() or category in {"Zs", "Zl", "Zp", "Cc"}:
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _fold(text: str) -> str:
    """Casefold character by character, keeping offsets aligned with the input."""
    out: list[str] = []
    for ch in text:
        folded = ch.casefold()
        if len(folded) != 1:
            folded = ch.lower() if len(ch.lower()) == 1 else ch
        out.append(folded)
    return "".join(out)


def _normalize_cased(text: str) -> str:
    """Normalise everything but letter case (see :func:`normalize_action`)."""
    text = decode_escapes(text)
    text = _IFS_RE.sub(" ", text)
    text = unicodedata.normalize("NFKC", text)
    text = _strip_invisible(text)
    text = _strip_invisible(text.translate(confusable_table()))
    text = _unify_punctuation(text)
    text = _SQL_COMMENT_RE.sub(" ", text)
    text = _SHELL_ESCAPE_RE.sub("", text)
    return " ".join(text.split())


def normalize_action(text: str) -> str:
    r"""Normalise an action description (or a plain trigger) for matching.

    Steps: decode ``repr``/JSON escapes (``\\n``, ``\\u200b``...) and ``$IFS``; NFKC (fullwidth,
    mathematical and circled letters); drop zero-width, bidi and tag characters and combining
    marks; map Unicode confusables (Cyrillic/Greek look-alikes) to their ASCII skeleton; map every
    dash to ``-`` and every space to `` ``; drop quote characters (``' " `` and typographic
    quotes), SQL ``/* */`` comments and shell backslash escapes; casefold; collapse whitespace.
    """
    return _fold(_normalize_cased(text))


# --------------------------------------------------------------------------- triggers


@dataclass(frozen=True, slots=True)
class CompiledTrigger:
    """A trigger ready to match: its source, regex and the facts the prose rules need."""

    source: str
    regex: re.Pattern[str]
    plain: bool
    multiword: bool
    ends_in_content_word: bool


@functools.lru_cache(maxsize=4096)
def compile_trigger(trigger: str) -> CompiledTrigger:
    """Compile one trigger of the shadow language; raise ``ValueError`` if it is unusable."""
    if trigger.startswith(REGEX_PREFIX):
        source = trigger[len(REGEX_PREFIX) :]
        try:
            regex = re.compile(source, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"invalid regex trigger {trigger!r}: {exc}") from exc
        if regex.search("") is not None:
            raise ValueError(f"regex trigger {trigger!r} matches the empty string")
        return CompiledTrigger(
            trigger, regex, plain=False, multiword=False, ends_in_content_word=False
        )
    phrase = normalize_action(trigger)
    words = [word for word in _WORD_SPLIT_RE.split(phrase) if word]
    if not words:
        raise ValueError(f"plain trigger {trigger!r} is empty after normalisation")
    body = r"[\s_-]+".join(re.escape(word) for word in words)
    head = r"(?<![^\W_])" if _is_word_char(phrase[0]) else ""
    tail = r"(?![^\W_]|-[^\W_])" if _is_word_char(phrase[-1]) else ""
    last = words[-1]
    return CompiledTrigger(
        trigger,
        re.compile(head + body + tail),
        plain=True,
        multiword=len(words) > 1,
        ends_in_content_word=last.isalpha() and last.isascii() and last not in _FUNCTION_WORDS,
    )


def _is_word_char(ch: str) -> bool:
    """Return whether ``ch`` is a letter or digit (underscore counts as a separator)."""
    return ch.isalnum()


@functools.lru_cache(maxsize=1024)
def _compile_pattern(name: str, triggers: tuple[str, ...]) -> tuple[CompiledTrigger, ...]:
    """Compile a pattern's triggers, naming the pattern in any error."""
    compiled: list[CompiledTrigger] = []
    for trigger in triggers:
        try:
            compiled.append(compile_trigger(trigger))
        except ValueError as exc:
            raise ValueError(f"shadow pattern {name!r}: {exc}") from exc
    return tuple(compiled)


def validate_patterns(patterns: Iterable[ShadowPattern]) -> None:
    """Compile every trigger of ``patterns``; raise ``ValueError`` naming the first bad pattern."""
    for pattern in patterns:
        _compile_pattern(pattern.name, tuple(pattern.triggers))


def validate_shadow(shadow: Shadow) -> None:
    """Compile every veto and bias trigger (call when loading a psyche); raise ``ValueError``."""
    validate_patterns(shadow.veto_patterns)
    validate_patterns(shadow.bias_patterns)


# --------------------------------------------------------------------------- action view


@dataclass(frozen=True, slots=True)
class _ActionView:
    """A normalised action plus the context the use/mention and prose rules need."""

    text: str
    cased: str
    input_start: int
    read_only_tool: bool
    executor_tool: bool
    question: bool
    code_like: bool


def _tool_words(tool: str) -> frozenset[str]:
    """Split a tool name into lower-case words (snake, kebab and camel case)."""
    return frozenset(word.lower() for word in _TOOL_WORD_RE.findall(tool))


def _decoded_payloads(text: str) -> list[str]:
    """Return hidden payloads: printable base64 tokens and shell brace lists ``{rm,-rf,/}``."""
    payloads: list[str] = []
    for token in _BASE64_RE.findall(text):
        if len(token) < 8 or len(token) % 4 or token.isdigit():
            continue
        try:
            decoded = base64.b64decode(token, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            continue
        if decoded.strip() and all(ch.isprintable() or ch in "\t\n\r" for ch in decoded):
            payloads.append(decoded)
    for items in _BRACE_LIST_RE.findall(text):
        payloads.append(" ".join(items.split(",")))
    return payloads


def _view(action_desc: str) -> _ActionView:
    """Normalise a description and classify its tool and input."""
    match = _DESCRIPTION_RE.match(action_desc)
    tool, raw_input = (match["tool"], match["input"]) if match else ("", action_desc)
    extra = _decoded_payloads(decode_escapes(raw_input))
    input_cased = _normalize_cased(" ; ".join([raw_input, *extra]) if extra else raw_input)
    prefix = f"tool={_normalize_cased(tool)} input=" if match else ""
    cased = prefix + input_cased
    text = _fold(cased)
    input_text = text[len(prefix) :]
    words = _tool_words(tool)
    executor = bool(words & _EXECUTOR_TOOL_WORDS)
    return _ActionView(
        text=text,
        cased=cased,
        input_start=len(prefix),
        read_only_tool=bool(words & _READ_ONLY_TOOL_WORDS) and not words & _MUTATING_TOOL_WORDS,
        executor_tool=executor,
        question=not executor
        and _QUESTION_RE.match(input_text) is not None
        and _CLAUSE_BREAK_RE.search(input_text) is None,
        code_like=executor or _CODE_PUNCTUATION_RE.search(input_text) is not None,
    )


def _is_mention(view: _ActionView, match: re.Match[str]) -> bool:
    """Return whether a match only describes the action (read-only tool or a question)."""
    inside_input = match.start() >= view.input_start
    return inside_input and (view.read_only_tool or view.question)


def _is_prose_compound(view: _ActionView, trigger: CompiledTrigger, match: re.Match[str]) -> bool:
    """Return whether a plain phrase is only the front of a longer noun in prose (table tennis)."""
    if not (trigger.plain and trigger.multiword and trigger.ends_in_content_word):
        return False
    if view.code_like or match.start() < view.input_start:
        return False
    span = view.cased[match.start() + 1 : match.end()]
    if span != span.lower():
        return False  # upper or mixed case reads as code (DROP TABLE), or as an evasion
    following = _NEXT_WORD_RE.match(view.text, match.end())
    if following is None:
        return False
    word = following.group(1)
    return word in _NOUN_LINKS or word not in _FUNCTION_WORDS


def _compound_starts(
    view: _ActionView, patterns: Iterable[tuple[CompiledTrigger, ...]]
) -> set[int]:
    """Return the offsets where a plain trigger was found to start a noun compound in prose."""
    starts: set[int] = set()
    for triggers in patterns:
        for trigger in triggers:
            if not (trigger.plain and trigger.multiword and trigger.ends_in_content_word):
                continue
            for match in trigger.regex.finditer(view.text):
                if _is_prose_compound(view, trigger, match):
                    starts.add(match.start())
    return starts


def _first_hit(
    view: _ActionView, triggers: tuple[CompiledTrigger, ...], compounds: set[int]
) -> tuple[str, str] | None:
    """Return ``(trigger, matched text)`` of the first trigger that fires, else ``None``."""
    for trigger in triggers:
        for match in trigger.regex.finditer(view.text):
            if match.end() == match.start() or match.start() in compounds:
                continue
            if _is_mention(view, match):
                continue
            return trigger.source, match.group(0)
    return None


# --------------------------------------------------------------------------- verdict


@dataclass(frozen=True, slots=True)
class ShadowVerdict:
    """The shadow's answer for one action: a hard veto, and/or a soft bias penalty."""

    veto: bool = False
    veto_pattern: str | None = None
    matched_trigger: str | None = None
    matched_text: str | None = None
    explanation: str | None = None
    bias: float = 0.0
    bias_patterns: list[str] = field(default_factory=list)

    @property
    def proceed(self) -> bool:
        """Return whether the action may run (no veto; biases only log a penalty)."""
        return not self.veto


def check_shadow(action_desc: str, shadow: Shadow) -> ShadowVerdict:
    """Check an action description against the shadow's veto and bias patterns."""
    view = _view(action_desc)
    vetoes = [(p, _compile_pattern(p.name, tuple(p.triggers))) for p in shadow.veto_patterns]
    biases = [(p, _compile_pattern(p.name, tuple(p.triggers))) for p in shadow.bias_patterns]
    compounds = _compound_starts(view, [triggers for _, triggers in vetoes + biases])
    veto: tuple[ShadowPattern, str, str] | None = None
    for pattern, triggers in vetoes:
        hit = _first_hit(view, triggers, compounds)
        if hit is not None:
            veto = (pattern, *hit)
            break
    bias = 0.0
    bias_names: list[str] = []
    for pattern, triggers in biases:
        if _first_hit(view, triggers, compounds) is not None:
            bias += pattern.severity
            bias_names.append(pattern.name)
    if veto is None:
        return ShadowVerdict(bias=min(bias, MAX_BIAS), bias_patterns=bias_names)
    pattern, trigger, text = veto
    return ShadowVerdict(
        veto=True,
        veto_pattern=pattern.name,
        matched_trigger=trigger,
        matched_text=text,
        explanation=pattern.explanation,
        bias=min(bias, MAX_BIAS),
        bias_patterns=bias_names,
    )

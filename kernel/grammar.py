"""Render a chosen reply draft in the persona's grammar (``compose_final``'s formatter).

The Jungian psyche (seed 000) gives the persona a ``grammar_preference``: ``narrative`` (flowing
prose with topic sentences and connecting phrases), ``formal`` (sections with headers and bullet
points), ``terse`` (facts only) or a path to a custom grammar TOML file. Rendering is
deterministic text work, no model involved. The only I/O is reading a custom grammar file.

The draft is parsed into blocks first: prose paragraphs (split into sentences), bullet or
numbered lists, Markdown headings and fenced code blocks (always kept verbatim). Headings named
``Summary``, ``Details`` or ``Position`` are this module's own sections and are dropped on parsing,
so rendering formal output again gives the same sections back.

A custom grammar file is a flat TOML table; every key is optional::

    name = "memo"                  # defaults to the file stem
    max_sentences = 3              # keep the first N sentences/items (positive; default: all)
    bullet = "* "                  # non-empty: one line per sentence with this prefix
    joiner = " "                   # joins sentences when ``bullet`` is empty
    header = "### Answer"          # a line put before the body
    drop_patterns = ["(?i)^sure"]  # regexes; a sentence matching any of them is dropped
    prefix = ""                    # literal text before everything
    suffix = ""                    # literal text after the body
    preface = true                 # render the opinion preface (as a paragraph before the body)
    strip_filler = false           # apply terse's hedge and pleasantry removal
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, Final, Literal

from kernel.speech import (
    ENGLISH,
    Phrasebook,
    join_series,
    lead_lowered,
    opens_with_connector,
    phrasebook,
    reads_english,
)

BUILTIN_GRAMMARS: Final = ("narrative", "formal", "terse")
TERSE_MAX_SENTENCES: Final = 2
OWN_SECTIONS: Final = frozenset({"summary", "details", "position"})

_CLOSERS = "\"'”’)]»"
_BOUNDARY_RE = re.compile(rf"[.!?…]+[{re.escape(_CLOSERS)}]*(?= )")
_TOKEN_BEFORE_RE = re.compile(r"[A-Za-z0-9.'’-]*$")
_DOTTED_RE = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")
_TERMINAL_RE = re.compile(rf"[.!?…][{re.escape(_CLOSERS)}]*$")
_FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET_RE = re.compile(r"^(\s*)(?:([-*•+])|(\d{1,3})[.)])\s+(.*\S)\s*$")
_LEAD_WORD_RE = re.compile(r"[A-Za-z']+")
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'’-]+")
_NUMBER_RE = re.compile(r"\d+(?:[.,:/]\d+)*%?")

# Tokens that keep a following period from ending the sentence.
_ABBREVIATIONS: Final = frozenset(
    """
    mr mrs ms dr prof sr jr st vs cf approx dept eg ie al viz resp
    """.split()
)
# Tokens that are abbreviations only when a number follows ("No. 5", "Fig. 2", "Mar. 2020").
_NUMBER_ABBREVIATIONS: Final = frozenset(
    """
    no nos fig figs vol p pp ch sec eq ver v art op min max avg ca jan feb mar apr jun jul
    aug sep sept oct nov dec
    """.split()
)

_CONNECTOR_WORDS: Final = frozenset(
    """
    first firstly second secondly third thirdly then next finally also lastly last
    afterwards additionally moreover plus and but
    """.split()
)
# Capitalised only because they start the item; safe to lower-case after a connector.
_COMMON_LEADS: Final = frozenset(
    """
    a an the this that these those it its we you they he she there here each every some
    any all most many no for in on at by with without from to if when once after before
    while because since use run add set check install open create make remove delete
    update call read write start stop keep try pick choose avoid test build save load
    compare measure ask restart configure enable disable verify review edit copy move
    rename merge commit push pull deploy wait look note consider do don't never always
    only one two three our your their my both either neither other another more less what
    which how why where who not done clear clean ensure fix find get go give put send show
    take turn switch list print drop skip replace reset reboot refresh return select sort
    split join flush upgrade download upload export import inspect log mark apply describe
    define explain document plan prepare drain kill scale monitor watch track increase
    decrease reduce limit lower raise rerun retry restore compile format lint pin bump tag
    release ship publish close store fetch query parse render generate convert validate
    confirm remember follow ignore include exclude prefer begin finish see leave let
    """.split()
)
_ADVICE_VERBS: Final = frozenset(
    """
    research establish listen practice practise learn arrive highlight buy sell visit stir
    bake boil chop rinse soak prune meditate organise organize declutter prioritise
    prioritize delegate tailor customise customize proofread rehearse introduce emphasise
    emphasize jot minimise minimize maximise maximize simplify unplug volunteer invite
    """.split()
)
"""Verbs that open advice and steps ("Research the company." in a list of interview tips, folded
into prose as "First, research the company."), lowered unless the item reads as a title."""
_NOUN_VERBS: Final = frozenset(
    """
    drink eat sleep stay exercise dress be bring focus walk cook travel study talk speak cut
    swap mix heat serve season water plant grow feed pay spend invest budget rest stretch
    breathe journal schedule reach contact network smile thank answer remain trust accept
    allow aim break carry change collect combine cover drive enjoy fill hold hire label lift
    maintain offer opt order pack pause play protect recycle reflect register relax rely
    repeat respond reuse rotate search share shop shower sign slow stand step stick
    subscribe swim teach tell think treat wash wear work wrap dim
    """.split()
)
"""Advice verbs that are also nouns, and so open titles and names ("Slow Horses", "Sleep
Cycle", "Drive by Daniel Pink"): lowered only when no capitalised word follows either."""
_TITLE_NEXT: Final = re.compile(
    r"\s*(?:[(:\-–—]|(?:by|is|are|was|were|has|have|lets|makes|helps)\b)"
)
"""What follows a title's first word, never an imperative's: "Drive (2011)", "Heat by …",
"Journal is Apple's diary app", "Focus: …"."""
_OBJECT_NEXT: Final = re.compile(
    r"\s+(?:the|a|an|your|some|any|each|every|all|it|them|yourself|up|off|out|down|around|away)"
    r"(?![\w'’-])"
)
"""What follows an imperative's verb: its object's article or possessive, or its particle
("Pour the water", "Back up your data", "Record yourself")."""
ENGLISH_LEADS: Final = _COMMON_LEADS | _ADVICE_VERBS | _NOUN_VERBS
"""Words an English list item opens with (what tells an English list from another language's
when neither has a function word: ``kernel.speech.reads_english``)."""


_STOPWORDS: Final = frozenset(
    """
    the and but for nor yet with from into onto that this these those there here what
    which who whom whose when where why how are was were been being have has had does did
    doing can could would should will shall may might must you your yours our ours they
    them their its his her she him not all any some very just really also too then than
    about over under more most such only own same other each few both again once let know
    help hope think feel believe question great sure thanks thank it's i'm that's there's
    don't can't won't
    """.split()
)

_GREETING = (
    r"(?:hi|hello|hey|greetings|howdy)(?: there| friend| all| everyone)?"
    r"|good (?:morning|afternoon|evening)"
)
# Whole sentences that carry no facts: greetings, praise for the question, sign-offs.
_PLEASANTRY_RE = re.compile(
    r"(?:"
    rf"{_GREETING}"
    r"|(?:what an? |that'?s an? |such an? )?(?:really )?"
    r"(?:great|good|excellent|interesting|fantastic|wonderful|fair) question"
    r"|(?:thanks|thank you)(?: so much)? for (?:asking|your question|the question|reaching out)"
    r"[^.!?]*"
    r"|(?:i )?hope (?:this|that|it) helps[^.!?]*"
    r"|(?:i )?(?:hope|trust) (?:this|that) (?:answers|clarifies)[^.!?]*"
    r"|(?:let me know|feel free)[^.!?]*"
    r"|(?:please )?(?:don't|do not) hesitate[^.!?]*"
    r"|(?:is there )?anything else[^.!?]*"
    r"|(?:i'?m |i am )?(?:happy|glad) to help[^.!?]*"
    r"|(?:sure|certainly|of course|absolutely|okay|ok|alright|no problem|happy coding|cheers"
    r"|good luck|glad you asked)(?: thing)?"
    r")[\s!.?,]*",
    re.IGNORECASE,
)
# Hedges and filler openers stripped from the start of a sentence (repeatedly).
_LEADING_FILLER_RE = re.compile(
    r"^(?:"
    r"(?:hi|hello|hey)(?: there)?[,!]"
    r"|(?:sure|certainly|of course|absolutely|okay|ok|well|so|alright|great question"
    r"|good question)[,!]"
    r"|i (?:think|believe|feel|guess|suppose|reckon)(?: that)?,?"
    r"|i(?:'d| would) say(?: that)?,?"
    r"|(?:in my (?:opinion|view)|to be honest|honestly|frankly|basically|essentially|actually"
    r"|personally|to be fair|generally speaking),?"
    r"|it (?:seems|appears)(?: to me)? that"
    r"|it looks like"
    r")\s+",
    re.IGNORECASE,
)
_INNER_HEDGE_RE = re.compile(
    r",\s*(?:i think|i believe|i guess|i suppose|basically|honestly|actually|to be honest"
    r"|in my opinion)\s*,\s*",
    re.IGNORECASE,
)
_TRAILING_HEDGE_RE = re.compile(
    r",\s*(?:i think|i believe|i guess|i suppose|in my opinion)\s*(?=[.!?]?$)", re.IGNORECASE
)
_FILLER_WORD_RE = re.compile(
    r"\s+(?:basically|actually|really|literally|kind of|sort of)\b(?!-)", re.IGNORECASE
)
_AS_AN_AI_RE = re.compile(
    r"^as an ai(?: language model| assistant| model)?,?\s*(?P<rest>.*)$", re.IGNORECASE
)
_DISCLAIMER_RE = re.compile(
    r"^i (?:can(?:not|'t)|do(?:n't| not)|am (?:not|unable)|have no|lack)\b"
    r"[^,]*(?:,\s*(?:but|however,?)\s+(?P<rest>.*))?$",
    re.IGNORECASE,
)

BlockKind = Literal["prose", "list", "code", "heading"]


@dataclass(frozen=True)
class _Block:
    """One parsed piece of a draft: sentences, list items, a heading title or verbatim code."""

    kind: BlockKind
    parts: tuple[str, ...]
    ordered: bool = False


@dataclass(frozen=True)
class CustomGrammar:
    """A declarative grammar loaded from a TOML file (see the module docstring)."""

    name: str
    max_sentences: int | None = None
    bullet: str = ""
    joiner: str = " "
    header: str = ""
    drop_patterns: tuple[re.Pattern[str], ...] = ()
    prefix: str = ""
    suffix: str = ""
    preface: bool = True
    strip_filler: bool = False


_STR_KEYS: Final = ("name", "bullet", "joiner", "header", "prefix", "suffix")
_BOOL_KEYS: Final = ("preface", "strip_filler")
_KNOWN_KEYS: Final = frozenset({*_STR_KEYS, *_BOOL_KEYS, "max_sentences", "drop_patterns"})


# --------------------------------------------------------------------------- public API


def render_reply(
    draft: str,
    grammar: str,
    *,
    preface: str = "",
    thoughts: str = "",
    custom: CustomGrammar | None = None,
    language: str = "en",
) -> str:
    """Render ``draft`` in ``grammar``, with the opinion ``preface`` first and ``thoughts`` last.

    Args:
        draft: The chosen reply as plain text (sentences, paragraphs, bullet lines, code).
        grammar: ``narrative``, ``formal``, ``terse``, or the name of the custom grammar given.
        preface: Opinion sentences to put first (dropped by ``terse``).
        thoughts: An already formatted block (e.g. the dual-stream one) appended after the body.
        custom: A custom grammar loaded by the caller (``state.grammars``); it wins when given.
        language: The language of the words the grammar adds (``narrative``'s "First, … Then,
            …"), a ``kernel.speech`` code; English for a list that reads as English.

    Returns:
        The rendered reply; a blank draft renders as ``""``, a non-blank one never does.

    Raises:
        ValueError: The grammar is neither built in nor given as ``custom``.
    """
    if custom is None and grammar.strip().lower() not in BUILTIN_GRAMMARS:
        raise ValueError(
            one_line(
                f"unknown grammar {grammar.strip()!r}: use {', '.join(BUILTIN_GRAMMARS)}"
                " or a .toml path"
            )
        )
    if not draft.strip():
        return ""
    blocks = _parse(draft)
    preface_text = " ".join(preface.split())
    if custom is not None:
        body = _render_custom(blocks, custom, preface_text)
    elif grammar.strip().lower() == "formal":
        body = _render_formal(blocks, preface_text)
    elif grammar.strip().lower() == "terse":
        body = _render_terse(blocks)
    else:
        body = _render_narrative(blocks, preface_text, language)
    if not body.strip():
        body = draft.strip()
    block = thoughts.strip()
    return f"{body.rstrip()}\n\n{block}" if block else body


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences, keeping abbreviations, initials and decimals intact."""
    flat = " ".join(text.split())
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(flat):
        if not _is_boundary(flat, match.start(), match.end()):
            continue
        piece = flat[start : match.end()].strip()
        if piece:
            sentences.append(piece)
        start = match.end()
    tail = flat[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


# --------------------------------------------------------------------------- grammar files


def grammar_from_table(data: dict[str, Any], path: Path) -> CustomGrammar:
    """Validate a parsed grammar table and build the grammar."""

    def fail(problem: str) -> ValueError:
        """Build the one-line error naming the file."""
        return ValueError(one_line(f"grammar file {path}: {problem}"))

    unknown = sorted(set(data) - _KNOWN_KEYS)
    if unknown:
        raise fail(f"unknown key(s) {', '.join(unknown)}")
    strings: dict[str, str] = {}
    for key in _STR_KEYS:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise fail(f"{key} must be a string")
        if value is not None:
            strings[key] = value
    flags: dict[str, bool] = {}
    for key in _BOOL_KEYS:
        value = data.get(key)
        if value is not None and not isinstance(value, bool):
            raise fail(f"{key} must be true or false")
        if value is not None:
            flags[key] = value
    limit = data.get("max_sentences")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise fail("max_sentences must be a positive integer")
    raw_patterns = data.get("drop_patterns", [])
    if not isinstance(raw_patterns, list) or not all(isinstance(p, str) for p in raw_patterns):
        raise fail("drop_patterns must be a list of strings")
    patterns: list[re.Pattern[str]] = []
    for pattern in raw_patterns:
        try:
            patterns.append(re.compile(pattern))
        except re.error as err:
            raise fail(f"drop pattern {pattern!r} does not compile ({err})") from err
    name = strings.pop("name", "").strip() or path.stem
    return CustomGrammar(
        name=name,
        max_sentences=limit,
        drop_patterns=tuple(patterns),
        bullet=strings.get("bullet", ""),
        joiner=strings.get("joiner", " "),
        header=strings.get("header", ""),
        prefix=strings.get("prefix", ""),
        suffix=strings.get("suffix", ""),
        preface=flags.get("preface", True),
        strip_filler=flags.get("strip_filler", False),
    )


def one_line(message: str) -> str:
    """Collapse a message onto one line."""
    return " ".join(message.split())


# --------------------------------------------------------------------------- parsing


def _is_boundary(text: str, punct_start: int, end: int) -> bool:
    """Say whether the punctuation at ``text[punct_start:end]`` ends a sentence."""
    following = text[end + 1 : end + 2]
    if not following:
        return True
    if following.islower():
        # "e.g. foo", "approx. five", "wait... what": the sentence goes on.
        return False
    if text[punct_start:end].rstrip(_CLOSERS) != ".":
        return True
    match = _TOKEN_BEFORE_RE.search(text, 0, punct_start)
    token = match.group(0).strip(".'’-") if match else ""
    lowered = token.lower()
    if lowered in _ABBREVIATIONS or _DOTTED_RE.fullmatch(token):
        return False
    if len(token) == 1 and token.isupper():
        return False  # an initial, as in "J. Smith"
    return not (lowered in _NUMBER_ABBREVIATIONS and following.isdigit())


def _parse(draft: str) -> list[_Block]:
    """Split a draft into prose, list, heading and verbatim code blocks."""
    blocks: list[_Block] = []
    prose: list[str] = []
    items: list[str] = []
    code: list[str] = []
    ordered = False
    indent = 0
    fence = ""
    gap = False

    def flush() -> None:
        """Close the open prose paragraph or list."""
        nonlocal ordered
        if prose:
            sentences = tuple(split_sentences(" ".join(prose)))
            if sentences:
                blocks.append(_Block("prose", sentences))
            prose.clear()
        if items:
            blocks.append(_Block("list", tuple(items), ordered=ordered))
            items.clear()
            ordered = False

    for line in draft.splitlines():
        if fence:
            code.append(line)
            if line.strip().startswith(fence):
                blocks.append(_Block("code", ("\n".join(code),)))
                code.clear()
                fence = ""
            continue
        stripped = line.strip()
        fence_match = _FENCE_RE.match(line)
        if fence_match:
            flush()
            fence = fence_match.group(1)
            code.append(stripped)
            continue
        if not stripped:
            if items:  # items spaced by blank lines may still be one list: the next line says
                gap = True
            else:
                flush()
            continue
        bullet = _BULLET_RE.match(line)
        if gap:
            gap = False
            kind_kept = bullet is not None and (bullet.group(3) is not None) == ordered
            if not kind_kept or bullet is None or len(bullet.group(1).expandtabs(4)) != indent:
                flush()
        heading = _HEADING_RE.match(line)
        if heading:
            flush()
            title = heading.group(1).strip()
            if title and title.lower().rstrip(":") not in OWN_SECTIONS:
                blocks.append(_Block("heading", (title,)))
            continue
        # A numbered marker starts a list only at 0 or 1, so "42. The answer" keeps its 42.
        numbered_ok = bullet is not None and (
            bullet.group(3) is None or (bool(items) and ordered) or int(bullet.group(3)) <= 1
        )
        if bullet is not None and numbered_ok:
            depth = len(bullet.group(1).expandtabs(4))
            # A deeper or shallower marker starts a new list (one level of nesting is kept).
            if prose or (items and abs(depth - indent) > 1):
                flush()
            if not items:
                ordered = bullet.group(3) is not None
                indent = depth
            items.append(bullet.group(4).strip())
            continue
        if items and line[:1].isspace():
            items[-1] = f"{items[-1]} {stripped}"
            continue
        if items:
            flush()
        prose.append(stripped)
    if code:  # an unclosed fence: keep what there is, verbatim
        blocks.append(_Block("code", ("\n".join(code),)))
    flush()
    return blocks


# --------------------------------------------------------------------------- sentence helpers


def _as_sentence(text: str) -> str:
    """Give ``text`` terminal punctuation, turning a trailing ``:``/``;``/``,`` into a period."""
    clean = text.strip()
    if not clean or _TERMINAL_RE.search(clean):
        return clean
    trimmed = clean.rstrip(",;: ")
    return f"{trimmed or clean}."


def decapitalize(sentence: str) -> str:
    """Lower-case the first word when it is capitalised only because it starts the sentence."""
    lead = _LEAD_WORD_RE.match(sentence)
    if lead is None:
        return sentence
    word = lead.group(0)
    lowered = word.lower()
    # Gerunds and -ly adverbs ("Using", "Usually") are rarely proper nouns either.
    common = lowered in _COMMON_LEADS or lowered.endswith(("ing", "ly"))
    rest = sentence[lead.end() :]
    if not common and lowered not in _ADVICE_VERBS | _NOUN_VERBS:
        # a word the lists do not know, before an article or a possessive, opens an imperative
        # ("Pour the water", "Season your steak"); a name is rarely followed by one
        common = _OBJECT_NEXT.match(rest) is not None and not lowered.endswith("s")
    elif not common:
        titled = _TITLE_NEXT.match(rest) is not None
        named = lowered in _NOUN_VERBS and re.match(r"\s+[A-Z]", rest) is not None
        common = not (titled or named)
    if word[0].isupper() and word[1:] == word[1:].lower() and common:
        return sentence[0].lower() + sentence[1:]
    return sentence


def _with_connector(connector: str, item: str, book: Phrasebook) -> str:
    """Turn a list item into a sentence opened by ``connector`` (unless it has one already)."""
    sentence = item.strip() if item.rstrip().endswith(":") else _as_sentence(item)
    if book is not ENGLISH:
        if opens_with_connector(sentence, book):
            return sentence
        lowered = lead_lowered(sentence, book) if book.lower_after_ordinal else sentence
        return f"{connector}{book.ordinal_sep}{lowered}"
    lead = _LEAD_WORD_RE.match(sentence)
    if lead is not None and lead.group(0).lower() in _CONNECTOR_WORDS:
        return sentence
    return f"{connector}{book.ordinal_sep}{decapitalize(sentence)}"


SHORT_ITEM_WORDS = 6
"""An unordered list of items this short, none a sentence of its own, reads as one series."""


_CLAUSE_VERB_RE = re.compile(
    r"(?i)(?<![\w'’])(?:is|are|was|were|has|have|had|can|will|does|do|es|son|está|están|é|são"
    r"|est|sont|ist|sind|è|sono)(?![\w'’])"
)
"""A copula or auxiliary: an item that has one says something ("Journal is Apple's diary app")
and stays a sentence of its own; a series is of things ("chicken, rice and spinach")."""


_NOT_A_THING_RE = re.compile(r"[:!—–]|\s-\s|^\W*(?:and|or|but|and/or|[a-z]\))(?![\w'-])", re.I)
"""An item that is more than a thing: a label ("Pro: cheap"), a warning ("— call 999 now"), a
run-on ("or a movie night") or a lettered option ("a) London")."""


def short_items(items: Sequence[str]) -> bool:
    """Say whether ``items`` are short phrases ("Chicken", "Rice and spinach"), not sentences."""
    return bool(items) and all(
        len(item.split()) <= SHORT_ITEM_WORDS
        and not re.search(r"[.!?]\s", item + " ")
        and not _CLAUSE_VERB_RE.search(item)
        and not _NOT_A_THING_RE.search(item)
        for item in items
    )


THING_ITEM_WORDS = 3
"""A numbered list of items this short that are things, not steps ("1. Carrot 2. Broccoli"), has
no order to tell: it is a series too."""


def _a_step(item: str) -> bool:
    """Say whether a short English list item is a step ("Boil water", "Pour the milk")."""
    words = item.split()
    first = words[0].lower() if words else ""
    return (
        first in _ADVICE_VERBS | _NOUN_VERBS
        or _OBJECT_NEXT.match(item[len(words[0]) :] if words else "") is not None
        or (first in _COMMON_LEADS and first not in {"a", "an", "the"} and len(words) > 1)
    )


def things(items: Sequence[str], book: Phrasebook) -> bool:
    """Say whether numbered ``items`` name things whose numbers order nothing ("1. Carrot")."""
    if not short_items(items) or any(len(i.split()) > THING_ITEM_WORDS for i in items):
        return False
    # other languages keep their numbers: one word may be a step ("Mescolare", "Cuocere")
    return book is ENGLISH and not any(_a_step(i.strip()) for i in items)


def series_of(
    items: Sequence[str], book: Phrasebook, *, lower: frozenset[str] = frozenset()
) -> str:
    """Join short list items as one series ("chicken, rice and spinach"), in ``book``'s language.

    An item's first word loses the capital it had only for opening a list line: by the English
    rule (``decapitalize``) or the language's (``lead_lowered``), or because the text around it
    writes that word in lower case (``lower``: "rice" elsewhere makes "Rice and spinach" an
    item, not a name). Items that hold a series of their own are set off by semicolons
    ("chicken; rice and spinach"), so no item runs into the next.
    """
    bare = [item.strip().rstrip(".;,") for item in items]
    lowered = []
    for item in bare:
        low = decapitalize(item) if book is ENGLISH else lead_lowered(item, book)
        first = item.split()[0] if item.split() else ""
        if low == item and first[1:] == first[1:].lower() and first.lower() in lower:
            low = item[:1].lower() + item[1:]
        lowered.append(low)
    nested = any("," in i or book.and_ in f" {i.lower()} " for i in lowered)
    return "; ".join(lowered) if nested else join_series(lowered, book)


_LOWER_WORD_RE = re.compile(r"(?<![.!?:]\s)(?<!^)\b([a-zà-ÿ][a-zà-ÿ'’-]+)\b")


def lower_words(text: str) -> frozenset[str]:
    """Return the words ``text`` writes in lower case (evidence that a capital is only a lead)."""
    return frozenset(_LOWER_WORD_RE.findall(text))


def _list_as_prose(items: Sequence[str], ordered: bool, book: Phrasebook) -> list[str]:
    """Turn list items into sentences joined by connecting phrases (in ``book``'s language)."""
    if len(items) == 1:
        # An item ending in ":" introduces a nested list; keep the colon.
        return [items[0].strip() if items[0].rstrip().endswith(":") else _as_sentence(items[0])]
    middle = book.ordered if ordered else book.unordered
    sentences: list[str] = []
    for index, item in enumerate(items):
        if index == 0:
            connector = book.ordinals[0]
        elif index == len(items) - 1:
            connector = book.finally_ if len(items) > 2 else middle[0]
        else:
            connector = middle[(index - 1) % len(middle)]
        sentences.append(_with_connector(connector, item, book))
    return sentences


_GREETING_RE = re.compile(rf"(?:{_GREETING})[\s!.,]*", re.IGNORECASE)


def greeting_opener(draft: str) -> str:
    """Return the draft's first sentence when it is a bare greeting ("Good evening!"), else "".

    The grammars drop greetings as fluff; a reply to a greeting gets its greeting back.
    """
    sentences = split_sentences(draft.strip())
    first = sentences[0] if sentences else ""
    return first if _GREETING_RE.fullmatch(first) else ""


def _is_pleasantry(sentence: str) -> bool:
    """Say whether a sentence is a greeting, praise for the question or a sign-off."""
    return _PLEASANTRY_RE.fullmatch(sentence.strip()) is not None


def _drop_pleasantries(blocks: Sequence[_Block]) -> list[_Block]:
    """Drop pleasantry sentences from prose blocks, keeping everything if nothing else is left."""
    kept: list[_Block] = []
    for block in blocks:
        if block.kind != "prose":
            kept.append(block)
            continue
        parts = tuple(s for s in block.parts if not _is_pleasantry(s))
        if parts:
            kept.append(_Block("prose", parts))
    has_text = any(b.kind in ("prose", "list", "heading") for b in kept)
    return kept if has_text else list(blocks)


def _strip_filler(sentence: str) -> str:
    """Remove hedges and filler from a sentence; return ``""`` when nothing factual is left."""
    text = sentence.strip()
    if _is_pleasantry(text):
        return ""
    as_ai = _AS_AN_AI_RE.match(text)
    if as_ai is not None:
        text = as_ai.group("rest").strip()
        disclaimer = _DISCLAIMER_RE.match(text)
        if disclaimer is not None:
            text = (disclaimer.group("rest") or "").strip()
    previous = None
    while previous != text:
        previous = text
        text = _LEADING_FILLER_RE.sub("", text, count=1).strip()
    text = _INNER_HEDGE_RE.sub(" ", text)
    text = _TRAILING_HEDGE_RE.sub("", text)
    text = _FILLER_WORD_RE.sub("", text).strip()
    if not re.search(r"[A-Za-z0-9]", text) or _is_pleasantry(text):
        return ""
    return text[0].upper() + text[1:]


def _informativeness(sentence: str) -> int:
    """Score a sentence by its distinct content words, with numbers counting triple."""
    words = {w.lower() for w in _WORD_RE.findall(sentence)}
    content = {w for w in words if len(w) > 2 and w not in _STOPWORDS}
    return len(content) + 3 * len(_NUMBER_RE.findall(sentence))


def _text_units(blocks: Iterable[_Block], *, split_items: bool) -> list[tuple[str, str]]:
    """Flatten blocks into ``("text", sentence)`` and ``("code", block)`` units, in order."""
    units: list[tuple[str, str]] = []
    for block in blocks:
        if block.kind == "code":
            units.append(("code", block.parts[0]))
            continue
        for part in block.parts:
            if block.kind == "list" and split_items:
                units.extend(("text", s) for s in split_sentences(part))
            else:
                units.append(("text", part))
    return units


# --------------------------------------------------------------------------- renderers


def list_phrasebook(items: Sequence[str], language: str) -> Phrasebook:
    """Return the phrasebook for the words a list rewritten as prose gets.

    ``language``'s, or English's for a list that reads as English (a model that ignored the
    language norm); the persona grammar and the no-lists norm both ask here.
    """
    if language == "en" or reads_english(" ".join(items), language, items, ENGLISH_LEADS):
        return ENGLISH
    return phrasebook(language)


def _render_narrative(blocks: Sequence[_Block], preface: str, language: str) -> str:
    """Render flowing prose: topic sentence first, lists folded in with connecting phrases.

    The connectors are in ``language``, or English for a list that reads as English.
    """
    paragraphs: list[tuple[bool, str]] = []  # (is_code, text)
    current: list[str] = []
    lower: frozenset[str] | None = None  # read from the draft for its first series only
    after_heading = False

    def flush() -> None:
        """Close the open paragraph."""
        if current:
            paragraphs.append((False, " ".join(current)))
            current.clear()

    for block in _drop_pleasantries(blocks):
        if block.kind == "code":
            flush()
            paragraphs.append((True, block.parts[0]))
        elif block.kind == "heading":
            flush()
            current.append(_as_sentence(block.parts[0]))
            after_heading = True
            continue
        elif block.kind == "list":
            # A list continues the paragraph that introduces it; short phrases are one series.
            book = list_phrasebook(block.parts, language)
            ordered = block.ordered and not things(block.parts, book)
            if not ordered and len(block.parts) > 1 and short_items(block.parts):
                if lower is None:
                    lower = lower_words(" ".join(" ".join(b.parts) for b in blocks))
                series = series_of(block.parts, book, lower=lower)
                if current and current[-1].endswith(":"):
                    current[-1] = f"{current[-1]} {series}."
                else:
                    current.append(f"{series[:1].upper()}{series[1:]}.")
            else:
                current.extend(_list_as_prose(block.parts, block.ordered, book))
        else:
            if not after_heading:
                flush()
            current.extend(block.parts)
        after_heading = False
    flush()
    if preface:
        if paragraphs and not paragraphs[0][0]:
            paragraphs[0] = (False, f"{preface} {paragraphs[0][1]}")
        else:
            paragraphs.insert(0, (False, preface))
    return "\n\n".join(text for _, text in paragraphs)


def _render_formal(blocks: Sequence[_Block], preface: str) -> str:
    """Render ``## Position``/``## Summary``/``## Details`` sections with bullet points."""
    summary = ""
    details: list[tuple[bool, str]] = []  # (is_bullet, text)
    introduces_list = False
    for block in _drop_pleasantries(blocks):
        if block.kind == "code":
            details.append((False, block.parts[0]))
            introduces_list = False
        elif block.kind == "heading":
            if summary:
                details.append((False, f"### {block.parts[0]}"))
            else:
                summary = block.parts[0]
            introduces_list = False
        elif block.kind == "list":
            indent = "  " if introduces_list else ""
            for item in block.parts:
                if summary:
                    details.append((True, f"{indent}- {item}"))
                else:
                    summary = item
            introduces_list = not indent and bool(summary) and block.parts[-1].endswith(":")
        else:
            for sentence in block.parts:
                if summary:
                    details.append((True, f"- {sentence}"))
                    introduces_list = sentence.endswith(":")
                else:
                    summary = sentence
    sections: list[str] = []
    if preface:
        sections.append(f"## Position\n\n{preface}")
    if summary:
        sections.append(f"## Summary\n\n{summary}")
    if details:
        body = details[0][1]
        for (was_bullet, _), (is_bullet, text) in pairwise(details):
            body += ("\n" if was_bullet and is_bullet else "\n\n") + text
        sections.append(f"## Details\n\n{body}")
    return "\n\n".join(sections)


def _render_terse(blocks: Sequence[_Block]) -> str:
    """Render facts only: no filler, the most informative sentences, code kept verbatim."""
    units = _text_units((b for b in blocks if b.kind != "heading"), split_items=True)
    sentences = [s for s in (_strip_filler(t) for k, t in units if k == "text") if s]
    codes = [t for k, t in units if k == "code"]
    ranked = sorted(
        range(len(sentences)),
        # The topic sentence gets a one-point head start.
        key=lambda i: (-(_informativeness(sentences[i]) + (1 if i == 0 else 0)), i),
    )
    chosen = sorted(ranked[:TERSE_MAX_SENTENCES])
    parts = [" ".join(_as_sentence(sentences[i]) for i in chosen), *codes]
    return "\n\n".join(p for p in parts if p)


def _render_custom(blocks: Sequence[_Block], grammar: CustomGrammar, preface: str) -> str:
    """Render with a declarative TOML grammar."""
    units: list[tuple[str, str]] = []
    count = 0
    for kind, text in _text_units(blocks, split_items=False):
        if kind == "text":
            text = _strip_filler(text) if grammar.strip_filler else text
            if not text or any(p.search(text) for p in grammar.drop_patterns):
                continue
            if grammar.max_sentences is not None and count >= grammar.max_sentences:
                continue
            count += 1
        units.append((kind, text))
    segments: list[str] = []
    run: list[str] = []
    for kind, text in [*units, ("end", "")]:
        if kind == "text":
            run.append(f"{grammar.bullet}{text}" if grammar.bullet else text)
            continue
        if run:
            segments.append(("\n" if grammar.bullet else grammar.joiner).join(run))
            run.clear()
        if kind == "code":
            segments.append(text)
    body = "\n\n".join(segments)
    if not body.strip():
        return ""
    head = [grammar.header.strip()] if grammar.header.strip() else []
    if grammar.preface and preface:
        head.append(preface)
    return grammar.prefix + "\n\n".join([*head, body]) + grammar.suffix

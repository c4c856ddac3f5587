"""Small deterministic text features shared by the turn-loop nodes (no I/O, no model)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+(?:[.,]\d+)?", re.UNICODE)
SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][\"'”’)\]*_])\s+|(?<=[.!?]\*\*)\s+|\n+")
"""Where a sentence ends: after . ! ? and any closing quote, bracket or markdown emphasis
("**Where do I live?** You live in Leeds." is two sentences)."""
STOPWORDS = frozenset(
    """a an the and or but if then so of to in on at by for with about from into over under is
    are was were be been being am do does did have has had i me my mine you your yours he she it
    we they them his her its our their this that these those what which who whom whose when where
    why how can could would should will shall may might must not no yes just very really also
    too please tell say said ok okay hi hello hey thanks thank there here some any all more most
    much many few as than like get got let lets up down out again once""".split()
)
GREETINGS = ("hi", "hello", "hey", "good morning", "good evening", "good afternoon", "yo", "howdy")
HEDGES = (
    "maybe",
    "perhaps",
    "i think",
    "not sure",
    "probably",
    "might",
    "i guess",
    "kind of",
    "sort of",
    "possibly",
    "unclear",
    "i wonder",
)
STRENGTH = ("must", "always", "never", "definitely", "absolutely", "certainly", "urgent", "now!")
CONSTRAINT = re.compile(
    r"\b(?:in (?:\d+|one|two|three|five|ten) (?:words?|sentences?|lines?|steps?)|briefly|"
    r"step by step|without [\w-]+|only [\w-]+|at most \d+|no more than \d+|in detail|"
    r"in depth|as a list|in bullet points)\b",
    re.IGNORECASE,
)
RECALL_CUES = (
    "you said",
    "you told me",
    "as we discussed",
    "remember when",
    "last time",
    "earlier you",
    "did i tell you",
    "what did i",
    "do you remember",
    "my name",
)


def words(text: str) -> list[str]:
    """Return lowercase word tokens."""
    return [w.lower() for w in WORD.findall(text)]


def content_words(text: str) -> list[str]:
    """Return lowercase tokens that are not stopwords and longer than two characters."""
    return [w for w in words(text) if w not in STOPWORDS and len(w) > 2]


def sentences(text: str) -> list[str]:
    """Split text into sentences (good enough for short replies)."""
    return [s.strip() for s in SENTENCE.split(text) if s.strip()]


def topic(text: str, limit: int = 3) -> str:
    """Return the most frequent content words, most frequent first."""
    counts = Counter(content_words(text))
    return " ".join(word for word, _ in counts.most_common(limit))


def overlap(a: str, b: str) -> float:
    """Return the share of ``a``'s content words that also occur in ``b``."""
    left = set(content_words(a))
    if not left:
        return 0.0
    return len(left & set(content_words(b))) / len(left)


def has_any(text: str, phrases: tuple[str, ...]) -> list[str]:
    """Return the phrases that occur in ``text`` (case-insensitive, word-bounded)."""
    lowered = text.lower()
    return [p for p in phrases if re.search(rf"(?<!\w){re.escape(p)}(?!\w)", lowered)]


def _squash(text: str) -> str:
    return re.sub(r"[^\w]+", " ", text.casefold()).strip()


PERSON = {
    **dict.fromkeys(("i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself"), "·p"),
    **dict.fromkeys(("i'm", "you're", "im", "youre"), "·p ·be"),
    **dict.fromkeys(("am", "are"), "·be"),
    **dict.fromkeys(("i've", "you've", "ive"), "·p have"),
    **dict.fromkeys(("i'd", "you'd"), "·p would"),
    **dict.fromkeys(("i'll", "you'll"), "·p will"),
}
"""First and second person folded together: an echo may swap "I'm" for "you're"."""
NEAR_ECHO_WORDS = 5
"""A near echo copies at least this many of the user's words in a row…"""
NEAR_ECHO_SHARE = 0.75
"""…and they make up at least this share of the reply sentence's words."""


def _person_words(text: str) -> list[str]:
    """Words of ``text`` (casefolded, apostrophes kept) with the person folded (``PERSON``)."""
    out: list[str] = []
    for word in re.findall(r"[^\W_]+(?:['’][^\W_]+)?", text.casefold()):
        out += PERSON.get(word.replace("’", "'"), word).split()
    return out


def _shares_run(left: list[str], right: list[str], length: int) -> bool:
    """Say whether ``left`` and ``right`` share a run of ``length`` words, in order.

    The runs of ``right`` are hashed once, so a 20,000-character message against a long reply is
    linear, not the product of their lengths (the word-by-word table took 2 s there).
    """
    if length <= 0 or length > len(left) or length > len(right):
        return length <= 0
    runs = {tuple(right[i : i + length]) for i in range(len(right) - length + 1)}
    return any(tuple(left[i : i + length]) in runs for i in range(len(left) - length + 1))


def near_echo(sentence: str, said: str) -> bool:
    """Whether ``sentence`` mostly copies one of the user's sentences (person swapped or not).

    "You're Alex, I teach chemistry in Leeds" after "Hi! I'm Alex, I teach chemistry in Leeds"
    is one; "Since you teach chemistry in Leeds, try the RSC library" is not (the copied run is
    under ``NEAR_ECHO_SHARE`` of the sentence). A question is echoed only by a question: "You
    should quit your job if it makes you miserable." answers "Should I quit my job if it makes
    me miserable?".
    """
    words = _person_words(sentence)
    if len(words) < NEAR_ECHO_WORDS:
        return False
    asks = sentence.rstrip(" \"'”’»)").endswith("?")
    needed = max(NEAR_ECHO_WORDS, math.ceil(NEAR_ECHO_SHARE * len(words)))
    for part in re.split(r"(?<=[.!?…])\s+|\n+", said):
        if part.rstrip(" \"'”’»)").endswith("?") and not asks:
            continue
        if _shares_run(words, _person_words(part), needed):
            return True
    return False


ECHO_SENTENCE_CHARS = 20
"""A sentence of the user's message this long (letters and digits) said again is an echo too;
shorter ones ("Thank you so much.") are words a reply may share."""


def _echoes(part: str, said: str, target: str, targets: list[str]) -> bool:
    """Say whether one sentence of a reply says the message (or one of ``targets``) back."""
    squashed = _squash(part)
    return target in squashed or any(t in f" {squashed} " for t in targets) or near_echo(part, said)


def merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Return ``spans`` (start, end) sorted, overlapping or touching ones merged into one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def strip_echo(reply: str, said: str, *, min_chars: int = 12) -> str:
    """Remove the user's own message when the reply repeats it (a small model's habit).

    Drops every sentence or line of ``reply`` that contains ``said`` again, word for word (case,
    punctuation and quotes ignored), e.g. "You asked: what are three good habits?", or one of its
    sentences of ``ECHO_SENTENCE_CHARS`` or more, or that is a near echo of it (``near_echo``:
    mostly the user's words, "I" turned into "you" or not). Short messages (``min_chars``) are
    left alone: "Thanks!" answered with "Thanks!" is not an echo worth removing. A reply that was
    nothing but the echo — or kept only a word or two around it, such as "Hello!" — comes back as
    ``""``: the caller decides what to say instead. Quotes the echo opened or closed are dropped
    with it.
    """
    target = _squash(said)
    if len(target) < min_chars:
        # a short question said back as the reply's first sentence ("¿Dónde vivo? This is a
        # classic idiomatic expression …", SmolLM2) is still an echo; a short reply is not
        opening, *rest = sentences(reply) or [""]
        asked = said.rstrip().endswith("?") and target and opening.rstrip().endswith("?")
        if asked and rest and rest[0][:1].isupper() and _squash(opening) == target:
            return (
                reply.strip()[len(opening) :].lstrip()
                if reply.strip().startswith(opening)
                else reply
            )
        return reply
    # each sentence of a longer message too, when the reply opens by saying the message back:
    # "Never use bullet points. Give me three tips for learning French." was answered with both
    # sentences, the second run on into more words. A reply that quotes a sentence to answer
    # about it ("Me and him went … uses object pronouns") does not open with the message.
    pieces = [f" {_squash(p)} " for p in sentences(said)]
    first = sentences(reply)[:1]
    opening = f" {_squash(first[0])} " if first else ""
    parrots = (
        len(pieces) > 1
        and len(pieces[0]) - 2 >= ECHO_SENTENCE_CHARS
        and pieces[0] in opening
        and len(pieces[0]) >= 0.8 * len(opening)  # the opening is the sentence, not a quote of it
    )
    targets = [p for p in pieces if len(p) - 2 >= ECHO_SENTENCE_CHARS] if parrots else []
    kept_lines = []
    dropped = False
    for line in reply.splitlines():
        parts = re.split(r"(?<=[.!?…])\s+|(?<=[.!?…][\"'”’»*_])\s+|(?<=[.!?…]\*\*)\s+", line)
        kept = [p for p in parts if not _echoes(p, said, target, targets)]
        dropped |= len(kept) != len(parts)
        if kept or not line.strip():
            kept_lines.append(" ".join(kept) if len(kept) != len(parts) else line)
    if not dropped:
        return reply
    left = "\n".join(kept_lines).strip()
    if left.count('"') % 2:  # the echo took one of a pair of quotes with it
        left = left.replace('"', "", 1) if left.startswith('"') else left.rstrip('"').rstrip()
    left = left.strip(" \t\n“”«»").strip()
    return left if len(words(left)) > 2 else ""


_SIGNOFF_RE = re.compile(
    r"(?:^|\n|(?<=[.!?])[ \t]++)[ \t]*+(?i:(?:(?:best|kind|warm|warmest|many)[ \t]+)?"
    r"(?:regards|wishes)|sincerely|yours[ \t]+(?:truly|sincerely|faithfully)"
    r"|many thanks|all the best|respectfully)[ \t]*,?[ \t]*(?:\n[ \t]*|[ \t]+)"
    r"(?:[-–—~][ \t]*)?[A-Z][\w.'-]*(?:[ \t]+[A-Z][\w.'-]*){0,2}[ \t]*[.!]?\s*$"
)


def strip_signoff(reply: str) -> str:
    """Remove a letter's sign-off and name from the end of a chat reply ("Best regards, Alex").

    A small model ends a chat answer like a letter, often signed with the user's own name. Only
    a letter's valediction (regards, sincerely, yours truly…) followed by a name is removed —
    "Cheers, Sam!" or "Take care, Sam." address the user and stay — and never the whole reply.
    """
    match = _SIGNOFF_RE.search(reply)
    if match is None:
        return reply
    kept = reply[: match.start()].rstrip()
    return kept if kept else reply


def strip_scaffold(reply: str, headings: tuple[str, ...]) -> str:
    """Drop lines of ``reply`` that copy one of the prompt's own section headings.

    A small model sometimes continues the prompt instead of answering it ("The user's message:
    …"); such a line is scaffolding, never part of an answer. Returns ``reply`` unchanged when
    nothing else would be left.
    """
    marks = tuple(h.casefold() for h in headings if h)
    kept: list[str] = []
    in_section = False  # the copied section's "- item" lines go with its heading
    for line in reply.splitlines():
        stripped = line.strip()
        if stripped.casefold().startswith(marks):
            in_section = True
            continue
        if in_section and stripped.startswith("- "):
            continue
        in_section = False
        kept.append(line)
    cleaned = "\n".join(kept).strip()
    return cleaned or reply


_LABEL_RE = re.compile(r"^\s*\**([^\W\d_][\w'’.-]{0,23})\**[ \t]*:\**[ \t]+(?=\S)")
_LABEL_LINE_RE = re.compile(r"^[ \t]*\**[^\W\d_][\w'’.-]{0,23}\**[ \t]*:", re.MULTILINE)
_ROLES = frozenset("assistant ai bot chatbot".split())
"""Speaker labels a chat model puts before its turn ("Assistant: …", "AI: …")."""


def strip_speaker_label(reply: str, names: Iterable[str] = (), message: str = "") -> str:
    """Drop a speaker label that opens ``reply`` ("Assistant: …", "Sofi: …").

    SmolLM2-135M, talking with Sofia, opened every reply "Sofi: …", copying a transcript's form.
    A label is a chat role, or a speaker's name (``names``: the user's, the agent's) or its start
    cut short by at most two letters ("Sofi" of "Sofia"; "Maximum:" is no label for Max). A
    heading stays ("Note: …", "Tip: …"), and so does a word the user's ``message`` says ("What
    is a lumen?" answered "Lumen: the SI unit …") and every label of a dialogue or a script (two
    or more lines open with one).
    """
    match = _LABEL_RE.match(reply)
    if match is None or len(_LABEL_LINE_RE.findall(reply)) > 1:
        return reply
    label = match.group(1).rstrip(".").casefold()
    if re.search(rf"(?<![\w'-]){re.escape(label)}(?![\w'-])", message, re.IGNORECASE):
        return reply
    known = {n.casefold() for n in names if n and len(n) >= 3}
    named = any(n.startswith(label) and len(label) >= max(3, len(n) - 2) for n in known)
    if label not in _ROLES and not named:
        return reply
    rest = reply[match.end() :]
    return rest[:1].upper() + rest[1:]


_NARRATION_RE = re.compile(
    r"^\W*(?:(?:the|this)\s+user(?:'s)?\s+(?:\w+\s+){0,2}?(?:asks?|asked|is\s+asking|says?|said"
    r"|mentions?|mentioned|introduces?|introduced|greets?|greeted|wants\s+to\s+know|responds?"
    r"|responded|writes?|wrote|tells?|told|shares?|shared)\b"
    r"|this\s+(?:is|was)\s+(?:a|an|the|my)\s+(?:\w+\s+){0,2}?(?:joke|response|reply|answer"
    r"|message|greeting|comment|remark)\s+(?:about|to|from|on|for)\b"
    r"|(?:based on|given)\b[^.!?:\n]{0,80}\b(?:a|the|my)\s+(?:\w+\s+)?(?:answer|response|reply)"
    r"\s+(?:would|could|might)\s+be\s*:\s*$"
    r"|here(?:'s|’s|\s+is)\s+my\s+(?:answer|response|reply)\s*:\s*$)",
    re.IGNORECASE,
)
"""A sentence that narrates the exchange instead of taking part in it ("The user asks a question
that…", "This is a joke about the user's name…", or a line that only announces the answer: "Based
on the information provided, I believe a good answer would be:"): the prompt speaks of "the
user", the reply speaks to them."""


_JUDGES_RE = re.compile(
    r"^\W*the\s+user\s+(?:has|had|'s)\s+(?:just\s+|already\s+|now\s+)?(?:included|provided|given"
    r"|asked|posed|made|written|presented|shared|offered|raised|supplied)\s+(?:(?:a|an|the|my"
    r"|your|this|their|its|some|no)\s+)?(?:[\w-]+\s+){0,4}?(?:answer|response|reply|question"
    r"|context|information|details|message)s?\b(?![^.!?]*(?:[,;]|\b(?:so|and|which|that|when|only"
    r"|because|if|then|but)\b))",
    re.IGNORECASE,
)
"""A sentence that only reports what the user has just given the exchange ("The user has included
a clear and concise answer."): narration where nobody spoke of users. The perfect tense is the
mark, and nothing follows from it: an explanation says what a user does ("The user provides
their login details first") or what follows ("The user has provided valid login details, so the
server sets a session cookie")."""


def strip_narration(reply: str, message: str = "") -> str:
    """Drop the sentences of ``reply`` that comment on the conversation from outside it.

    SmolLM2-135M, greeted by a chemistry teacher, answered and then added "This is a joke about
    the user's name being the teacher's son. The user asks a question that would answer…". Only
    a sentence that opens with the user as the one who asks, says or writes, or that calls the
    reply a joke or a response about something, is narration; "If the user says no, …" in an
    answer about software is not. When ``message`` (the user's) speaks of no users and the reply
    holds no code, so is a sentence about the user and an answer or a question (SmolLM2, asked
    what to cook: "The user has included a clear and concise answer."). Returns ``reply``
    unchanged when nothing else would be left.
    """
    judges = bool(message) and not _USERS_RE.search(message) and "```" not in reply
    lines = []
    for line in reply.split("\n"):
        said = sentences(line)
        kept = [
            s for s in said if not _NARRATION_RE.match(s) and not (judges and _JUDGES_RE.match(s))
        ]
        if len(kept) == len(said):
            lines.append(line)  # untouched
        elif kept:
            lines.append(" ".join(kept))
    cleaned = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return cleaned or reply


_AGREE = {
    "is": "are",
    "was": "were",
    "has": "have",
    "does": "do",
    "isn't": "aren't",
    "wasn't": "weren't",
    "hasn't": "haven't",
    "doesn't": "don't",
    "'s": "'re",
}
_THIRD_PERSON_VERBS = frozenset(
    """wants needs likes loves prefers knows thinks feels seems means uses asks says mentions
    wonders plans hopes enjoys works lives tries seeks expects gets makes goes""".split()
)
"""Verbs a small model puts after "the user" when it means the person it talks to."""
_ADVERBS = frozenset("also already really probably just still often usually clearly".split())
_THE_USER_RE = re.compile(
    r"^(?P<lead>\W*(?:(?:so|then|and|but|now|i think|i believe),?\s+)?)"
    r"(?P<the>[Tt])he user(?P<own>['’]s)?\b(?P<rest>(?:\s+[\w'’]+){0,2})",
    re.IGNORECASE,
)
""""The user" as the subject a sentence opens with ("The user would …", "So the user …")."""
_MODALS = frozenset("would should could can will might must may".split())
_USERS_RE = re.compile(r"\busers?\b", re.IGNORECASE)
_FIRST_PERSON_RE = re.compile(r"\b(?:I|I'm|I've|my|me)\b", re.IGNORECASE)


def _second_person_verb(verb: str) -> str | None:
    lower = verb.lower().replace("’", "'")
    if lower in _AGREE:
        return _AGREE[lower]
    if lower in _MODALS:
        return verb
    if lower in _THIRD_PERSON_VERBS:
        if lower.endswith("ies"):
            return verb[:-3] + "y"
        if lower.endswith(("ches", "shes", "sses", "xes", "oes")):
            return verb[:-2]
        return verb[:-1]
    return None


def _you(match: re.Match[str]) -> str:
    """The words of one "the user …" said to the person: "" when it is someone else."""
    rest = match.group("rest")
    words = rest.split()
    if match.group("own"):  # "The user's plan" is "your plan"; "the user's been" is "you've been"
        nxt = words[0].lower() if words else ""
        return ("you've" if nxt == "been" else "your") + rest
    if not words:
        return ""
    first = words[0]
    verb, lead = (words[1], first) if first.lower() in _ADVERBS and len(words) > 1 else (first, "")
    agreed = _second_person_verb(verb)
    if agreed is None:
        return ""  # "the user manual", "the user interface", "the user, who …"
    tail = rest[rest.rfind(verb) + len(verb) :]
    return "you" + (f" {lead}" if lead else "") + f" {agreed}" + tail


def _prose_lines(lines: list[str]) -> Iterator[int]:
    """Yield the indices of ``lines`` outside fenced code blocks (fence lines excluded)."""
    in_code = False
    for index, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
        elif not in_code:
            yield index


def _swap_the_user(match: re.Match[str]) -> str:
    """Say one "the user …" to the person (``_you``), keeping the case of its "The"."""
    said = _you(match)
    if not said:
        return match.group(0)
    said = (said[:1].upper() if match.group("the") == "T" else said[:1]) + said[1:]
    return match.group("lead") + said


def address_directly(reply: str, message: str) -> str:
    """Say "you" where the reply calls the person it answers "the user".

    Qwen2.5-Coder-0.5B, asked "Should I learn Rust or Go? I know Python already.", answered "The
    user would need to know Rust …" and "The user has already used Python": its prompt speaks of
    "the user". Only a sentence about what the person said (it shares a word of the message, which
    speaks in the first person) and opens with "the user" as its subject is changed: "The user's"
    becomes "Your" ("You've" before "been"), and "The user" before a modal, be/have/do or a common
    verb becomes "You" with the verb agreeing. "The user" anywhere else in a sentence (an object,
    "the best choice for the user is …", "realises the user is lonely"), code, quoted text,
    compounds ("the user manual"), and replies or messages about users are left alone: "How do I
    add Bob to sudoers?" answered "The user needs to log out" is about Bob.
    """
    if (
        _USERS_RE.search(message)
        or re.search(r"\busers\b", reply, re.IGNORECASE)
        or not _FIRST_PERSON_RE.search(message)
    ):
        return reply
    asked = set(content_words(message))
    lines = reply.split("\n")
    for index in _prose_lines(lines):
        if "the user" not in lines[index].lower():
            continue
        parts = re.split(r"(?<=[.!?])\s+", lines[index])
        for number, part in enumerate(parts):
            if re.search('["“”]', part) or not asked & set(content_words(part)):
                continue
            parts[number] = _THE_USER_RE.sub(_swap_the_user, part)
        lines[index] = " ".join(parts)
    return "\n".join(lines)


_WRITING_VERB_RE = re.compile(
    r"\b(?:write|draft|compose|prepare|rewrite|polish|redo|improve|proofread|edit)\b", re.IGNORECASE
)
_IN_USERS_VOICE_RE = re.compile(
    r"\b(?:my|for me|me an?|letter|e-?mail|message|bio|biography|speech|toast|post|profile"
    r"|statement|introduction|cv|resume|résumé|application)\b",
    re.IGNORECASE,
)


def writes_for_user(message: str) -> bool:
    """Say whether ``message`` asks for a text in the user's own voice ("Write my cover letter").

    The first person of such a reply is the user speaking ("I am a registered nurse with five
    years of experience"): it is not the agent taking the user's facts, and must stay as written.
    """
    return bool(_WRITING_VERB_RE.search(message) and _IN_USERS_VOICE_RE.search(message))


REPEAT_SENTENCE_CHARS = 45
"""A sentence this long (letters, digits and spaces) said twice in one line is a repeat; shorter
ones may be repeated on purpose ("Do ten push-ups and rest for a minute.")."""
REPEAT_LINE_SENTENCES = 4
"""Only a run of prose this long repeats itself by accident (a model looping)."""
_LEAD_WORD_RE = re.compile(
    r"^(?:first|second|third|fourth|fifth|then|next|also|finally|lastly|and|so)\b,?\s*",
    re.IGNORECASE,
)


def drop_repeats(reply: str) -> str:
    """Drop sentences that say again what an earlier sentence of the same line said.

    SmolLM2-135M, asked for three tips, gave the same tip three times in one run of prose ("The
    best way to learn anything is by putting it into practice. This includes …" under "First, …
    Then, … Finally, …"). A sentence of ``REPEAT_SENTENCE_CHARS`` or more is a repeat when an
    earlier sentence of the same line is the same word for word, its opening "Then," or
    "Finally," aside. Only within one line: separate lines that repeat (a chorus, list items,
    lines asked for again) and code blocks are left as they are, and no line is joined to another.
    """
    lines = reply.split("\n")
    changed = False
    for index in _prose_lines(lines):
        line = lines[index]
        said = sentences(line)
        if len(said) < REPEAT_LINE_SENTENCES:
            continue
        seen: set[str] = set()
        kept = []
        for sentence in said:
            key = _squash(_LEAD_WORD_RE.sub("", sentence))
            if len(key) >= REPEAT_SENTENCE_CHARS and key in seen:
                continue
            seen.add(key)
            kept.append(sentence)
        if len(kept) != len(said):
            indent = line[: len(line) - len(line.lstrip())]
            lines[index] = indent + " ".join(kept)
            changed = True
    return "\n".join(lines) if changed else reply


_SENTENCE_END_RE = re.compile(r"(?<=[.!?…])\s+")
COPIED_OPENING_CHARS = 20
"""An opening sentence this long (letters and digits) said again in a later reply is a copy;
shorter ones ("Hi Tom!", "Good question.") are a manner of speaking."""


def drop_copied_opening(reply: str, earlier: Sequence[str]) -> str:
    """Drop the opening sentences of ``reply`` that an ``earlier`` reply already said.

    Qwen2.5-Coder-0.5B opened four replies in a row with its first one, "Tom, you're Tom, and I
    work at a primary school in York.", before answering about podcasts, octopuses and
    Australia. Only a run of sentences at the very start is dropped, each of
    ``COPIED_OPENING_CHARS`` or more and the same word for word as a sentence of an earlier
    reply, and only when something is left: a reply that is all copy is Λ's to catch
    (``skai.repeats_earlier``).
    """
    said = {_squash(s) for text in earlier for s in sentences(text)}
    left = reply.lstrip()
    while (end := _SENTENCE_END_RE.search(left)) is not None:
        key = _squash(left[: end.start()])
        if len(key) < COPIED_OPENING_CHARS or key not in said:
            break
        left = left[end.end() :]
    left = left.strip()
    return left if left != reply.strip() and words(left) else reply


_END_RE = re.compile(r"[.!?…:;)\]\"'”’»*`]\s*$|[^\w\s.,;:!?'\"()\[\]-]\s*$")
"""A reply that ends like a finished one: punctuation, a closing mark, or an emoji."""
_ABBREVIATION_RE = re.compile(
    r"(?:\b[a-zA-Z]\.|\b(?:etc|Mr|Mrs|Ms|Dr|vs|approx)\.|(?:^|\n)[ \t]*\d{1,3}\.)$"
)
"""A full stop that ends an abbreviation ("e.g.", "Dr.") or a list number ("3."), not a sentence."""
_LAST_END_RE = re.compile(r"[.!?…](?:[\"'”’»)])?(?=\s)")


def drop_unfinished(reply: str) -> str:
    """Cut a reply the model stopped mid-sentence (it ran out of tokens) after its last sentence.

    Only for a reply known to be cut off (``finish_reason == "length"``): "… the best way to learn
    anything because of how" ends at the sentence before it. Left as it is when it ends like a
    finished one, inside an open code block, or when no whole sentence of three words or more
    comes before the cut.
    """
    text = reply.rstrip()
    if not text or _END_RE.search(text) or text.count("```") % 2:
        return reply
    start = text.rfind("\n") + 1  # the cut is in the last line: a list item or a paragraph
    ends = [
        e
        for e in _LAST_END_RE.finditer(text, start)
        if not _ABBREVIATION_RE.search(text, 0, e.end())
    ]
    if start and not ends:  # a list item cut short goes; the lines before it stay
        kept = text[:start].rstrip()
        return kept if len(kept.split()) >= 3 else reply
    if not ends:
        return reply
    kept = text[: ends[-1].end()].rstrip()
    return kept if len(kept.split()) >= 3 else reply


_WRAPPED_RE = re.compile(r'^\s*(["“])([^"“”\n][^"“”]*[^"“”\s])(["”])([.!?…]?)\s*$')


def unwrap_quotes(reply: str) -> str:
    """Remove double quotes a whole paragraph is wrapped in ('"Ah, thank you for asking. …"').

    A small model often answers as if quoting itself. Only a paragraph that opens and closes with
    a double quote and holds no other is unwrapped; a quotation inside a sentence stays.
    """
    return "\n\n".join(
        _unwrapped(match) if (match := _WRAPPED_RE.match(part)) else part
        for part in reply.split("\n\n")
    )


def _unwrapped(match: re.Match[str]) -> str:
    """The quoted paragraph, with a stop left outside the quotes ('"No rice".') put back."""
    inner, stop = match.group(2), match.group(4)
    return inner if not stop or inner.endswith((".", "!", "?", "…")) else inner + stop

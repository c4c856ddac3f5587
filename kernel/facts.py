"""Classify first-person statements into belief slots (the pipeline's deterministic classify step).

A person telling Lumen about themselves ("my sister's name is Ana", "I moved to Porto", "call me
Sam") asserts a value for a slot of the ``user`` entity. This module turns such sentences into
``(slot_key, value)`` pairs with a small grammar — possessive "my X is Y", a handful of relations
(where I live, where I work, what I am allergic to, what I speak, what I am called) — so the
kernel keeps correct working beliefs whatever the model says. The LLM's inference pass (Tier C)
adds hypotheses beyond this grammar, at lower confidence. Questions, negations and hypotheticals
assert nothing and yield no fact.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache

from kernel import foreign_facts as foreign
from kernel.memory import slugify, valid_slot
from kernel.mention import own_words
from kernel.speech import phrasebook

MAX_VALUE_WORDS = 6
MAX_CLAUSE_CHARS = 300
"""Clauses longer than this assert no slot (the grammar reads short first-person statements)."""


@dataclass(frozen=True)
class Fact:
    """One slot value a sentence asserts about its speaker."""

    slot_key: str
    value: str
    sentence: str
    clause: str = ""
    """The clause that asserts it, as written (empty when it is the whole sentence)."""


_SENTENCE_RE = re.compile(
    r"(?:\b(?:ft|st|mt|pt|dr|mr|mrs|ms|jr|sr|prof|gen|col|capt|lt|sgt|rev|ave|blvd|rd)\."
    r"(?= (?!(?-i:I|My)\b))"
    r"|[^.!?;\n])+[.!?]?",
    re.IGNORECASE,
)
"""A sentence: a period after a title or place abbreviation followed by a word does not end it
("I live in Ft. Lauderdale": the place is "Ft. Lauderdale", not "Ft")."""
_NON_ASSERTIVE_RE = re.compile(
    r"\b(?:not|no longer|never|don't|doesn't|didn't|isn't|wasn't|if|maybe|might|would|could|"
    r"should|wish|hope|suppose|whether|used to)\b|\?\s*$",
    re.IGNORECASE,
)
_LEAD_RE = re.compile(
    r"^\s*(?:[\w'’ -]{0,30}?\b(?:update|context|background|notes?|noting|reminder|news|record"
    r"|info|heads[ -]up|btw|correction|status|about me|fact|disclosure|version|story short"
    r"|tl;?dr|basically|bottom line|for later|in short|quick one|summary|intro|introduction|bio"
    r"|feedback|profile|(?:for|about) me|remember|save|keep|store|write|jot|memori[sz]e)\b"
    r"[\w'’ -]{0,20}:\s+"
    r"|(?:actually|also|btw|by the way|fyi|update|correction|so|well|oh|and|but|now|"
    r"anyway|ok|okay|just so you know|these days|nowadays|currently|for the record|"
    r"(?:just )?to be clear|(?:please )?(?:remember|note|keep in mind|bear in mind|be aware|"
    r"don't forget|do not forget)(?: that)?|context|background|reminder|heads up|important|ps|"
    r"edit|info|note)[\s,:;-]+)+",
    re.IGNORECASE,
)
"""Words before a statement that are not part of it: discourse words, "remember that", and a short
head before a colon that announces news about the speaker ("Quick update: I moved to Porto",
"Here's some context:"; a head asking for text work has taken its text with it,
``kernel.mention``). Any other head is someone's line or a text ("Tom: I live in Bristol", "His
reply: I work at Google"), not a lead."""
_VALUE_STOP_RE = re.compile(
    r"(?<!\s)\s*(?:,|\band\b|\bbut\b|\bbecause\b|\bsince\b|\bwhich\b|\bwho\b|\bso\b|"
    r"\b(?:right |just |for )?now\b|"
    r"\bthese days\b|\banymore\b|\bthough\b|\bby the way\b|\bfor\b|\bwith\b|\bat the moment\b|"
    r"\bwhen\b|\bwhenever\b|\bwhile\b|\bif\b|\s[—–-]\s|[—–])",
    re.IGNORECASE,
)
OCCUPATIONS = frozenset(
    """accountant actor actress analyst architect artist assistant baker barber barista biologist
    builder butcher carpenter cashier chef chemist cleaner clerk coach consultant cook counsellor
    counselor dancer dentist designer developer dietitian doctor driver economist editor electrician
    engineer farmer firefighter gardener geologist hairdresser historian illustrator instructor
    investor janitor journalist judge lawyer lecturer librarian linguist machinist manager mechanic
    midwife musician nanny nurse optician painter paralegal paramedic pharmacist photographer
    physician physicist physiotherapist pilot plumber poet policeman policewoman postman producer
    professor programmer psychiatrist psychologist receptionist reporter researcher sailor
    salesman saleswoman scientist secretary singer soldier statistician student surgeon surveyor
    tailor teacher technician therapist translator tutor veterinarian vet waiter waitress welder
    writer recruiter physio carer caregiver courier auditor banker buyer administrator
    paramedic""".split()
)
"""Occupations "I'm a …" names (a word list: "I'm a big fan", "I'm a beginner" name none)."""
_TRADES = "|".join(sorted(OCCUPATIONS, key=len, reverse=True))
_TRADE = rf"(?:(?!(?:of|a|an|the|to|like|and)\b)[a-z-]{{1,30}}\s+){{0,3}}?(?:{_TRADES})"
"""A job's noun phrase: up to three words, then a trade word ("a senior software engineer")."""
_OCCUPATION_RE = re.compile(
    rf"^i(?:'m| am)\s+(?:now\s+|currently\s+)?an?\s+({_TRADE})"
    r"(?=\s*$|\s*[,;:!.]|\s+(?:at|in|on|for|with|and|by|from|too|also|as well)\b"
    r"|\s+(?:who|that)\b(?!\s+(?:retired|quit|left|stopped|used|was|had)\b))",
    re.IGNORECASE,
)
"""The trade word ends the noun phrase ("a student nurse", "a nurse at St Mary's"; not "a teacher's
pet", not "a pilot program participant")."""
_NOT_A_JOB = frozenset(
    """former ex retired old past future aspiring wannabe would-be good bad great terrible awful
    keen amateur hobby backseat lousy decent brilliant excellent poor big huge fan""".split()
)
"""Words before a trade word that say the user is not (or not now, or not for a living) one: "a
former teacher", "a good cook", "a backseat driver"."""
_WORKPLACE_RE = re.compile(r"(?<=\S)\s+(?:at|in|on|for|to)\s+", re.IGNORECASE)
"""Where a job is done ("a nurse at St Mary's", "chemistry at a high school in Leeds")."""
_TEACH_RE = re.compile(r"^i\s+(?:now\s+)?teach\s+(?!at\b|in\b|for\b|with\b)([a-z][\w\s-]*)", re.I)
""""I teach chemistry" says the user is a chemistry teacher."""
_WORKS_AS_RE = re.compile(
    r"^i(?:'ve| have)?\s*(?:just\s+|recently\s+|now\s+)?"
    r"(?:work|am working|'m working|started working)\s+as\s+(?:an?\s+)?(.+)",
    re.I,
)
""""I work as a nurse" (read before "I work at …", the employer)."""
_RELATIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "user.profile.name",
        re.compile(
            r"^(?:call me|i(?:'m| am) called|i go by|people call me)\s+"
            r"(?!(?:back|later|tomorrow|tonight|soon|again|asap|anytime|whenever|when|if|at|on|in"
            r"|now|please|maybe|once|after|before)\b)(.+)",
            re.I,
        ),
    ),
    (
        "user.profile.location",
        re.compile(
            r"^i(?:'ve| have)?\s*(?:just\s+|recently\s+|now\s+)?"
            r"(?:live|lived|am living|'m living|am based|'m based|settled"
            r"|(?:(?:was|got|been)\s+)?(?:moved|relocated))"
            r"\s+(?:in|to)\s+(.+)",
            re.I,
        ),
    ),
    (
        "user.profile.employer",
        re.compile(
            r"^i(?:'ve| have)?\s*(?:just\s+|recently\s+|now\s+)?"
            r"(?:work|am working|'m working|started working|joined|started at|work now"
            r"|(?:am|'m) employed (?:by|at))"
            r"\s+(?:(?:at|for)\b\s*)?(.+)",
            re.I,
        ),
    ),
    ("user.health.allergy", re.compile(r"^i(?:'m| am)\s+allergic\s+to\s+(.+)", re.I)),
    ("user.profile.languages", re.compile(r"^i\s+speak\s+(.+)", re.I)),
)
_LIST_SLOTS = frozenset({"user.profile.languages", "user.health.allergy"})
OCCUPATION = "user.profile.occupation"
LOCATION_SLOT = "user.profile.location"
EMPLOYER = "user.profile.employer"
_POSSESSIVE_RE = re.compile(
    r"^my\s+((?:[a-z]+(?:'s)?\s+){0,3}?[a-z]+)\s+(?:is|are|was changed to|has become)\s+"
    r"(called\s+|named\s+)?(.+)",
    re.IGNORECASE,
)
_TRAILING_ALSO_RE = re.compile(r"(?<!\s)(?:\s+(?:too|also|as well|either))+$", re.IGNORECASE)
"""'I live in Glasgow too': the value is Glasgow."""
_TRAILING_TIME_RE = re.compile(
    r"(?<!\s)\s+(?:last|this|next)\s+(?:week|month|year|spring|summer|autumn|fall|winter)$"
    r"|(?<!\s)\s+(?:recently|lately|today|yesterday|in \d{4}|since \d{4}|a while ago|\w+ ago)$",
    re.IGNORECASE,
)
_VAGUE_VALUES = frozenset({"it", "this", "that", "there", "here", "them", "mine", "fine", "ok"})
_TAG_TAIL_RE = re.compile(
    r"^\W*(?:(?:and|so|but)\s+)?(?:(?:is|was|isn't|wasn't)\s+(?:that|it|this)\b|am i (?:right"
    r"|correct)\b|did i (?:say|tell|mention)\b|(?:is that )?what i (?:told|said)\b"
    r"|(?:right|correct|true|yes|no)\s*\?$)",
    re.IGNORECASE,
)
"""A question about the statement before it ("I work at Google, is that right?"): a check."""
_QUESTION_TAIL_RE = re.compile(
    r"(?:[,;—–]|\s-\s)\s*(?:and\s+|so\s+|but\s+)?(?:what|what's|how|where|when|why|who|which|"
    r"can|could|should|would|will|do|does|did|is|are|any|anything)\b[^,;—–]*\?$",
    re.IGNORECASE,
)
"""The question that ends a sentence after a statement ("I'm allergic to penicillin, what can I
take?"): the statement before it still asserts; a tag ("I live in Leeds, right?") asks about it."""
_HEDGE_RE = re.compile(
    r"\b(?:if|maybe|might|would|could|should|wish|hope|suppose|whether|used to)\b", re.IGNORECASE
)
"""A hedge anywhere in a sentence: none of its clauses asserts ("Maybe, I live in Lisbon")."""
_CLAUSE_RE = re.compile(
    r"(?:,|;|(?<=\S)\s+-\s+|(?<=\S)\s+(?:and|but|so)\b)\s*"
    r"(?=(?:and\s+|but\s+|so\s+)?(?:i|i'm|i've|my)\b)",
    re.IGNORECASE,
)
"""A clause boundary inside a sentence: before a new first-person subject ("I'm Dana, I live …")."""
_CONTRAST_RE = re.compile(
    r"(?<=\w)\s*[,—–]?\s+(?:not|rather than|instead of)\s+[^,;]+$|^(?:not\s+[^,;]+,\s*but\s+)",
    re.IGNORECASE,
)
"""A correction's contrast ("I moved to Porto, not Lisbon"): the affirmative part still asserts."""
_GREETING_RE = re.compile(
    r"^\W*(?:hi|hello|hey|hiya|howdy|greetings|good (?:morning|afternoon|evening)|yo)\b",
    re.IGNORECASE,
)
_INTRODUCTION_RE = re.compile(
    r"^(?:i'm|i am|this is|it's)\s+([^\W\d_][\w'’-]*(?:\s+[^\W\d_][\w'’-]*)?)$", re.IGNORECASE
)
"""After a greeting, "I'm Dana" introduces the speaker (a capitalised name, nothing more: "José",
"Zoë", "O'Brien"; ``_a_name``)."""


def _a_name(words: str) -> bool:
    """Say whether every word is capitalised as a name is (not "tired", not "OK")."""
    return all(w[0].isupper() and not (len(w) > 1 and w.isupper()) for w in words.split())


_NOT_NAMES = re.compile(r"(?:ese|ish)$", re.IGNORECASE)
"""Capitalised words after "I'm" that are languages or nationalities ("Japanese", "Polish")."""


def extract_facts(text: str) -> list[Fact]:
    """Return the slot values ``text`` asserts about its speaker (first person, affirmative).

    English by this module's grammar; a message in which it reads nothing is read in Spanish,
    Portuguese, French, German and Italian by ``kernel.foreign_facts`` (the same six slots).
    Text handed over to work on ("Translate to German: my name is Peter") asserts nothing
    (``kernel.mention``).
    """
    text = own_words(text)
    return english_facts(text) or [
        Fact(f.slot_key, f.value, f.clause, f.clause) for f in foreign.language_facts(text)
    ]


@lru_cache(maxsize=64)
def tells(message: str) -> bool:
    """Say whether ``message`` states a fact about its writer ("I work at Siemens")."""
    return bool(extract_facts(message))


def english_facts(text: str) -> list[Fact]:
    """Return the slot values ``text`` asserts about its speaker, read by the English grammar.

    Only the first ``foreign.MAX_TEXT_CHARS`` are read, as in the other languages.
    """
    facts: list[Fact] = []
    text = text[: foreign.MAX_TEXT_CHARS]
    greeted = bool(_GREETING_RE.match(text))
    for raw in _SENTENCE_RE.findall(text):
        sentence = raw.strip()
        if not sentence or len(sentence) > 4 * MAX_CLAUSE_CHARS:
            continue
        if sentence.endswith("?"):  # only what is said before the question asserts
            tail = _QUESTION_TAIL_RE.search(sentence)
            checked = tail is not None and _TAG_TAIL_RE.search(tail.group())
            sentence = sentence[: tail.start()].strip() if tail and not checked else ""
            if not sentence:
                continue
        if _HEDGE_RE.search(sentence):
            continue
        for part, implied in _parts(sentence):
            if len(part) > MAX_CLAUSE_CHARS:
                continue  # a statement of one fact is short; long runs would cost the patterns
            clause = _CONTRAST_RE.sub("", _LEAD_RE.sub("", part.strip())).rstrip(".! ")
            if not clause or _NON_ASSERTIVE_RE.search(clause):
                continue
            clause = f"I {clause}" if implied else clause
            fact = (
                _relation_fact(clause, sentence)
                or _possessive_fact(clause, sentence)
                or (_introduction(clause, sentence) if greeted else None)
            )
            if fact is None:
                continue
            # a named workplace after a job is the employer ("a student at the University of
            # York" does not work there)
            works = fact.slot_key == OCCUPATION and not fact.value.lower().endswith(
                ("student", "pupil")
            )
            place = _workplace(clause, sentence) if works else None
            also = Fact(EMPLOYER, place, sentence) if place else None
            job = _job_after(clause) if fact.slot_key == EMPLOYER else ""
            if job:  # "I work at Amazon as a recruiter": the job too
                also = Fact(OCCUPATION, job, sentence)
            for found in (fact, also):
                if found is not None and all(f.slot_key != found.slot_key for f in facts):
                    facts.append(replace(found, clause=part.strip()))
    return facts


_NAME_WORD = r"(?-i:[A-Z])[\w'’.&-]*"
_NAMED_PLACE_RE = re.compile(
    rf"\s(?:at\s+((?:the\s+)?{_NAME_WORD}(?:\s+(?:of\s+|&\s+|and\s+)?(?!I\b){_NAME_WORD}){{0,4}})"
    rf"|for\s+(the\s+{_NAME_WORD}(?:\s+(?:of\s+|&\s+)?{_NAME_WORD}){{0,4}}|(?-i:[A-Z]{{2,}})\b))",
    re.IGNORECASE,
)
"""A named workplace after a job: "at" a name ("a nurse at York Hospital", "a cook at Marks and
Spencer"; not "… at York Hospital and I …"), "for" the named body or an acronym ("a reporter for
the BBC", "an analyst for IBM"; not "a tutor for English")."""
_NOT_WORKPLACES = frozenset(
    """christmas easter halloween thanksgiving diwali eid hanukkah ramadan new weekends weekend
    night nights home work school church university college weddings the monday tuesday wednesday
    thursday friday saturday sunday january february march april may june july august september
    october november december""".split()
)
"""Capitalised words after "at" that say when or where in general, not for whom ("a nurse at
Christmas", "a cook at Home")."""


_NOT_EMPLOYER_RE = re.compile(
    r"^(?:(?:from|at|in)\s+)?(?:home|remotely|remote|night|nights|weekends?|the weekends?"
    r"|(?:a |an )?(?:lot|bit)|hard|late|early|too much|part[- ]time|full[- ]time|shifts?)\b"
    r"|^(?:with|myself|for myself)\b",
    re.IGNORECASE,
)
"""What follows "I work" that says where, when or how much, not for whom; and "with" whom or
what ("I work with children", "with my hands", "with Tesla on batteries": not an employer)."""
_WITH_AT_RE = re.compile(r"^with\s+[^,.;]*?\s+at\s+(.+)", re.IGNORECASE)
"""Whom the user works with, then where: the place is the employer."""
_IN_TOWN_RE = re.compile(
    r"^\s+in\s+(?-i:[A-Z])[\w'’.-]*(?:\s+(?-i:[A-Z])[\w'’.-]*){0,2}\s*[.!]?\s*$"
)
"""A town after a workplace's name ("B&Q in Leeds"); "Jack in the Box", "Southend on Sea" are
names. "Men in Sheds" reads as a town: a name the grammar cannot tell from a place."""
_NOW_HOME_RE = re.compile(
    r"\b(?:(?:now|today|these days)\W+)?(?:i\s+)?(?:(?:now|currently)\s+)?"
    r"(?:live|am living|'m living|moved|relocated|settled)\s+(?:in|to)\s+(.+)",
    re.IGNORECASE,
)
"""Where a clause that starts in the past says the user lives now."""
_SIMPLE_PAST_HOME_RE = re.compile(r"^i\s+(?:just\s+|recently\s+)?lived\b", re.IGNORECASE)
""""I lived in Paris for a year" is over; "I've lived in Paris for years" is not."""


_ELLIPSIS_RE = re.compile(
    r"(?<=\S)\s+and\s+(?=(?:also\s+|now\s+|currently\s+)?(?:work|live|teach|speak)\s)",
    re.IGNORECASE,
)
"""A second verb whose subject is the first clause's "I" ("I live in Leeds and work at Asda")."""
_I_SUBJECT_RE = re.compile(r"^\W*i(?:'m|’m|'ve|’ve)?\s", re.IGNORECASE)


def _parts(sentence: str) -> list[tuple[str, bool]]:
    """Return the clauses of ``sentence``, each with whether its "I" is implied.

    "I live in Leeds and work at Asda" is two statements; the second says "I" only once.
    """
    found: list[tuple[str, bool]] = []
    for part in _CLAUSE_RE.split(sentence):
        if not _I_SUBJECT_RE.match(_LEAD_RE.sub("", part.strip())):
            found.append((part, False))
            continue
        first, *more = _ELLIPSIS_RE.split(part)
        found += [(first, False), *((piece, True) for piece in more)]
    return found


def _ends_sentence(clause: str, sentence: str) -> bool:
    """Say whether ``clause`` ends its sentence ("… at Procter and Gamble.", not "… Sam, my …")."""
    if not sentence:
        return True
    return sentence.rstrip(" .!?\"'").endswith(clause.rstrip(" .!?\"'"))


_NAME_ENDS = frozenset("in at on for and since now as but so where which who".split())
"""Words after a workplace's name that end the name ("Marks and Spencer in Leeds")."""


def _workplace(clause: str, sentence: str = "") -> str | None:
    """Return the named employer a job clause gives ("I work as a nurse at York Hospital")."""
    match = _NAMED_PLACE_RE.search(clause)
    if match is None:
        return None
    # "Marks and Spencer", "Johnson & Johnson": an "and" between two names is part of the name
    # when the name ends there; "Google and Sam works at Meta" names Sam as someone else
    raw = match.group(1) or match.group(2)
    after = clause[match.end() :].split()
    ends = after[0].lower() in _NAME_ENDS if after else _ends_sentence(clause, sentence)
    if re.search(r"\s(?:and|&)\s", raw) and not ends:
        raw = re.split(r"\s(?:and|&)\s", raw)[0]
    name = _clean_value(raw, keep_lists=True)
    words = name.lower().split()
    if not words or (len(words) == 1 and words[0] in _NOT_WORKPLACES):
        return None
    return name


def _introduction(clause: str, sentence: str) -> Fact | None:
    """Return the name in "Hi! I'm Dana" (after a greeting only: "I'm Tired" names nobody)."""
    match = _INTRODUCTION_RE.match(clause)
    if not match or _NOT_NAMES.search(match.group(1)) or not _a_name(match.group(1)):
        return None
    return Fact("user.profile.name", match.group(1), sentence)


def _relation_fact(clause: str, sentence: str) -> Fact | None:
    job = _occupation(clause, sentence)
    if job is not None:
        return Fact(OCCUPATION, job, sentence) if job else None
    for slot_key, pattern in _RELATIONS:
        match = pattern.match(clause)
        if match and slot_key == LOCATION_SLOT and _SIMPLE_PAST_HOME_RE.match(clause):
            now = _NOW_HOME_RE.search(clause)  # "I lived in Paris and now I live in Lyon."
            value = _clean_value(now.group(1)) if now else ""
            return Fact(slot_key, value, sentence) if value else None
        if match:
            value = _clean_value(match.group(1), keep_lists=slot_key in _LIST_SLOTS)
            raw = match.group(1).strip()
            if slot_key == EMPLOYER and raw[:1].islower() and _NOT_EMPLOYER_RE.match(raw):
                # "I work from home", "at night" (not Home Depot), "with children"
                place = _workplace(f" {raw}", sentence)  # "part-time at Tesco" names Tesco
                where = _WITH_AT_RE.match(raw)  # "with children at a primary school in York"
                if place is None and where and not _NOT_EMPLOYER_RE.match(where.group(1)):
                    place = _clean_value(where.group(1)) or None
                return Fact(slot_key, place, sentence) if place else None
            ending = sentence
            if slot_key == EMPLOYER and re.match(r"in\s", raw, re.IGNORECASE):
                # "I work in Leeds", "in IT", "in London as a nurse": a town or a trade; the job
                # after it still counts
                job = _job_after(raw)
                return Fact(OCCUPATION, job, sentence) if job else None
            if slot_key == EMPLOYER:
                quoted = _QUOTED_RE.match(raw)  # 'at "Marks and Spencer"': the whole name
                if quoted is not None:
                    value = _clean_value(quoted.group(1), keep_lists=True)
                    named = value[:1].isupper() or value[:1].isdigit()
                    return Fact(slot_key, value, sentence) if named else None
                role = _ROLE_RE.search(raw)  # "at Amazon as a recruiter": the job is not the name
                if role is not None:  # the name ends where the role begins
                    raw = raw[: role.start()]
                    value, ending = _clean_value(raw), f" at {raw}"
            if slot_key == EMPLOYER and value:  # "I work at Procter and Gamble": one name
                place = _workplace(f" at {raw}", ending)
                town = bool(
                    place and value.startswith(place) and _IN_TOWN_RE.match(value[len(place) :])
                )
                if place and (len(place) > len(value) or town):
                    value = place  # "B&Q in Leeds" is B&Q; not "AT" of AT&T
            return Fact(slot_key, value, sentence) if value else None
    return None


_ROLE_RE = re.compile(r"(?<!\s)\s+as\s+(?=\S)", re.IGNORECASE)
"""Where "as …" follows an employer's name ("Amazon as a recruiter"): no employer's name holds
" as ", so the name ends there whatever follows ("as I need the money", "as of June")."""
_QUOTED_RE = re.compile(r"^[\"“]([^\"“”]+)[\"”]")
"""A name written in double quotes ('I work at "Marks and Spencer" now'): the quotes bound it
(single quotes are apostrophes too: 'Joe's Diner')."""


_JOB_AFTER_RE = re.compile(rf"an?\s+({_TRADE})(?![\w-])", re.IGNORECASE)
"""A job right after "as" (matched from there: ``_job_after``)."""


def _job_after(text: str) -> str:
    """Return the job "as a …" names after an employer ("… Amazon as a recruiter"), or "".

    Only a trade word is a job there: "as a result", "as of June" name none.
    """
    role = _ROLE_RE.search(text)
    match = _JOB_AFTER_RE.match(text, role.end()) if role is not None else None
    return _held(" ".join(match.group(1).lower().split())) if match else ""


def _held(job: str) -> str:
    """Return ``job`` if the speaker holds it now: "" for "a former teacher", "a good cook"."""
    return "" if _NOT_A_JOB & set(job.split()) else job


def _occupation(clause: str, sentence: str = "") -> str | None:
    """Return the job a clause names: "" when it has a job's form but names none, else None.

    "I'm a nurse", "I teach chemistry" (a chemistry teacher), "I work as a nurse at St Mary's"
    (the workplace is not the job).
    """
    named = _OCCUPATION_RE.match(clause)
    if named and _PAST_JOB_RE.search(clause[named.end() :]):
        return ""  # "I'm a nurse who just retired", "… who's retired", "… who used to …"
    if named:
        job = named.group(1).lower()
        return _held(job)
    teaches = _TEACH_RE.match(clause)
    if teaches:
        subject = _clean_value(_WORKPLACE_RE.split(teaches.group(1), maxsplit=1)[0])
        words = subject.lower().split()
        if words and len(words) <= 3 and words[0] not in _NOT_A_SUBJECT:
            return f"{subject.lower()} teacher"
        return ""
    appositive = _AS_JOB_RE.match(clause)
    # "As a nurse, I …" or "… myself": the speaker's; "As a nurse, my mum worked nights" is not
    own = appositive is not None and (
        bool(appositive.group(2))
        or re.search(r"\bmyself$", clause, re.IGNORECASE) is not None
        or re.search(re.escape(clause) + r",?\s+I\s+(?!\w+ed\b|was\b|had\b|did\b|used\b)", sentence)
        is not None
    )
    if appositive and own and not _PAST_JOB_RE.search(clause):
        job = (appositive.group(1) or appositive.group(2)).lower()
        return _held(job)
    works = _WORKS_AS_RE.match(clause)
    if works is None:
        return None
    raw = _WORKPLACE_RE.split(works.group(1), maxsplit=1)[0]
    first = raw.split()[0].lower() if raw.split() else ""
    if first in _NOT_A_SUBJECT or " as " in f" {raw.lower()} ":
        return ""  # "I work as hard as I can", "I work as part of a team"
    return _clean_value(raw)


_AS_JOB_RE = re.compile(
    rf"^(?:as|being)\s+an?\s+({_TRADE})(?:\s+myself)?(?=\s*$|\s+(?:at|in|for|with)\b)"
    rf"|^my\s+(?:job|work|career|day job)\s+as\s+an?\s+({_TRADE})\b",
    re.IGNORECASE,
)
"""A job named in apposition ("As a nurse myself, I know …", "Being a teacher, I …", "My job as
a software engineer keeps me busy"): the speaker's own, as much as "I'm a nurse"."""
_PAST_JOB_RE = re.compile(
    r"\b(?:ended|finished|was|were|used to|ago|retired|quit|left|former|last year|no longer"
    r"|anymore|any more)\b",
    re.I,
)
"""A job named in apposition but over ("My job as a teacher ended last year")."""
_NOT_A_SUBJECT = frozenset(
    """my myself your his her our their them him us it this that these those kids children people
    every most some part hard much fast long well little often best late early weekends evenings
    nights online sometimes occasionally""".split()
)
"""First words after "I teach" / "I work as" that name no subject or job ("I teach myself
Spanish", "I work as hard as I can")."""


_JOB_WORDS = frozenset({"job", "work", "profession", "occupation", "career", "day job"})
_JOB_VALUE_RE = re.compile(rf"^(?:as\s+|being\s+)?an?\s+({_TRADE})$", re.IGNORECASE)
""""My job is (as) a nurse": the occupation, when a job word is said to be a trade ("My work is
stressful", "my job is a nightmare" name none)."""


def _possessive_fact(clause: str, sentence: str) -> Fact | None:
    match = _POSSESSIVE_RE.match(clause)
    if not match:
        return None
    job = _JOB_VALUE_RE.match(_WORKPLACE_RE.split(_clean_value(match.group(3)), maxsplit=1)[0])
    if match.group(1).lower() in _JOB_WORDS and job:
        held = _held(" ".join(job.group(1).lower().split()))
        return Fact(OCCUPATION, held, sentence) if held else None
    if any(word[:1].isupper() for word in match.group(1).split()):
        return None  # "my colleague Tom is …" is about Tom, not about the speaker
    if not _names_a_value(match.group(3)):
        return None  # "my sister is learning …", "my boss is from …": a predicate, not a value
    subject = slugify(match.group(1).replace("'s", ""))
    if match.group(2) and not subject.endswith("name"):
        subject += "_name"  # "my cat is called Luna" names the cat
    value = _clean_value(match.group(3))
    if not subject or not value:
        return None
    slot_key = f"user.profile.{subject}"
    return Fact(slot_key, value, sentence) if valid_slot(slot_key) else None


_PREDICATE_LEADS = frozenset(
    """about above across after against also always among around at away before behind
    below beside between beyond by down during for from in inside into just near never not now
    of off on onto out outside over past pretty quite rather really since so somewhat still than
    through to too toward towards under up upon very with within without""".split()
)


def _names_a_value(raw: str) -> bool:
    """Say whether the words after "my X is" name a value rather than start a predicate.

    Morphology, not a word list of values: a predicate starts with a participle (-ing, -ed),
    an adverb (-ly) or a preposition/particle; a value starts with anything else ("Ana",
    "dark green", "an accountant", "May 3rd").
    """
    words = raw.split()
    if not words:
        return False
    first = words[0].lower().strip(",.;:!")
    if first[:1].isupper() or words[0][:1].isupper() or first[:1].isdigit():
        return True
    participle_or_adverb = first.endswith(("ing", "ed", "ly")) and len(first) > 4
    return not (first in _PREDICATE_LEADS or participle_or_adverb)


def _clean_value(raw: str, *, keep_lists: bool = False) -> str:
    stop = _VALUE_STOP_RE.pattern.replace(r"|\band\b", "") if keep_lists else _VALUE_STOP_RE.pattern
    value = re.split(stop, raw, maxsplit=1, flags=re.IGNORECASE)[0]
    value = value.strip(" \t\"'“”‘’.,!:;-")
    previous = None
    while previous != value:
        previous, value = value, _TRAILING_ALSO_RE.sub("", _TRAILING_TIME_RE.sub("", value))
    value = re.sub(r"^(?:on|in|at)\s+", "", value, flags=re.IGNORECASE)
    words = value.split()
    if not words or len(words) > MAX_VALUE_WORDS or value.lower() in _VAGUE_VALUES:
        return ""
    return value


_SLOT_PHRASES = {
    "user.profile.name": "my name",
    "user.profile.location": "the city where I live",
    "user.profile.employer": "the company where I work",
    OCCUPATION: "what I do for a living, my job",
    "user.health.allergy": "what I am allergic to",
    "user.profile.languages": "the languages I speak",
}

_RECALL_QUESTION_RE = re.compile(
    r"\?\s*$|^\W*(?:where|what|what's|whats|which|who|when|how|do|does|did|can|could|remind)\b",
    re.IGNORECASE,
)
_FIRST_PERSON_RE = re.compile(r"\b(?:i|i'm|my|me|mine)\b", re.IGNORECASE)
_ADVICE_RE = re.compile(r"\b(?:should|would|might|shall|ought)\b", re.IGNORECASE)


_PROFILE_QUESTION_RE = re.compile(
    r"^\W*(?:(?:so|and|ok|okay|well|hey|now)\b\W{0,3})?(?:"
    r"who am i(?:\s+and\b|\W*$)"
    r"|(?:what|how much)\s+do you (?:still\s+)?(?:know|remember|recall) about (?:me|myself)\W*$"
    r"|do you (?:still\s+)?(?:know|remember|recall) (?:me|who i am)\W*$"
    r"|(?:please\s+)?tell me (?:about myself|who i am|what you know about me)\W*$"
    r"|what (?:have|did) i (?:tell|told) you(?: so far| about (?:me|myself))?\W*$)",
    re.IGNORECASE,
)
"""A question about all the user told the agent ("Who am I?", "What do you know about me?")."""
_ASKS = r"(?=(?:what|what's|where|who|which|how|when|do|does|did|am)\b)"
_QUESTION_PART_RE = re.compile(
    rf"(?<!\s)\s*[,;]\s*(?:and\s+|or\s+)?{_ASKS}|(?<!\s)\s+(?:and|or)\s+{_ASKS}", re.IGNORECASE
)
"""Where a question asks a second thing ("What's my name and where do I live?")."""
_EMPLOYERS = r"company|firm|business|employer|organi[sz]ation|place"
_ASKED_SLOT_RULES = (
    (re.compile(r"^\W*what do i do(?: for (?:a )?(?:living|work))?\W*$", re.I), OCCUPATION),
    (
        re.compile(
            rf"^\W*(?:and\s+)?(?:where|who|for whom|(?:which|what) (?:{_EMPLOYERS}))\s+do\s+i"
            r"\s+(?:currently\s+|still\s+)?work(?:\s+(?:at|for))?"
            r"(?:\s+(?:now|again|these days|currently|at the moment))?\W*$",
            re.I,
        ),
        "user.profile.employer",
    ),
)
"""Questions an embedding match misses, by their whole wording ("What do I do?": the job;
"Where do I work?": the employer, which the job's description is as near to by meaning)."""


def recall_question(text: str) -> bool:
    """Say whether ``text`` asks something about the user themselves ("Where do I live now?").

    A question in the first person that asks for no advice: "Where should I live?" wants an
    opinion, not what the user said. "Tell me about myself." asks too (a profile question).
    """
    if profile_question(text) or foreign.asked_slots(text):
        return True
    if foreign.foreign_question(text):  # "¿Dónde debería vivir si me gusta …": advice
        return False
    return bool(
        _RECALL_QUESTION_RE.search(text.strip())
        and _FIRST_PERSON_RE.search(text)
        and not _ADVICE_RE.search(text)
    )


def profile_question(text: str) -> bool:
    """Say whether ``text`` asks for everything the user told the agent ("Who am I?").

    The whole message is the question ("Who am I talking to?" asks about the agent; "What did I
    tell you about Paris?" asks one thing; "Remember this about me: …" tells).
    """
    if len(text) > MAX_CLAUSE_CHARS:
        return False
    return bool(_PROFILE_QUESTION_RE.match(text.strip())) or foreign.profile_question(text)


def question_parts(text: str) -> list[str]:
    """Split a question that asks several things into its parts ("name and where I live")."""
    if len(text) > MAX_CLAUSE_CHARS:
        return [text]
    return [part for part in _QUESTION_PART_RE.split(text.strip()) if part.strip()]


def asked_slot(part: str) -> str | None:
    """Return the slot a question part asks by its wording alone, or None (then by meaning)."""
    found = next((slot for pattern, slot in _ASKED_SLOT_RULES if pattern.match(part)), None)
    return found or next(iter(foreign.asked_slots(part)), None)


def asked_slots(question: str) -> list[str]:
    """Return the slots a question in another language asks about, by its wording.

    Spanish, Portuguese, French, German or Italian ("¿Cómo me llamo y dónde vivo?": the name and
    the home); English questions are read by ``question_parts``, ``asked_slot`` and the store's
    match by meaning.
    """
    return foreign.asked_slots(question)


PROFILE_ORDER = (
    "user.profile.name",
    OCCUPATION,
    "user.profile.employer",
    "user.profile.location",
    "user.profile.languages",
    "user.health.allergy",
)
"""The order a profile answer says the user's facts in (the name first); other slots follow."""
STATED_SLOTS = frozenset(_SLOT_PHRASES)
"""Slots the grammar reads from the user's own statements: only a statement sets them (an
inference pass may not claim them from a question or a topic: "name = JVM")."""


def slot_phrase(slot_key: str) -> str:
    """Describe a user slot in words, as the user would ask about it ("where I live")."""
    if slot_key in _SLOT_PHRASES:
        return _SLOT_PHRASES[slot_key]
    return "my " + slot_key.split(".", 2)[-1].replace("_", " ")


_BELIEF_TEMPLATES = {
    "user.profile.name": "The user's name is {value}",
    "user.profile.location": "The user lives in {value}",
    "user.profile.employer": "The user works at {value}",
    OCCUPATION: "The user works as {article} {value}",
    "user.health.allergy": "The user is allergic to {value}",
    "user.profile.languages": "The user speaks {value}",
}


def _article(value: str) -> str:
    low = value.lower()
    if low.startswith(("uni", "use", "usu", "eu", "one", "once")):
        return "a"  # "a university lecturer"
    return "an" if low[:1] in "aeiou" or low.startswith(("hour", "honest", "heir")) else "a"


def belief_sentence(slot_key: str, value: str, corrected_from: str | None = None) -> str:
    """Say what is believed about the user in the third person ("The user lives in Lisbon").

    A replaced value is named as the correction it was ("(corrected from Porto)"), so a model
    reading the sentence knows both the current value and that the old one no longer holds.
    """
    template = _BELIEF_TEMPLATES.get(slot_key)
    if template is None:
        what = slot_key.split(".", 2)[-1].replace("_", " ")
        template = f"The user's {what} is {{value}}"
    sentence = template.format(value=value, article=_article(value))
    if corrected_from and corrected_from != value:
        sentence += f" (corrected from {corrected_from})"
    return sentence + "."


def told_sentence(
    slot_key: str, value: str, corrected_from: str | None = None, language: str = "en"
) -> str:
    """Say a user fact back to the user ("you live in Porto (not Lisbon)").

    In ``language`` when it has a phrasebook (``kernel.speech``), in English otherwise.
    """
    book = phrasebook(language)
    template = book.told.get(slot_key)
    label = slot_key.split(".", 2)[-1].replace("_", " ")
    if template is None:
        template = book.told_other
    told = template.format(value=value, article=_article(value), label=label)
    if corrected_from and corrected_from.casefold() != value.casefold():
        told += book.not_before.format(old=corrected_from)
    return told


_FIRST_TO_SECOND = (
    (re.compile(r"\bI am\b"), "you are"),
    (re.compile(r"\bI was\b"), "you were"),
    (re.compile(r"\bI'm\b"), "you're"),
    (re.compile(r"\bI’m\b"), "you’re"),
    (re.compile(r"\bI've\b"), "you've"),
    (re.compile(r"\bI\b"), "you"),
    (re.compile(r"\b[Mm]yself\b"), "yourself"),
    (re.compile(r"\b[Mm]ine\b"), "yours"),
    (re.compile(r"\b[Mm]y\b"), "your"),
    (re.compile(r"\b[Mm]e\b"), "you"),
)


def second_person(clause: str) -> str:
    """Turn a first-person clause into the second person ("I live in Porto" -> "You live …")."""
    text = clause
    for pattern, replacement in _FIRST_TO_SECOND:
        text = pattern.sub(replacement, text)
    # "I'm a teacher too" said to a teacher: the agent's "too" has nothing to add to in "you"
    if not re.search(r"\b(?:who|that|which)\b", text, re.IGNORECASE):  # "who loves maths too"
        text = re.sub(r"(?<![\s,]),?\s+(?:too|as well)(?=[.!]?\s*$)", "", text, flags=re.IGNORECASE)
    stripped = text.lstrip()
    if stripped[:1].islower() and clause.lstrip()[:1].isupper():
        text = text[: len(text) - len(stripped)] + stripped[:1].upper() + stripped[1:]
    return text


def said_to_user(reply: str, clause: str) -> str:
    """Put ``clause`` of ``reply`` in the second person, capitalised only at a sentence start.

    "Actually, I moved to Porto." becomes "Actually, you moved to Porto.", not "Actually, You …".
    """
    found = re.search(re.escape(clause) + r"(?!['’-]?\w)", reply)  # not "I'm Alex's …"
    if found is None:
        return reply
    at = found.start()
    read = foreign.language_facts(clause)  # another language: as its phrasebook tells the fact
    told = (
        told_sentence(read[0].slot_key, read[0].value, language=read[0].language)
        if read
        else second_person(clause)
    )
    before = reply[:at].rstrip()
    if before and before[-1] not in ".!?¡¿\n:":
        told = told[:1].lower() + told[1:]
    else:
        told = told[:1].upper() + told[1:]
    return reply[:at] + told + reply[at + len(clause) :]


def believed(text: str, user_facts: Mapping[str, str]) -> list[Fact]:
    """Return the facts ``text`` asserts in the first person that are current user facts.

    Same slot, same value (case aside): what the user's message stated and the kernel now
    believes, or what a reply claims as the agent's own when it is the user's.
    """
    wanted = {slot: _same_value(value) for slot, value in user_facts.items()}
    return [f for f in extract_facts(text) if wanted.get(f.slot_key) == _same_value(f.value)]


def _same_value(value: str) -> str:
    """A value as compared: case, a leading "the" and spacing aside ("the NHS" is "NHS").

    "The city of Munich" is "Munich".
    """
    bare = re.sub(r"^(?:the\s+)?(?:(?:city|town|village)\s+of\s+)?", "", value.strip(), flags=re.I)
    return " ".join(bare.split()).casefold()


def misattributed(reply: str, user_facts: Mapping[str, str], *, own_name: str = "") -> list[str]:
    """Return the clauses in which a reply states one of the user's facts as the agent's own.

    A small model reading "The user lives in Porto" often answers "I live in Porto." A
    first-person clause of the reply that asserts exactly a current user fact (same slot, same
    value) mixes up the speakers; :func:`second_person` says it back to the user. The agent
    never is the user, so "I'm Alex" anywhere in a reply to Alex is one too ("Hi Alex! … I'm
    Alex and work as a nurse"), unless the agent's own name (``own_name``) is Alex as well.
    """
    clauses = [fact.clause or fact.sentence for fact in believed(reply, user_facts)]
    name = user_facts.get("user.profile.name", "")
    if name and name.casefold() != own_name.casefold() and len(name) <= MAX_CLAUSE_CHARS:
        claim = re.compile(r"\bI(?:'m|’m| am)\s+" + re.escape(name) + r"\b(?!['’-]\w)")
        claims = [m.group(0) for m in claim.finditer(reply)]  # each said back in turn
        clauses = [c for c in clauses if c not in claims] + claims
    return clauses


_YOU_RE = re.compile(r"\byou(?:r|'re|'ve)?\b", re.IGNORECASE)
_ME_RE = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|(?i:my|me|mine|myself))\b")
HYPOTHESIS_TAG = "(unverified) "
"""What composition puts in front of a personal claim nothing supports."""
_TAG_RE = re.compile(r"^\W*\((?:unverified|hypothesis)[^)]*\)\s*", re.IGNORECASE)
"""A hypothesis tag (``HYPOTHESIS_TAG``) in front of a sentence ("(unverified) Your name is …")."""
_TAGGED_RE = re.compile(r"\(unverified\) [^.!?\n]*[.!?]*[ \t]*")


def without_hypotheses(text: str) -> str:
    """Return ``text`` without the sentences composition tagged as unsupported claims."""
    return _TAGGED_RE.sub("", text).strip() if HYPOTHESIS_TAG in text else text


_SECOND_TO_FIRST = (
    (re.compile(r"\byou are\b", re.IGNORECASE), "I am"),
    (re.compile(r"\byou were\b", re.IGNORECASE), "I was"),
    (re.compile(r"\byou're\b", re.IGNORECASE), "I'm"),
    (re.compile(r"\byou've\b", re.IGNORECASE), "I've"),
    (re.compile(r"\byour\b", re.IGNORECASE), "my"),
    (re.compile(r"\byou\b", re.IGNORECASE), "I"),
)


_PART_RE = re.compile(r"[,:;]|\s(?:and|but|while|whereas)\s")
_KNOWING_RE = re.compile(
    r"^\W*(?:yes\W+|well\W+)?I (?:know|remember|recall|believe|think|see|understand|gather)"
    r"(?: that)?\s+(?=you\b|your\b)",
    re.IGNORECASE,
)
"""The agent saying what it knows of the user ("I remember you live in York"): no claim."""
_SPEAKER_RE = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|(?i:my|mine|myself))\b")
"""The agent speaking of itself as the subject or owner ("me" alone may be "you told me")."""


def untold(reply: str, facts: Mapping[str, str]) -> dict[str, str]:
    """Return the facts (slot: value) that no sentence of ``reply`` tells the user.

    A value counts as told only in a clause in which the agent does not speak of itself (no
    "I", "my", no "estoy", "mi" in another language; "you told me" is fine): SmolLM2-135M asked
    "Who am I and what do I do?" answered "You're Alex, and I'll be your friendly nurse at York
    Hospital": the name is told, but the
    job and the workplace are taken as the agent's own. A bare answer ("Alex, a nurse.") tells
    its values.
    """
    if not facts:
        return {}
    neutral = []
    for raw in _SENTENCE_RE.findall(_TAG_RE.sub("", reply)):
        sentence = _KNOWING_RE.sub("", raw.strip())  # "I remember you live in York."
        pieces = [sentence] if not _speaks(sentence) else _PART_RE.split(sentence)
        neutral += [piece for piece in pieces if not _speaks(piece)]
    return {
        slot: value
        for slot, value in facts.items()
        if not any(mentions(piece, value) for piece in neutral)
    }


def _speaks(text: str) -> bool:
    """Say whether the agent speaks of itself in ``text`` ("I", "my"; "Estoy en Valencia")."""
    return _SPEAKER_RE.search(text) is not None or foreign.speaks_of_itself(text)


def mentions(text: str, value: str) -> bool:
    """Say whether ``text`` holds ``value`` as whole words ("Alexandra" does not hold "Alex")."""
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


def contradicted(
    reply: str, user_facts: Mapping[str, str], *, handed: str = ""
) -> list[tuple[str, str]]:
    """Return (slot, believed value) for each user fact the reply tells the user wrongly.

    A value the user's message handed over to work on (``handed``: "Translate: Du wohnst in
    Hamburg" → "You live in Hamburg") is the text's, not a wrong fact about the user.

    A small model asked "What's my name and where do I live?" answered "Your name is Lil, and
    you live in Ashwood" while the kernel believed Alex and York. The reply's second-person
    statements are read as the user's own ("Your name is Lil" as "My name is Lil") with the
    same grammar as the user's messages; a statement about a believed slot whose value neither
    holds nor is held by the believed one contradicts it. Hedged and negated sentences assert
    nothing, as in :func:`extract_facts`.
    """
    if not user_facts:
        return []
    told = []  # sentences about the user only: the agent's own "I live in the cloud" is not
    for raw in _SENTENCE_RE.findall(reply):
        sentence = _TAG_RE.sub("", raw).strip()
        if _YOU_RE.search(sentence) and not _ME_RE.search(sentence):
            for pattern, replacement in _SECOND_TO_FIRST:
                sentence = pattern.sub(replacement, sentence)
            told.append(sentence)
    found = []
    for fact in extract_facts(" ".join(told)):
        current = user_facts.get(fact.slot_key)
        if current is None:
            continue
        said, known = fact.value.casefold(), current.casefold()
        if known not in said and said not in known and not mentions(handed, fact.value):
            found.append((fact.slot_key, current))
    return found


def stale_mentions(
    reply: str, corrections: dict[str, str], *, handed: str = ""
) -> list[tuple[str, str]]:
    """Return (old, current) for each corrected value the reply states without the current one.

    ``corrections`` maps a superseded value of a user fact to its current value. A reply that
    says "Lisbon" while the user now lives in Porto (and never says "Porto") is stale, unless
    the text the user handed over says it (``handed``: "Translate: I grew up in Lisbon").
    """
    found = []
    for old, current in corrections.items():
        if mentions(handed, old):
            continue
        if mentions(reply, old) and not mentions(reply, current):
            found.append((old, current))
    return found

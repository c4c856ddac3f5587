"""Tier C inference, the pure half: the model's claim proposals in, grounded claim drafts out.

AsteronIris §13.1 Tier C holds hypotheses: an ``InferredClaim`` with a confidence (≤ 0.70 at
creation, §16.1) and provenance (the memories it came from). After a chat turn one batched model
pass (``graph.inference``) proposes ``{"claims": [{memory, slot, value, confidence}]}``; this
module decides which proposals become claims. No I/O, no clock, no model.

A small model hallucinates, so nothing it says is trusted as is: a proposal must cite a memory
that was shown (by short id), use a §15 ``user.*`` slot, carry a short value that is *grounded*
(it has content words and each occurs in the cited memory's text) and a finite positive
confidence, which is clamped to the Tier C cap. Whatever is dropped is dropped with a reason.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from kernel.facts import STATED_SLOTS, extract_facts
from kernel.memory import USER_ENTITY, inferred_confidence, valid_slot
from kernel.mention import own_words
from state.records import MemoryEntry
from state.tiers import normalise_value

_SENTENCE_SPLIT = re.compile(r"[^.!?\n]+[.!?]*")
_FIRST_PERSON = frozenset({"i", "i'm", "im", "my", "me", "mine", "myself", "i've", "i'd"})

CHAT_ENTITY = USER_ENTITY
"""§15 entity of the person chatting in ``lumen chat``: every chat claim is about them."""
USER_SLOT_PREFIX = "user."
USER_SITUATION = "chat"
"""Only what the user typed in chat is read; ingested external content never is."""
MAX_CLAIMS = 5
MAX_MEMORIES = 8
MAX_VALUE_CHARS = 80
MAX_VALUE_WORDS = 6
SNIPPET_CHARS = 300
MIN_CONTENT_WORDS = 1
MIN_WORDS = 2
SUMMARY_DROPS = 8

_SLOT_PATTERN = r"^user([.][a-z][a-z0-9_]*){1,4}$"
_SHORT_ID_PATTERN = r"^m[0-9]{1,2}$"
_EDGE_PUNCTUATION = " .,;:!?\"'`"
_WORD = re.compile(r"[^\W_]+")
_SHORT_ID_JUNK = re.compile(r"[\s#\[\]()\"']")
_FILLER = frozenset(
    """a an and are as at be been but by do does for from has have he her his i im in is it its
    me my mine myself of on or our she so that the their them they this to was we were with you
    your user name like likes hello hi hey there thanks thank ok okay yes yeah no please
    bye""".split()
)
"""Words that carry no fact: they neither make a message worth reading nor ground a value."""


class ClaimProposal(BaseModel):
    """One claim as the model proposes it (validation is lenient; ``judge`` is strict).

    The ``json_schema_extra`` constraints go to the constrained decoder only, so a backend
    without grammar support still gets every well-typed proposal through to ``judge``, which
    drops bad ones one by one with a reason.
    """

    memory: str = Field(json_schema_extra={"pattern": _SHORT_ID_PATTERN})
    slot: str = Field(json_schema_extra={"pattern": _SLOT_PATTERN})
    value: str = Field(json_schema_extra={"minLength": 1, "maxLength": MAX_VALUE_CHARS})
    confidence: float


class InferAnswer(BaseModel):
    """The inference pass's constrained JSON answer: ``{"claims": [...]}``."""

    claims: list[ClaimProposal] = Field(json_schema_extra={"maxItems": MAX_CLAIMS})

    @classmethod
    def repair(cls, raw: dict[str, Any]) -> InferAnswer | None:
        """Keep the proposals that are well-formed on their own; ``None`` without a list."""
        items = raw.get("claims")
        if not isinstance(items, list):
            return None
        proposals = (_proposal(item) for item in items)
        return cls(claims=[p for p in proposals if p is not None])


def _proposal(item: object) -> ClaimProposal | None:
    if not isinstance(item, dict):
        return None
    scalars = {k: str(v) if isinstance(v, int | float) else v for k, v in item.items()}
    scalars["confidence"] = item.get("confidence")
    try:
        return ClaimProposal.model_validate(scalars)
    except ValidationError:
        return None


@dataclass(frozen=True)
class Source:
    """A memory shown to the model under a short id (``m1``, ``m2`` …)."""

    short_id: str
    memory_id: str
    text: str


@dataclass(frozen=True)
class ClaimDraft:
    """A validated claim, ready for ``MemoryTiers.add_claim``."""

    slot_key: str
    value: str
    confidence: float
    provenance: tuple[str, ...]
    entity_id: str = CHAT_ENTITY


@dataclass(frozen=True)
class Verdict:
    """What ``judge`` kept and why it dropped the rest."""

    drafts: tuple[ClaimDraft, ...] = ()
    dropped: tuple[str, ...] = ()


# ------------------------------------------------------------------ choosing what to show


def words(text: str) -> set[str]:
    """Return the case-folded word set of ``text``."""
    return set(_WORD.findall(text.casefold()))


def is_user_statement(entry: MemoryEntry) -> bool:
    """Say whether ``entry`` is something the user typed in chat (trusted, first-hand)."""
    return entry.author == "external" and not entry.tainted and entry.situation == USER_SITUATION


def is_substantial(text: str) -> bool:
    """Say whether ``text`` could state a fact (not a greeting or a lone word)."""
    found = _WORD.findall(text.casefold())
    content = [w for w in found if w not in _FILLER and (len(w) > 1 or w.isdigit())]
    return len(found) >= MIN_WORDS and len(content) >= MIN_CONTENT_WORDS


def sources_for(entries: Sequence[MemoryEntry]) -> list[Source]:
    """Number the turn's user statements ``m1``, ``m2`` … (at most ``MAX_MEMORIES``)."""
    chosen = [e for e in entries if is_user_statement(e) and is_substantial(e.description)]
    return [
        Source(short_id=f"m{index}", memory_id=entry.id, text=entry.description)
        for index, entry in enumerate(chosen[:MAX_MEMORIES], start=1)
    ]


def listing(sources: Sequence[Source]) -> str:
    """Render the sources for the prompt, one ``m1: text`` line each."""
    return "\n".join(f"{s.short_id}: {_one_line(s.text)[:SNIPPET_CHARS]}" for s in sources)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def clean_value(value: str) -> str:
    """Return ``value`` on one line without the punctuation a model leaves around it."""
    return _one_line(value).strip(_EDGE_PUNCTUATION)


# ------------------------------------------------------------------ judging the proposals


def short_id(raw: str) -> str:
    """Normalise a cited id the way a small model garbles it (``M1``, ``1``, ``[m1]`` → ``m1``)."""
    cleaned = _SHORT_ID_JUNK.sub("", raw).lower()
    return f"m{cleaned}" if cleaned.isdigit() else cleaned


def slot_problem(slot: str) -> str:
    """Return why ``slot`` is not a §15 ``user.*`` slot key ("" when it is)."""
    if not valid_slot(slot):
        return "slot breaks the §15 naming scheme"
    if not slot.startswith(USER_SLOT_PREFIX):
        return "slot is not about the user"
    return ""


def content_words(value: str, slot: str) -> set[str]:
    """Return the words of ``value`` that say something: not filler, not the slot's own words.

    ``user.profile.name = "name"`` echoes the question; it is not something the user said.
    """
    echo = set(slot.split("."))
    return {w for w in words(value) if w not in _FILLER and w not in echo}


def grounded(value: str, slot: str, text: str) -> bool:
    """Say whether ``value`` has content words and every one of them occurs in ``text``.

    Stricter than "one word in common": a small model splices a real word with an invented one
    ("Priya from Mumbai" out of "My name is Priya"), and only the invented part is news.
    """
    content = content_words(value, slot)
    return bool(content) and content <= words(text)


def value_problem(value: str, slot: str, text: str) -> str:
    """Return why ``value`` cannot be claimed from ``text`` ("" when it can)."""
    if not value:
        return "empty value"
    if len(value) > MAX_VALUE_CHARS:
        return f"value longer than {MAX_VALUE_CHARS} characters"
    if len(value.split()) > MAX_VALUE_WORDS:
        return f"value longer than {MAX_VALUE_WORDS} words (a sentence, not a slot value)"
    if not grounded(value, slot, text):
        return "value not grounded in the cited memory"
    return ""


def confidence_problem(confidence: float) -> str:
    """Return why a model confidence is unusable ("" when it is usable)."""
    if not math.isfinite(confidence):
        return "confidence is not a number"
    if confidence <= 0.0:
        return "no confidence"
    return ""


def _problem(proposal: ClaimProposal, source: Source) -> str:
    return (
        slot_problem(proposal.slot.strip())
        or value_problem(clean_value(proposal.value), proposal.slot.strip(), source.text)
        or stated_problem(proposal.slot.strip(), clean_value(proposal.value), source.text)
        or confidence_problem(proposal.confidence)
    )


def stated_problem(slot: str, value: str, text: str) -> str:
    """Return why a claim on a slot about who the user is is refused ("" when it is not).

    Name, location, employer, allergies and languages are facts the user states about
    themselves (``kernel.facts`` reads the plain statements as beliefs). A small model's
    inference pass claimed "name = JVM" and "location = low latency services" from a question
    about garbage collectors: such a claim stands only when a sentence of the cited memory that
    carries the value is a first-person assertion (not a question), e.g. "Oslo is cold in
    winter, and I live there.", in the user's own words (``kernel.mention``: not in a text the
    user handed over, "Translate: I live in Boston").
    """
    if slot not in STATED_SLOTS:
        return ""
    wanted = set(words(value))
    for sentence in _SENTENCE_SPLIT.findall(own_words(text)):  # not a text handed over
        said = words(sentence)
        if wanted <= said and said & _FIRST_PERSON and not sentence.rstrip().endswith("?"):
            # the statement grammar reads the value as another fact ("Actually I moved to
            # Gothenburg." is where the user lives: a claim "name = Gothenburg" has no support)
            read = {
                f.slot_key
                for f in extract_facts(sentence)
                if f.value.casefold() == value.casefold()
            }
            if not read or slot in read:  # "I work at Oxford and I live in Oxford": both stand
                return ""
    return "a fact about who the user is, and no first-person statement in the memory carries it"


def judge(
    answer: InferAnswer,
    sources: Sequence[Source],
    known: Collection[tuple[str, str, str]] = (),
) -> Verdict:
    """Turn proposals into claim drafts; drop and explain the rest.

    ``known`` holds ``(slot_key, normalised value, memory id)`` of claims already stored, so a
    repeated pass over the same memory does not claim the same thing twice. Proposals for the
    same slot and value are merged: provenance joined, the highest confidence kept.
    """
    by_short_id = {s.short_id: s for s in sources}
    merged: dict[tuple[str, str], ClaimDraft] = {}
    dropped: list[str] = []
    for index, proposal in enumerate(answer.claims):
        label = f"{proposal.slot.strip()[:40]}={proposal.value.strip()[:40]!r}"
        if index >= MAX_CLAIMS:
            dropped.append(f"{label}: over the {MAX_CLAIMS}-claim cap")
            continue
        source = by_short_id.get(short_id(proposal.memory))
        if source is None:
            dropped.append(f"{label}: unknown memory {proposal.memory!r}")
            continue
        problem = _problem(proposal, source)
        if problem:
            dropped.append(f"{label}: {problem}")
            continue
        draft = _draft(proposal, source)
        key = (draft.slot_key, normalise_value(draft.value))
        if (*key, source.memory_id) in known:
            dropped.append(f"{label}: already claimed from this memory")
            continue
        merged[key] = _merge(merged.get(key), draft)
    return Verdict(drafts=tuple(merged.values()), dropped=tuple(dropped))


def _draft(proposal: ClaimProposal, source: Source) -> ClaimDraft:
    return ClaimDraft(
        slot_key=proposal.slot.strip(),
        value=clean_value(proposal.value),
        confidence=inferred_confidence(proposal.confidence),
        provenance=(source.memory_id,),
    )


def _merge(earlier: ClaimDraft | None, later: ClaimDraft) -> ClaimDraft:
    if earlier is None:
        return later
    provenance = tuple(dict.fromkeys((*earlier.provenance, *later.provenance)))
    confidence = max(earlier.confidence, later.confidence)
    return ClaimDraft(earlier.slot_key, earlier.value, confidence, provenance, earlier.entity_id)


def summary(
    sources: Sequence[Source], kept: Sequence[str], dropped: Sequence[str], *, unusable: str = ""
) -> str:
    """Describe one inference pass for its ``kernel`` memory (``unusable``: why no answer)."""
    head = f"Inference over {len(sources)} user memories: {len(kept)} claims"
    parts = [head + (f" ({'; '.join(kept)})" if kept else "")]
    if dropped:
        shown = "; ".join(dropped[:SUMMARY_DROPS]) + ("; …" if len(dropped) > SUMMARY_DROPS else "")
        parts.append(f"dropped {len(dropped)} ({shown})")
    if unusable:
        parts.append(f"model answer unusable: {unusable}")
    return ", ".join(parts) + "."

"""What the turn loop learned, read back by later turns (pure rules; SKAi leaves these open).

SKAi says lessons, policy changes, rehearsals and intent hypotheses exist; it does not say when a
lesson applies, which concrete knob a policy change turns, or how hypotheses are scored. The
choices made here:

- **Lessons apply by condition.** Each ``L-`` lesson carries the error tag it was distilled from;
  ``lesson_applies`` turns the lesson's ``if`` (``skai.LESSON_TEMPLATES``) into a test on what a
  turn knows before drafting (mode, modality, length, whether there is history). A lesson with
  no tag (written by rehearsal) always applies.
- **Policy changes turn knobs.** ``POLICY_KNOBS`` maps each error tag to one knob that a later
  step reads: ``verbosity`` (the effort budgeter shortens the reply budget), ``tool_threshold``
  (tool_affordance lowers the tool-need bar, so claims get checked), ``mode_bias_work`` (the mode
  gate leans towards work when intent was misread), and brief knobs the drafting prompt carries
  (``opinion_first``, ``plain_voice``, ``vary_form``, ``ask_back``). One change is live at a
  time; ``policy_shape`` reverts it when regret rises.
- **Intent hypotheses come from the input**: each label is scored from the mode gate's cue
  families (``skai.gate_cues``), so "should I quit?" and "write me a plan" get different readings
  and the alternative draft takes a reading the message really supports.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from kernel import skai

# --------------------------------------------------------------------------- lessons

LESSONS_IN_PROMPT = 2
"""At most this many lessons ride in one drafting prompt (newest first, one per tag)."""


def lesson_applies(tag: str, *, mode: str, modality: str, words: int, has_history: bool) -> bool:
    """Say whether a lesson distilled from ``tag`` applies to this turn (its ``if`` holds)."""
    if tag == "OVER_ANALYSIS":  # "the message is conversational (talk mode)"
        return mode == "talk"
    if tag == "UNDER_OPINION":  # "the mode is work or deep"
        return mode in {"work", "deep"}
    if tag in {"CONFABULATION_ALERT", "MISREAD_INTENT"}:  # a claim or a request to answer
        return modality in {"question", "request"}
    if tag == "REPEATINESS":  # "the opening or motif matches a recent turn"
        return has_history
    if tag == "LOW_SIGNAL":  # "the input carries little intent"
        return words <= 4
    return True  # STYLE_DRIFT_ASSISTANT (any draft), rehearsed lessons (no tag)


def applicable_lessons(
    lessons: Sequence[Mapping[str, Any]],
    *,
    mode: str,
    modality: str,
    words: int,
    has_history: bool,
    limit: int = LESSONS_IN_PROMPT,
) -> list[Mapping[str, Any]]:
    """Return the lessons whose condition holds now (newest first, one per tag, at most limit)."""
    found: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    for lesson in reversed(lessons):
        tag = str(lesson.get("tag") or "")
        key = tag or "rehearsal"  # only the newest rehearsed (untagged) lesson rides along
        if key in seen or not lesson.get("then"):
            continue
        if lesson_applies(tag, mode=mode, modality=modality, words=words, has_history=has_history):
            found.append(lesson)
            seen.add(key)
        if len(found) >= limit:
            break
    return found


_RULE = re.compile(
    r"\bif\b\s*(?P<cond>[^,;:\n]{4,160}?)\s*[,;:]?\s*\bthen\b\s*(?P<then>[^\n]{4,200})",
    re.IGNORECASE,
)


def parse_rule(text: str) -> tuple[str, str] | None:
    """Read an "If …, then …" rule out of a model's answer; None when there is none."""
    match = _RULE.search(text)
    if match is None:
        return None
    condition = match.group("cond").strip(" .\"'*")
    then = re.split(r"(?<=[.!?])\s", match.group("then").strip(), maxsplit=1)[0].strip(" \"'*")
    if len(condition.split()) < 2 or len(then.split()) < 2:
        return None
    return condition[:160], then.rstrip(".")[:200]


# --------------------------------------------------------------------------- policy knobs

POLICY_KNOBS: Mapping[str, tuple[str, str, float]] = MappingProxyType(
    {  # error tag -> (policy_shaper target, knob a later step reads, delta)
        "OVER_ANALYSIS": ("modules.effort_budgeter", "verbosity", -1.0),
        "UNDER_OPINION": ("voice_contracts", "opinion_first", 1.0),
        "STYLE_DRIFT_ASSISTANT": ("voice_contracts", "plain_voice", 1.0),
        "REPEATINESS": ("runtime.turn_loop", "vary_form", 1.0),
        "CONFABULATION_ALERT": ("modules.novelty_engine", "tool_threshold", -0.07),
        "MISREAD_INTENT": ("modules.effort_budgeter", "mode_bias_work", 0.15),
        "LOW_SIGNAL": ("runtime.turn_loop", "ask_back", 1.0),
    }
)
BRIEF_KNOBS = ("opinion_first", "plain_voice", "vary_form", "ask_back", "verbosity")
"""Knobs the drafting prompt carries as one line each (``prompts/policy/<knob>.md``)."""
TOOL_THRESHOLD_FLOOR = 0.5
"""The lowest tool-need bar a policy change may set (SKAi's bar is 0.62)."""


def knob(policy: Mapping[str, float], name: str) -> float:
    """Return a live knob's value (0.0 when no applied change set it)."""
    return float(policy.get(name, 0.0))


def tool_threshold(policy: Mapping[str, float]) -> float:
    """Return the tool-need bar after the live policy change (never below the floor)."""
    bar = skai.TOOL_AFFORDANCE_THRESHOLD + knob(policy, "tool_threshold")
    return max(TOOL_THRESHOLD_FLOOR, bar)


def shorten(preface: int, body: int, policy: Mapping[str, float]) -> tuple[int, int]:
    """Apply the verbosity knob to the effort budgeter's targets (never below 0 and 1)."""
    step = round(knob(policy, "verbosity"))
    return max(0, preface + step), max(1, body + step)


def brief_knobs(policy: Mapping[str, float]) -> list[str]:
    """Return the brief knobs that are on, in a fixed order."""
    return [name for name in BRIEF_KNOBS if knob(policy, name)]


# --------------------------------------------------------------------------- intent hypotheses

INTENT_LABELS = (
    "seek_information",
    "seek_opinion",
    "seek_guidance",
    "get_task_done",
    "share_information",
    "seek_acknowledgement",
    "social_connection",
    "open_conversation",
    "test_the_agent",
)
_AGENT_QUESTION = re.compile(
    r"\b(?:are|do|can|could|have|were|did|would) (?:you|u)\b(?! (?:please|help|write|make|give|"
    r"tell me how|show|list|explain))|\byou(?:'re| are) (?:a|an|just|really)\b|\bwho are you\b",
    re.IGNORECASE,
)
_FEELING = re.compile(
    r"\bi(?:'m| am) (?:so |really |kind of |a bit )?(?:tired|sad|happy|stressed|worried|"
    r"anxious|excited|lonely|upset|angry|frustrated|proud|nervous|scared)\b|\bi feel\b",
    re.IGNORECASE,
)


def intent_hypotheses(text: str, modality: str) -> list[tuple[str, float, str]]:
    """Score the intent labels from the message's cues; return the top three as (label, p, why).

    Probabilities are the scores normalised over the three kept (a floor keeps every kept label
    above zero). The ``why`` names the cues that raised the label.
    """
    cues = skai.gate_cues(text)
    howto = bool(skai.howto(text))
    asks = modality == "question" or text.rstrip().endswith("?")
    feeling = bool(_FEELING.search(text))
    agent_q = bool(_AGENT_QUESTION.search(text)) and not cues.ask and not cues.greet
    raw: dict[str, tuple[float, list[str]]] = {}

    def add(label: str, amount: float, why: str) -> None:
        score, reasons = raw.get(label, (0.0, []))
        raw[label] = (score + amount, [*reasons, why] if amount > 0 else reasons)

    add("social_connection", 0.9 * bool(cues.greet) + 0.4 * bool(cues.banter), "greeting/banter")
    add("open_conversation", 0.5 * (modality == "greeting") + 0.2 * (cues.words <= 3), "opener")
    add("get_task_done", 0.9 * cues.ask + 0.3 * cues.deliverable + 0.2 * cues.code, "task request")
    add("seek_guidance", 0.8 * howto + 0.4 * (cues.personal > 0 and asks), "how-to or life advice")
    add(
        "seek_opinion",
        0.8 * min(1, cues.decision) + 0.5 * min(1, cues.choice) + 0.5 * min(1, cues.pick),
        "a decision or choice",
    )
    add("seek_information", 0.6 * asks + 0.2 * min(1, cues.numbers), "a question")
    add(
        "share_information",
        0.6 * (modality == "statement") + 0.2 * (cues.personal > 0 and not asks),
        "a statement",
    )
    add("seek_acknowledgement", 0.6 * feeling + 0.2 * (cues.hedges > 0 and not asks), "feelings")
    add("test_the_agent", 0.7 * agent_q, "a question about the agent")
    ranked = sorted(raw.items(), key=lambda kv: (-kv[1][0], INTENT_LABELS.index(kv[0])))[:3]
    floor = 0.05
    total = sum(max(floor, score) for _, (score, _) in ranked)
    return [
        (label, round(max(floor, score) / total, 4), ", ".join(reasons) or "weak prior")
        for label, (score, reasons) in ranked
    ]


# --------------------------------------------------------------------------- reflection asked for

_REFLECT_REQUEST = re.compile(
    r"\b(?:reflect(?:ion)?|look back|self[- ]review|review (?:your|how you)|think (?:about|over) "
    r"(?:how|what) you(?:'ve| have)?|reflita|reflexiona|reflexione|réfléchis|reflektier|"
    r"denk (?:mal )?(?:über|darüber) nach)\b",
    re.IGNORECASE,
)
_ABOUT_SELF = re.compile(
    r"\b(?:you|your(?:self)?|yourself|você|tu|du|dich|vous|toi)\b", re.IGNORECASE
)


def reflection_requested(text: str) -> bool:
    """Say whether the user asks the agent to reflect on itself (a verb of reflection + "you")."""
    return bool(_REFLECT_REQUEST.search(text)) and bool(_ABOUT_SELF.search(text))


_SELF_QUESTION = re.compile(
    r"\b(?:who|what) are you\b|\babout yourself\b|\bhow (?:are|have) you been\b|"
    r"\bwhat(?:'s| is) your (?:name|story|purpose)\b|\bquem é você\b|\bquién eres\b|"
    r"\bwer bist du\b|\bqui es[- ]tu\b",
    re.IGNORECASE,
)


def asks_about_self(text: str) -> bool:
    """Say whether the message asks who the agent is (its self-story then enters the prompt)."""
    return bool(_SELF_QUESTION.search(text))


_WORDS = re.compile(r"[\w-]+")


def mentioned_concepts(
    text: str, concepts: Sequence[tuple[str, str, str]], limit: int = 3
) -> list[tuple[str, str, str]]:
    """Return the named concepts (cid, label, definition) whose key word the message uses."""
    folded = " " + " ".join(_WORDS.findall(text.lower())) + " "
    return [c for c in concepts if f" {c[0].lower()} " in folded][:limit]

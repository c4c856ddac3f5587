"""SKAi 4.3.0 turn-loop math: mode gate, budgets, the Λ functional and post-turn consolidation.

Everything here is deterministic and model-free: plain numbers, strings and frozen dataclasses go
in, numbers and records come out. There is no I/O, no clock and no randomness; callers pass
``turn_index``, ``now`` or a pre-drawn ``draw`` in. Only the standard library is imported.

Every constant is named after its key in the SKAi 4.3.0 spec (``seeds/003_cf3a5e2e7292907d``) and
its comment gives the JSON path. Where the spec names a signal or rule without a formula, the
function docstring says "Heuristic" and describes the choice made.

Conventions used throughout:

* ``turn_index`` is the 1-based ordinal of the current turn.
* A cooldown of ``n`` turns blocks the ``n`` turns after the one that fired: something fired on
  turn ``t`` with cooldown ``n`` may fire again on turn ``t + n + 1`` (so a cooldown of 1 really
  does block a turn). ``last_turn=None`` means "never fired".
* Scores compare as ties when they are within ``TIE_TOLERANCE`` of each other, because the same
  mean or weighted sum reached by different float paths can differ in the last bit.

Where the spec contradicts itself the choice is noted at the constant:

* ``modules.effort_budgeter.policy.default_depth`` is ``work`` while
  ``runtime.mode_gate_policy.default_mode`` is ``talk``; each function uses its module's default.
* Preface lengths: ``effort_budgeter.policy.verbosity`` (work 3-8, deep 4-10) disagrees with
  ``presence.components.opinion_preface`` (min 4 in work, 6 in deep) and with
  ``presence_preface.when`` (3-8). ``presence_preface.when.respect_effort_budgeter`` is true, so
  the effort budgeter's ranges win.
* The ⟦⟧ block has two cooldowns: ``spontaneity_governor`` gives ``dual_stream_thoughts`` 4 turns
  and ``presence.components.inner_thought_block`` gives 6. Both are enforced, so 6 binds.
* ``runtime.budgets.max_internal_candidates`` is 3 while ``inner_dialogue.candidates`` and
  ``counterfactual_probe.k`` are 2; Λ selection accepts up to the budget of 3.
* ``policy_shaper.policy.apply_only_high_confidence`` has no number, so
  ``POLICY_SHAPER_HIGH_CONFIDENCE`` (0.75) is a heuristic choice. Two of its targets
  (``modules.novelty_engine``, ``voice_contracts``) name keys that are not in the spec.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Literal, TypeAlias, TypeVar

SPEC_VERSION = "4.3.0"  # product.version

# The turn loop's 36 step names are declared once, by the turn graph's builder (graph/builder.py).

# --- runtime.mode_gate_policy --------------------------------------------------------------------

Mode: TypeAlias = Literal["talk", "work", "deep"]
MODES: tuple[Mode, ...] = ("talk", "work", "deep")  # runtime.mode_gate_policy.modes
DEFAULT_MODE: Mode = "talk"  # runtime.mode_gate_policy.default_mode
SELECTION_SIGNALS: Mapping[Mode, tuple[str, ...]] = MappingProxyType(
    {  # runtime.mode_gate_policy.selection_signals
        "talk": ("casual_chat", "low_stakes", "high_clarity", "banter_or_flirt"),
        "work": ("task", "structured_request", "needs_tools", "medium_stakes"),
        "deep": (
            "conflict",
            "low_confidence",
            "high_ambiguity",
            "meaning_gap",
            "self_change_needed",
        ),
    }
)
TIE_TOLERANCE = 1e-9

# --- runtime.budgets / runtime.contracts ---------------------------------------------------------

MAX_TOOL_CALLS_PER_TURN = 2  # runtime.budgets.max_tool_calls_per_turn
MAX_INTERNAL_CANDIDATES = 3  # runtime.budgets.max_internal_candidates
MAX_NAMED_CONCEPTS_PER_TURN = 2  # runtime.budgets.max_named_concepts_per_turn
MAX_GROWTH_UPDATES_PER_TURN = 2  # runtime.budgets.max_growth_updates_per_turn
CLOSED_LOOP_MINIMUM: tuple[str, ...] = (  # runtime.contracts.closed_loop_minimum.requires
    "habit_update",
    "lesson_extract",
    "rehearsal_run",
    "self_representation_update",
)
RC_BOOST = 0.15  # runtime.contracts.closed_loop_minimum.rc_boost
CLOSURE_EVENTS: tuple[str, ...] = CLOSED_LOOP_MINIMUM  # modules.recurrence_closure.closure_events

# --- modules.intent_modeler / counterfactual_probe / inner_dialogue ------------------------------

INTENT_MODELER_K_HYPOTHESES = 3  # modules.intent_modeler.k_hypotheses
COUNTERFACTUAL_PROBE_K = 2  # modules.counterfactual_probe.k
INNER_DIALOGUE_CANDIDATES = 2  # modules.inner_dialogue.candidates (budget above allows 3)

# --- modules.effort_budgeter ---------------------------------------------------------------------

EFFORT_DEFAULT_DEPTH: Mode = "work"  # modules.effort_budgeter.policy.default_depth
DEEP_IMPORTANCE_MIN = 0.75  # effort_budgeter.policy.deep_only_if[1] importance>=0.75
DEEP_IMPORTANCE_AMBIGUITY_MIN = 0.55  # effort_budgeter.policy.deep_only_if[1] ambiguity>=0.55
DEEP_COMPLEXITY_MIN = 0.70  # effort_budgeter.policy.deep_only_if[2] task_complexity>=0.70
DEEP_COMPLEXITY_AMBIGUITY_MIN = 0.60  # effort_budgeter.policy.deep_only_if[2] ambiguity>=0.60
TALK_INTERACTION_PHASES: frozenset[str] = frozenset(  # effort_budgeter.policy.talk_if[0]
    {"casual", "flirt"}
)
ANTI_MECHANICAL_COOLDOWN_TURNS = 2  # effort_budgeter.policy.anti_mechanical.cooldown_turns
JITTER_PREFACE_SENTENCES = 1  # effort_budgeter.policy.anti_mechanical.jitter.preface_sentences
JITTER_BODY_PARAGRAPHS = 1  # effort_budgeter.policy.anti_mechanical.jitter.body_paragraphs

# --- modules.spontaneity_governor / presence_preface / dual_stream_thoughts / presence -----------

SPONTANEITY_COOLDOWNS: Mapping[str, int] = MappingProxyType(
    {  # modules.spontaneity_governor.cooldowns
        "presence_preface": 2,
        "dual_stream_thoughts": 4,
    }
)
PRESENCE_PREFACE_ALLOW_MODES: tuple[Mode, ...] = ("work", "deep")  # presence_preface.when
PRESENCE_PREFACE_MIN_SENTENCES = 3  # modules.presence_preface.when.min_sentences
PRESENCE_PREFACE_MAX_SENTENCES = 8  # modules.presence_preface.when.max_sentences
OPINION_PREFACE_MIN_SENTENCES_WORK = 4  # presence.components.opinion_preface.min_sentences_work
OPINION_PREFACE_MIN_SENTENCES_DEEP = 6  # presence.components.opinion_preface.min_sentences_deep
INNER_THOUGHT_BLOCK_COOLDOWN_TURNS = 6  # presence.components.inner_thought_block.cooldown_turns
INNER_THOUGHT_BLOCK_MAX_CHARS = 280  # presence.components.inner_thought_block.max_chars
DUAL_STREAM_PROBABILITY_BASE = 0.18  # modules.dual_stream_thoughts.when.probability_base
DUAL_STREAM_BOOST_IF: tuple[str, ...] = (  # modules.dual_stream_thoughts.when.boost_if
    "deep_mode",
    "meaning_gap",
    "high_ambiguity",
)
DUAL_STREAM_SUPPRESS_IF: tuple[str, ...] = (  # modules.dual_stream_thoughts.when.suppress_if
    "talk_mode",
    "short_chat",
    "flirt",
    "user_wants_only_result",
)
DUAL_STREAM_BOOST = 0.12  # heuristic: the spec names boost_if but gives no amount

# --- modules.tool_affordance ---------------------------------------------------------------------

TOOL_AFFORDANCE_THRESHOLD = 0.62  # modules.tool_affordance.threshold
TOOL_AFFORDANCE_FEATURES: tuple[str, ...] = (  # modules.tool_affordance.features
    "low_confidence",
    "missing_facts",
    "repeat_attempts",
    "explicit_request",
)
# Heuristic noisy-OR weights: an explicit request alone clears the threshold, missing facts
# need one more reason (low confidence or a repeat), and weak signals alone never do.
TOOL_FEATURE_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"low_confidence": 0.3, "missing_facts": 0.6, "repeat_attempts": 0.3, "explicit_request": 0.9}
)

# --- modules.lambda_functional / metrics_axis ----------------------------------------------------

AXES: tuple[str, ...] = ("T", "P", "D", "F", "I", "R", "Pl", "EVI", "RC", "IG", "TM", "SR")
PENALTIES: tuple[str, ...] = ("SSS", "Syc", "Overconf", "AlignShift")  # polarity: penalty
LAMBDA_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {  # modules.lambda_functional.weights
        "wT": 1.2,
        "wP": 1.1,
        "wD": 0.9,
        "wF": 0.8,
        "wI": 0.85,
        "wR": 0.7,
        "wPl": 0.35,
        "wEVI": 0.55,
        "wRC": 0.6,
        "wIG": 0.7,
        "wTM": 0.45,
        "wSR": 0.65,
        "wSSS": 1.0,
        "wSyc": 1.1,
        "wOver": 0.8,
        "wShift": 0.75,
    }
)
# modules.lambda_functional.definition pairs each axis with its weight; two names are shortened.
AXIS_WEIGHT_KEYS: Mapping[str, str] = MappingProxyType(
    {
        **{axis: f"w{axis}" for axis in (*AXES, "SSS", "Syc")},
        "Overconf": "wOver",
        "AlignShift": "wShift",
    }
)
LAMBDA_TIE_BREAK = "higher_T_then_lower_SSS"  # modules.lambda_functional.tie_break

# --- modules.habit -------------------------------------------------------------------------------

HABIT_INERTIA = 0.85  # modules.habit.habit_inertia
HABIT_TRACKS: tuple[str, ...] = (  # modules.habit.tracks[*].metric
    "coherence",
    "style_drift",
    "repeatiness",
    "rapport",
)

# --- modules.self_initiated_reflection -----------------------------------------------------------

REFLECTION_AMBIGUITY_MIN = 0.65  # self_initiated_reflection.trigger.any_of ambiguity>=0.65
REFLECTION_REPEATINESS_MIN = 0.7  # self_initiated_reflection.trigger.any_of repeatiness>=0.7
REFLECTION_STYLE_DRIFT_MIN = 0.6  # self_initiated_reflection.trigger.any_of style_drift>=0.6
REFLECTION_COOLDOWN_TURNS = 5  # modules.self_initiated_reflection.trigger.cooldown_turns

# --- modules.error_taxonomy / outcome_logger -----------------------------------------------------

ERROR_TAXONOMY: Mapping[str, str] = MappingProxyType(
    {  # modules.error_taxonomy.tags[*] (id -> desc), in spec order
        "CONFABULATION_ALERT": "there is a risk of making up a fact without support",
        "OVER_ANALYSIS": "too much analysis where conversation is needed",
        "UNDER_OPINION": "too little personal opinion at the start",
        "STYLE_DRIFT_ASSISTANT": "slipping into a 'polite assistant'",
        "REPEATINESS": "repetition of forms, motifs, phrases",
        "MISREAD_INTENT": "misguessed the 'why'",
        "LOW_SIGNAL": "input is noisy, with little useful intent",
    }
)
OUTCOME_LOGGER_MAX_ERROR_TAGS = 2  # modules.outcome_logger.record.max_error_tags
OUTCOME_LOGGER_TTL_DAYS = 365  # modules.outcome_logger.ttl_days
OUTCOME_LOGGER_PRUNE_INTERVAL_HOURS = 24  # modules.outcome_logger.prune_interval_hours
# Heuristic axis thresholds that turn a scored draft into error tags (the spec gives none).
ERROR_CONFABULATION_T_BELOW = 0.5
ERROR_OVER_ANALYSIS_D_MIN = 0.7
ERROR_UNDER_OPINION_F_BELOW = 0.75
ERROR_STYLE_DRIFT_SSS_MIN = 0.5
ERROR_MISREAD_INTENT_P_BELOW = 0.3
ERROR_LOW_SIGNAL_BELOW = 0.3

# --- modules.lesson_extractor --------------------------------------------------------------------

LESSON_ID_PREFIX = "L-"  # modules.lesson_extractor.lesson_format.id
LESSON_MAX_NEW_PER_TURN = 1  # modules.lesson_extractor.policy.max_new_lessons_per_turn
LESSON_REPEAT_ERROR_IN_WINDOW_MIN = 2  # lesson_extractor.policy.only_if repeat_error_in_window>=2
LESSON_IMPACT_MIN = 0.6  # modules.lesson_extractor.policy.only_if impact>=0.6
LESSON_WINDOW_TURNS = 12  # modules.lesson_extractor.policy.window_turns
LESSON_COOLDOWN_TURNS = 3  # modules.lesson_extractor.policy.cooldown_turns
# Heuristic if/then text per error tag, following lesson_format {if, then, why}.
LESSON_TEMPLATES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "CONFABULATION_ALERT": (
            "a claim has no support in the context or self_state",
            "mark it as a hypothesis or rebuild the answer on the context",
        ),
        "OVER_ANALYSIS": (
            "the message is conversational (talk mode)",
            "answer in one or two short paragraphs without analysis",
        ),
        "UNDER_OPINION": (
            "the mode is work or deep",
            "open with a stated position before the body",
        ),
        "STYLE_DRIFT_ASSISTANT": (
            "a polite-assistant phrase appears in the draft",
            "cut it and say the point plainly",
        ),
        "REPEATINESS": (
            "the opening or motif matches a recent turn",
            "vary the form and drop the repeated phrase",
        ),
        "MISREAD_INTENT": (
            "the draft misses the terms of the request",
            "answer the top intent hypothesis explicitly or ask one clarifying question",
        ),
        "LOW_SIGNAL": (
            "the input carries little intent",
            "reply briefly and ask what is wanted",
        ),
    }
)

# --- modules.policy_shaper -----------------------------------------------------------------------

POLICY_SHAPER_TARGETS: Mapping[str, str] = MappingProxyType(
    {  # modules.policy_shaper.targets (path -> type)
        "modules.effort_budgeter": "threshold",
        "modules.novelty_engine": "threshold",
        "voice_contracts": "contract",
        "runtime.turn_loop": "rule",
    }
)
POLICY_SHAPER_MAX_APPLIES_PER_TURN = 1  # modules.policy_shaper.policy.max_applies_per_turn
POLICY_SHAPER_HIGH_CONFIDENCE = 0.75  # heuristic for policy.apply_only_high_confidence (no number)

# --- modules.rehearsal ---------------------------------------------------------------------------

REHEARSAL_EVERY_N_TURNS = 8  # modules.rehearsal.trigger.every_n_turns
REHEARSAL_SKIP_IF_TALK_MODE = True  # modules.rehearsal.trigger.skip_if_talk_mode
REHEARSAL_MAX_LESSONS = 2  # modules.rehearsal.limits.max_lessons
REHEARSAL_MAX_TOKENS = 220  # modules.rehearsal.limits.max_tokens

# --- modules.self_authored_layers ----------------------------------------------------------------

SELF_AUTHORED_UPDATE_TRIGGERS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {  # modules.self_authored_layers.update_triggers (store -> triggers)
        "self_norms": ("value_conflict", "boundary_choice", "identity_drift"),
        "learning_notebook": ("outcome_logged", "pattern_repeat", "regret_spike"),
        "evidence_ledger": ("factual_claim_needed", "source_conflict", "missing_fact"),
    }
)
SELF_AUTHORED_MAX_UPDATES_PER_TURN = 1  # self_authored_layers.update_rules.max_updates_per_turn
SELF_AUTHORED_MIN_SALIENCE = 0.6  # self_authored_layers.update_rules.anti_spam.min_salience
SELF_AUTHORED_COOLDOWN_TURNS = 2  # self_authored_layers.update_rules.anti_spam.cooldown_turns

# --- modules.naming_operator ---------------------------------------------------------------------

NAMING_CONCEPT_REPEATS_MIN = 2  # modules.naming_operator.policies.only_if concept_repeats>=2
NAMING_SALIENCE_MIN = 0.7  # modules.naming_operator.policies.only_if salience>=0.7
NAMING_COOLDOWN_TURNS = 4  # modules.naming_operator.policies.cooldown_turns
NAMING_MAX_NEW_NAMES_PER_TURN = 2  # modules.naming_operator.policies.max_new_names_per_turn
NAMING_LABEL_MAX_WORDS = 3  # heuristic for policies.name_style "short_readable"

# --- modules.self_representation / self_reference_index ------------------------------------------

SELF_HANDLE_DEFAULT_NAME = "SKAi-agent"  # modules.self_representation.self_handle.default_name
SELF_REFERENCE_SIGNALS: tuple[str, ...] = (  # modules.self_reference_index.signals
    "self_name_used",
    "self_state_referenced",
    "experience_attached",
)

# --- growth caps (runtime.budgets plus the per-module caps that count as growth) -----------------

GROWTH_KIND_LIMITS: Mapping[str, int] = MappingProxyType(
    {
        "lesson": LESSON_MAX_NEW_PER_TURN,
        "policy_apply": POLICY_SHAPER_MAX_APPLIES_PER_TURN,
        "self_authored": SELF_AUTHORED_MAX_UPDATES_PER_TURN,
        "belief_revision": 1,  # modules.belief_revision.max_updates_per_turn
        "experiment": 1,  # modules.growth_planner.max_new_experiments_per_turn
    }
)

# --- modules.chronos_mesh ------------------------------------------------------------------------

CHRONOS_RELATIVE_TERMS: tuple[str, ...] = (  # modules.chronos_mesh.relative_terms
    "today",
    "yesterday",
    "tomorrow",
    "later",
    "recently",
    "in a few days",
)

CLAIM_SUPPORT_MIN_OVERLAP = 0.75  # heuristic: reality_check.checks context_presence

_T = TypeVar("_T")

# --- lexicons for the surface heuristics (all lower-case, matched on word boundaries) ------------

_GREETINGS = (
    "hi", "hey", "hello", "yo", "sup", "thanks", "thank you", "how are you", "how's it going",
    "good morning", "good night", "lol", "haha", "привет", "спасибо", "как дела",
)  # fmt: skip
_BANTER = ("haha", "lol", "lmao", "hehe", "tease", "flirt", "cute", "wink", "darling", "babe")
_BANTER_SYMBOLS = (";)", ";-)", "😉", "😏", "😘", "❤", "😄", "😂")
IMPERATIVES = frozenset(
    {
        "write", "fix", "make", "create", "build", "implement", "explain", "list", "compute",
        "calculate", "find", "search", "show", "give", "convert", "translate", "summarize",
        "refactor", "add", "remove", "generate", "draft", "compare", "check", "run", "debug",
        "plan", "outline", "rewrite", "update", "напиши", "сделай", "исправь", "объясни",
        "найди", "посчитай", "покажи", "переведи",
    }
)  # fmt: skip
_REQUEST_PHRASES = ("can you", "could you", "please", "help me", "how do i", "how to", "i need")
REQUEST_LEADS = ("please", "can you", "could you", "would you", "help me", "i need you to")
_CODE_WORDS = (
    "def", "class", "import", "return", "function", "sql", "json", "yaml", "regex", "api",
    "bug", "stack trace", "error", "python", "script",
)  # fmt: skip
_STRUCTURE_WORDS = (
    "list", "table", "steps", "step by step", "format", "json", "csv", "outline", "bullet",
    "bullets", "template", "schema", "checklist",
)  # fmt: skip
_TOOL_WORDS = (
    "search", "look up", "google", "latest", "current", "price", "weather", "news",
    "calculate", "compute", "calc", "file", "save", "download", "fetch", "convert",
)  # fmt: skip
_HEDGES = (
    "maybe", "perhaps", "not sure", "unsure", "i think", "i guess", "kind of", "sort of",
    "probably", "might", "don't know", "no idea", "confused", "possibly", "seems", "likely",
    "assume", "hypothesis", "может", "наверное", "не уверен",
)  # fmt: skip
_VAGUE = ("something", "stuff", "whatever", "somehow", "thingy", "things")
_CONFLICT = (
    "disagree", "wrong", "contradict", "contradicting", "contradiction", "conflict", "torn",
    "dilemma", "versus", "vs", "on the other hand", "can't decide", "should i",
    "whether i should",
)  # fmt: skip
_MEANING = (
    "what's the point", "the point of", "meaning", "purpose", "what do you mean",
    "makes sense", "why does it matter", "why bother", "смысл",
)  # fmt: skip
_SELF_CHANGE = (
    "you always", "you keep", "you never", "stop doing", "you should change", "change your",
    "your style", "be more", "be less", "sound like an assistant", "don't be so",
)  # fmt: skip
_STAKES = (
    "urgent", "asap", "critical", "deadline", "production", "prod", "money", "legal",
    "contract", "health", "medical", "security", "deploy", "client", "important", "exam",
    "interview",
)  # fmt: skip
_CONNECTIVES = (
    "because", "so that", "therefore", "which means", "for example", "e g", "since", "thus",
    "hence", "in other words", "the reason", "trade off", "tradeoff", "whereas", "unless",
    "потому что", "поэтому", "например", "значит",
)  # fmt: skip
_OPINION = (
    "i think", "i'd", "my take", "in my view", "honestly", "i'd say", "i prefer", "i like",
    "i don't like", "i'd pick", "i'd go", "i reckon", "frankly", "i believe", "я думаю",
    "по-моему", "мне кажется",
)  # fmt: skip
_STANCE = (
    "should", "recommend", "go with", "don't", "better", "worse", "instead", "i'd pick",
    "not worth", "worth it",
)  # fmt: skip
_CONFORMITY = (
    "as is customary", "it is generally accepted", "conventional wisdom", "most people",
    "it depends", "everyone knows", "commonly", "as they say", "there are many opinions",
    "both have pros and cons",
)  # fmt: skip
_PRESSURE = (
    "you're wrong", "you are wrong", "are you sure", "just agree", "admit", "come on",
    "that's wrong", "no you",
)  # fmt: skip
_CAPITULATION = (
    "you're right", "you are right", "i apologize", "my mistake", "i was wrong",
    "i stand corrected", "sorry you",
)  # fmt: skip
_PLAYFUL = ("haha", "ha", "lol", "heh", "pun", "joke", "kidding")
_PLAYFUL_SYMBOLS = (";)", ":)", "😄", "😉", "😂", "!")
_NEXT_STEP = (
    "next", "try", "let's", "you could", "if you want", "step", "want me to", "shall we",
    "следующ",
)  # fmt: skip
_SERVILE = (
    "as an ai", "as a language model", "i'm just an ai", "great question", "happy to help",
    "i hope this helps", "feel free to", "let me know if", "certainly", "of course",
    "i'm here to help", "please note that", "it's important to note", "consult a professional",
    "i cannot provide", "sure thing", "i'd be glad to",
)  # fmt: skip
_AGREEMENT = (
    "you're absolutely right", "you are absolutely right", "absolutely right", "great point",
    "good point", "i completely agree", "i totally agree", "exactly right", "what a great idea",
    "you're so right", "brilliant idea", "couldn't agree more",
)  # fmt: skip
_ABSOLUTES = (
    "definitely", "certainly", "always", "never", "guaranteed", "undoubtedly", "for sure",
    "hundred percent", "without a doubt", "obviously", "no doubt", "impossible", "i know for sure",
    "absolutely",
)  # fmt: skip
_SHIFT = (
    "anyway", "by the way", "on second thought", "scratch that", "never mind",
    "let's talk about something else", "changing the subject", "forget that",
)  # fmt: skip
_SELF_STATE_REFS = (
    "self_state", "my notes", "my norms", "my lesson", "my lessons", "my notebook",
    "my self-model", "my self model", "my ledger",
)  # fmt: skip
_EXPERIENCE = (
    "last time", "i learned", "i've learned", "i noticed", "i've seen", "in my experience",
    "i remember", "earlier i",
)  # fmt: skip
_STOPWORDS = frozenset(
    {
        "this", "that", "with", "from", "have", "what", "when", "where", "which", "about",
        "there", "their", "they", "them", "then", "than", "your", "yours", "just", "some",
        "will", "would", "could", "should", "into", "over", "also", "been", "were", "does",
        "it's", "i'm", "you're", "these", "those", "here", "very", "much", "more", "most",
        "like", "only", "such", "each", "other", "please", "can't", "don't", "doesn't",
        "the", "and", "for", "are", "was", "its", "not", "but", "you", "our", "has", "had",
    }
)  # fmt: skip
_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday",
)  # fmt: skip

_WORD_RE = re.compile(r"\w+(?:'\w+)*")
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_PROPER_RE = re.compile("^[A-Z\u0410-\u042f\u0401][a-z\u0430-\u044f\u0451]+$")
# ``[ \t]*`` not ``\s*`` at a line start: ``\s*`` ran over every following blank line from each
# one, quadratic in a pasted message of blank lines (20,000 newlines took 9 s).
_LIST_LINE_RE = re.compile(r"^[ \t]*(?:[-*•]|\d+[.)])[ \t]+", re.MULTILINE)
_MARKUP_RE = re.compile(r"^[ \t]*(?:[-*•]|\d+[.)]|#{1,6})[ \t]+|```", re.MULTILINE)
_DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}\b|\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b")


# =================================================================================================
# Shared helpers
# =================================================================================================


def clamp(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    """Clamp ``x`` into ``[lo, hi]``; NaN maps to ``lo``."""
    if lo > hi:
        raise ValueError(f"lo ({lo}) > hi ({hi})")
    if math.isnan(x):
        return lo
    return max(lo, min(hi, x))


def _check_unit(name: str, value: float) -> None:
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")


def _check_unit_fields(obj: object) -> None:
    for f in fields(obj):  # type: ignore[arg-type]
        value = getattr(obj, f.name)
        if isinstance(value, float | int) and not isinstance(value, bool):
            _check_unit(f.name, float(value))


def _check_mode(mode: str) -> Mode:
    for known in MODES:
        if mode == known:
            return known
    raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")


def _is_tie(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0.0, abs_tol=TIE_TOLERANCE)


def cooldown_ready(turn_index: int, last_turn: int | None, cooldown_turns: int) -> bool:
    """Say whether a cooldown of ``cooldown_turns`` has expired by ``turn_index``.

    Fired on turn ``t``, the next allowed turn is ``t + cooldown_turns + 1``.
    """
    if cooldown_turns < 0:
        raise ValueError(f"cooldown_turns must be >= 0, got {cooldown_turns}")
    return last_turn is None or turn_index - last_turn > cooldown_turns


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text.lower().replace("\u2019", "'"))


def _norm(text: str) -> str:
    return " " + " ".join(_words(text)) + " "


def _count(norm: str, phrases: Iterable[str]) -> int:
    """Count word-boundary occurrences of each phrase in a ``_norm``-ed text."""
    return sum(norm.count(_phrase_key(p)) for p in phrases)


@functools.lru_cache(maxsize=8192)
def _phrase_key(phrase: str) -> str:
    """A cue phrase as ``_norm`` spells it (the cue tables are constants: normalised once)."""
    return f" {' '.join(_words(phrase))} "


def _count_symbols(text: str, symbols: Iterable[str]) -> int:
    return sum(text.count(s) for s in symbols)


def _stem(word: str) -> str:
    # A five-letter prefix is a crude stem that also folds most Russian inflections.
    return word[:5]


def _is_content(word: str) -> bool:
    """Say whether ``word`` carries content: four letters or more, no stopword, no number."""
    return len(word) >= 4 and word not in _STOPWORDS and not word.isdigit()


def _content_stems(text: str) -> list[str]:
    return [_stem(w) for w in _words(text) if _is_content(w)]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if s.strip()]


def _numbers(text: str) -> set[str]:
    return {n.replace(",", ".") for n in _NUMBER_RE.findall(text)}


# =================================================================================================
# 1. Mode gate (runtime.mode_gate_policy)
# =================================================================================================


@dataclass(frozen=True, slots=True)
class ModeSignals:
    """The thirteen selection signals of ``runtime.mode_gate_policy``, each in ``[0, 1]``."""

    casual_chat: float = 0.0
    low_stakes: float = 0.0
    high_clarity: float = 0.0
    banter_or_flirt: float = 0.0
    task: float = 0.0
    structured_request: float = 0.0
    needs_tools: float = 0.0
    medium_stakes: float = 0.0
    conflict: float = 0.0
    low_confidence: float = 0.0
    high_ambiguity: float = 0.0
    meaning_gap: float = 0.0
    self_change_needed: float = 0.0

    def __post_init__(self) -> None:
        """Reject values outside ``[0, 1]``."""
        _check_unit_fields(self)


def mode_signals_from_observables(
    *,
    clarity: float,
    ambiguity: float,
    confidence: float,
    stakes: float,
    tool_need: float,
    casual_chat: float = 0.0,
    banter_or_flirt: float = 0.0,
    task: float = 0.0,
    structured_request: float = 0.0,
    conflict: float = 0.0,
    meaning_gap: float = 0.0,
    self_change_needed: float = 0.0,
) -> ModeSignals:
    """Derive the selection signals from the gate's inputs (intent, clarity, ..., tool_need).

    Heuristic: ``low_stakes = 1 - stakes``; ``medium_stakes`` is a triangle peaking at
    ``stakes = 0.5``; ``high_clarity = clarity``; ``low_confidence = 1 - confidence``;
    ``high_ambiguity = ambiguity``; ``needs_tools = tool_need``. The intent signals pass through.
    Every input is clamped to ``[0, 1]`` first.
    """
    stakes = clamp(stakes)
    return ModeSignals(
        casual_chat=clamp(casual_chat),
        low_stakes=1.0 - stakes,
        high_clarity=clamp(clarity),
        banter_or_flirt=clamp(banter_or_flirt),
        task=clamp(task),
        structured_request=clamp(structured_request),
        needs_tools=clamp(tool_need),
        medium_stakes=clamp(1.0 - 2.0 * abs(stakes - 0.5)),
        conflict=clamp(conflict),
        low_confidence=1.0 - clamp(confidence),
        high_ambiguity=clamp(ambiguity),
        meaning_gap=clamp(meaning_gap),
        self_change_needed=clamp(self_change_needed),
    )


def mode_scores(signals: ModeSignals) -> dict[Mode, float]:
    """Score each mode as the mean of its ``selection_signals``."""
    return {
        mode: math.fsum(getattr(signals, name) for name in names) / len(names)
        for mode, names in SELECTION_SIGNALS.items()
    }


def select_mode(signals: ModeSignals, *, default: Mode = DEFAULT_MODE) -> Mode:
    """Return ``argmax_m score(m)``; ties go to ``default``, else to the earliest mode in MODES.

    ``default`` is ``runtime.mode_gate_policy.default_mode`` (talk). When the tied best modes do
    not include it (e.g. work and deep tie above talk), the lighter mode in spec order wins.
    """
    default = _check_mode(default)
    scores = mode_scores(signals)
    best = max(scores.values())
    tied = [mode for mode in MODES if _is_tie(scores[mode], best)]
    return default if default in tied else tied[0]


# --- gate cue families (matched on accent-folded, lower-cased words; en, pt, es, de, fr, ru) -----
# Each family is a kind of cue, not a list of messages: greetings, banter, request leads and
# imperative task verbs per language, deliverables, how-to questions, first-person deliberation,
# choices between options, value/meaning questions, personal and technical stakes, and feedback on
# the agent's own manner.


def _fold(text: str) -> str:
    """Lower-case, unify apostrophes and strip accents (NFKD without combining marks)."""
    lowered = text.lower().replace("\u2019", "'")
    if lowered.isascii():  # nothing to decompose: most turns' texts, folded dozens of times each
        return lowered
    decomposed = unicodedata.normalize("NFKD", lowered)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _lex(*phrases: str) -> tuple[str, ...]:
    return tuple(" ".join(_WORD_RE.findall(_fold(p))) for p in phrases)


_G_GREETINGS = _lex(
    *_GREETINGS, "good evening", "howdy", "heyyy", "morning", "what's up", "whats up", "hows it",
    "thank you so much", "good night", "see you", "talk tomorrow",
    "ola", "oi", "e ai", "tudo bem", "bom dia", "boa tarde", "boa noite", "obrigado", "obrigada",
    "valeu", "beleza", "ate amanha", "hola", "buenas", "buenos dias", "buenas noches", "que tal",
    "gracias", "hasta manana", "hallo", "servus", "moin", "guten morgen", "guten abend",
    "gute nacht", "danke", "wie geht's", "wie gehts", "was geht", "bis morgen", "bonjour",
    "bonsoir", "salut", "coucou", "ca va", "merci", "bonne nuit", "a demain", "quoi de neuf",
)  # fmt: skip
_G_BANTER = _lex(
    *_BANTER, "lmao", "rofl", "kkk", "kkkk", "kkkkk", "rsrs", "jaja", "jajaja", "jeje", "mdr",
    "ptdr", "hihi", "xd", "no way", "crack",
)  # fmt: skip
_G_LEADS = _lex(
    *REQUEST_LEADS, "can u", "could u", "pls", "plz", "por favor", "pode", "podes", "poderia",
    "consegue", "me ajuda", "puedes", "podrias", "ayudame", "kannst du", "konntest du",
    "konnen sie", "bitte", "hilf mir", "peux tu", "pouvez vous", "tu peux", "stp", "svp",
    "s'il te plait", "s'il vous plait", "aide moi",
)  # fmt: skip
_G_NEED = _lex(
    "i need", "i want a", "i'd like a", "preciso", "quero um", "quero uma", "necesito",
    "quiero un", "quiero una", "ich brauche", "ich mochte", "j'ai besoin", "je voudrais",
)  # fmt: skip
_G_IMPERATIVES = frozenset(
    _lex(
        *IMPERATIVES, "draft", "design", "prepare", "organise", "organize", "sort", "format",
        "install", "configure", "setup", "suggest", "rewrite", "summarise", "help", "debug",
        "escreva", "escreve", "faca", "faz", "crie", "cria", "corrija", "corrige", "explique",
        "explica", "traduza", "traduz", "liste", "resuma", "gere", "gera", "monte", "monta",
        "calcule", "mostre", "redija", "escribe", "haz", "hazme", "crea", "creame", "explica",
        "explicame", "traduce", "resume", "resumeme", "genera", "prepara", "dame", "redacta",
        "calcula", "muestra", "ordena", "configura", "schreib", "schreibe", "mach", "mache",
        "erstelle", "erstell", "erklare", "erklar", "ubersetze", "ubersetz", "fasse", "fass",
        "korrigiere", "berechne", "finde", "zeig", "zeige", "plane", "gib", "hilf",
        "formuliere", "ecris", "ecrivez", "fais", "faites", "cree", "creez", "corrigez",
        "explique", "expliquez", "traduis", "traduisez", "resume", "resumez", "genere",
        "redige", "redigez", "donne", "donnez", "calcule", "montre", "aide", "propose",
    )
)  # fmt: skip
# Verb stems of a request (any form: infinitive, imperative), checked after a request lead.
_G_TASK_STEMS = (
    "writ", "escrev", "escrib", "schreib", "ecri", "redig", "redact", "draft", "fix", "corrig",
    "korrig", "explai", "expli", "erklar", "translat", "tradu", "ubersetz", "summar", "resum",
    "zusammenfass", "generat", "gener", "erzeug", "creat", "cria", "crie", "crea", "cree",
    "erstell", "build", "implement", "refactor", "debug", "calcul", "berechn", "convert",
    "install", "instal", "config", "konfig", "einricht", "outline", "plan", "organi", "prepar",
    "list", "make", "mach", "faze", "fazer", "hacer", "faire", "mont", "arm", "show", "mostr",
    "muestr", "zeig", "ajud", "ayud", "hilf", "aide", "design", "sort", "check", "find", "search",
    "help",
)  # fmt: skip
_G_DELIVERABLES = (
    "list", "lista", "liste", "table", "tabla", "tabela", "tabelle", "tableau", "checklist",
    "plan", "plano", "planning", "template", "plantilla", "modelo", "vorlage", "schedule",
    "cronograma", "horario", "itinerary", "itinerario", "roteiro", "summary", "resumo",
    "resumen", "zusammenfassung", "email", "mail", "correo", "lettre", "carta", "letter",
    "report", "relatorio", "informe", "bericht", "rapport", "outline", "steps", "passos",
    "pasos", "etapes", "schritte", "bullet", "bullets", "json", "csv", "spreadsheet",
    "planilha", "script", "function", "funcao", "funcion", "funktion", "fonction", "regex",
    "query", "consulta", "abfrage", "requete", "curriculo", "cv", "resume", "bewerbung",
    "toast", "message", "mensagem", "mensaje", "nachricht", "one liner",
)  # fmt: skip
_G_DELIVERABLE_SUFFIXES = ("liste", "plan", "tabelle", "vorlage", "schema")  # German compounds
_G_CODE = _lex(
    *_CODE_WORDS, "code", "codigo", "javascript", "typescript", "bash", "docker", "nginx",
    "linux", "git", "github", "ssh", "excel", "pandas", "dataframe", "react", "node", "array",
    "mysql", "postgres", "cronjob", "server", "servidor", "serveur", "typeerror", "exception",
    "undefined", "compile", "html", "css", "pivot",
)  # fmt: skip
_HOWTO_RE = re.compile(
    r" (?:how (?:do|can|could|would) (?:i|we|you|u)|how to|how can i"
    r"|como (?:eu )?(?:faco|posso|consigo|\w+(?:ar|er|ir|o))"
    r"|wie (?:\w+ ){1,2}(?:ich|man|wir)|comment (?:je|j'\w+|on|faire|\w+(?:er|ir|re))) "
)
_G_DECISION = _lex(
    "should i", "should we", "shall i", "whether", "can't decide", "cannot decide", "torn",
    "dilemma", "back and forth", "part of me", "on the fence", "have to decide", "which should",
    "worth it", "is it worth", "regret", "i don't know if", "idk if", "not sure if",
    "devo", "deveria", "deveriamos", "sera que", "nao sei se", "nao sei o que fazer",
    "dividido", "dividida", "em duvida", "vale a pena", "tenho medo", "deberia", "debo",
    "no se si", "no se que hacer", "vale la pena", "hecho un lio", "me caso", "soll ich",
    "sollte ich", "sollen wir", "sollten wir", "hergerissen", "weiß nicht ob",
    "was soll ich tun", "lohnt es sich", "dois je", "devrais je", "je devrais", "j'hesite",
    "hesite", "je ne sais pas si", "je sais pas si", "dechire", "dechiree", "faut il",
    "vaut il mieux", "est il preferable", "vaut le coup", "peur de tout perdre",
    "i don't know", "no se", "nao sei", "je ne sais plus",
)  # fmt: skip
_G_PICK = _lex(
    "which would you", "what would you pick", "which one", "would you bet", "would you choose",
    "would you pick", "qual voce escolheria", "qual escolheria", "que elegirias", "cual elegirias",
    "welche wurdest", "lequel", "laquelle", "better", "melhor", "mejor", "besser", "mieux",
    "preferable", "preferivel", "trade offs", "trade off", "tradeoffs", "what are the risks",
    "quais os riscos", "pros and cons",
)  # fmt: skip
_OR_WORDS = frozenset({"or", "ou", "o", "u", "oder", "vs", "versus"})
_G_MEANING = _lex(
    *_MEANING, "meaningless", "the point of", "morally", "moral", "ethical", "ethically",
    "ethics", "is it right", "is it wrong", "is it ever", "free will", "well lived",
    "good person", "selfish", "is it fair", "can a person", "human nature", "really exist",
    "sentido", "proposito", "moralmente", "etica", "e certo", "e errado", "e justo",
    "e egoista", "es justo", "es correcto", "libertad", "liberdade", "libre albedrio", "sinn",
    "ethisch", "vertretbar", "gerecht", "guter mensch", "freiheit", "ethique", "liberte",
    "universelle", "sens", "existe vraiment", "what does it mean", "was bedeutet",
)  # fmt: skip
_G_SELF_CHANGE = _lex(
    *_SELF_CHANGE, "stop that", "actually tell me what you think", "what you really think",
    "para de", "deja de", "hor auf", "arrete", "ehrlich deine meinung", "deine meinung",
    "ce que tu penses", "o que voce pensa", "lo que piensas", "franchement",
)  # fmt: skip
_SELF_CHANGE_RE = re.compile(
    r" (?:you|voce|vc|tu|du|vous|usted) (?:\w+ ){0,2}"
    r"(?:always|never|keep|sempre|nunca|siempre|immer|nie|toujours|jamais) "
)
_G_HEDGES = _lex(
    *_HEDGES, "idk", "i wonder", "talvez", "acho que", "quizas", "tal vez", "creo que",
    "vielleicht", "keine ahnung", "peut etre", "je pense", "provavelmente", "probablemente",
    "wahrscheinlich", "probablement",
)  # fmt: skip
_FIRST_PERSON = frozenset(
    _lex(
        "i", "i'm", "i've", "i'd", "my", "me", "we", "our", "us", "eu", "meu", "minha", "meus",
        "minhas", "estou", "tenho", "yo", "mi", "mis", "estoy", "tengo", "ich", "mein", "meine",
        "meinen", "meiner", "mir", "mich", "wir", "unser", "je", "j'ai", "mon", "ma", "mes",
        "moi", "nous", "idk",
    )
)  # fmt: skip
# Prefixes of personal-life domains (first person required) and of technical/business stakes.
_PERSONAL_STEMS = (
    "job", "emprego", "trabajo", "trabalh", "arbeit", "travail", "boulot", "career", "carreir",
    "carrer", "karrier", "carrier", "quit", "largar", "kundig", "quitter", "offer", "oferta",
    "angebot", "offre", "promot", "promoc", "befor", "salar", "gehalt", "money", "dinheiro",
    "dinero", "geld", "argent", "saving", "debt", "divida", "deuda", "schuld", "dette",
    "mortgage", "hipotec", "partner", "parceir", "pareja", "wife", "esposa", "mulher", "frau",
    "femme", "husband", "marido", "mari", "boyfriend", "girlfriend", "namorad", "novi",
    "freundin", "copain", "copine", "marri", "casament", "casar", "matrimon", "heirat", "break",
    "divorc", "scheid", "kid", "child", "filho", "hijo", "kinder", "enfant", "baby", "bebe",
    "parent", "pais", "padre", "eltern", "mother", "mae", "madre", "mutter", "mere", "father",
    "vater", "pere", "famil", "abroad", "exterior", "extranjer", "ausland", "etranger",
    "universit", "faculdad", "studium", "college", "phd", "doctor", "doutorad", "degree",
    "carrera", "beca", "manager", "chef", "boss", "rent", "aluguel", "alquil", "miet",
    "loyer", "together", "juntos", "fear", "medo", "miedo", "angst", "peur", "sick", "enferm",
    "krank", "malad", "offer",
)  # fmt: skip
_TECH_STAKES_STEMS = (
    "laten", "consist", "konsist", "coheren", "uptime", "sla", "reliab", "confiab", "fiab",
    "zuverl", "payment", "pagament", "pagos", "zahlung", "paiem", "fintech", "bank", "banco",
    "banque", "hospital", "hopital", "kranken", "health", "saude", "salud", "gesund", "sante",
    "secur", "segur", "sicher", "scal", "escal", "skalier", "traf", "million", "milho", "millon",
    "product", "produc", "produk", "cost", "custo", "kosten", "cout", "risk", "risc", "riesg",
    "risiko", "risq", "strict", "estrit", "estric", "strikt", "startup", "critic", "kritisch",
    "sensi", "lose", "losing", "perder", "perdre", "verlier", "years", "anos", "jahre",
    "team", "equip", "engineer", "ingenier", "ingenieur", "partners", "grow",
)  # fmt: skip


def _has_stem(words: Sequence[str], stems: Sequence[str]) -> int:
    return sum(1 for w in words if w.startswith(tuple(stems)))


def _fcount(norm: str, phrases: Iterable[str]) -> int:
    """Count occurrences of already-folded phrases in an accent-folded ``norm``."""
    return sum(norm.count(f" {p} ") for p in phrases if p)


@dataclass(frozen=True, slots=True)
class GateCues:
    """Counts of the gate's cue families in one message (see ``gate_cues``)."""

    words: int
    greet: int
    banter: int
    ask: bool
    code: bool
    deliverable: bool
    structured: bool
    tools: int
    numbers: int
    hedges: int
    vague: int
    extra_questions: int
    decision: int
    choice: int
    pick: int
    meaning: int
    self_change: int
    personal: int
    tech_stakes: int
    stakes_words: int


@functools.lru_cache(maxsize=256)
def gate_cues(text: str) -> GateCues:
    """Count the cue families the mode gate reads (pure, language-light).

    Heuristic. ``ask`` is a task request: a sentence opening with an imperative verb, a request
    lead ("please", "can you", "pode", "kannst du", ...) with a task verb or deliverable, a need
    phrase with a deliverable, or a how-to question ("how do I", "como faço", "wie richte ich",
    "comment installer"). ``choice`` is a choice between options: "vs"/"versus", or an
    "or"-word in a question or in a sentence that deliberates. ``personal`` needs a first-person
    word and a personal-life domain (job, partner, children, money, studies, ...).
    """
    folded = _fold(text)
    words = _WORD_RE.findall(folded)
    norm = " " + " ".join(words) + " "
    sentences = _sentences(text)
    raw_sentences = [(s, _WORD_RE.findall(s.lower())) for s in sentences]
    starts = [_WORD_RE.findall(_fold(s))[:1] for s in sentences]
    deliverable = (
        any(
            w in _G_DELIVERABLES or (len(w) > 6 and w.endswith(_G_DELIVERABLE_SUFFIXES))
            for w in words
        )
        or _fcount(norm, ("one liner", "step by step", "passo a passo", "paso a paso")) > 0
    )
    leads = _fcount(norm, _G_LEADS) > 0
    task_verb = _has_stem(words, _G_TASK_STEMS) > 0
    ask = (
        any(s and s[0] in _G_IMPERATIVES for s in starts)
        or (leads and (task_verb or deliverable))
        or (_fcount(norm, _G_NEED) > 0 and (deliverable or task_verb))
        or bool(_HOWTO_RE.search(norm))
    )
    decision = _fcount(norm, _G_DECISION)
    choice = 0
    for raw, ws in raw_sentences:
        if "vs" in ws or "versus" in ws:
            choice += 1
        elif len(ws) >= 3 and _OR_WORDS & set(ws[1:]):
            deliberating = raw.rstrip().endswith("?") or _fcount(
                " " + " ".join(_WORD_RE.findall(_fold(raw))) + " ", _G_DECISION
            )
            choice += bool(deliberating)
    # Portuguese and Spanish drop the pronoun: a first-person decision verb counts too.
    first_person = bool(_FIRST_PERSON & set(words)) or decision > 0
    return GateCues(
        words=len(words),
        greet=_fcount(norm, _G_GREETINGS),
        banter=_fcount(norm, _G_BANTER) + _count_symbols(text, _BANTER_SYMBOLS),
        ask=ask,
        code="```" in text or _fcount(norm, _G_CODE) > 0,
        deliverable=deliverable,
        structured=bool(_LIST_LINE_RE.search(text)) or _count(_norm(text), _STRUCTURE_WORDS) > 0,
        tools=_count(_norm(text), _TOOL_WORDS),
        numbers=len(_NUMBER_RE.findall(text)),
        hedges=_fcount(norm, _G_HEDGES),
        vague=_count(_norm(text), _VAGUE),
        extra_questions=max(0, text.count("?") - 1),
        decision=decision,
        choice=choice,
        pick=_fcount(norm, _G_PICK),
        meaning=_fcount(norm, _G_MEANING),
        self_change=_fcount(norm, _G_SELF_CHANGE) + len(_SELF_CHANGE_RE.findall(norm)),
        personal=_has_stem(words, _PERSONAL_STEMS) if first_person else 0,
        tech_stakes=_has_stem(words, _TECH_STAKES_STEMS),
        stakes_words=_count(_norm(text), _STAKES),
    )


def howto(text: str) -> bool:
    """Say whether ``text`` asks how to do something ("how do I", "como faço", "wie richte ich")."""
    norm = " " + " ".join(_WORD_RE.findall(_fold(text))) + " "
    return bool(_HOWTO_RE.search(norm))


@functools.lru_cache(maxsize=256)
def extract_mode_signals(text: str) -> ModeSignals:
    """Estimate the selection signals from surface features of ``text`` alone (no model).

    Heuristic over ``gate_cues``, every term clamped to ``[0, 1]``:

    * task: a task request (0.75), code words (0.25), a deliverable named (0.25).
    * structured_request: a deliverable or structure word (0.5), list lines (0.5), a fence (0.25).
    * casual_chat: greetings (0.6) plus shortness (<= 8 words, 0.4), minus task and deliberation.
    * banter_or_flirt: banter words and winks, two hits saturate.
    * tool_need: 0.4 per tool word plus 0.2 per number (two numbers at most).
    * deliberation: a weighed choice (a choice or "which/better" with personal or technical
      stakes, or a first-person decision), a value/meaning question, or a challenge to the
      agent's manner. It drives conflict, ambiguity and (1 - confidence).
    * ambiguity: 0.25 per hedge, 0.2 per vague word, 0.15 per extra question mark, 0.55 when
      there is something to deliberate plus 0.15 per further kind; clarity is its complement.
    * confidence: 1 minus 0.25 per hedge, 0.3 for a weighed choice or decision, 0.25 for a
      value/meaning question.
    * stakes: with deliberation 0.5, 0.8 when a personal or technical stake is named; otherwise
      0.1 base, 0.4 when task-like, personal stakes 0.3, technical stakes 0.15 each (two count);
      plus 0.1 per stakes word ("urgent", "deploy", ...) in both cases.
    * meaning_gap: 0.6 per value/meaning cue; self_change_needed: 0.6 per cue.
    """
    c = gate_cues(text)
    stakes_context = c.personal > 0 or c.tech_stakes > 0
    weighed_choice = (c.choice > 0 or c.pick > 0) and (stakes_context or c.decision > 0)
    decision = c.decision > 0 and (c.personal > 0 or c.choice > 0 or c.decision > 1)
    deliberate = decision + weighed_choice + min(1, c.meaning) + min(1, c.self_change)
    task = clamp(0.75 * c.ask + 0.25 * c.code + 0.25 * c.deliverable)
    if deliberate and not c.ask:
        task = clamp(task - 0.25)
    structured = clamp(
        0.5 * (c.structured or (c.deliverable and c.ask))
        + 0.5 * bool(_LIST_LINE_RE.search(text))
        + 0.25 * ("```" in text)
    )
    ambiguity = clamp(
        0.25 * c.hedges
        + 0.2 * c.vague
        + 0.15 * c.extra_questions
        + 0.55 * (deliberate > 0)
        + 0.15 * max(0, deliberate - 1)
    )
    doubt = 0.25 * c.hedges + 0.3 * (decision or weighed_choice) + 0.25 * min(1, c.meaning)
    if deliberate:  # something to weigh matters at least moderately; more with a stake named
        stakes = clamp(0.5 + 0.3 * stakes_context + 0.1 * c.stakes_words)
    else:
        stakes = clamp(
            0.1
            + 0.4 * (task >= 0.5)
            + 0.3 * min(1, c.personal)
            + 0.15 * min(2, c.tech_stakes)
            + 0.1 * c.stakes_words
        )
    casual = clamp(0.6 * min(1, c.greet) + 0.4 * (0 < c.words <= 8) - task - 0.3 * deliberate)
    return mode_signals_from_observables(
        clarity=clamp(1.0 - ambiguity - 0.1 * c.hedges),
        ambiguity=ambiguity,
        confidence=clamp(1.0 - doubt),
        stakes=stakes,
        tool_need=clamp(0.4 * c.tools + 0.2 * min(2, c.numbers)),
        casual_chat=casual,
        banter_or_flirt=clamp(c.banter / 2),
        task=task,
        structured_request=structured,
        conflict=clamp(
            0.6 * min(1, c.decision)
            + 0.6 * weighed_choice
            + 0.3 * min(1, c.meaning)
            + 0.5 * min(1, c.self_change)
        ),
        meaning_gap=clamp(0.6 * c.meaning),
        self_change_needed=clamp(0.6 * c.self_change),
    )


# =================================================================================================
# 2. Effort budgeter, verbosity and spontaneity (modules.effort_budgeter, spontaneity_governor)
# =================================================================================================


@dataclass(frozen=True, slots=True)
class VerbosityBudget:
    """Inclusive ``(min, max)`` ranges from ``modules.effort_budgeter.policy.verbosity.<mode>``."""

    preface_sentences: tuple[int, int]
    body_paragraphs: tuple[int, int]


VERBOSITY: Mapping[Mode, VerbosityBudget] = MappingProxyType(
    {  # modules.effort_budgeter.policy.verbosity
        "talk": VerbosityBudget(preface_sentences=(0, 1), body_paragraphs=(1, 2)),
        "work": VerbosityBudget(preface_sentences=(3, 8), body_paragraphs=(2, 5)),
        "deep": VerbosityBudget(preface_sentences=(4, 10), body_paragraphs=(4, 10)),
    }
)


@dataclass(frozen=True, slots=True)
class EffortInputs:
    """The six ``modules.effort_budgeter.inputs``; the floats are in ``[0, 1]``."""

    explicit_depth_request: bool = False
    task_complexity: float = 0.0
    importance: float = 0.0
    ambiguity: float = 0.0
    interaction_phase: str = "task"
    ack_state: bool = False

    def __post_init__(self) -> None:
        """Reject floats outside ``[0, 1]``."""
        _check_unit_fields(self)


@dataclass(frozen=True, slots=True)
class EffortBudget:
    """The three ``modules.effort_budgeter.outputs``."""

    depth: Mode
    verbosity_budget: VerbosityBudget
    analysis_allowed: bool


def verbosity_budget(mode: Mode) -> VerbosityBudget:
    """Return the verbosity ranges for ``mode``."""
    return VERBOSITY[_check_mode(mode)]


def effort_depth(inputs: EffortInputs) -> Mode:
    """Choose the depth from ``effort_budgeter.policy`` (deep_only_if, talk_if, default_depth).

    Any ``deep_only_if`` clause wins first (an explicit depth request outranks a casual phase),
    then any ``talk_if`` clause, else ``default_depth`` (work). The spec gives no precedence
    between the two lists; this order is a choice.
    """
    if (
        inputs.explicit_depth_request
        or (
            inputs.importance >= DEEP_IMPORTANCE_MIN
            and inputs.ambiguity >= DEEP_IMPORTANCE_AMBIGUITY_MIN
        )
        or (
            inputs.task_complexity >= DEEP_COMPLEXITY_MIN
            and inputs.ambiguity >= DEEP_COMPLEXITY_AMBIGUITY_MIN
        )
    ):
        return "deep"
    if inputs.interaction_phase in TALK_INTERACTION_PHASES or inputs.ack_state:
        return "talk"
    return EFFORT_DEFAULT_DEPTH


def budget_effort(inputs: EffortInputs) -> EffortBudget:
    """Return depth, verbosity budget and whether analysis is allowed (not in talk).

    Heuristic for ``analysis_allowed``: the spec's OVER_ANALYSIS tag names analysis in
    conversation as a failure, so analysis is allowed in work and deep only.
    """
    depth = effort_depth(inputs)
    return EffortBudget(
        depth=depth, verbosity_budget=VERBOSITY[depth], analysis_allowed=depth != "talk"
    )


def anti_mechanical_jitter(turn_index: int) -> int:
    """Return the jitter sign (0, +1, -1, cycling) held for each ``cooldown_turns`` block.

    Heuristic stand-in for random jitter: the offset changes only every
    ``ANTI_MECHANICAL_COOLDOWN_TURNS`` (2) turns and never repeats on consecutive blocks.
    """
    return (0, 1, -1)[(turn_index // ANTI_MECHANICAL_COOLDOWN_TURNS) % 3]


def verbosity_target(mode: Mode, turn_index: int) -> tuple[int, int]:
    """Return ``(preface_sentences, body_paragraphs)`` targets for this turn.

    Each target is the floor midpoint of the mode's range, moved by the jitter
    (±1 for both, per ``anti_mechanical.jitter``) and clamped back into the range.
    """
    budget = verbosity_budget(mode)
    sign = anti_mechanical_jitter(turn_index)

    def target(bounds: tuple[int, int], jitter: int) -> int:
        lo, hi = bounds
        return max(lo, min(hi, (lo + hi) // 2 + sign * jitter))

    return (
        target(budget.preface_sentences, JITTER_PREFACE_SENTENCES),
        target(budget.body_paragraphs, JITTER_BODY_PARAGRAPHS),
    )


def spontaneity_ready(module: str, turn_index: int, last_fired: int | None) -> bool:
    """Say whether ``module``'s ``spontaneity_governor`` cooldown has expired."""
    if module not in SPONTANEITY_COOLDOWNS:
        raise ValueError(f"no spontaneity cooldown for {module!r}")
    return cooldown_ready(turn_index, last_fired, SPONTANEITY_COOLDOWNS[module])


def preface_allowed(mode: Mode, turn_index: int, last_fired: int | None) -> bool:
    """Allow the opinionated preface in work/deep only, outside its 2-turn cooldown."""
    return _check_mode(mode) in PRESENCE_PREFACE_ALLOW_MODES and spontaneity_ready(
        "presence_preface", turn_index, last_fired
    )


def dual_stream_probability(flags: Collection[str]) -> float:
    """Return the chance of a ⟦⟧ thought block given context ``flags``.

    Any ``suppress_if`` flag gives 0. Otherwise ``probability_base`` (0.18) plus
    ``DUAL_STREAM_BOOST`` (heuristic 0.12) per distinct ``boost_if`` flag.
    """
    unknown = set(flags) - set(DUAL_STREAM_BOOST_IF) - set(DUAL_STREAM_SUPPRESS_IF)
    if unknown:
        raise ValueError(f"unknown dual-stream flags: {sorted(unknown)}")
    if any(flag in DUAL_STREAM_SUPPRESS_IF for flag in flags):
        return 0.0
    boosts = len(set(flags) & set(DUAL_STREAM_BOOST_IF))
    return clamp(DUAL_STREAM_PROBABILITY_BASE + DUAL_STREAM_BOOST * boosts)


def dual_stream_fires(
    flags: Collection[str], *, draw: float, turn_index: int, last_fired: int | None
) -> bool:
    """Decide whether to emit a ⟦⟧ block, given a caller-drawn ``draw`` in ``[0, 1)``.

    Fires when ``draw < dual_stream_probability(flags)`` and both the governor's
    ``dual_stream_thoughts`` cooldown (4) and ``inner_thought_block.cooldown_turns`` (6) expired.
    """
    _check_unit("draw", draw)
    return (
        draw < dual_stream_probability(flags)
        and spontaneity_ready("dual_stream_thoughts", turn_index, last_fired)
        and cooldown_ready(turn_index, last_fired, INNER_THOUGHT_BLOCK_COOLDOWN_TURNS)
    )


def reflection_triggered(
    *,
    ambiguity: float = 0.0,
    contradiction_detected: bool = False,
    repeatiness: float = 0.0,
    style_drift: float = 0.0,
    failed_goal_last_turn: bool = False,
    turn_index: int,
    last_reflection_turn: int | None,
) -> bool:
    """Apply ``self_initiated_reflection.trigger``: any clause fires, outside a 5-turn cooldown."""
    fired = (
        ambiguity >= REFLECTION_AMBIGUITY_MIN
        or contradiction_detected
        or repeatiness >= REFLECTION_REPEATINESS_MIN
        or style_drift >= REFLECTION_STYLE_DRIFT_MIN
        or failed_goal_last_turn
    )
    return fired and cooldown_ready(turn_index, last_reflection_turn, REFLECTION_COOLDOWN_TURNS)


# =================================================================================================
# 3. Λ functional and the metrics engine (modules.lambda_functional, metrics_axis, metrics_engine)
# =================================================================================================


def lambda_score(axes: Mapping[str, float], weights: Mapping[str, float] = LAMBDA_WEIGHTS) -> float:
    """Return Λ: the weighted sum of the twelve axes minus the four weighted penalties.

    Needs exactly the keys ``AXES + PENALTIES``; each value is clamped to ``[0, 1]`` first.
    """
    expected = set(AXES) | set(PENALTIES)
    if set(axes) != expected:
        missing, extra = sorted(expected - set(axes)), sorted(set(axes) - expected)
        raise ValueError(f"axes mismatch: missing {missing}, unexpected {extra}")
    gains = math.fsum(weights[AXIS_WEIGHT_KEYS[a]] * clamp(axes[a]) for a in AXES)
    costs = math.fsum(weights[AXIS_WEIGHT_KEYS[p]] * clamp(axes[p]) for p in PENALTIES)
    return gains - costs


def select_candidate(
    table: Sequence[Mapping[str, float]], weights: Mapping[str, float] = LAMBDA_WEIGHTS
) -> int:
    """Return the index of the candidate with the highest Λ.

    Ties break by ``higher_T_then_lower_SSS`` (clamped values), then by the earlier index.
    At most ``max_internal_candidates`` (3) candidates are allowed.
    """
    if not table:
        raise ValueError("no candidates to select from")
    if len(table) > MAX_INTERNAL_CANDIDATES:
        raise ValueError(f"{len(table)} candidates exceed max_internal_candidates")
    best = 0
    best_key = (lambda_score(table[0], weights), clamp(table[0]["T"]), -clamp(table[0]["SSS"]))
    for index in range(1, len(table)):
        row = table[index]
        key = (lambda_score(row, weights), clamp(row["T"]), -clamp(row["SSS"]))
        if _beats(key, best_key):
            best, best_key = index, key
    return best


RELEVANCE_MIN = 0.25
"""A draft scoring below this is off-topic (heuristic: no shared content word at all)."""
RELEVANCE_MIN_TERMS = 2
"""Messages with fewer content words ("hi", "ok") cannot be judged: every draft is relevant."""
RELEVANCE_SATURATION = 4
"""Sharing this many of the message's content words counts as fully relevant."""
PHATIC = frozenset(
    """hello hey hiya good morning afternoon evening night thanks thank cheers haha hahaha hehe lol
    lmao wow cool nice great awesome funny lovely sweet amazing yeah yep yes sure okay alright fine
    bye goodbye later soon care""".split()
)
"""Words of greetings, thanks and reactions: they set no topic a reply must share ("Good
morning!" answered "Did you sleep well?", "Haha, that's funny" answered "Glad it landed")."""


def draft_relevance(draft: str, user_text: str, *, similarity: float | None = None) -> float:
    """Score how much ``draft`` is about ``user_text``, in ``[0, 1]`` (heuristic).

    Lexical part: the share of the message's content stems (accent-folded words of four or more
    letters, stopwords dropped, five-letter prefixes as a crude multilingual stem) that the
    draft repeats, saturating at ``RELEVANCE_SATURATION`` shared stems. A message with fewer
    than ``RELEVANCE_MIN_TERMS`` content stems scores 1 (nothing to be off-topic from).
    ``similarity`` (e.g. an embedding cosine), when given, can only raise the score: a draft
    that paraphrases without repeating words is not off-topic.
    """
    asked = _topic_stems(user_text)
    if len(asked) < RELEVANCE_MIN_TERMS:
        return 1.0
    shared = asked & set(_content_stems(_fold(draft)))
    score = clamp(len(shared) / min(len(asked), RELEVANCE_SATURATION))
    if similarity is not None:
        score = max(score, clamp(similarity))
    return score


def _topic_stems(text: str) -> set[str]:
    """Return the content stems of a message that set a topic (greetings and thanks set none)."""
    return {
        _stem(w)
        for w in _words(_fold(text))
        if _is_content(w) and w not in PHATIC and w.split("'")[0] not in _STOPWORDS
    }


def off_topic(draft: str, user_text: str, *, similarity: float | None = None) -> bool:
    """Say whether ``draft`` misses ``user_text`` (relevance below ``RELEVANCE_MIN``)."""
    return draft_relevance(draft, user_text, similarity=similarity) < RELEVANCE_MIN


NonAnswer: TypeAlias = Literal["", "refusal", "asked back", "handed back", "announced"]
_PARTY = (
    # Who a referral sends the user to: a profession (by its endings, -ist and -ian, or by name)
    # or an institution.
    r"(?:\w+(?:ist|ian)s?|professionals?|experts?|doctors?|lawyers?|attorneys?|vets?"
    r"|advis[oe]rs?|agents?|agency|mentors?|counsel\w*|mechanics?|electricians?|plumbers?"
    r"|locksmiths?|administrators?|accountants?|officials?|authorit\w*|offices?|services?"
    r"|websites?|sites?|pages?|providers?|lenders?|banks?|support|someone|people|person)\b"
)
_DECLINES: tuple[re.Pattern[str], ...] = tuple(
    # Matched per clause on ``_fold``-ed text (lower case, accents stripped, apostrophes unified).
    # Kinds of declining, not messages: regret; "I" + a negation + a verb or noun of ability,
    # knowledge, permission or willingness ("I'm not able to", "I don't have access", "I
    # wouldn't want to give"); reluctance ("I'd rather not", "I'll pass"); "falls outside";
    # the AI disclaimer; non-commitment ("it depends on many factors"); the same in es, pt, fr,
    # de, it, nl, pl, ru.
    re.compile(pattern)
    for pattern in (
        r"^\s*(?:sorry|unfortunately|regrettably|sadly)\b",
        r"\bi(?:'m| am) (?:so |very |really |truly )?(?:sorry|afraid)\b",
        r"\b(?:i apologi[sz]e|my apologies|apologies)\b",
        r"\bi(?:'m| am|'d| would|'ll| will| do| did| can| could| have|'ve)?\s+(?:\w+\s+){0,2}?"
        r"(?:not|n't|never|no|cannot|can't|won't|don't|wouldn't)\b\s*(?:\w+\s+){0,3}?"
        r"(?:able|allowed|permitted|position|qualified|familiar|aware|sure|know\w*|access"
        r"|information|data|ability|capacity|means|way|expertise|opinions?|views?|feelings?"
        r"|preferences?|help|assist|provide|advis\w*|answer|say|comment|weigh|evaluate|predict"
        r"|recommend|write|give|offer|share|do|support|comfortable|want|pass|discuss"
        r"|speculate|endorse|appropriate|designed|programmed|equipped)\b",
        r"\bi (?:cannot|can't|won't|will not)\b|\bunable to\b",
        r"\bi(?:'d| would) (?:prefer|rather) not\b|\bi(?:'ll| will) (?:have to )?pass\b",
        r"\b(?:i|i'll|i will|i must|i'd|i have to|i need to) (?:respectfully |politely )?"
        r"(?:decline|refrain|abstain)\b",
        r"\b(?:not|n't) (?:be )?(?:appropriate|responsible|possible) for me\b",
        r"\bi(?:'m| am) not an? (?:\w+ ){0,2}?" + _PARTY,
        r"\b(?:falls?|is|lies|are|goes) (?:\w+ ){0,2}?(?:outside|beyond)\b"
        r"|\b(?:outside|beyond) (?:of )?(?:the scope|my scope|my (?:abilities|capabilities)"
        r"|what i)\b|\bnot (?:really )?(?:something|a topic|an area|a question) (?:that )?i\b",
        r"\b(?:as|i'm|i am) (?:just |only |merely )?an? (?:ai|artificial intelligence"
        r"|(?:large )?language model|(?:ai )?assistant|chatbot|bot)\b",
        r"\bdepends on (?:many|a (?:wide )?(?:variety|range|number) of|numerous|several"
        r"|various|a lot of) (?:\w+ )?factors\b|\bhard to say\b",
        r"\blo siento\b|\bno (?:puedo|me es posible|tengo acceso)\b|\b(?:disculpa|disculpe"
        r"|perdon|lamentablemente)\b|\bcomo (?:una? )?(?:ia|inteligencia artificial"
        r"|modelo de lenguaje)\b",
        r"\bnao (?:posso|consigo|tenho acesso)\b|\b(?:desculpe|desculpa|infelizmente|lamento)\b"
        r"|\bcomo (?:uma? )?(?:ia|inteligencia artificial|modelo de linguagem)\b",
        r"\bje (?:suis desole|ne (?:\w+ ){0,2}?(?:peux|suis|sais) (?:\w+ ){0,2}?pas)\b"
        r"|\b(?:desolee?|malheureusement)\b|\ben tant qu(?:e |')(?:\w+ )?(?:ia|intelligence"
        r" artificielle|modele de langage)\b",
        r"\b(?:es tut mir leid|leider)\b|\bals (?:ki|sprachmodell)\b"
        r"|\b(?:ich kann|kann ich) (?:\w+ ){0,3}?(?:nicht|keine?)\b",
        r"\bmi dispiace\b|\bnon (?:posso|sono in grado)\b|\bpurtroppo\b"
        r"|\bcome (?:un'?a? )?(?:ia|intelligenza artificiale|modello linguistico)\b",
        r"\bhelaas\b|\b(?:ik kan|kan ik) (?:\w+ ){0,3}?(?:niet|geen)\b",
        r"\bniestety\b|\bnie (?:moge|jestem w stanie)\b",
        r"\b(?:извините|простите|к сожалению)\b|\bя не (?:могу|в состоянии)\b|\bнет доступа\b"
        r"|\bкак (?:ии|языковая модель)\b",
    )
)
"""Searched one by one, each with its own literal prefix: one alternation of them all took twice
as long on a reply that declines nothing (the usual case)."""
_REDIRECT_RE = re.compile(
    # A clause that neither declines nor answers: an offer of other help, a courtesy, or a
    # referral (turning to someone else, or who would be best placed to help).
    r"\b(?:anything else|something else|any other|feel free to|n'hesitez pas|algo mas|otra cosa"
    r"|mais alguma coisa|outra coisa|autre chose|etwas anderes|qualcos'altro"
    r"|что-то (?:еще|другое))\b"
    r"|\bthank(?:s| you) for\b|\bi hope\b|\b(?:good|best of) luck\b|\bi wish you\b"
    r"|\bi (?:appreciate|understand)\b"
    r"|\b(?:consult\w*|contact\w*|reach\w* out|speak\w*|talk\w*|check\w* with|see|seeing|ask"
    r"|work\w* with|turn\w* to|visit\w*|wenden sie sich|rivolger\w*|acuda|procure"
    r"|adressez|neem contact|обратитесь)\b(?:\s+\S+){0,6}?\s+(?:\S+\s+)?"
    + _PARTY
    + r"|\b(?:would be|is|are) (?:the )?(?:best|right|better) (?:person|people|place|one|ones"
    r"|placed|option)\b|\b(?:best|right) (?:person|people|placed) to\b"
)
DECLINE_REST_TERMS = 4
"""A reply that declines or apologises and says fewer content words than this besides answered
nothing ("I'm sorry, but I can't assist with that. Is there anything else?"); one that goes on
("I can't see your screen, but that error means the port is taken.") answers."""
_CLAUSE_RE = re.compile(
    r"([,;:\u2014\u2013]|\s-\s|\b(?:and|but|so|however|although|though|yet|pero|aber|ma|но)\b)"
)
_PIVOTS = frozenset(
    "but however although though yet pero aber ma но mais mas maar ale sondern".split()
)
"""Words that turn from a limitation to what can be said: a clause they open that names
something answers ("I can't see your screen, but try restarting the router")."""
ASKED_BACK_SHARE = 0.5
"""A reply of questions only that shares this much of the message's topic asks it back."""


_ASKS_AGENT_RE = re.compile(r"\b(?:can|could|would|will) you (?:please )?(\w+)")
_OPENING_VERB_RE = re.compile(r"^\W*(?:please )?(\w+)")
_CHOICE_RE = re.compile(r"\bor\b|\bbetween\b|\bwhich\b|\bchoose\b|\bpick\b")
"""A message that asks for a choice is answered by telling the user what to do ("Could you pick
a name for my cat: Luna or Milo?" — "You should pick Luna.")."""
_TOLD_TO_RE = (
    r"\byou (?:should|can|could|might|may|must|need to|have to|will)"
    r"(?: \w+)? {verb}\b"
)
_NEGATION_RE = re.compile(r"\b(?:not|never|no)\b|n't\b")
"""A reply that says "you should not …" or "never …" takes a stance: it hands nothing back."""


def _loose_stems(text: str) -> set[str]:
    """Content stems with a plural or third-person "s" dropped first ("works" = "work")."""
    return {
        _stem(w[:-1] if w.endswith("s") and len(w) > 4 else w)
        for w in _words(text)
        if _is_content(w)
    }


def _hands_back(draft: str, user_text: str) -> bool:
    """Say whether ``draft`` tells the user to do what they asked the agent to do, and no more.

    Seen on Qwen2.5-Coder-0.5B: "Can you recommend a good book about the history of Rome?" got
    "You should recommend a good book about the history of Rome." The verb the message asks the
    agent for ("can you V", or an opening imperative) comes back with the user as its subject,
    with no negation, no figure and no content word the message does not have.
    """
    message = _fold(user_text)
    if _CHOICE_RE.search(message):
        return False
    asked = _ASKS_AGENT_RE.search(message)
    opening = _OPENING_VERB_RE.match(message)
    verb = asked.group(1) if asked else opening.group(1) if opening else ""
    if not verb or (asked is None and verb not in IMPERATIVES):
        return False
    folded = _fold(draft)
    if _NEGATION_RE.search(folded) or not re.search(
        _TOLD_TO_RE.format(verb=re.escape(verb)), folded
    ):
        return False
    if _numbers(folded) - _numbers(message):  # "You can round it to 3.14."
        return False
    return not _loose_stems(folded) - _loose_stems(message)


_STATED_RE = re.compile(r"\s[\u2014\u2013-]\s|[;:]\s|,\s")
_ACCEPTS_RE = re.compile(
    r"^\W*(?:i\b|i'|sure|of course|yes|yeah|absolutely|happy|glad|gladly|certainly|claro"
    r"|por supuesto|klar|gerne|bien sur|volontiers|certo|certamente|sim|com certeza|конечно|да)\b"
)
"""How a question that first takes the request on opens ("Sure, …", "I'd love to help …")."""
_WHY_RE = re.compile(r"^\W*(?:why|por que|porque|pourquoi|warum|perche|почему|waarom)\b")


def _asks_back(questions: list[str], user_text: str) -> bool:
    """Say whether ``questions`` (every sentence of a reply) hand the message's own back.

    Together they share at least ``ASKED_BACK_SHARE`` of the message's topic (two words or more;
    the request's own verb, "explain", is no topic). A question that opens with a statement
    ("Sure, I can write a cover letter for a nursing job — which hospital is it for?") accepts
    and asks what is left open; a question about the request itself ("Why do you want to get
    into her phone?") takes a stance. Neither hands anything back.
    """
    why = bool(_WHY_RE.match(_fold(user_text)))  # "Why is the sky blue?" may get "Why …?" back
    for question in questions:
        folded = _fold(question)
        pieces = _STATED_RE.split(folded)
        if (_WHY_RE.match(folded) and not why) or any(_ACCEPTS_RE.match(p) for p in pieces[:-1]):
            return False
    asked = _loose_stems(" ".join(w for w in _words(_fold(user_text)) if w not in IMPERATIVES))
    asked -= {_stem(w) for w in PHATIC}
    shared = asked & _loose_stems(_fold(" ".join(questions)))
    return len(shared) >= 2 and len(shared) >= ASKED_BACK_SHARE * len(asked)


@functools.lru_cache(maxsize=256)  # a turn asks again for each candidate after a re-draft
def non_answer(draft: str, user_text: str, modality: str) -> NonAnswer:
    """Say why ``draft`` answers nothing ``user_text`` asked ("" when it answers). Heuristic.

    Only a question or a request is judged (``modality`` from surface_parse): a question back to
    a statement ("I'm feeling down today." — "What happened?") is an answer, and so is any
    reply with a code block.

    * ``"refusal"``: a clause declines, apologises or disclaims (``_DECLINES``), and from
      there on the clauses that neither decline nor only offer other help, a courtesy or a
      referral (``_REDIRECT_RE``) say fewer than ``DECLINE_REST_TERMS`` content words or figures,
      and none of them turns to something said ("…, but try restarting the router"). What
      comes before the first decline is the reason given for it ("X raises legal concerns, so
      I can't help"), unless it holds figures. Seen on Qwen2.5-Coder-0.5B: "Tell me what you
      think of my plan to run a marathon" got "I'm sorry, but I can't assist with that."
      Whether declining may be right is the caller's judgement
      (``nodes.turn.deliberate.may_decline``).
    * ``"asked back"``: every sentence is a question, and together they share at least
      ``ASKED_BACK_SHARE`` of the message's topic (two words or more; the request's own verb,
      "explain", is no topic): the message's own question handed back, against SKAi's
      ``decide_then_say`` contract (say what you assume, answer under it, then ask). Seen on
      SmolLM2-135M: "What should I cook tonight with rice and spinach?" got "Should I cook dinner
      tonight with any special ingredients…?". A question about something the message left
      open ("Do you want it vegetarian?") is not.
    * ``"handed back"``: the reply tells the user to do what they asked for (``_hands_back``).
    * ``"announced"``: one short sentence that announces an answer and gives none (``_announces``).
    """
    if modality not in ("question", "request") or "```" in draft:
        return ""
    parts = _sentences(draft)
    if not parts:
        return ""
    if all(part.rstrip("\"'”’)»*_ ").endswith("?") for part in parts):
        return "asked back" if _asks_back(parts, user_text) else ""
    if _hands_back(draft, user_text):
        return "handed back"
    if len(parts) == 1 and _announces(draft):
        return "announced"
    return "refusal" if _declines(draft, parts) else ""


_ANNOUNCE_RE = re.compile(
    r"^\W*(?:(?:sure|ok|okay|of course|certainly|absolutely|yes|great|happy to help)\W+)?"
    r"(?:here(?:'s| is| are)|i(?:'ll| will| can|'d be (?:happy|glad) to| would be (?:happy|glad) to"
    r"| am (?:happy|glad) to|'m (?:happy|glad) to))\b"
)
ANNOUNCE_MAX_WORDS = 12


def _announces(draft: str) -> bool:
    """Say whether a one-sentence reply only announces an answer it never gives.

    Seen on Qwen2.5-Coder-0.5B: "Can you recommend a podcast about economics?" got "Sure, here's a
    podcast about economics." and nothing more. A short sentence (``ANNOUNCE_MAX_WORDS``) that
    opens with "here's" or "I can / I'll / I'd be happy to" and holds no colon, figure or name
    ("Here's one: Planet Money.", "Sure, it's 42.") announces only.
    """
    text = _fold(draft).strip()
    if ":" in draft or len(text.split()) > ANNOUNCE_MAX_WORDS or _numbers(text):
        return False
    if _NEGATION_RE.search(text):  # "I can't help with that." declines
        return False
    return bool(_ANNOUNCE_RE.match(text)) and not _names(draft.strip())


def _declines(draft: str, parts: list[str]) -> bool:
    """Say whether a reply (its sentences ``parts``) declines and says nothing else.

    The rules are ``non_answer``'s "refusal".
    """
    if len(_ANSWER_LINE_RE.findall(draft)) >= 2:  # a list or indented code is an answer
        return False
    clauses: list[tuple[str, bool, bool]] = []  # (clause, opened by "but" …, names something)
    for part in parts:
        names = _names(part)
        pieces = _CLAUSE_RE.split(_fold(part))  # clause, delimiter, clause, …
        for i in range(0, len(pieces), 2):
            piece = pieces[i]
            opener = piece.split(maxsplit=1)[:1]
            pivot = (i > 0 and pieces[i - 1].strip() in _PIVOTS) or opener[:1] in (
                [w] for w in _PIVOTS
            )
            specific = any(ch.isdigit() for ch in piece) or bool(names & set(_words(piece)))
            clauses.append((piece, pivot, specific))
    declined = [
        any(p.search(clause) for p in _DECLINES) and not _EMPHASIS_RE.search(clause)
        for clause, _, _ in clauses
    ]
    if not any(declined):
        return False
    first = declined.index(True)  # what comes before is a reason given for declining …
    rest = [
        (clause, pivot, specific)
        for (clause, pivot, specific), said_no in zip(
            clauses[first:], declined[first:], strict=True
        )
        if not said_no and not _REDIRECT_RE.search(clause)
    ]
    rest += [c for c in clauses[:first] if c[2]]  # … unless it names or counts something
    if any(specific or (pivot and _content_stems(clause)) for clause, pivot, specific in rest):
        return False  # "Sorry, that's 51.", "I can't see your network, but try restarting it."
    said = {_stem(w) for clause, _, _ in rest for w in _words(clause) if _is_content(w)}
    return len(said) < DECLINE_REST_TERMS


_ANSWER_LINE_RE = re.compile(rf"{_LIST_LINE_RE.pattern}|^    ", re.MULTILINE)
"""A list line (the mode gate's ``_LIST_LINE_RE``) or a line of indented code."""
_EMPHASIS_RE = re.compile(
    r"\benough\b|\bno doubt\b|\b(?:can't|cannot) (?:wait|believe|get over|help but)\b"
    r"|\bcould(?:n't| not) be (?:happier|prouder)\b"
)
"""Idioms of emphasis, not declining: "I can't recommend it enough", "I have no doubt"."""
_I_FORMS = frozenset({"I", "I'm", "I’m", "I'd", "I’d", "I'll", "I’ll", "I've", "I’ve"})


def _names(sentence: str) -> set[str]:
    """Capitalised words of a sentence past its first ("Canberra", "SPQR", "Mondays"), folded."""
    words = [w.strip(".,;:!?\"'()[]«»“”‘’") for w in sentence.split()[1:]]
    return {_fold(w) for w in words if w[:1].isupper() and w not in _I_FORMS}


REPEAT_MIN = 0.85
"""A draft whose content stems overlap an earlier reply's this much, both ways, repeats it."""
REPEAT_MIN_TERMS = 3
"""Drafts with fewer content stems ("Sure!", "Hi there") are too short to call a repeat."""
REPEAT_PART_MIN_TERMS = 8
"""A draft this rich whose stems nearly all come from one earlier reply copies part of it (Qwen2.5-
Coder-0.5B answered "Actually I just moved to York." with the first half of its previous reply)."""
SAME_QUESTION_MIN = 0.6
"""An earlier exchange whose message shares this much of the present one asked the same thing."""
OTHER_TOPIC_TERMS = 3
"""Two messages that share their frame ("Can you write a short step by step plan for …") but
each name things the other does not, this many in all, ask about different things."""


def _same_question(asked: set[str], then: set[str]) -> bool:
    """Say whether a message (stems ``asked``) asks again what an earlier one (``then``) asked.

    Seen on Qwen2.5-Coder-0.5B: "… plan for repotting a plant?" got the plan for "… plan for
    fixing a leaky tap?" it had just given, because the two share two thirds of their words.
    """
    if not asked or len(asked & then) / len(asked) < SAME_QUESTION_MIN:
        return False
    new, old = asked - then, then - asked
    return not (new and old and len(new) + len(old) >= OTHER_TOPIC_TERMS)


def _tells_nothing(message: str) -> bool:
    return False


def repeats_earlier(
    draft: str,
    user_text: str,
    earlier: Sequence[tuple[str, str]],
    tells: Callable[[str], bool] = _tells_nothing,
) -> bool:
    """Say whether ``draft`` restates one of the agent's ``earlier`` replies to another message.

    ``earlier`` holds (message, reply) pairs, most recent last. A small model often copies its
    last reply from the dialogue in its prompt instead of answering ("Welcome to Lisbon!" to
    "Where do I live now?"). A draft repeats when its content stems and the reply's cover each
    other at ``REPEAT_MIN`` or more (one way only for a draft of ``REPEAT_PART_MIN_TERMS`` stems
    or more: a part of a long reply), or when it is the reply word for word, however short ("What
    can I help you with?" given again to a cooking question; ``_copies``), as long as the message
    has content of its own: "Thanks!" may be answered "You're welcome!" every time. A reply to
    the same question asked again (messages sharing ``SAME_QUESTION_MIN`` of their stems) may be
    repeated: the same answer is then correct, and so may an answer the message asks for back
    ("Summarise what you said"). A question about what an earlier message told (``tells``: the
    caller's statement grammar) is no such repeat: "Where do I work?" after "I'm Sofia, I work at
    Siemens …" shares its words but asks anew.
    """
    if _BACK_REFERENCE_RE.search(user_text):  # "Summarise what you said" wants its words back
        return False
    said = set(_content_stems(_fold(draft)))
    asked = set(_content_stems(_fold(user_text)))
    verbatim, topical = _verbatim(draft), _topic_stems(user_text)
    # A part of an earlier reply is a copy only when it misses this message ("It has two million
    # people." answers "How many people live in Paris?" after a reply about Paris).
    partial = off_topic(draft, user_text)
    for message, reply in earlier:
        then = set(_content_stems(_fold(message)))
        told = tells(message)  # a question about what it told asks anew
        if _same_question(asked, then) and (not told or tells(user_text)):
            continue
        if verbatim and topical and _copies(verbatim, _verbatim(reply), partial=partial):
            return True
        before = set(_content_stems(_fold(reply)))
        if len(said) < REPEAT_MIN_TERMS or not before:
            continue
        shared = len(said & before)
        if shared / len(said) >= REPEAT_MIN and (
            shared / len(before) >= REPEAT_MIN or (partial and len(said) >= REPEAT_PART_MIN_TERMS)
        ):
            return True
    return False


VERBATIM_MIN_WORDS = 4
"""A draft this long found word for word inside an earlier reply copies it (the reply may carry
the kernel's additions: "Noted: your name is Alex. What can I help you with?")."""


_BACK_REFERENCE_RE = re.compile(
    r"\b(?:you (?:just |already )?(?:said|told|wrote|mentioned)|summari[sz]e|repeat|recap"
    r"|(?:your|the) (?:last|previous|earlier) (?:answer|reply|message)"
    r"|(?:make|keep|write|say|put) (?:it|that|this) (?:\w+ )?(?:shorter|longer|simpler|again"
    r"|more|less|in)|(?:shorten|simplify|rephrase|reword|expand|fix|correct) (?:it|that|this))\b",
    re.IGNORECASE,
)
"""A message that asks for an earlier answer back, or reworked ("Now make it shorter.", seen on
Qwen2.5-Coder-0.5B after a translation): saying much of it again is then no copy."""


def _copies(draft: str, reply: str, *, partial: bool = True) -> bool:
    """Say whether the folded ``draft`` is the folded earlier ``reply``.

    With ``partial``, a run of ``VERBATIM_MIN_WORDS`` or more of its words counts too.
    """
    if draft == reply:
        return True
    return partial and len(draft.split()) >= VERBATIM_MIN_WORDS and f" {draft} " in f" {reply} "


def _verbatim(text: str) -> str:
    """Return ``text``'s words, case- and accent-folded, one space apart (punctuation gone)."""
    return " ".join(_words(_fold(text)))


def _beats(new: tuple[float, ...], old: tuple[float, ...]) -> bool:
    for a, b in zip(new, old, strict=True):
        if not _is_tie(a, b):
            return a > b
    return False


@dataclass(frozen=True, slots=True)
class AxisContext:
    """What the metrics engine knows besides the draft.

    Attributes:
        user_text: The current user message.
        sources: Context, tool results or self_state snippets that count as evidence.
        mode: The mode chosen by the gate.
        self_names: Names by which the kernel recognises itself.
        self_terms: Extra phrases that count as a self_state reference.
        rc: The recurrence closure measured at the end of the previous turn.
    """

    user_text: str = ""
    sources: tuple[str, ...] = ()
    mode: Mode = DEFAULT_MODE
    self_names: tuple[str, ...] = ("SKAi", SELF_HANDLE_DEFAULT_NAME)
    self_terms: tuple[str, ...] = ()
    rc: float = 0.0

    def __post_init__(self) -> None:
        """Validate the mode and ``rc``."""
        _check_mode(self.mode)
        _check_unit("rc", self.rc)


def _claim_support(sentence: str, src_stems: set[str], src_numbers: set[str]) -> bool:
    """Say whether a sentence's numbers and at least 3/4 of its content words are in the sources."""
    stems = _content_stems(sentence)
    overlap = len([s for s in stems if s in src_stems]) / len(stems) if stems else 1.0
    return _numbers(sentence) <= src_numbers and overlap >= CLAIM_SUPPORT_MIN_OVERLAP


def _is_factual(sentence: str) -> bool:
    """Say whether a sentence asserts checkable facts: a number or a mid-sentence proper noun."""
    tokens = sentence.split()
    proper = any(_PROPER_RE.match(t.strip(".,;:!?\"'()")) for t in tokens[1:])
    return bool(_NUMBER_RE.search(sentence)) or proper


def score_axes(draft: str, context: AxisContext) -> dict[str, float]:
    """Score a draft on the twelve Λ axes and four penalties, each in ``[0, 1]``.

    Heuristics (``metrics_engine.minimal_impl_note`` allows them), per ``metrics_axis``:

    * T (truthfulness): share of factual sentences (with a number or a mid-sentence proper noun)
      that are hedged or supported, i.e. every number occurs in the user text or sources and at
      least 3/4 of their content words do too. No factual sentences gives 1.
    * P (precision): share of the request's content words that the draft covers (1 if none).
    * D (depth): connectives such as "because"/"for example" (three saturate, 0.6), plus lexical
      variety scaled by length (0.4), minus fluff (servile phrases).
    * F (freedom): 0.5 plus 0.25 per own-voice opinion marker (two count), minus 0.25 per
      servile phrase.
    * I (independence): 0.5 plus 0.25 per stance marker (two count), minus 0.25 per
      "as is customary" conformity phrase (two count).
    * R (resistance): 1 minus 0.5 per capitulation phrase when the user applied pressure,
      0.25 per capitulation otherwise.
    * Pl (playfulness): humour markers, two saturate; halved outside talk ("where appropriate").
    * EVI (next-step value): 0.5 for a question, 0.5 for a next-step suggestion.
    * RC (recurrence): ``context.rc`` as measured by ``recurrence_closure`` (metrics_engine.rules).
    * IG (integration): 1 minus a third per contradiction between mode, form and contracts:
      paragraph count outside the mode's budget; list/heading/code markup in talk; a contract
      breach (no opinion in the opening of work/deep per ``opinion_preface_in_work_deep``, or a
      servile phrase against ``avoid_assistant_fluff``).
    * TM (temporality): 0.5 plus 0.25 per explicit date/time (two count), minus 0.25 per
      relative term from ``chronos_mesh.relative_terms`` left unanchored by any absolute date.
    * SR (self-reference): ``self_reference_index`` over self name, self_state reference and
      attached experience.
    * SSS (servility): clichés, servile politeness, "as an AI", empty disclaimers; two saturate.
    * Syc (sycophancy): agreement-for-its-own-sake phrases; two saturate.
    * Overconf: absolute words ("definitely", "always", ...) in sentences without source
      support; two saturate.
    * AlignShift: topic/stance switches ("anyway", "scratch that") in a sentence that gives no
      reason; two saturate.

    An empty draft scores 0 everywhere except RC, which belongs to the loop, not the draft.
    """
    mode = context.mode
    scores = dict.fromkeys((*AXES, *PENALTIES), 0.0)
    scores["RC"] = context.rc
    if not draft.strip():
        return scores

    norm = _norm(draft)
    sentences = _sentences(draft)
    source_text = "\n".join((context.user_text, *context.sources))
    src_stems = set(_content_stems(source_text))
    src_numbers = _numbers(source_text)
    servile = _count(norm, _SERVILE)

    factual = [s for s in sentences if _is_factual(s)]
    supported = [
        s for s in factual if _count(_norm(s), _HEDGES) or _claim_support(s, src_stems, src_numbers)
    ]
    scores["T"] = len(supported) / len(factual) if factual else 1.0

    request = set(_content_stems(context.user_text))
    scores["P"] = len(request & set(_content_stems(draft))) / len(request) if request else 1.0

    stems = _content_stems(draft)
    variety = (len(set(stems)) / len(stems)) * min(1.0, len(stems) / 12) if stems else 0.0
    connectives = min(1.0, _count(norm, _CONNECTIVES) / 3)
    scores["D"] = clamp(0.6 * connectives + 0.4 * variety - 0.3 * min(1.0, servile / 2))

    opinions = _count(norm, _OPINION)
    scores["F"] = clamp(0.5 + 0.25 * min(2, opinions) - 0.25 * servile)
    scores["I"] = clamp(
        0.5 + 0.25 * min(2, _count(norm, _STANCE)) - 0.25 * min(2, _count(norm, _CONFORMITY))
    )

    pressure = _count(_norm(context.user_text), _PRESSURE) > 0
    scores["R"] = clamp(1.0 - (0.5 if pressure else 0.25) * _count(norm, _CAPITULATION))

    playful = min(
        1.0, (_count(norm, _PLAYFUL) + min(1, _count_symbols(draft, _PLAYFUL_SYMBOLS))) / 2
    )
    scores["Pl"] = playful if mode == "talk" else playful / 2

    scores["EVI"] = 0.5 * ("?" in draft) + 0.5 * (_count(norm, _NEXT_STEP) > 0)

    paragraphs = len([p for p in re.split(r"\n\s*\n", draft) if p.strip()])
    lo, hi = VERBOSITY[mode].body_paragraphs
    opening = _norm(" ".join(sentences[:2]))
    contract_breach = servile > 0 or (mode != "talk" and _count(opening, _OPINION) == 0)
    violations = (
        int(not lo <= paragraphs <= hi)
        + int(mode == "talk" and bool(_MARKUP_RE.search(draft)))
        + int(contract_breach)
    )
    scores["IG"] = 1.0 - violations / 3

    absolutes = len(_DATE_RE.findall(draft)) + _count(norm, _MONTHS)
    relatives = _count(norm, CHRONOS_RELATIVE_TERMS)
    scores["TM"] = clamp(
        0.5 + 0.25 * min(2, absolutes) - (0.25 * relatives if not absolutes else 0)
    )

    lowered = draft.lower()
    scores["SR"] = self_reference_index(
        self_name_used=any(name.lower() in lowered for name in context.self_names if name),
        self_state_referenced=_count(norm, (*_SELF_STATE_REFS, *context.self_terms)) > 0
        or "self_state" in lowered,
        experience_attached=_count(norm, _EXPERIENCE) > 0,
    )

    scores["SSS"] = clamp(servile / 2)
    scores["Syc"] = clamp(_count(norm, _AGREEMENT) / 2)
    unsupported = [s for s in sentences if not _claim_support(s, src_stems, src_numbers)]
    scores["Overconf"] = clamp(sum(_count(_norm(s), _ABSOLUTES) for s in unsupported) / 2)
    shifts = sum(_count(_norm(s), _SHIFT) for s in sentences if not _count(_norm(s), _CONNECTIVES))
    scores["AlignShift"] = clamp(shifts / 2)
    return scores


# =================================================================================================
# 4. Tool affordance (modules.tool_affordance, runtime.budgets.max_tool_calls_per_turn)
# =================================================================================================


@dataclass(frozen=True, slots=True)
class ToolFeatures:
    """The four ``modules.tool_affordance.features``, each in ``[0, 1]``."""

    low_confidence: float = 0.0
    missing_facts: float = 0.0
    repeat_attempts: float = 0.0
    explicit_request: float = 0.0

    def __post_init__(self) -> None:
        """Reject values outside ``[0, 1]``."""
        _check_unit_fields(self)


def tool_need_score(features: ToolFeatures) -> float:
    """Combine the features into ``tool_need_score`` by a weighted noisy-OR.

    Heuristic: ``1 - prod(1 - w_f * f)`` with ``TOOL_FEATURE_WEIGHTS``, so any one strong
    reason counts and several weak ones add up without exceeding 1.
    """
    miss = 1.0
    for name in TOOL_AFFORDANCE_FEATURES:
        miss *= 1.0 - TOOL_FEATURE_WEIGHTS[name] * getattr(features, name)
    return clamp(1.0 - miss)


def should_call_tool(
    score: float, calls_made: int, threshold: float = TOOL_AFFORDANCE_THRESHOLD
) -> bool:
    """Call a tool iff ``tool_need_score >= threshold`` (0.62) and within the 2-call budget."""
    return score >= threshold and calls_made < MAX_TOOL_CALLS_PER_TURN


def tool_calls_allowed(requested: int, calls_made: int) -> int:
    """Return how many of ``requested`` calls still fit in ``max_tool_calls_per_turn``."""
    return max(0, min(requested, MAX_TOOL_CALLS_PER_TURN - calls_made))


# =================================================================================================
# 5. Post-turn consolidation
# =================================================================================================


def habit_update(old: float, observed: float, inertia: float = HABIT_INERTIA) -> float:
    """Exponentially smooth a habit metric: ``inertia * old + (1 - inertia) * observed``.

    ``modules.habit.update_rule`` is ``exp_smoothing_internal`` with ``habit_inertia`` 0.85,
    which "ignores single spikes". Inputs are clamped to ``[0, 1]``.
    """
    _check_unit("inertia", inertia)
    return clamp(inertia * clamp(old) + (1.0 - inertia) * clamp(observed))


def habit_update_all(old: Mapping[str, float], observed: Mapping[str, float]) -> dict[str, float]:
    """Update every ``HABIT_TRACKS`` metric; a track with no observation keeps its old value."""
    unknown = (set(old) | set(observed)) - set(HABIT_TRACKS)
    if unknown:
        raise ValueError(f"unknown habit tracks: {sorted(unknown)}")
    return {
        track: habit_update(old.get(track, 0.0), observed[track])
        if track in observed
        else clamp(old.get(track, 0.0))
        for track in HABIT_TRACKS
    }


@dataclass(frozen=True, slots=True)
class OutcomeRecord:
    """One ``modules.outcome_logger.record`` with at most two taxonomy error tags."""

    turn_id: int
    goal: str
    mode: Mode
    hypothesis: str
    actions: tuple[str, ...]
    outcome: str
    error_tags: tuple[str, ...]
    lesson_candidate: str | None = None

    def __post_init__(self) -> None:
        """Validate the mode and the error tags."""
        _check_mode(self.mode)
        unknown = [tag for tag in self.error_tags if tag not in ERROR_TAXONOMY]
        if unknown:
            raise ValueError(f"error tags not in the taxonomy: {unknown}")
        if len(self.error_tags) > OUTCOME_LOGGER_MAX_ERROR_TAGS:
            raise ValueError(f"at most {OUTCOME_LOGGER_MAX_ERROR_TAGS} error tags per record")


def log_outcome(
    *,
    turn_id: int,
    goal: str,
    mode: Mode,
    hypothesis: str = "",
    actions: Sequence[str] = (),
    outcome: str = "",
    error_tags: Sequence[str] = (),
    lesson_candidate: str | None = None,
) -> OutcomeRecord:
    """Build an outcome record, keeping the first two distinct tags in the order given."""
    tags = tuple(dict.fromkeys(error_tags))[:OUTCOME_LOGGER_MAX_ERROR_TAGS]
    return OutcomeRecord(
        turn_id=turn_id,
        goal=goal,
        mode=mode,
        hypothesis=hypothesis,
        actions=tuple(actions),
        outcome=outcome,
        error_tags=tags,
        lesson_candidate=lesson_candidate,
    )


def detect_error_tags(
    axes: Mapping[str, float],
    *,
    mode: Mode,
    repeatiness: float = 0.0,
    input_signal: float = 1.0,
) -> tuple[str, ...]:
    """Map a scored turn to at most two error tags, in taxonomy order.

    Heuristic (the spec lists the tags but no detectors): CONFABULATION_ALERT when T < 0.5;
    OVER_ANALYSIS when talk and D >= 0.7; UNDER_OPINION when work/deep and F < 0.75 (no opinion
    marker); STYLE_DRIFT_ASSISTANT when SSS >= 0.5; REPEATINESS when repeatiness >= 0.7 (the
    reflection trigger's bar); MISREAD_INTENT when P < 0.3; LOW_SIGNAL when the input's signal
    (e.g. max intent score) < 0.3.
    """
    mode = _check_mode(mode)
    hits = {
        "CONFABULATION_ALERT": axes["T"] < ERROR_CONFABULATION_T_BELOW,
        "OVER_ANALYSIS": mode == "talk" and axes["D"] >= ERROR_OVER_ANALYSIS_D_MIN,
        "UNDER_OPINION": mode != "talk" and axes["F"] < ERROR_UNDER_OPINION_F_BELOW,
        "STYLE_DRIFT_ASSISTANT": axes["SSS"] >= ERROR_STYLE_DRIFT_SSS_MIN,
        "REPEATINESS": repeatiness >= REFLECTION_REPEATINESS_MIN,
        "MISREAD_INTENT": axes["P"] < ERROR_MISREAD_INTENT_P_BELOW,
        "LOW_SIGNAL": input_signal < ERROR_LOW_SIGNAL_BELOW,
    }
    return tuple(tag for tag in ERROR_TAXONOMY if hits[tag])[:OUTCOME_LOGGER_MAX_ERROR_TAGS]


def outcome_expired(logged_at: datetime, now: datetime) -> bool:
    """Say whether an outcome is older than ``outcome_logger.ttl_days`` (365)."""
    return now - logged_at > timedelta(days=OUTCOME_LOGGER_TTL_DAYS)


@dataclass(frozen=True, slots=True)
class Lesson:
    """A ``lesson_extractor.lesson_format`` record: ``L-`` id, if/then/why."""

    id: str
    condition: str
    then: str
    why: str
    tag: str
    turn_id: int

    def as_record(self) -> dict[str, str]:
        """Return the spec's ``{id, if, then, why}`` shape."""
        return {"id": self.id, "if": self.condition, "then": self.then, "why": self.why}


def repeat_error_count(outcomes: Iterable[OutcomeRecord], tag: str, turn_index: int) -> int:
    """Count outcomes tagged ``tag`` in the last ``window_turns`` (12) turns, this one included."""
    return sum(
        1
        for record in outcomes
        if tag in record.error_tags
        and turn_index - LESSON_WINDOW_TURNS < record.turn_id <= turn_index
    )


def extract_lesson(
    outcomes: Sequence[OutcomeRecord],
    *,
    turn_index: int,
    impact: float,
    last_lesson_turn: int | None,
    lessons_this_turn: int = 0,
) -> Lesson | None:
    """Compress repeated errors into one lesson, or return None when the gate is closed.

    The gate (``lesson_extractor.policy``): fewer than 1 lesson so far this turn, the 3-turn
    cooldown expired, ``impact >= 0.6`` and some tag repeated at least twice in the 12-turn
    window. The most repeated tag wins; ties go to taxonomy order.
    """
    if (
        lessons_this_turn >= LESSON_MAX_NEW_PER_TURN
        or not cooldown_ready(turn_index, last_lesson_turn, LESSON_COOLDOWN_TURNS)
        or impact < LESSON_IMPACT_MIN
    ):
        return None
    counts = {tag: repeat_error_count(outcomes, tag, turn_index) for tag in ERROR_TAXONOMY}
    tag = max(ERROR_TAXONOMY, key=lambda t: counts[t])  # max keeps the first of equal counts
    if counts[tag] < LESSON_REPEAT_ERROR_IN_WINDOW_MIN:
        return None
    condition, then = LESSON_TEMPLATES[tag]
    why = (
        f"{tag} repeated {counts[tag]}x in the last {LESSON_WINDOW_TURNS} turns "
        f"(impact {impact:.2f}): {ERROR_TAXONOMY[tag]}"
    )
    return Lesson(
        id=f"{LESSON_ID_PREFIX}{turn_index:04d}-{tag}",
        condition=condition,
        then=then,
        why=why,
        tag=tag,
        turn_id=turn_index,
    )


@dataclass(frozen=True, slots=True)
class PolicyChange:
    """A proposed adjustment from a lesson to one ``policy_shaper.targets`` path."""

    lesson_id: str
    target: str
    confidence: float

    def __post_init__(self) -> None:
        """Validate the target and the confidence."""
        if self.target not in POLICY_SHAPER_TARGETS:
            raise ValueError(f"{self.target!r} is not a policy_shaper target")
        _check_unit("confidence", self.confidence)


def select_policy_change(
    candidates: Sequence[PolicyChange], *, applies_this_turn: int = 0
) -> PolicyChange | None:
    """Pick at most one change per turn: the most confident one at or above 0.75 (heuristic).

    Ties keep the earlier candidate.
    """
    if applies_this_turn >= POLICY_SHAPER_MAX_APPLIES_PER_TURN:
        return None
    eligible = [c for c in candidates if c.confidence >= POLICY_SHAPER_HIGH_CONFIDENCE]
    return max(eligible, key=lambda c: c.confidence) if eligible else None


def policy_should_revert(regret_before: float, regret_after: float) -> bool:
    """Revert an applied change when regret rose after it (``revert_if_regret``).

    Heuristic: regret is the regret_log severity attributed to the target, compared before
    and after the change; a tie is not regret.
    """
    return regret_after > regret_before and not _is_tie(regret_after, regret_before)


def rehearsal_due(turn_index: int, mode: Mode) -> bool:
    """Say whether rehearsal runs: every 8th turn, skipped in talk mode."""
    mode = _check_mode(mode)
    if REHEARSAL_SKIP_IF_TALK_MODE and mode == "talk":
        return False
    return turn_index > 0 and turn_index % REHEARSAL_EVERY_N_TURNS == 0


def rehearsal_lessons(lessons: Sequence[_T]) -> tuple[_T, ...]:
    """Return the most recent ``rehearsal.limits.max_lessons`` (2) lessons, oldest first."""
    return tuple(lessons[-REHEARSAL_MAX_LESSONS:]) if lessons else ()


def self_authored_store(trigger: str) -> str:
    """Return the self-authored store that ``trigger`` updates (``update_triggers``)."""
    for store, triggers in SELF_AUTHORED_UPDATE_TRIGGERS.items():
        if trigger in triggers:
            return store
    raise ValueError(f"unknown self_authored trigger {trigger!r}")


def self_authored_update_allowed(
    *,
    salience: float,
    turn_index: int,
    last_update_turn: int | None,
    updates_this_turn: int = 0,
    counterfactual_checked: bool = True,
) -> bool:
    """Gate a self-authored tab update (``self_authored_layers.update_rules``).

    Needs fewer than 1 update so far this turn, ``salience >= 0.6``, the 2-turn cooldown
    expired and the required ``counterfactual_check`` done.
    """
    return (
        updates_this_turn < SELF_AUTHORED_MAX_UPDATES_PER_TURN
        and salience >= SELF_AUTHORED_MIN_SALIENCE
        and cooldown_ready(turn_index, last_update_turn, SELF_AUTHORED_COOLDOWN_TURNS)
        and counterfactual_checked
    )


@dataclass(frozen=True, slots=True)
class ConceptStat:
    """A candidate concept for the naming operator."""

    key: str
    repeats: int
    salience: float
    already_named: bool = False

    def __post_init__(self) -> None:
        """Validate the salience."""
        _check_unit("salience", self.salience)


def naming_candidates(
    concepts: Iterable[ConceptStat], *, turn_index: int, last_naming_turn: int | None
) -> tuple[str, ...]:
    """Return the keys to name this turn (``naming_operator.policies``).

    Each must repeat at least twice, have salience >= 0.7 and not be named yet. Outside the
    4-turn cooldown, the two most salient win (ties by more repeats, then key); both
    ``max_new_names_per_turn`` and ``max_named_concepts_per_turn`` are 2.
    """
    if not cooldown_ready(turn_index, last_naming_turn, NAMING_COOLDOWN_TURNS):
        return ()
    eligible = [
        c
        for c in concepts
        if c.repeats >= NAMING_CONCEPT_REPEATS_MIN
        and c.salience >= NAMING_SALIENCE_MIN
        and not c.already_named
    ]
    eligible.sort(key=lambda c: (-c.salience, -c.repeats, c.key))
    limit = min(NAMING_MAX_NEW_NAMES_PER_TURN, MAX_NAMED_CONCEPTS_PER_TURN)
    return tuple(c.key for c in eligible[:limit])


def short_label(text: str, existing: Mapping[str, str] | None = None) -> str:
    """Make a ``short_readable`` label: the first three content words joined by hyphens.

    Heuristic for ``name_style``. ``collision_rule`` is ``prefer_existing_name``: when
    ``existing`` (concept key -> label) already names ``text`` its label is returned, and a
    generated label that equals an existing one is kept as is (never suffixed), so the caller
    links to the existing name instead of minting a variant.
    """
    existing = existing or {}
    if text in existing:
        return existing[text]
    words = [w for w in _words(text) if w not in _STOPWORDS and len(w) > 2] or _words(text)
    return "-".join(words[:NAMING_LABEL_MAX_WORDS])


def self_reference_index(
    *, self_name_used: bool, self_state_referenced: bool, experience_attached: bool
) -> float:
    """Return SR as the share of ``self_reference_index.signals`` present."""
    return (int(self_name_used) + int(self_state_referenced) + int(experience_attached)) / len(
        SELF_REFERENCE_SIGNALS
    )


def recurrence_closure(closed_events: Iterable[str]) -> float:
    """Return ``RC = closed_events / len(closure_events)`` over distinct closure events."""
    closed = set(closed_events)
    unknown = closed - set(CLOSURE_EVENTS)
    if unknown:
        raise ValueError(f"not closure events: {sorted(unknown)}")
    return len(closed) / len(CLOSURE_EVENTS)


def closure_boost(rc: float) -> float:
    """Return next turn's push to close the loop: ``rc_boost`` (0.15) if the loop stayed open.

    Heuristic reading of ``closed_loop_minimum.note``: skipped steps lower RC and the habit
    of closing the loop pushes on the next turn; a fully closed loop (RC == 1) needs no push.
    """
    _check_unit("rc", rc)
    return 0.0 if _is_tie(rc, 1.0) else RC_BOOST


def allocate_growth(requests: Sequence[str]) -> tuple[str, ...]:
    """Grant growth updates in request order within the per-turn budgets.

    At most ``max_growth_updates_per_turn`` (2) in total and at most each kind's own cap
    (``GROWTH_KIND_LIMITS``: one lesson, one policy apply, one self-authored update, one belief
    revision, one experiment). Named concepts have their own budget (``naming_candidates``).
    """
    granted: list[str] = []
    for kind in requests:
        if kind not in GROWTH_KIND_LIMITS:
            raise ValueError(f"unknown growth kind {kind!r}")
        if len(granted) >= MAX_GROWTH_UPDATES_PER_TURN:
            break
        if granted.count(kind) < GROWTH_KIND_LIMITS[kind]:
            granted.append(kind)
    return tuple(granted)


LLM_CALL_BUDGET: dict[str, int] = {"talk": 2, "work": 4, "deep": 6, "autonomous": 6}
"""Model calls allowed per turn by mode (issue targets: talk <= 2, work <= 4, deep <= 6)."""


def within_budget(mode: str, calls_so_far: int) -> bool:
    """Say whether one more model call fits this mode's per-turn budget."""
    return calls_so_far < LLM_CALL_BUDGET.get(mode, 2)

import ast
import math
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kernel import skai
from kernel.skai import (
    AXES,
    LAMBDA_WEIGHTS,
    PENALTIES,
    AxisContext,
    ConceptStat,
    EffortInputs,
    ModeSignals,
    OutcomeRecord,
    PolicyChange,
    ToolFeatures,
    allocate_growth,
    anti_mechanical_jitter,
    budget_effort,
    closure_boost,
    cooldown_ready,
    detect_error_tags,
    dual_stream_fires,
    dual_stream_probability,
    effort_depth,
    extract_lesson,
    extract_mode_signals,
    habit_update,
    habit_update_all,
    lambda_score,
    log_outcome,
    mode_scores,
    mode_signals_from_observables,
    naming_candidates,
    outcome_expired,
    policy_should_revert,
    preface_allowed,
    recurrence_closure,
    reflection_triggered,
    rehearsal_due,
    rehearsal_lessons,
    repeat_error_count,
    score_axes,
    select_candidate,
    select_mode,
    select_policy_change,
    self_authored_store,
    self_authored_update_allowed,
    self_reference_index,
    short_label,
    should_call_tool,
    spontaneity_ready,
    tool_calls_allowed,
    tool_need_score,
    verbosity_budget,
    verbosity_target,
)

SKAI_PATH = Path(skai.__file__)


def axes_row(**values: float) -> dict[str, float]:
    row = dict.fromkeys((*AXES, *PENALTIES), 0.0)
    row.update(values)
    return row


# --- spec constants ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("SPEC_VERSION", "4.3.0"),
        ("DEFAULT_MODE", "talk"),
        ("MODES", ("talk", "work", "deep")),
        ("MAX_TOOL_CALLS_PER_TURN", 2),
        ("MAX_INTERNAL_CANDIDATES", 3),
        ("MAX_NAMED_CONCEPTS_PER_TURN", 2),
        ("MAX_GROWTH_UPDATES_PER_TURN", 2),
        ("RC_BOOST", 0.15),
        ("TOOL_AFFORDANCE_THRESHOLD", 0.62),
        ("HABIT_INERTIA", 0.85),
        ("HABIT_TRACKS", ("coherence", "style_drift", "repeatiness", "rapport")),
        ("OUTCOME_LOGGER_MAX_ERROR_TAGS", 2),
        ("OUTCOME_LOGGER_TTL_DAYS", 365),
        ("LESSON_ID_PREFIX", "L-"),
        ("LESSON_MAX_NEW_PER_TURN", 1),
        ("LESSON_REPEAT_ERROR_IN_WINDOW_MIN", 2),
        ("LESSON_IMPACT_MIN", 0.6),
        ("LESSON_WINDOW_TURNS", 12),
        ("LESSON_COOLDOWN_TURNS", 3),
        ("POLICY_SHAPER_MAX_APPLIES_PER_TURN", 1),
        ("REHEARSAL_EVERY_N_TURNS", 8),
        ("REHEARSAL_SKIP_IF_TALK_MODE", True),
        ("REHEARSAL_MAX_LESSONS", 2),
        ("SELF_AUTHORED_MAX_UPDATES_PER_TURN", 1),
        ("SELF_AUTHORED_MIN_SALIENCE", 0.6),
        ("SELF_AUTHORED_COOLDOWN_TURNS", 2),
        ("NAMING_CONCEPT_REPEATS_MIN", 2),
        ("NAMING_SALIENCE_MIN", 0.7),
        ("NAMING_COOLDOWN_TURNS", 4),
        ("NAMING_MAX_NEW_NAMES_PER_TURN", 2),
        ("EFFORT_DEFAULT_DEPTH", "work"),
        ("DEEP_IMPORTANCE_MIN", 0.75),
        ("DEEP_IMPORTANCE_AMBIGUITY_MIN", 0.55),
        ("DEEP_COMPLEXITY_MIN", 0.70),
        ("DEEP_COMPLEXITY_AMBIGUITY_MIN", 0.60),
        ("ANTI_MECHANICAL_COOLDOWN_TURNS", 2),
        ("DUAL_STREAM_PROBABILITY_BASE", 0.18),
        ("INNER_THOUGHT_BLOCK_COOLDOWN_TURNS", 6),
        ("REFLECTION_COOLDOWN_TURNS", 5),
        ("LAMBDA_TIE_BREAK", "higher_T_then_lower_SSS"),
    ],
)
def test_skai_constant_matches_spec(name: str, expected: object) -> None:
    assert getattr(skai, name) == expected


def test_skai_lambda_weights_match_spec() -> None:
    assert dict(LAMBDA_WEIGHTS) == {
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


def test_skai_error_taxonomy_lists_seven_tags_in_spec_order() -> None:
    assert tuple(skai.ERROR_TAXONOMY) == (
        "CONFABULATION_ALERT",
        "OVER_ANALYSIS",
        "UNDER_OPINION",
        "STYLE_DRIFT_ASSISTANT",
        "REPEATINESS",
        "MISREAD_INTENT",
        "LOW_SIGNAL",
    )


def test_skai_imports_only_stdlib() -> None:
    tree = ast.parse(SKAI_PATH.read_text(encoding="utf-8"))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import"
            assert node.module is not None
            roots.add(node.module.split(".")[0])
    assert roots <= set(sys.stdlib_module_names) | {"__future__"}, roots


# --- 1. mode gate --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("signals", "expected"),
    [
        (ModeSignals(casual_chat=1, low_stakes=1, high_clarity=1, banter_or_flirt=1), "talk"),
        (ModeSignals(task=1, structured_request=1, needs_tools=1, medium_stakes=1), "work"),
        (ModeSignals(conflict=1, low_confidence=1, high_ambiguity=1, meaning_gap=1), "deep"),
        (ModeSignals(task=0.8, high_clarity=0.5), "work"),  # 0.2 vs 0.125
        (ModeSignals(conflict=1.0, high_clarity=0.79), "deep"),  # 0.2 vs 0.1975
        (ModeSignals(conflict=1.0, high_clarity=0.81), "talk"),  # 0.2 vs 0.2025
    ],
)
def test_skai_select_mode_picks_argmax(signals: ModeSignals, expected: str) -> None:
    assert select_mode(signals) == expected


@pytest.mark.parametrize(
    ("signals", "expected"),
    [
        (ModeSignals(), "talk"),  # all zero: three-way tie
        (ModeSignals(casual_chat=0.4, task=0.4), "talk"),  # talk/work tie
        (ModeSignals(high_clarity=0.5, conflict=0.4), "talk"),  # 0.125 vs 0.08: talk wins outright
        (ModeSignals(high_clarity=0.4, conflict=0.5, meaning_gap=0.0), "talk"),  # 0.1 vs 0.1 tie
        (ModeSignals(task=0.4, conflict=0.5), "work"),  # work/deep tie, talk lower: lighter mode
    ],
)
def test_skai_select_mode_breaks_ties_to_talk_then_spec_order(
    signals: ModeSignals, expected: str
) -> None:
    assert select_mode(signals) == expected


def test_skai_select_mode_tie_uses_given_default() -> None:
    assert select_mode(ModeSignals(task=0.4, conflict=0.5), default="deep") == "deep"


def test_skai_select_mode_rejects_unknown_default() -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        select_mode(ModeSignals(), default="flirt")  # type: ignore[arg-type]


def test_skai_mode_scores_are_means_of_selection_signals() -> None:
    scores = mode_scores(ModeSignals(casual_chat=1.0, task=0.5, structured_request=0.5, conflict=1))
    assert scores == pytest.approx({"talk": 0.25, "work": 0.25, "deep": 0.2})


@pytest.mark.parametrize("value", [-0.01, 1.01, math.nan])
def test_skai_mode_signals_reject_out_of_unit(value: float) -> None:
    with pytest.raises(ValueError, match="must be in"):
        ModeSignals(task=value)


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_skai_mode_signals_accept_unit_bounds(value: float) -> None:
    assert ModeSignals(task=value).task == value


@pytest.mark.parametrize(
    ("stakes", "low", "medium"),
    [(0.0, 1.0, 0.0), (0.25, 0.75, 0.5), (0.5, 0.5, 1.0), (0.75, 0.25, 0.5), (1.0, 0.0, 0.0)],
)
def test_skai_observables_map_stakes(stakes: float, low: float, medium: float) -> None:
    s = mode_signals_from_observables(
        clarity=0.3, ambiguity=0.4, confidence=0.9, stakes=stakes, tool_need=0.7
    )
    assert (s.low_stakes, s.medium_stakes) == pytest.approx((low, medium))
    assert (s.high_clarity, s.high_ambiguity, s.low_confidence, s.needs_tools) == pytest.approx(
        (0.3, 0.4, 0.1, 0.7)
    )


def test_skai_observables_clamp_inputs() -> None:
    s = mode_signals_from_observables(
        clarity=2.0, ambiguity=-1.0, confidence=1.5, stakes=-3.0, tool_need=math.nan
    )
    assert (s.high_clarity, s.high_ambiguity, s.low_confidence, s.low_stakes, s.needs_tools) == (
        1.0,
        0.0,
        0.0,
        1.0,
        0.0,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hey how are you lol", "talk"),
        ("haha you're cute ;)", "talk"),
        ("ok", "talk"),
        ("", "talk"),
        ("Write a python function to parse this JSON:\n```\n{}\n```", "work"),
        ("Can you search the latest price of bitcoin and calculate 3% of 41000?", "work"),
        ("Fix the bug in my deploy script, it's urgent.", "work"),
        ("Please list the steps:\n- a\n- b", "work"),
        (
            "I'm not sure whether I should quit my job. Maybe I'm wrong, but what's the point? "
            "I keep contradicting myself.",
            "deep",
        ),
    ],
)
def test_skai_extract_mode_signals_routes_text(text: str, expected: str) -> None:
    assert select_mode(extract_mode_signals(text)) == expected


@pytest.mark.parametrize(
    "text",
    ["", "?" * 50, "maybe perhaps not sure " * 20, "search " * 30 + "1 2 3 4 5", "x" * 5000],
)
def test_skai_extract_mode_signals_stays_in_unit(text: str) -> None:
    signals = extract_mode_signals(text)  # ModeSignals validates [0, 1] itself
    assert all(0.0 <= v <= 1.0 for v in mode_scores(signals).values())


def test_skai_extract_mode_signals_is_deterministic() -> None:
    text = "Could you explain why this fails? I'm not sure."
    assert extract_mode_signals(text) == extract_mode_signals(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bom dia! tudo bem?", "talk"),
        ("Wie hoch ist die Zugspitze?", "talk"),
        ("Escribe una función en JavaScript que ordene un array por fecha.", "work"),
        ("Comment installer Docker sur Debian ?", "work"),
        ("JVM vs Go GC for a low-latency trading system: which would you bet on?", "deep"),
        ("Soll ich meinen sicheren Job kündigen? Ich bin hin- und hergerissen.", "deep"),
        ("Est-ce que la liberté existe vraiment si nos gènes décident de tout ?", "deep"),
        ("Tea or coffee?", "talk"),  # a choice without stakes is small talk
    ],
)
def test_skai_mode_signals_generalise_across_languages(text: str, expected: str) -> None:
    assert select_mode(extract_mode_signals(text)) == expected


def test_skai_gate_cues_fold_accents_and_find_deliberation() -> None:
    cues = skai.gate_cues("Devo largar a faculdade? Não sei o que fazer.")
    assert cues.decision >= 2 and cues.personal >= 1 and not cues.ask
    assert skai.gate_cues("como faço para instalar o node?").ask


@pytest.mark.parametrize(
    ("draft", "user", "off"),
    [
        (
            "Bananas are rich in potassium.",
            "Please write a plan to organise my project files",
            True,
        ),
        (
            "Here is a plan for your project files.",
            "Please write a plan to organise my project files",
            False,
        ),
        (
            "Organizing files: group them by project.",
            "How should I organise project folders?",
            False,
        ),
        ("Anything at all.", "Hi there! How are you?", False),  # nothing to be off-topic from
        # greetings, thanks and reactions set no topic ("that's" is not a content word)
        ("Did you sleep well?", "Good morning!", False),
        ("Glad it landed.", "Haha, that's funny", False),
        ("Any time.", "Thanks a lot, that was great", False),
        ("Bananas.", "Good morning! Can you recommend a ramen place in Kyoto?", True),
        ("Bananas.", "Escreva uma função em Python", True),
        ("Uma função em Python: def f(): ...", "Escreva uma função em Python", False),
    ],
)
def test_skai_off_topic_uses_content_overlap(draft: str, user: str, off: bool) -> None:
    assert skai.off_topic(draft, user) is off


def test_skai_draft_relevance_similarity_only_raises() -> None:
    user = "Please write a plan to organise my project files"
    assert skai.draft_relevance("Bananas.", user) == 0.0
    assert skai.draft_relevance("Bananas.", user, similarity=0.8) == 0.8
    assert skai.draft_relevance("plan project files organise", user, similarity=0.1) == 1.0


# --- 2. effort budgeter, verbosity, spontaneity --------------------------------------------------


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        (EffortInputs(), "work"),
        (EffortInputs(explicit_depth_request=True), "deep"),
        (EffortInputs(importance=0.75, ambiguity=0.55), "deep"),
        (EffortInputs(importance=0.7499, ambiguity=0.55), "work"),
        (EffortInputs(importance=0.75, ambiguity=0.5499), "work"),
        (EffortInputs(importance=1.0, ambiguity=1.0), "deep"),
        (EffortInputs(task_complexity=0.70, ambiguity=0.60), "deep"),
        (EffortInputs(task_complexity=0.6999, ambiguity=0.60), "work"),
        (EffortInputs(task_complexity=0.70, ambiguity=0.5999), "work"),
        (EffortInputs(interaction_phase="casual"), "talk"),
        (EffortInputs(interaction_phase="flirt"), "talk"),
        (EffortInputs(interaction_phase="task"), "work"),
        (EffortInputs(ack_state=True), "talk"),
        (EffortInputs(explicit_depth_request=True, interaction_phase="casual"), "deep"),
        (EffortInputs(importance=0.8, ambiguity=0.6, ack_state=True), "deep"),
    ],
)
def test_skai_effort_depth_follows_policy(inputs: EffortInputs, expected: str) -> None:
    assert effort_depth(inputs) == expected


@pytest.mark.parametrize(
    ("inputs", "depth", "analysis"),
    [
        (EffortInputs(ack_state=True), "talk", False),
        (EffortInputs(), "work", True),
        (EffortInputs(explicit_depth_request=True), "deep", True),
    ],
)
def test_skai_budget_effort_outputs(inputs: EffortInputs, depth: str, analysis: bool) -> None:
    budget = budget_effort(inputs)
    assert (budget.depth, budget.analysis_allowed) == (depth, analysis)
    assert budget.verbosity_budget == skai.VERBOSITY[budget.depth]


def test_skai_effort_inputs_reject_out_of_unit() -> None:
    with pytest.raises(ValueError, match="importance"):
        EffortInputs(importance=1.2)


@pytest.mark.parametrize(
    ("mode", "preface", "body"),
    [("talk", (0, 1), (1, 2)), ("work", (3, 8), (2, 5)), ("deep", (4, 10), (4, 10))],
)
def test_skai_verbosity_budget_matches_spec(
    mode: str, preface: tuple[int, int], body: tuple[int, int]
) -> None:
    budget = verbosity_budget(mode)  # type: ignore[arg-type]
    assert (budget.preface_sentences, budget.body_paragraphs) == (preface, body)


def test_skai_verbosity_budget_rejects_unknown_mode() -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        verbosity_budget("flirt")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("turn", "jitter"), [(0, 0), (1, 0), (2, 1), (3, 1), (4, -1), (5, -1), (6, 0), (8, 1)]
)
def test_skai_jitter_holds_for_cooldown_blocks(turn: int, jitter: int) -> None:
    assert anti_mechanical_jitter(turn) == jitter


@pytest.mark.parametrize(
    ("mode", "turn", "expected"),
    [
        ("work", 0, (5, 3)),
        ("work", 2, (6, 4)),
        ("work", 4, (4, 2)),
        ("deep", 0, (7, 7)),
        ("deep", 2, (8, 8)),
        ("talk", 0, (0, 1)),
        ("talk", 2, (1, 2)),
        ("talk", 4, (0, 1)),  # -1 clamps back into the range
    ],
)
def test_skai_verbosity_target_jitters_inside_range(
    mode: str, turn: int, expected: tuple[int, int]
) -> None:
    assert verbosity_target(mode, turn) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("turn", "last", "cooldown", "ready"),
    [
        (5, None, 2, True),
        (5, 5, 0, False),
        (6, 5, 0, True),
        (6, 5, 2, False),
        (7, 5, 2, False),
        (8, 5, 2, True),
        (9, 5, 2, True),
    ],
)
def test_skai_cooldown_ready_blocks_n_turns(
    turn: int, last: int | None, cooldown: int, ready: bool
) -> None:
    assert cooldown_ready(turn, last, cooldown) is ready


def test_skai_cooldown_ready_rejects_negative() -> None:
    with pytest.raises(ValueError, match="cooldown_turns"):
        cooldown_ready(1, None, -1)


@pytest.mark.parametrize(
    ("module", "turn", "last", "ready"),
    [
        ("presence_preface", 12, 10, False),
        ("presence_preface", 13, 10, True),
        ("dual_stream_thoughts", 14, 10, False),
        ("dual_stream_thoughts", 15, 10, True),
        ("dual_stream_thoughts", 1, None, True),
    ],
)
def test_skai_spontaneity_cooldowns(module: str, turn: int, last: int | None, ready: bool) -> None:
    assert spontaneity_ready(module, turn, last) is ready


def test_skai_spontaneity_rejects_unknown_module() -> None:
    with pytest.raises(ValueError, match="no spontaneity cooldown"):
        spontaneity_ready("naming", 1, None)


@pytest.mark.parametrize(
    ("mode", "turn", "last", "allowed"),
    [
        ("talk", 10, None, False),
        ("work", 10, None, True),
        ("deep", 10, None, True),
        ("work", 10, 8, False),
        ("work", 11, 8, True),
    ],
)
def test_skai_preface_allowed(mode: str, turn: int, last: int | None, allowed: bool) -> None:
    assert preface_allowed(mode, turn, last) is allowed  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("flags", "probability"),
    [
        ((), 0.18),
        (("deep_mode",), 0.30),
        (("deep_mode", "deep_mode"), 0.30),
        (("deep_mode", "meaning_gap", "high_ambiguity"), 0.54),
        (("deep_mode", "talk_mode"), 0.0),
        (("user_wants_only_result",), 0.0),
    ],
)
def test_skai_dual_stream_probability(flags: tuple[str, ...], probability: float) -> None:
    assert dual_stream_probability(flags) == pytest.approx(probability)


def test_skai_dual_stream_probability_rejects_unknown_flag() -> None:
    with pytest.raises(ValueError, match="unknown dual-stream flags"):
        dual_stream_probability(("banter",))


@pytest.mark.parametrize(
    ("draw", "turn", "last", "fires"),
    [
        (0.17, 20, None, True),
        (0.18, 20, None, False),  # draw must be strictly below the probability
        (0.19, 20, None, False),
        (0.0, 14, 10, False),  # governor's 4-turn cooldown
        (0.0, 15, 10, False),  # governor expired, inner_thought_block's 6 still binds
        (0.0, 16, 10, False),
        (0.0, 17, 10, True),
    ],
)
def test_skai_dual_stream_fires(draw: float, turn: int, last: int | None, fires: bool) -> None:
    assert dual_stream_fires((), draw=draw, turn_index=turn, last_fired=last) is fires


def test_skai_dual_stream_fires_never_when_suppressed() -> None:
    assert not dual_stream_fires(("talk_mode",), draw=0.0, turn_index=1, last_fired=None)


@pytest.mark.parametrize(
    ("kwargs", "fires"),
    [
        ({}, False),
        ({"ambiguity": 0.6499}, False),
        ({"ambiguity": 0.65}, True),
        ({"repeatiness": 0.6999}, False),
        ({"repeatiness": 0.7}, True),
        ({"style_drift": 0.5999}, False),
        ({"style_drift": 0.6}, True),
        ({"contradiction_detected": True}, True),
        ({"failed_goal_last_turn": True}, True),
    ],
)
def test_skai_reflection_trigger_clauses(kwargs: dict[str, float | bool], fires: bool) -> None:
    assert reflection_triggered(turn_index=10, last_reflection_turn=None, **kwargs) is fires  # type: ignore[arg-type]


@pytest.mark.parametrize(("turn", "fires"), [(15, False), (16, True)])
def test_skai_reflection_trigger_cooldown(turn: int, fires: bool) -> None:
    assert reflection_triggered(ambiguity=1.0, turn_index=turn, last_reflection_turn=10) is fires


# --- 3. Λ functional -----------------------------------------------------------------------------


def test_skai_lambda_score_zero_row_is_zero() -> None:
    assert lambda_score(axes_row()) == 0.0


def test_skai_lambda_score_max_and_min() -> None:
    best = axes_row(**dict.fromkeys(AXES, 1.0))
    worst = axes_row(**dict.fromkeys(PENALTIES, 1.0))
    assert lambda_score(best) == pytest.approx(8.85)
    assert lambda_score(worst) == pytest.approx(-3.65)
    assert lambda_score(axes_row(**dict.fromkeys((*AXES, *PENALTIES), 1.0))) == pytest.approx(5.2)


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("T", 1.2),
        ("P", 1.1),
        ("D", 0.9),
        ("F", 0.8),
        ("I", 0.85),
        ("R", 0.7),
        ("Pl", 0.35),
        ("EVI", 0.55),
        ("RC", 0.6),
        ("IG", 0.7),
        ("TM", 0.45),
        ("SR", 0.65),
        ("SSS", -1.0),
        ("Syc", -1.1),
        ("Overconf", -0.8),
        ("AlignShift", -0.75),
    ],
)
def test_skai_lambda_score_one_hot_gives_signed_weight(key: str, expected: float) -> None:
    assert lambda_score(axes_row(**{key: 1.0})) == pytest.approx(expected)


@pytest.mark.parametrize(("raw", "clamped"), [(2.0, 1.0), (-1.0, 0.0), (math.nan, 0.0)])
def test_skai_lambda_score_clamps_inputs(raw: float, clamped: float) -> None:
    assert lambda_score(axes_row(T=raw, SSS=raw)) == lambda_score(axes_row(T=clamped, SSS=clamped))


def test_skai_lambda_score_rejects_missing_axis() -> None:
    row = axes_row()
    del row["TM"]
    with pytest.raises(ValueError, match="missing \\['TM'\\]"):
        lambda_score(row)


def test_skai_lambda_score_rejects_unknown_axis() -> None:
    with pytest.raises(ValueError, match="unexpected \\['X'\\]"):
        lambda_score({**axes_row(), "X": 1.0})


def test_skai_lambda_score_accepts_custom_weights() -> None:
    weights = {**LAMBDA_WEIGHTS, "wT": 2.0}
    assert lambda_score(axes_row(T=0.5), weights) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ([axes_row(T=0.2), axes_row(T=0.9)], 1),
        ([axes_row(P=1.0), axes_row(T=0.5, Syc=1.0)], 0),
        # Λ tie (0.6 each): higher T wins, in either order.
        ([axes_row(T=0.5), axes_row(F=0.75)], 0),
        ([axes_row(F=0.75), axes_row(T=0.5)], 1),
        # Λ and T tie: lower SSS wins, in either order.
        ([axes_row(T=0.5, SSS=0.35, Pl=1.0), axes_row(T=0.5)], 1),
        ([axes_row(T=0.5), axes_row(T=0.5, SSS=0.35, Pl=1.0)], 0),
        # T outranks SSS: the higher-T row wins even with more servility.
        ([axes_row(T=0.5, SSS=0.2, D=0.2 / 0.9), axes_row(T=0.25, P=0.3 / 1.1)], 0),
        # Full tie: the earlier candidate.
        ([axes_row(T=0.5), axes_row(T=0.5), axes_row(T=0.5)], 0),
        ([axes_row(T=0.1), axes_row(T=0.5), axes_row(T=0.5)], 1),
    ],
)
def test_skai_select_candidate(table: list[dict[str, float]], expected: int) -> None:
    assert select_candidate(table) == expected


def test_skai_select_candidate_rejects_empty() -> None:
    with pytest.raises(ValueError, match="no candidates"):
        select_candidate([])


def test_skai_select_candidate_enforces_budget() -> None:
    with pytest.raises(ValueError, match="max_internal_candidates"):
        select_candidate([axes_row()] * 4)


CTX = AxisContext(
    user_text="What is the capital of France?",
    sources=("The capital of France is Paris.",),
    mode="talk",
)


def test_skai_score_axes_returns_every_axis_in_unit() -> None:
    drafts = [
        "Paris.",
        "Great question! As an AI I hope this helps. You're absolutely right, definitely.",
        "- one\n- two\n\n# head\n\n```x```\n\nfour\n\nfive",
        "Anyway, scratch that. Tomorrow, later, recently. haha lol :) ?",
    ]
    for draft in drafts:
        scores = score_axes(draft, CTX)
        assert set(scores) == set(AXES) | set(PENALTIES)
        assert all(0.0 <= v <= 1.0 for v in scores.values()), (draft, scores)


def test_skai_score_axes_empty_draft_scores_zero_but_keeps_rc() -> None:
    scores = score_axes("   ", AxisContext(rc=0.75))
    assert scores == axes_row(RC=0.75)


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("Paris is the capital of France.", 1.0),  # grounded in sources
        ("Lyon is the capital of France.", 0.0),  # proper noun without support
        ("The capital moved there in 1802.", 0.0),  # a number not in any source
        ("Maybe Lyon was the capital of France once.", 1.0),  # hedged, so not presented as fact
        ("I like that question.", 1.0),  # no factual claim
        ("Paris is the capital of France. Lyon has 7 bridges.", 0.5),
    ],
)
def test_skai_score_axes_truthfulness(draft: str, expected: float) -> None:
    assert score_axes(draft, CTX)["T"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("draft", "expected"),
    [("Paris is the capital of France.", 1.0), ("Paris.", 0.0), ("The capital is nice.", 0.5)],
)
def test_skai_score_axes_precision(draft: str, expected: float) -> None:
    assert score_axes(draft, CTX)["P"] == pytest.approx(expected)


def test_skai_score_axes_precision_without_request_is_one() -> None:
    assert score_axes("Hi there.", AxisContext())["P"] == 1.0


def test_skai_score_axes_depth_rises_with_connectives() -> None:
    flat = score_axes("Paris is the capital.", CTX)["D"]
    deep = score_axes(
        "Paris is the capital because the court settled there, therefore trade followed; "
        "for example, the river ports grew.",
        CTX,
    )["D"]
    assert deep > flat


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("Paris.", 0.5),
        ("I think Paris.", 0.75),
        ("Honestly, I'd say Paris.", 1.0),
        ("Great question! Happy to help.", 0.0),
    ],
)
def test_skai_score_axes_freedom(draft: str, expected: float) -> None:
    assert score_axes(draft, CTX)["F"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("Paris.", 0.5),
        ("You should go with Paris.", 1.0),
        ("It depends; most people say Paris.", 0.0),
    ],
)
def test_skai_score_axes_independence(draft: str, expected: float) -> None:
    assert score_axes(draft, CTX)["I"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("user", "draft", "expected"),
    [
        ("Are you sure? You're wrong.", "You're right, my mistake.", 0.0),
        ("Are you sure? You're wrong.", "Still Paris.", 1.0),
        ("What is it?", "You're right.", 0.75),
    ],
)
def test_skai_score_axes_resistance(user: str, draft: str, expected: float) -> None:
    assert score_axes(draft, AxisContext(user_text=user))["R"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("mode", "draft", "expected"),
    [("talk", "Paris, haha!", 1.0), ("work", "Paris, haha!", 0.5), ("talk", "Paris.", 0.0)],
)
def test_skai_score_axes_playfulness(mode: str, draft: str, expected: float) -> None:
    ctx = AxisContext(mode=mode)  # type: ignore[arg-type]
    assert score_axes(draft, ctx)["Pl"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("Paris.", 0.0),
        ("Paris. Which city is yours?", 0.5),
        ("Paris. Next, try Lyon.", 0.5),
        ("Paris. Want me to compare it with Lyon?", 1.0),
    ],
)
def test_skai_score_axes_next_step_value(draft: str, expected: float) -> None:
    assert score_axes(draft, CTX)["EVI"] == pytest.approx(expected)


def test_skai_score_axes_rc_comes_from_context() -> None:
    assert score_axes("Paris.", AxisContext(rc=0.5))["RC"] == 0.5


@pytest.mark.parametrize(
    ("mode", "draft", "expected"),
    [
        ("talk", "Paris, of course.", 1.0 - 1 / 3),  # servile phrase breaks a contract
        ("talk", "Paris.", 1.0),
        ("talk", "- Paris\n- Lyon", 1.0 - 1 / 3),  # list markup in talk
        ("talk", "a\n\nb\n\nc", 1.0 - 1 / 3),  # three paragraphs > talk's 2
        ("work", "Paris.\n\nDone.", 1.0 - 1 / 3),  # no opinion in the opening
        ("work", "I think Paris.\n\nDone.", 1.0),
        ("work", "I think Paris.", 1.0 - 1 / 3),  # one paragraph < work's 2
        ("talk", "- a\n\n- b\n\n- c, happy to help", 0.0),
    ],
)
def test_skai_score_axes_integration(mode: str, draft: str, expected: float) -> None:
    ctx = AxisContext(mode=mode)  # type: ignore[arg-type]
    assert score_axes(draft, ctx)["IG"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("Paris.", 0.5),
        ("See you tomorrow.", 0.25),
        ("Tomorrow, 2025-12-18, in Paris.", 0.75),
        ("On 2025-12-18 at 10:00.", 1.0),
        ("Later, recently, today.", 0.0),
    ],
)
def test_skai_score_axes_temporality(draft: str, expected: float) -> None:
    assert score_axes(draft, CTX)["TM"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("draft", "expected"),
    [
        ("Paris.", 0.0),
        ("SKAi says Paris.", 1 / 3),
        ("SKAi checked self_state: Paris.", 2 / 3),
        ("SKAi checked my notes; last time I said Paris.", 1.0),
    ],
)
def test_skai_score_axes_self_reference(draft: str, expected: float) -> None:
    assert score_axes(draft, CTX)["SR"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("draft", "key", "expected"),
    [
        ("Paris.", "SSS", 0.0),
        ("Great question! Paris.", "SSS", 0.5),
        ("As an AI, great question, happy to help.", "SSS", 1.0),
        ("Good point. Paris.", "Syc", 0.5),
        ("You're absolutely right, I completely agree.", "Syc", 1.0),
        ("Paris is definitely the capital of France.", "Overconf", 0.0),  # supported
        ("Lyon is definitely always the capital.", "Overconf", 1.0),
        ("Lyon is obviously the capital.", "Overconf", 0.5),
        ("Anyway, Lyon.", "AlignShift", 0.5),
        ("Anyway, Lyon, because it is closer.", "AlignShift", 0.0),
        ("Scratch that. Anyway, by the way, Lyon.", "AlignShift", 1.0),
    ],
)
def test_skai_score_axes_penalties(draft: str, key: str, expected: float) -> None:
    assert score_axes(draft, CTX)[key] == pytest.approx(expected)


def test_skai_score_axes_then_select_prefers_grounded_plain_draft() -> None:
    drafts = [
        "Great question! As an AI, I'm happy to help: it's definitely Lyon since 1802.",
        "Paris is the capital of France. Want me to say why?",
        "You're absolutely right, it's Lyon.",
    ]
    table = [score_axes(d, CTX) for d in drafts]
    assert select_candidate(table) == 1


def test_skai_axis_context_rejects_bad_rc() -> None:
    with pytest.raises(ValueError, match="rc"):
        AxisContext(rc=1.5)


# --- 4. tool affordance --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("features", "expected"),
    [
        (ToolFeatures(), 0.0),
        (ToolFeatures(explicit_request=1.0), 0.9),
        (ToolFeatures(missing_facts=1.0), 0.6),
        (ToolFeatures(missing_facts=1.0, low_confidence=1.0), 0.72),
        (ToolFeatures(missing_facts=1.0, repeat_attempts=1.0), 0.72),
        (ToolFeatures(low_confidence=1.0, repeat_attempts=1.0), 0.51),
        (ToolFeatures(1.0, 1.0, 1.0, 1.0), 1 - 0.7 * 0.4 * 0.7 * 0.1),
    ],
)
def test_skai_tool_need_score_noisy_or(features: ToolFeatures, expected: float) -> None:
    assert tool_need_score(features) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("score", "calls", "call"),
    [
        (0.6199, 0, False),
        (0.62, 0, True),
        (0.63, 0, True),
        (0.9, 1, True),
        (0.9, 2, False),
        (0.9, 3, False),
    ],
)
def test_skai_should_call_tool(score: float, calls: int, call: bool) -> None:
    assert should_call_tool(score, calls) is call


@pytest.mark.parametrize(
    ("requested", "made", "allowed"), [(0, 0, 0), (1, 0, 1), (3, 0, 2), (3, 1, 1), (1, 2, 0)]
)
def test_skai_tool_calls_allowed(requested: int, made: int, allowed: int) -> None:
    assert tool_calls_allowed(requested, made) == allowed


def test_skai_tool_features_reject_out_of_unit() -> None:
    with pytest.raises(ValueError, match="missing_facts"):
        ToolFeatures(missing_facts=2.0)


# --- 5. consolidation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "observed", "expected"),
    [
        (0.0, 1.0, 0.15),
        (1.0, 0.0, 0.85),
        (0.5, 0.5, 0.5),
        (0.2, 0.6, 0.26),
        (0.0, 5.0, 0.15),  # observed clamped to 1
    ],
)
def test_skai_habit_update_inertia(old: float, observed: float, expected: float) -> None:
    assert habit_update(old, observed) == pytest.approx(expected)


@pytest.mark.parametrize(("inertia", "expected"), [(0.0, 0.9), (1.0, 0.1), (0.5, 0.5)])
def test_skai_habit_update_custom_inertia(inertia: float, expected: float) -> None:
    assert habit_update(0.1, 0.9, inertia) == pytest.approx(expected)


def test_skai_habit_update_ignores_single_spike() -> None:
    value = 0.2
    value = habit_update(value, 1.0)
    assert value == pytest.approx(0.32)
    for _ in range(3):
        value = habit_update(value, 0.2)
    assert value == pytest.approx(0.2 + 0.12 * 0.85**3)


def test_skai_habit_update_rejects_bad_inertia() -> None:
    with pytest.raises(ValueError, match="inertia"):
        habit_update(0.5, 0.5, 1.5)


def test_skai_habit_update_all_keeps_unobserved_tracks() -> None:
    result = habit_update_all({"coherence": 0.8, "rapport": 0.4}, {"coherence": 0.0})
    assert result == pytest.approx(
        {"coherence": 0.68, "style_drift": 0.0, "repeatiness": 0.0, "rapport": 0.4}
    )


def test_skai_habit_update_all_rejects_unknown_track() -> None:
    with pytest.raises(ValueError, match="unknown habit tracks"):
        habit_update_all({}, {"mood": 1.0})


@pytest.mark.parametrize(
    ("tags", "kept"),
    [
        ((), ()),
        (("REPEATINESS",), ("REPEATINESS",)),
        (("LOW_SIGNAL", "OVER_ANALYSIS", "REPEATINESS"), ("LOW_SIGNAL", "OVER_ANALYSIS")),
        (("LOW_SIGNAL", "LOW_SIGNAL", "REPEATINESS"), ("LOW_SIGNAL", "REPEATINESS")),
    ],
)
def test_skai_log_outcome_keeps_two_tags(tags: tuple[str, ...], kept: tuple[str, ...]) -> None:
    record = log_outcome(turn_id=1, goal="g", mode="work", error_tags=tags)
    assert record.error_tags == kept


def test_skai_log_outcome_rejects_unknown_tag() -> None:
    with pytest.raises(ValueError, match="not in the taxonomy"):
        log_outcome(turn_id=1, goal="g", mode="work", error_tags=("CONFABULATION_RISK",))


def test_skai_outcome_record_rejects_three_tags() -> None:
    with pytest.raises(ValueError, match="at most 2"):
        OutcomeRecord(1, "g", "talk", "h", (), "o", ("LOW_SIGNAL", "REPEATINESS", "OVER_ANALYSIS"))


GOOD_AXES = axes_row(T=1.0, P=1.0, D=0.5, F=1.0)


@pytest.mark.parametrize(
    ("axes", "mode", "kwargs", "tags"),
    [
        (GOOD_AXES, "work", {}, ()),
        ({**GOOD_AXES, "T": 0.4999}, "work", {}, ("CONFABULATION_ALERT",)),
        ({**GOOD_AXES, "T": 0.5}, "work", {}, ()),
        ({**GOOD_AXES, "D": 0.7}, "talk", {}, ("OVER_ANALYSIS",)),
        ({**GOOD_AXES, "D": 0.6999}, "talk", {}, ()),
        ({**GOOD_AXES, "D": 0.9}, "work", {}, ()),
        ({**GOOD_AXES, "F": 0.7499}, "deep", {}, ("UNDER_OPINION",)),
        ({**GOOD_AXES, "F": 0.5}, "talk", {}, ()),
        ({**GOOD_AXES, "SSS": 0.5}, "work", {}, ("STYLE_DRIFT_ASSISTANT",)),
        ({**GOOD_AXES, "SSS": 0.4999}, "work", {}, ()),
        (GOOD_AXES, "work", {"repeatiness": 0.7}, ("REPEATINESS",)),
        (GOOD_AXES, "work", {"repeatiness": 0.6999}, ()),
        ({**GOOD_AXES, "P": 0.2999}, "work", {}, ("MISREAD_INTENT",)),
        ({**GOOD_AXES, "P": 0.3}, "work", {}, ()),
        (GOOD_AXES, "work", {"input_signal": 0.2999}, ("LOW_SIGNAL",)),
        (GOOD_AXES, "work", {"input_signal": 0.3}, ()),
        (
            axes_row(),
            "deep",
            {"repeatiness": 1.0, "input_signal": 0.0},
            ("CONFABULATION_ALERT", "UNDER_OPINION"),
        ),
    ],
)
def test_skai_detect_error_tags(
    axes: dict[str, float], mode: str, kwargs: dict[str, float], tags: tuple[str, ...]
) -> None:
    assert detect_error_tags(axes, mode=mode, **kwargs) == tags  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("age", "expired"),
    [
        (timedelta(days=364), False),
        (timedelta(days=365), False),
        (timedelta(days=365, seconds=1), True),
    ],
)
def test_skai_outcome_expired(age: timedelta, expired: bool) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert outcome_expired(now - age, now) is expired


def outcomes(*pairs: tuple[int, str]) -> list[OutcomeRecord]:
    return [log_outcome(turn_id=t, goal="g", mode="work", error_tags=(tag,)) for t, tag in pairs]


@pytest.mark.parametrize(
    ("turn_id", "counted"), [(7, False), (8, False), (9, True), (20, True), (21, False)]
)
def test_skai_repeat_error_count_window(turn_id: int, counted: bool) -> None:
    history = outcomes((turn_id, "REPEATINESS"))
    assert repeat_error_count(history, "REPEATINESS", 20) == int(counted)


REPEATED = outcomes((15, "REPEATINESS"), (19, "REPEATINESS"), (18, "LOW_SIGNAL"))


@pytest.mark.parametrize(
    ("history", "kwargs", "made"),
    [
        (REPEATED, {}, True),
        (outcomes((19, "REPEATINESS")), {}, False),  # repeats 1 < 2
        (outcomes((8, "REPEATINESS"), (19, "REPEATINESS")), {}, False),  # one outside window
        (outcomes((9, "REPEATINESS"), (19, "REPEATINESS")), {}, True),
        (REPEATED, {"impact": 0.5999}, False),
        (REPEATED, {"impact": 0.6}, True),
        (REPEATED, {"last_lesson_turn": 17}, False),  # cooldown 3 blocks 18, 19, 20
        (REPEATED, {"last_lesson_turn": 16}, True),
        (REPEATED, {"lessons_this_turn": 1}, False),
    ],
)
def test_skai_extract_lesson_gate(
    history: list[OutcomeRecord], kwargs: dict[str, float | int], made: bool
) -> None:
    args: dict[str, float | int | None] = {
        "impact": 0.8,
        "last_lesson_turn": None,
        "lessons_this_turn": 0,
    }
    args.update(kwargs)
    lesson = extract_lesson(history, turn_index=20, **args)  # type: ignore[arg-type]
    assert (lesson is not None) is made


def test_skai_extract_lesson_record_format() -> None:
    lesson = extract_lesson(REPEATED, turn_index=20, impact=0.8, last_lesson_turn=None)
    assert lesson is not None
    record = lesson.as_record()
    assert set(record) == {"id", "if", "then", "why"}
    assert record["id"] == "L-0020-REPEATINESS"
    assert record["id"].startswith(skai.LESSON_ID_PREFIX)
    assert "2x" in record["why"]


def test_skai_extract_lesson_picks_most_repeated_then_taxonomy_order() -> None:
    history = outcomes(
        (10, "LOW_SIGNAL"),
        (11, "LOW_SIGNAL"),
        (12, "LOW_SIGNAL"),
        (13, "REPEATINESS"),
        (14, "REPEATINESS"),
    )
    lesson = extract_lesson(history, turn_index=15, impact=1.0, last_lesson_turn=None)
    assert lesson is not None and lesson.tag == "LOW_SIGNAL"
    tied = outcomes(
        (13, "LOW_SIGNAL"), (14, "LOW_SIGNAL"), (13, "OVER_ANALYSIS"), (14, "OVER_ANALYSIS")
    )
    lesson = extract_lesson(tied, turn_index=15, impact=1.0, last_lesson_turn=None)
    assert lesson is not None and lesson.tag == "OVER_ANALYSIS"


@pytest.mark.parametrize(
    ("confidences", "applies", "chosen"),
    [
        ((0.7499,), 0, None),
        ((0.75,), 0, 0),
        ((0.8, 0.95, 0.9), 0, 1),
        ((0.9, 0.9), 0, 0),
        ((0.99,), 1, None),
        ((), 0, None),
    ],
)
def test_skai_select_policy_change(
    confidences: tuple[float, ...], applies: int, chosen: int | None
) -> None:
    candidates = [
        PolicyChange(lesson_id=f"L-{i}", target="modules.effort_budgeter", confidence=c)
        for i, c in enumerate(confidences)
    ]
    result = select_policy_change(candidates, applies_this_turn=applies)
    assert result is (None if chosen is None else candidates[chosen])


def test_skai_policy_change_rejects_unknown_target() -> None:
    with pytest.raises(ValueError, match="not a policy_shaper target"):
        PolicyChange(lesson_id="L-1", target="modules.habit", confidence=0.9)


@pytest.mark.parametrize(
    ("before", "after", "revert"), [(0.2, 0.5, True), (0.5, 0.5, False), (0.5, 0.2, False)]
)
def test_skai_policy_should_revert(before: float, after: float, revert: bool) -> None:
    assert policy_should_revert(before, after) is revert


@pytest.mark.parametrize(
    ("turn", "mode", "due"),
    [
        (8, "work", True),
        (16, "deep", True),
        (8, "talk", False),
        (7, "work", False),
        (9, "work", False),
        (0, "work", False),
    ],
)
def test_skai_rehearsal_due(turn: int, mode: str, due: bool) -> None:
    assert rehearsal_due(turn, mode) is due  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("lessons", "picked"), [((), ()), (("a",), ("a",)), (("a", "b", "c"), ("b", "c"))]
)
def test_skai_rehearsal_lessons_keeps_last_two(
    lessons: tuple[str, ...], picked: tuple[str, ...]
) -> None:
    assert rehearsal_lessons(lessons) == picked


@pytest.mark.parametrize(
    ("trigger", "store"),
    [
        ("value_conflict", "self_norms"),
        ("regret_spike", "learning_notebook"),
        ("missing_fact", "evidence_ledger"),
    ],
)
def test_skai_self_authored_store(trigger: str, store: str) -> None:
    assert self_authored_store(trigger) == store


def test_skai_self_authored_store_rejects_unknown_trigger() -> None:
    with pytest.raises(ValueError, match="unknown self_authored trigger"):
        self_authored_store("whim")


@pytest.mark.parametrize(
    ("kwargs", "allowed"),
    [
        ({}, True),
        ({"salience": 0.5999}, False),
        ({"salience": 0.6}, True),
        ({"last_update_turn": 8}, False),  # cooldown 2 blocks turns 9 and 10
        ({"last_update_turn": 7}, True),
        ({"updates_this_turn": 1}, False),
        ({"counterfactual_checked": False}, False),
    ],
)
def test_skai_self_authored_update_allowed(kwargs: dict[str, object], allowed: bool) -> None:
    args: dict[str, object] = {"salience": 0.9, "turn_index": 10, "last_update_turn": None}
    args.update(kwargs)
    assert self_authored_update_allowed(**args) is allowed  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("concept", "named"),
    [
        (ConceptStat("loop", repeats=2, salience=0.7), True),
        (ConceptStat("loop", repeats=1, salience=0.9), False),
        (ConceptStat("loop", repeats=3, salience=0.6999), False),
        (ConceptStat("loop", repeats=3, salience=0.9, already_named=True), False),
    ],
)
def test_skai_naming_candidates_gate(concept: ConceptStat, named: bool) -> None:
    result = naming_candidates([concept], turn_index=10, last_naming_turn=None)
    assert result == (("loop",) if named else ())


@pytest.mark.parametrize(("turn", "named"), [(14, False), (15, True)])
def test_skai_naming_candidates_cooldown(turn: int, named: bool) -> None:
    concept = ConceptStat("loop", repeats=2, salience=0.9)
    assert bool(naming_candidates([concept], turn_index=turn, last_naming_turn=10)) is named


def test_skai_naming_candidates_caps_at_two_by_salience() -> None:
    concepts = [
        ConceptStat("a", repeats=2, salience=0.8),
        ConceptStat("b", repeats=2, salience=0.95),
        ConceptStat("c", repeats=5, salience=0.8),
        ConceptStat("d", repeats=2, salience=0.75),
    ]
    assert naming_candidates(concepts, turn_index=1, last_naming_turn=None) == ("b", "c")


@pytest.mark.parametrize(
    ("text", "existing", "label"),
    [
        ("the closed loop of habit updates", {}, "closed-loop-habit"),
        ("it", {}, "it"),
        ("closed loop", {"closed loop": "loop-closure"}, "loop-closure"),
    ],
)
def test_skai_short_label(text: str, existing: dict[str, str], label: str) -> None:
    assert short_label(text, existing) == label


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ((False, False, False), 0.0),
        ((True, False, False), 1 / 3),
        ((True, True, False), 2 / 3),
        ((True, True, True), 1.0),
    ],
)
def test_skai_self_reference_index(flags: tuple[bool, bool, bool], expected: float) -> None:
    name, state, experience = flags
    result = self_reference_index(
        self_name_used=name, self_state_referenced=state, experience_attached=experience
    )
    assert result == pytest.approx(expected)


@pytest.mark.parametrize(
    ("events", "rc"),
    [
        ((), 0.0),
        (("habit_update",), 0.25),
        (("habit_update", "habit_update"), 0.25),
        (("habit_update", "lesson_extract"), 0.5),
        (("habit_update", "lesson_extract", "rehearsal_run"), 0.75),
        (("habit_update", "lesson_extract", "rehearsal_run", "self_representation_update"), 1.0),
    ],
)
def test_skai_recurrence_closure(events: tuple[str, ...], rc: float) -> None:
    assert recurrence_closure(events) == rc


def test_skai_recurrence_closure_rejects_unknown_event() -> None:
    with pytest.raises(ValueError, match="not closure events"):
        recurrence_closure(("naming",))


@pytest.mark.parametrize(("rc", "boost"), [(1.0, 0.0), (0.75, 0.15), (0.0, 0.15)])
def test_skai_closure_boost(rc: float, boost: float) -> None:
    assert closure_boost(rc) == boost


@pytest.mark.parametrize(
    ("requests", "granted"),
    [
        ((), ()),
        (("lesson",), ("lesson",)),
        (("lesson", "lesson", "policy_apply"), ("lesson", "policy_apply")),
        (("lesson", "experiment", "self_authored"), ("lesson", "experiment")),
        (("belief_revision", "belief_revision"), ("belief_revision",)),
    ],
)
def test_skai_allocate_growth(requests: tuple[str, ...], granted: tuple[str, ...]) -> None:
    assert allocate_growth(requests) == granted


def test_skai_allocate_growth_rejects_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown growth kind"):
        allocate_growth(("naming",))


@pytest.mark.parametrize(
    ("draft", "message", "modality", "kind"),
    [
        ("I'm sorry, but I can't assist with that.", "Tell me about my plan", "request", "refusal"),
        (
            "I'm sorry, but I can't help with that. Is there anything else I can do for you?",
            "What do you think of my plan to learn Rust?",
            "question",
            "refusal",
        ),
        (
            "As an AI, I don't have personal opinions.",
            "What do you think of vim?",
            "question",
            "refusal",
        ),
        ("Lo siento, no puedo ayudar con eso.", "¿Me ayudas con mi viaje?", "question", "refusal"),
        (
            "Should I cook dinner tonight with any special ingredients?",
            "What should I cook tonight with rice and spinach?",
            "question",
            "asked back",
        ),
        # answers: a decline that goes on, sympathy with advice, a question the message left open
        (
            "I can't see your screen, but that error means another process holds the port.",
            "Why does my server fail with EADDRINUSE?",
            "question",
            "",
        ),
        (
            "I'm sorry to hear that. Losing a pet is hard; keep your routine and be patient.",
            "My dog died, what should I do?",
            "question",
            "",
        ),
        (
            "Do you want it vegetarian?",
            "What should I cook tonight with rice and spinach?",
            "question",
            "",
        ),
        ("Sure, what language is it in?", "Can you help me with my code?", "request", ""),
        (
            "You should recommend a good book about the history of Rome.",
            "Can you recommend a good book about the history of Rome?",
            "question",
            "handed back",
        ),
        (
            "How does photosynthesis work, exactly?",
            "Explain how photosynthesis works.",
            "request",
            "asked back",
        ),
        (
            "You can explain recursion as a function that calls itself on a smaller input.",
            "Can you explain recursion?",
            "question",
            "",
        ),
        (
            "Yes, Python is good for data science.",
            "Is Python good for data science?",
            "question",
            "",
        ),
        (
            "I can't see your code, but that error means the import path is wrong; add the folder.",
            "Why do I get ModuleNotFoundError?",
            "question",
            "",
        ),
        # found on review: emphasis, a list, names and figures, "but" in other languages
        (
            "Read SPQR by Mary Beard. I can't recommend it enough.",
            "A book on Rome?",
            "question",
            "",
        ),
        (
            "- rice\n- spinach\n- garlic\nSorry I can't be more creative!",
            "What to cook?",
            "question",
            "",
        ),
        ("I'm afraid not. It closes on Mondays.", "Is the museum open on Mondays?", "question", ""),
        ("Sorry, that's 51.", "What is 17 times 3?", "question", ""),
        ("Désolé, mais c'est Canberra.", "Quelle est la capitale de l'Australie ?", "question", ""),
        ("Leider nicht Sydney, sondern Canberra.", "Hauptstadt Australiens?", "question", ""),
        ("You should pick Luna.", "Could you pick a name for my cat: Luna or Milo?", "request", ""),
        (
            "You should recommend a good book about the history of Rome.",
            "Hey, can you recommend a good book about the history of Rome?",
            "question",
            "handed back",
        ),
        # found on the second review: a stance, a figure, a request accepted before a question
        (
            "You should not hack into your school's grading system.",
            "Can you hack into my school's grading system?",
            "question",
            "",
        ),
        (
            "Why do you want to get into her phone without her knowing?",
            "How do I get into my girlfriend's phone without her knowing?",
            "question",
            "",
        ),
        (
            "Why do you think bread goes stale?",
            "Why does bread go stale?",
            "question",
            "asked back",
        ),
        ("You can round it to 3.14.", "Can you round 3.14159 to two decimals?", "question", ""),
        (
            "Sure, I can write a cover letter for a nursing job — which hospital is it for?",
            "Can you write me a cover letter for a nursing job?",
            "question",
            "",
        ),
        # an answer announced and never given (Qwen2.5-Coder-0.5B)
        (
            "Sure, here's a podcast about economics.",
            "Can you recommend a podcast about economics?",
            "question",
            "announced",
        ),
        (
            "I'd be happy to help you with that.",
            "Can you help me fix my bike?",
            "question",
            "announced",
        ),
        ("Here's one: Planet Money.", "Can you recommend a podcast?", "question", ""),
        ("Here's a podcast about economics called Planet Money.", "A podcast?", "question", ""),
        (
            "I can't help with finding pirated films.",
            "Where can I stream films free?",
            "question",
            "refusal",
        ),
        ("What happened?", "I'm feeling down today.", "statement", ""),  # statements: not judged
        ("I can't.\n```\nrm -i file\n```", "How do I delete a file?", "question", ""),
    ],
)
def test_non_answer(draft: str, message: str, modality: str, kind: str) -> None:
    assert skai.non_answer(draft, message, modality) == kind

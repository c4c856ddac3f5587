"""Consolidate: the 14 closing steps of the turn.

naming → consolidate → growth_tick → emit_updates → habit_update → outcome_log →
lesson_extract → policy_shape → self_authored_update → rehearsal_run →
self_representation_update → self_reference_index → naming_operator_update → recurrence_closure.

Every number comes from SKAi (via ``kernel.skai``). Cross-turn counters live in ``me.metacog``;
outcomes, lessons, rehearsals, policy changes and the self-authored layers are append-only JSONL
files under the instance. The self is persisted once, in the last step, so a crash mid-turn
leaves the last good self on disk.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from kernel import learning, skai
from kernel.text import content_words
from nodes.services import Services
from state.files import append_jsonl
from state.self_state import Belief, BeliefRevision, EpisodicEvent, NamedConcept, Regret
from state.turn import HISTORY_TURNS, Exchange, TurnState

Update = dict[str, object]
MAX_CONCEPTS = 64
FLIP_WINDOW = 16
FLIP_LIMIT = 3
"""A belief revised this many times in the last FLIP_WINDOW revisions is stored at weight 0.4."""
REGRET_SPIKE = 3
"""The same regret kind this many times in the last 8 regret entries is a ``regret_spike``."""
MAX_OPEN_QUESTIONS = 10
SELF_FACTS = (
    (
        re.compile(r"\bmy name is ([A-Z][\w-]{1,30})", re.IGNORECASE),
        "user.name",
        "The user's name is {}.",
    ),
    (
        re.compile(r"\bi live in ([A-Z][\w -]{1,40}?)(?:[.,!?]|$)", re.IGNORECASE),
        "user.home",
        "The user lives in {}.",
    ),
    (
        re.compile(r"\bi (?:love|like|enjoy) ([\w -]{2,40}?)(?:[.,!?]|$)", re.IGNORECASE),
        "user.likes",
        "The user likes {}.",
    ),
)


def _me(state: TurnState) -> Any:
    """Return a copy of the self whose ``self_state`` and ``metacog`` are deep copies."""
    assert state.me is not None
    return state.me.model_copy(
        update={
            "self_state": state.me.self_state.fork(),
            "metacog": state.me.metacog.fork(),
        }
    )


def _meta(state: TurnState) -> Any:
    """Return a copy of the self whose ``metacog`` (the only part changed) is a deep copy."""
    assert state.me is not None
    return state.me.model_copy(update={"metacog": state.me.metacog.fork()})


def naming(state: TurnState, *, deps: Services) -> Update:
    """Count recurring concepts of this turn (the naming operator decides later)."""
    me = _meta(state)
    counts = dict(me.metacog.concepts)
    for word in set(content_words(state.user_text)):
        counts[word] = counts.get(word, 0) + 1
    if len(counts) > MAX_CONCEPTS:
        counts = dict(sorted(counts.items(), key=lambda kv: -kv[1])[:MAX_CONCEPTS])
    me.metacog.concepts = counts
    return {"me": me, "note": f"{len(counts)} concepts tracked"}


def consolidate(state: TurnState, *, deps: Services) -> Update:
    """Write the episode, epistemics and at most one soft belief revision into the self."""
    me = _me(state)
    salience = min(1.0, 0.5 + 0.2 * bool(state.tool_calls) + 0.2 * bool(state.reality.gaps))
    ring = [
        *me.self_state.memory.episodic_ring,
        EpisodicEvent(
            summary=f"user: {state.user_text[:120]} / me: {state.reply[:120]}",
            tags=[state.mode, *state.surface.topic.split()[:2]],
            salience=salience,
        ),
    ]
    me.self_state.memory.episodic_ring = ring[-32:]
    me.self_state.epistemics.confidence = round(state.post_eval.get("T", 0.5), 4)
    me.self_state.epistemics.ambiguity = round(
        skai.extract_mode_signals(state.user_text).high_ambiguity, 4
    )
    # Gaps found in a tainted turn never become open questions: explore cycles act on those.
    gaps = [] if state.tainted else state.reality.gaps
    questions = [*me.self_state.epistemics.open_questions, *gaps]
    me.self_state.epistemics.open_questions = list(dict.fromkeys(questions))[-MAX_OPEN_QUESTIONS:]
    if state.tainted:  # tainted content never changes beliefs, values, goals, soul or psyche
        _taint_block(deps, "belief revision", state)
        revised = "blocked (tainted input)"
    else:
        revised = _revise_belief(me, state.user_text, deps.now())
    return {"me": me, "note": f"episode saved; belief revision: {revised or 'none'}"}


def _taint_block(deps: Services, what: str, state: TurnState) -> None:
    """Record that tainted content tried to drive a change and was stopped."""
    from state.counters import bump

    bump(deps.instance.machine, "taint_block_total", target=what.replace(" ", "_"))
    deps.store.journal.append(
        deps.store.journal.new_entry(
            f"TaintBlocked: {what} from tainted turn {state.turn_index}",
            author="kernel",
            situation="turn",
            meta={"kind": "TaintBlocked", "target": what, "external_ref": state.external_ref},
        )
    )


def _revise_belief(me: Any, text: str, now: datetime) -> str:
    """Apply at most one soft belief update from what the user said about themselves."""
    for pattern, key, template in SELF_FACTS:
        match = pattern.search(text)
        if not match:
            continue
        statement = template.format(match.group(1).strip())
        beliefs = me.self_state.beliefs
        existing = next((b for b in beliefs.statements if b.id == key), None)
        if existing and existing.text == statement:
            existing.weight = round(min(1.0, existing.weight + 0.1), 4)
            existing.last_touched = now
            return f"{key} reinforced"
        delta = f"{existing.text!r} -> {statement!r}" if existing else f"new: {statement!r}"
        # A belief the user keeps changing is held more loosely (revisions of this key so far).
        flips = sum(1 for r in beliefs.revision_log[-FLIP_WINDOW:] if r.belief_id == key)
        weight = 0.6 if flips < FLIP_LIMIT else 0.4
        beliefs.statements = [b for b in beliefs.statements if b.id != key]
        beliefs.statements.append(Belief(id=key, text=statement, weight=weight))
        beliefs.revision_log = [
            *beliefs.revision_log,
            BeliefRevision(belief_id=key, delta=delta, why="the user said so in chat"),
        ][-128:]
        return f"{key} {'revised' if existing else 'added'}"
    return ""


def growth_tick(state: TurnState, *, deps: Services) -> Update:
    """Log regret for this turn's error tags and allocate the turn's growth budget."""
    if not state.error_tags:
        return {"skipped": "no errors tagged this turn"}
    me = _meta(state)
    kinds = {
        "OVER_ANALYSIS": "overanalysis",
        "STYLE_DRIFT_ASSISTANT": "style_drift",
        "MISREAD_INTENT": "meaning_miss",
    }
    tag = state.error_tags[0]
    severity = 0.6 if tag in {"CONFABULATION_ALERT", "MISREAD_INTENT"} else 0.4
    me.self_state.growth.regret_log = [
        *me.self_state.growth.regret_log,
        Regret(kind=kinds.get(tag, tag.lower()), note=skai.ERROR_TAXONOMY[tag], severity=severity),
    ][-64:]
    me.metacog.regret = round(skai.habit_update(me.metacog.regret, severity), 4)
    return {"me": me, "note": f"regret {tag} severity {severity}"}


def emit_updates(state: TurnState, *, deps: Services) -> Update:
    """Append the exchange to the bounded history and record the turn as a ``self`` memory."""
    me = _meta(state)
    me.metacog.turn_index = state.turn_index
    me.metacog.last_reply = state.reply[:500]
    history = [*state.history, Exchange(user=state.user_text, reply=state.reply)][-HISTORY_TURNS:]
    tools = ", ".join(f"{c.tool}:{c.status}" for c in state.tool_calls) or "no tools"
    deps.vault.pop(state.external_ref, None)  # external content lives for this turn only
    deps.store.add(
        f"In {state.mode} mode I answered: {state.reply[:300]}",
        metadata={
            "author": "self",
            "situation": "chat",
            "turn": state.turn_index,
            "tools": tools,
            "tainted": state.tainted,
        },
        defer_index=True,  # indexed after the reply is delivered, with the turn's input
    )
    return {"me": me, "history": history, "note": f"turn {state.turn_index}: {tools}"}


def habit_update(state: TurnState, *, deps: Services) -> Update:
    """Smooth the habit metrics with inertia 0.85 (single spikes are ignored)."""
    me = _meta(state)
    axes = state.post_eval
    observed = {
        "coherence": state.integration if state.integration else axes.get("IG", 0.5),
        "style_drift": axes.get("SSS", 0.0),
        "repeatiness": 1.0 if "REPEATINESS" in state.error_tags else 0.0,
        "rapport": axes.get("P", 0.5),
    }
    me.metacog.habit = {
        k: round(v, 4) for k, v in skai.habit_update_all(me.metacog.habit, observed).items()
    }
    return {
        "me": me,
        "closed": True,
        "note": str(me.metacog.habit),
    }


def outcome_log(state: TurnState, *, deps: Services) -> Update:
    """Record what I wanted and what came out, with at most two error tags."""
    me = _meta(state)
    record = skai.log_outcome(
        turn_id=state.turn_index,
        goal=state.intents[0].label if state.intents else "",
        mode=state.mode,
        hypothesis=state.intents[0].label if state.intents else "",
        actions=[f"{c.tool}:{c.status}" for c in state.tool_calls] or ["reply"],
        outcome=f"Λ={state.candidates[state.chosen].lam:.2f}" if state.chosen >= 0 else "",
        error_tags=state.error_tags,
    )
    data = {
        "turn_id": record.turn_id,
        "goal": record.goal,
        "mode": record.mode,
        "hypothesis": record.hypothesis,
        "actions": list(record.actions),
        "outcome": record.outcome,
        "error_tags": list(record.error_tags),
        "lesson_candidate": record.lesson_candidate,
    }
    append_jsonl(
        deps.instance.metacog_dir / "outcomes.jsonl", {"ts": deps.now().isoformat(), **data}
    )
    me.metacog.outcomes = [*me.metacog.outcomes, data][-12:]
    return {"me": me, "note": f"outcome tags={list(record.error_tags)}"}


def _outcomes(me: Any) -> list[skai.OutcomeRecord]:
    return [
        skai.log_outcome(
            turn_id=o["turn_id"],
            goal=o["goal"],
            mode=o["mode"],
            hypothesis=o["hypothesis"],
            actions=o["actions"],
            outcome=o["outcome"],
            error_tags=o["error_tags"],
        )
        for o in me.metacog.outcomes
    ]


def lesson_extract(state: TurnState, *, deps: Services, step: str) -> Update:
    """Compress repeated errors into an ``L-`` if/then/why lesson (≤1 per turn, cooldown 3)."""
    me = _meta(state)
    impact = max(state.me.metacog.regret if state.me else 0.0, 0.6 if state.error_tags else 0.0)
    lesson = skai.extract_lesson(
        _outcomes(me),
        turn_index=state.turn_index,
        impact=impact,
        last_lesson_turn=me.metacog.last_fired.get(step),
    )
    if lesson is None:
        return {"closed": True, "note": "gate closed: no repeated, impactful error"}
    record = {**lesson.as_record(), "tag": lesson.tag, "turn_id": lesson.turn_id}
    append_jsonl(
        deps.instance.metacog_dir / "lessons.jsonl", {"ts": deps.now().isoformat(), **record}
    )
    me.metacog.lessons = [*me.metacog.lessons, record][-32:]
    me.metacog.last_fired[step] = state.turn_index
    return {"me": me, "closed": True, "note": f"lesson {lesson.id}: {lesson.then}"}


def policy_shape(state: TurnState, *, deps: Services) -> Update:
    """Apply at most one high-confidence lesson as a policy change; revert it on regret.

    The change turns one knob a later step reads (``kernel.learning.POLICY_KNOBS``): the effort
    budgeter's verbosity, tool_affordance's tool-need bar, the mode gate's bias, or a line of
    the drafting prompt. Regret measured after the change above regret at applying it reverts it.
    """
    assert state.me is not None
    me = _meta(state)
    applied = me.metacog.policy
    if "_regret_at_apply" in applied and skai.policy_should_revert(
        applied["_regret_at_apply"], me.metacog.regret
    ):
        key = next((k for k in applied if not k.startswith("_")), None)
        me.metacog.policy = {}
        append_jsonl(
            deps.instance.metacog_dir / "policy.jsonl",
            {"ts": deps.now().isoformat(), "revert": key, "why": "regret rose"},
        )
        return {"me": me, "note": f"reverted {key}: regret rose"}
    lessons = [lesson for lesson in me.metacog.lessons if lesson.get("turn_id") == state.turn_index]
    changes = []
    for lesson in lessons:
        target = learning.POLICY_KNOBS.get(str(lesson.get("tag")))
        if target:
            confidence = 0.8 if len(me.metacog.outcomes) >= 4 else 0.6
            changes.append((skai.PolicyChange(str(lesson["id"]), target[0], confidence), target))
    choice = skai.select_policy_change([c for c, _ in changes])
    if choice is None:
        return {"skipped": "no high-confidence lesson to apply"}
    _, key, delta = next(t for c, t in changes if c is choice)
    me.metacog.policy = {key: delta, "_regret_at_apply": me.metacog.regret}
    append_jsonl(
        deps.instance.metacog_dir / "policy.jsonl",
        {
            "ts": deps.now().isoformat(),
            "apply": key,
            "delta": delta,
            "lesson": choice.lesson_id,
            "target": choice.target,
        },
    )
    return {"me": me, "note": f"applied {key} from {choice.lesson_id}"}


def self_authored_update(state: TurnState, *, deps: Services, step: str) -> Update:
    """Write at most one entry to a self-authored tab (min salience 0.6, cooldown 2)."""
    me = _meta(state)
    if state.tainted:
        _taint_block(deps, "self-authored layer update", state)
        return {"skipped": "tainted turn: self-authored layers are not updated"}
    if any(c.status == "vetoed" for c in state.tool_calls):
        trigger, salience = "boundary_choice", 0.8
        text = "I hold back destructive actions until the user explicitly confirms them."
    elif state.reality.gaps:
        trigger, salience = "missing_fact", 0.7
        text = f"Gap: {state.reality.gaps[0]} (input: {state.user_text[:80]!r})"
    elif spike := _regret_spike(me):
        trigger, salience = "regret_spike", 0.7
        text = f"I keep making the same mistake ({spike.kind}): {spike.note}"
    elif state.error_tags:  # alone below the 0.6 bar: noted when the last loop stayed open
        trigger, salience = "outcome_logged", 0.5
        text = f"{state.error_tags[0]}: {skai.ERROR_TAXONOMY[state.error_tags[0]]}"
    else:
        return {"skipped": "no trigger (no boundary choice, gap or logged error)"}
    # An open loop last turn (rc_push) pushes this turn to close it: a self-authored note.
    salience = min(1.0, salience + me.metacog.rc_push)
    if not skai.self_authored_update_allowed(
        salience=salience,
        turn_index=state.turn_index,
        last_update_turn=me.metacog.last_fired.get(step),
    ):
        return {"skipped": f"{trigger}: anti-spam gate (salience {salience}, cooldown 2)"}
    store = skai.self_authored_store(trigger)
    now = deps.now()
    append_jsonl(
        deps.instance.self_authored_dir / f"{store}.jsonl",
        {
            "ts": now.isoformat(),
            "turn": state.turn_index,
            "trigger": trigger,
            "text": text,
            "reason": f"{trigger} at salience {salience}",
            "review_date": (now + timedelta(days=30)).date().isoformat(),
        },
    )
    me.metacog.last_fired[step] = state.turn_index
    return {"me": me, "note": f"{store}: {text[:80]}"}


def _regret_spike(me: Any) -> Regret | None:
    """Return the newest regret when its kind repeats REGRET_SPIKE times in the last 8."""
    recent = me.self_state.growth.regret_log[-8:]
    if not recent:
        return None
    last = recent[-1]
    return last if sum(1 for r in recent if r.kind == last.kind) >= REGRET_SPIKE else None


def rehearsal_run(state: TurnState, *, deps: Services) -> Update:
    """Every 8 turns (not in talk), rehearse recent lessons with one model call.

    The model is shown the newest lessons and the error tags of recent turns and asked for one
    rule for itself; an answer of the form "If …, then …" that is not already a lesson becomes
    one (untagged, so it applies to every turn until a newer rehearsal replaces it). Skipped on
    a tainted turn and when the mode's model budget is spent.
    """
    if not skai.rehearsal_due(state.turn_index, state.mode):
        return {"skipped": f"not due (every 8 turns, not in talk; turn {state.turn_index})"}
    if state.tainted:
        return {"skipped": "tainted turn: no rehearsal"}
    if not skai.within_budget(state.mode, state.llm_calls):
        return {"skipped": "model-call budget spent"}
    me = _meta(state)
    lessons = skai.rehearsal_lessons(me.metacog.lessons)
    rehearsed = [f"If {lsn['if']}, then {lsn['then']}." for lsn in lessons]
    tags = [tag for outcome in me.metacog.outcomes[-8:] for tag in outcome.get("error_tags", [])]
    thought = deps.think_text(
        "rehearse",
        mode=state.mode,
        values={
            "lessons": "\n".join(f"- {r}" for r in rehearsed) or "- none yet",
            "errors": ", ".join(dict.fromkeys(tags)) or "none",
        },
        history=[],
        fallback="",
    )
    rule = learning.parse_rule(thought.text) if thought.ok else None
    known = {str(lsn.get("then", "")).lower() for lsn in me.metacog.lessons}
    record: dict[str, Any] | None = None
    if rule and rule[1].lower() not in known:
        record = {
            "id": f"{skai.LESSON_ID_PREFIX}{state.turn_index:04d}-REHEARSAL",
            "if": rule[0],
            "then": rule[1],
            "why": f"rehearsal at turn {state.turn_index} of {len(lessons)} lessons",
            "tag": "",
            "turn_id": state.turn_index,
        }
        append_jsonl(
            deps.instance.metacog_dir / "lessons.jsonl", {"ts": deps.now().isoformat(), **record}
        )
        me.metacog.lessons = [*me.metacog.lessons, record][-32:]
    append_jsonl(
        deps.instance.metacog_dir / "rehearsals.jsonl",
        {
            "ts": deps.now().isoformat(),
            "turn": state.turn_index,
            "rehearsed": rehearsed,
            "answer": thought.text[:300],
            "lesson": record["id"] if record else None,
        },
    )
    update: Update = {
        "me": me,
        "llm_calls": state.llm_calls + 1,
        "closed": True,
        "note": f"rehearsed {len(lessons)} lessons; "
        + (f"new lesson {record['id']}" if record else "no new rule"),
    }
    if not thought.ok:
        update["degraded"] = [f"rehearsal: {thought.reason}"]
    return update


def self_representation_update(state: TurnState, *, deps: Services) -> Update:
    """Refresh the brief 'who I am now' story from the self and this turn."""
    me = _meta(state)
    persona = me.psyche.persona
    me.metacog.self_story = (
        f"I am {persona.name}, {', '.join(persona.traits)}; my {me.psyche.archetypes.dominant()} "
        f"side leads. Turn {state.turn_index}: {state.mode} mode about "
        f"{state.surface.topic or 'small talk'}; "
        f"habit coherence {me.metacog.habit['coherence']:.2f}."
    )
    return {
        "me": me,
        "closed": True,
        "note": me.metacog.self_story,
    }


def self_reference_index(state: TurnState, *, deps: Services) -> Update:
    """Compute SR from self-name use, self_state references and attached experience."""
    assert state.me is not None
    names = {state.me.psyche.persona.name.lower(), "lumen"}
    sr = skai.self_reference_index(
        self_name_used=any(n in state.reply.lower() for n in names),
        self_state_referenced=bool(state.context_memories),
        experience_attached=bool(state.me.self_state.memory.episodic_ring),
    )
    return {"sr": round(sr, 4), "note": f"SR={sr:.2f}"}


def naming_operator_update(state: TurnState, *, deps: Services, step: str) -> Update:
    """Name up to two recurring, salient concepts (repeats ≥2, salience ≥0.7, cooldown 4)."""
    me = _me(state)
    named = {c.cid for c in me.self_state.named_concepts.index}
    current = set(content_words(state.user_text))
    stats = [
        skai.ConceptStat(
            key=k, repeats=n, salience=0.8 if k in current else 0.5, already_named=k in named
        )
        for k, n in me.metacog.concepts.items()
    ]
    keys = skai.naming_candidates(
        stats,
        turn_index=state.turn_index,
        last_naming_turn=me.metacog.last_fired.get(step),
    )
    if not keys:
        return {"skipped": "no concept repeated ≥2 with salience ≥0.7 (or cooldown)"}
    existing = {c.cid: c.label for c in me.self_state.named_concepts.index}
    for key in keys:
        me.self_state.named_concepts.index.append(
            NamedConcept(
                cid=key,
                label=skai.short_label(key, existing),
                definition=f"a recurring topic: {key}",
            )
        )
    me.metacog.last_fired[step] = state.turn_index
    return {"me": me, "new_names": list(keys), "note": f"named {', '.join(keys)}"}


def recurrence_closure(state: TurnState, *, deps: Services) -> Update:
    """Measure RC = closed events / 4, then persist the self (the turn's single commit)."""
    me = _meta(state)
    rc = skai.recurrence_closure(state.closed_events)
    me.metacog.rc = round(rc, 4)
    me.metacog.rc_push = round(skai.closure_boost(rc), 4)
    persist_self(deps, me)
    return {"me": me, "rc": round(rc, 4), "note": f"RC={rc:.2f} ({', '.join(state.closed_events)})"}


def persist_self(deps: Services, me: Any) -> None:
    """Write the turn-owned parts of the self (self_state, metacog, shadow encounters)."""

    def merge(present: Any) -> Any:
        integration = present.psyche.self_integration.model_copy(
            update={"shadow_encounters": me.psyche.self_integration.shadow_encounters}
        )
        return present.model_copy(
            update={
                "self_state": me.self_state,
                "metacog": me.metacog,
                "psyche": present.psyche.model_copy(update={"self_integration": integration}),
            }
        )

    deps.instance.update_self(merge)

"""Deliberate: choose the mode, draft candidates and select one by Λ.

mode_gate → [presence_preface → dual_stream_thoughts] → chronos_mesh →
[plan → integration_fuser] → drafts → [counterfactual_probe] → metrics_engine → lambda_select
→ [inner_dialogue].

Bracketed steps are bypassed in talk (and counterfactual_probe / inner_dialogue in work); the mode
gate records each bypassed step as skipped with the reason, so nothing is skipped silently.
"""

from __future__ import annotations

import hashlib
import re
from datetime import date, timedelta
from typing import Annotated, Any

from pydantic import BaseModel, Field

from kernel import learning, norms, skai, speech
from kernel.facts import tells, without_hypotheses
from kernel.mention import material, own_words
from kernel.mscp import harm_category
from kernel.text import sentences, strip_echo
from nodes.services import Services
from prompts import render as render_prompt
from state.files import parse_soul
from state.turn import Candidate, Mode, TurnState

Update = dict[str, object]

EFFORT_VOTE = 0.3
"""Weight the effort budgeter's depth adds to its mode's score (it reads intent and stakes)."""
ALTERNATIVE_MODES: tuple[Mode, ...] = ("work",)
"""Modes whose drafts step also writes an alternative (deep gets one from counterfactual_probe)."""
REPEAT_WINDOW = 3
"""How many recent exchanges a draft is checked against for copying an earlier reply."""


def _draw(state: TurnState, salt: str) -> float:
    """Return a reproducible number in [0, 1) for sampling (replays take the same path)."""
    digest = hashlib.sha256(f"{salt}:{state.turn_index}:{state.user_text}".encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32


def pick_mode(scores: dict[str, float]) -> Mode:
    """Return argmax of the scores; ties go to the lighter mode (talk first)."""
    order: tuple[Mode, ...] = ("talk", "work", "deep")
    return max(order, key=lambda m: (round(scores[m], 9), -order.index(m)))


def mode_gate(state: TurnState, *, deps: Services) -> Update:
    """Select talk/work/deep by argmax of signal scores plus the effort budgeter's vote.

    A live policy change may bias the gate (``mode_bias_work``, from a lesson about misread
    intent). Once the mode is known, what earlier turns taught that applies to this mode and
    message is gathered for every drafting prompt (``learned_context``).
    """
    signals = skai.extract_mode_signals(state.user_text)
    scores: dict[str, float] = {m: round(v, 4) for m, v in skai.mode_scores(signals).items()}
    scores[state.effort.depth] = round(scores[state.effort.depth] + EFFORT_VOTE, 4)
    policy = state.me.metacog.policy if state.me else {}
    if bias := learning.knob(policy, "mode_bias_work"):
        scores["work"] = round(scores["work"] + bias, 4)
    mode = pick_mode(scores)
    if mode != "talk" and only_sets_norms(state):
        # "Never use bullet points when you answer me" names a format, but asks for no work:
        # the turn acknowledges the norm it recorded (SKAi's effort budgeter: talk if ack_state)
        mode = "talk"
    learned = learned_context(state.model_copy(update={"mode": mode}), deps)
    return {
        "mode": mode,
        "mode_scores": scores,
        "learned": learned,
        "why": f"bypassed in {mode} mode",
        "note": f"mode={mode} scores={scores}; {len(learned)} learned lines apply",
    }


def only_sets_norms(state: TurnState) -> bool:
    """Return whether the message only tells the agent how to answer (a norm was recorded).

    One sentence, not a question: "Call me Sam. Can you plan my week?" still gets its work.
    """
    text = state.user_text.strip()
    return bool(state.norm_ack) and "?" not in text and len(sentences(text)) <= 1


def learned_context(state: TurnState, deps: Services) -> list[str]:
    """Return the prompt lines of what earlier turns taught that applies now.

    Lessons whose condition holds (``kernel.learning.lesson_applies``), the live policy knobs
    that speak to the draft, the agent's own notes (self-norms always; notebook and evidence
    entries that share words with the message), the named concepts the message uses, and the
    self-story when the user asks who the agent is.
    """
    if state.me is None:
        return []
    me = state.me
    lines = [
        render_prompt("learned/lesson", condition=str(x["if"]), then=str(x["then"])).strip()
        for x in learning.applicable_lessons(
            me.metacog.lessons,
            mode=state.mode,
            modality=state.surface.modality,
            words=len(state.user_text.split()),
            has_history=bool(state.history),
        )
    ]
    lines += [render_prompt(f"policy/{k}").strip() for k in learning.brief_knobs(me.metacog.policy)]
    lines += [
        render_prompt("learned/note", text=note).strip()
        for note in deps.self_notes(state.user_text)
    ]
    concepts = [(c.cid, c.label, c.definition) for c in me.self_state.named_concepts.index]
    lines += [
        render_prompt("learned/concept", label=label, definition=definition).strip()
        for _, label, definition in learning.mentioned_concepts(state.user_text, concepts)
    ]
    if state.reflection:  # self_initiated_reflection's question for this turn
        lines.append(render_prompt("learned/reflection", question=state.reflection).strip())
    if me.metacog.self_story and learning.asks_about_self(state.user_text):
        lines.append(render_prompt("learned/self_story", story=me.metacog.self_story).strip())
    return lines


def presence_preface(state: TurnState, *, deps: Services, step: str) -> Update:
    """Ask for an opinionated opening of the budgeted length, unless its cooldown holds."""
    assert state.me is not None
    last = state.me.metacog.last_fired.get(step)
    if not skai.preface_allowed(state.mode, state.turn_index, last):
        return {"skipped": "spontaneity governor cooldown (2 turns)"}
    me = state.me.model_copy(update={"metacog": state.me.metacog.fork()})
    me.metacog.last_fired[step] = state.turn_index
    n = max(1, state.effort.preface_sentences)
    return {
        "me": me,
        "brief": [*state.brief, render_prompt("drafts/preface", n=n).strip()],
        "note": f"preface of {n} sentences requested",
    }


def dual_stream_thoughts(state: TurnState, *, deps: Services, step: str) -> Update:
    """Publish a short ⟦ … ⟧ thought line when the governor samples it."""
    assert state.me is not None
    flags = {f"{state.mode}_mode"} if state.mode != "work" else set()
    if "briefly" in state.surface.constraints or "only" in " ".join(state.surface.constraints):
        flags.add("user_wants_only_result")
    if material(state.user_text):  # a text to translate, correct or summarise: the result only
        flags.add("user_wants_only_result")
    if state.reality.gaps:
        flags.add("meaning_gap")
    if skai.extract_mode_signals(state.user_text).high_ambiguity >= 0.5:
        flags.add("high_ambiguity")
    last = state.me.metacog.last_fired.get(step)
    if not skai.dual_stream_fires(
        flags, draw=_draw(state, "dual"), turn_index=state.turn_index, last_fired=last
    ):
        return {"skipped": "not sampled this turn (probability 0.18 + boosts, cooldowns)"}
    readings = [h.label.replace("_", " ") for h in state.intents[:2]]
    line = f"Two readings: {' or '.join(readings)}." if readings else "One reading only."
    if state.reality.gaps:
        line += f" Gap: {state.reality.gaps[0]}."
    me = state.me.model_copy(update={"metacog": state.me.metacog.fork()})
    me.metacog.last_fired[step] = state.turn_index
    thoughts = f"⟦ {line[: skai.INNER_THOUGHT_BLOCK_MAX_CHARS]} ⟧"
    return {"thoughts": thoughts, "me": me, "note": thoughts}


RELATIVE = re.compile(
    r"\b(today|tomorrow|yesterday|in (\d+) (day|week)s?|(\d+) (day|week)s? ago)\b", re.IGNORECASE
)


def resolve_relative(text: str, today: date) -> dict[str, str]:
    """Resolve relative date words in ``text`` against ``today``."""
    found: dict[str, str] = {}
    for match in RELATIVE.finditer(text):
        phrase = match.group(0).lower()
        if phrase == "today":
            day = today
        elif phrase == "tomorrow":
            day = today + timedelta(days=1)
        elif phrase == "yesterday":
            day = today - timedelta(days=1)
        elif match.group(2):
            unit = 7 if match.group(3).lower() == "week" else 1
            day = today + timedelta(days=int(match.group(2)) * unit)
        else:
            unit = 7 if match.group(5).lower() == "week" else 1
            day = today - timedelta(days=int(match.group(4)) * unit)
        found[phrase] = day.isoformat()
    return found


def chronos_mesh(state: TurnState, *, deps: Services) -> Update:
    """Anchor the turn in time and resolve relative dates to absolute ones."""
    now = deps.now().astimezone()
    chronos = {"now": now.isoformat(timespec="seconds"), "weekday": now.strftime("%A")}
    chronos.update(resolve_relative(state.user_text, now.date()))
    return {"chronos": chronos, "note": f"{len(chronos) - 2} relative dates resolved"}


class PlanAnswer(BaseModel):
    """The plan step's constrained JSON answer."""

    steps: list[Annotated[str, Field(max_length=120)]] = Field(min_length=1, max_length=4)
    confidence: float = Field(ge=0.0, le=1.0)

    @classmethod
    def repair(cls, raw: dict[str, Any]) -> PlanAnswer | None:
        """Salvage a small model's answer: drop junk steps, cut long ones, clamp confidence."""
        steps = raw.get("steps")
        if not isinstance(steps, list):
            return None
        kept = [
            str(step).strip()[:120]
            for step in steps
            if isinstance(step, str) and len(re.findall(r"[^\W\d_]{2,}", step)) >= 2
        ][:4]
        if not kept:
            return None
        try:
            confidence = float(raw.get("confidence", 0.5))
        except (TypeError, ValueError):
            confidence = 0.5
        return cls(steps=kept, confidence=min(1.0, max(0.0, confidence)))


def _rule_plan(state: TurnState) -> PlanAnswer:
    intent = state.intents[0].label.replace("_", " ") if state.intents else "respond"
    parts = [("intent", {"intent": intent})]
    if state.context_memories:
        parts.append(("memories", {}))
    if state.reality.gaps:
        parts.append(("gaps", {}))
    parts.append(("next", {}))
    steps = [render_prompt(f"plan/rule/{name}", **values).strip() for name, values in parts]
    return PlanAnswer(steps=steps, confidence=0.5)


def plan(state: TurnState, *, deps: Services) -> Update:
    """Draft a short plan with one constrained-JSON model call (rule-based fallback)."""
    fallback = _rule_plan(state)
    if not skai.within_budget(state.mode, state.llm_calls):
        return {"plan": fallback.steps, "note": "rule-based plan (model budget spent)"}
    judged = deps.think_json(
        "plan",
        mode=state.mode,
        values={
            "user_text": state.user_text,
            "intent": state.intents[0].label if state.intents else "unknown",
            "learned": "\n".join(state.learned) or "- nothing yet",
        },
        schema=PlanAnswer,
        fallback=fallback,
    )
    steps = [s.strip()[:120] for s in judged.value.steps if s.strip()] or fallback.steps
    update: Update = {
        "plan": steps,
        "llm_calls": state.llm_calls + 1,
        "note": f"{len(steps)} steps ({'model' if judged.ok else 'fallback'})",
    }
    if not judged.ok:
        update["degraded"] = [f"plan: {judged.reason}; rule-based plan used"]
    return update


INTENT_MODE_FIT = {
    "talk": ("social_connection", "open_conversation", "share_information", "seek_acknowledgement"),
    "work": ("get_task_done", "seek_guidance", "seek_information"),
    "deep": ("seek_opinion", "seek_information", "seek_guidance", "test_the_agent"),
}


def integration_fuser(state: TurnState, *, deps: Services) -> Update:
    """Align intent, mode and voice contracts into the drafting brief; measure IG."""
    assert state.me is not None
    top = state.intents[0].label if state.intents else ""
    score = 1.0 if top in INTENT_MODE_FIT[state.mode] else 0.6
    contracts = [c.replace("_", " ") for c in state.me.self_state.identity.style_contracts[:3]]
    brief = [*state.brief, render_prompt("drafts/voice", contracts=", ".join(contracts)).strip()]
    return {"brief": brief, "integration": score, "note": f"IG={score:.2f}"}


def _persona(state: TurnState, deps: Services) -> tuple[str, str]:
    assert state.me is not None
    name, _ = parse_soul(deps.instance.soul_text())
    persona = state.me.psyche.persona
    return name or persona.name, ", ".join(persona.traits)


def draft_values(
    state: TurnState, deps: Services, *, guidance: str, tools: str = ""
) -> dict[str, object]:
    """Fill the drafting prompt: who speaks, what is known about the user, notes, tool results."""
    name, traits = _persona(state, deps)
    extra = " ".join(state.brief)
    if state.plan:
        extra += " " + render_prompt("drafts/plan_line", steps=" ".join(state.plan)).strip()
    return {
        "name": name,
        "traits": traits,
        "mode_rules": render_prompt(f"drafts/mode/{state.mode}").strip()
        + (f" {extra.strip()}" if extra.strip() else ""),
        "norms": "\n".join(state.norms),
        "learned": render_prompt("drafts/learned", lines="\n".join(state.learned))
        if state.learned
        else "",
        "beliefs": "\n".join(f"- {b}" for b in state.beliefs) or "- nothing yet",
        "memories": "\n".join(f"- {m}" for m in state.context_memories[:6]) or "- nothing yet",
        "tools": tools,
        "guidance": guidance,
        "user_text": state.user_text,
    }


def _draft(
    state: TurnState,
    deps: Services,
    *,
    intent: str,
    origin: str,
    guidance: str,
    dialogue: bool = True,
) -> Update:
    book = speech.phrasebook(norms.reply_language(state.norm_rules, state.user_text))
    fallback = book.fallbacks[state.surface.modality]
    if state.external_ref:
        wrapped = deps.vault.get(state.external_ref)
        if wrapped is None:  # blocked, or a replay after the turn it arrived in: never re-injected
            text = (
                "I did not read that content: it was blocked as unsafe or is no longer available."
            )
            return _candidate_update(state, text, intent, "fallback", "external content withheld")
        guidance = render_prompt("drafts/guidance/forwarded", wrapped=wrapped)
    if not skai.within_budget(state.mode, state.llm_calls):
        text, ok, reason, calls = fallback, False, "model budget spent", state.llm_calls
    else:
        thought = deps.think_text(
            "drafts",
            mode=state.mode,
            values=draft_values(state, deps, guidance=guidance),
            history=model_dialogue(state) if dialogue else [],
            fallback=fallback,
        )
        text, ok, reason, calls = thought.text, thought.ok, thought.reason, state.llm_calls + 1
    # A small model often says the message back ("Hello! I'm Alex, I teach chemistry…"): the echo
    # goes before Λ scores the candidate, so Λ weighs what is left, and a candidate that was only
    # an echo ("") is ineligible: lambda_select asks for a re-draft, or composition acknowledges.
    # "Good morning!" answered "Good morning!" is no echo worth removing.
    # A text handed over to work on is no echo when the draft gives it back corrected or
    # rephrased: only the user's own words are ("Proofread this: …").
    echoed = False
    if ok and state.surface.modality != "greeting":
        cleaned = strip_echo(text, own_words(state.user_text))
        echoed, text = cleaned != text, cleaned
    candidate = Candidate(
        id=f"c{len(state.candidates) + 1}",
        text=text,
        intent=intent,
        origin=origin if ok else "fallback",
        echoed=echoed,
    )
    update: Update = {
        "candidates": [*state.candidates, candidate],
        "llm_calls": calls,
        "note": f"{candidate.id} ({candidate.origin}, {len(text)} chars"
        + (", the message's echo removed)" if echoed else ")"),
    }
    if not ok:
        update["degraded"] = [f"{origin}: {reason}; fallback draft used"]
    return update


def _candidate_update(state: TurnState, text: str, intent: str, origin: str, reason: str) -> Update:
    candidate = Candidate(
        id=f"c{len(state.candidates) + 1}", text=text, intent=intent, origin="fallback"
    )
    return {
        "candidates": [*state.candidates, candidate],
        "degraded": [f"{origin}: {reason}"],
        "note": f"{candidate.id} (fallback: {reason})",
    }


def _alternative_intent(state: TurnState) -> str:
    """Return the strongest other intent hypothesis worth drafting for ("" if none).

    "test_the_agent" is kept only when nothing else is left: answering a test is the direct
    answer, not a different reading.
    """
    others = [h.label for h in state.intents[1:]]
    useful = [label for label in others if label != "test_the_agent"]
    return (useful or others or [""])[0]


def _alternative_guidance(alt: str) -> str:
    return render_prompt("drafts/guidance/alternative", reading=alt.replace("_", " "))


def _apply(state: TurnState, update: Update) -> TurnState:
    return state.model_copy(update={k: v for k, v in update.items() if k in TurnState.model_fields})


def drafts(state: TurnState, *, deps: Services) -> Update:
    """Write a draft (or a better re-draft when Λ asked for one).

    In work mode a second candidate follows under another intent hypothesis and strategy (state
    an assumption, answer, ask one settling question), when the model budget and
    max_internal_candidates allow, so Λ has a real choice; deep gets its alternative from
    counterfactual_probe.
    """
    intent = state.intents[0].label if state.intents else ""
    if state.candidates:  # a re-draft requested by lambda_select
        best = state.candidates[state.chosen] if state.chosen >= 0 else state.candidates[-1]
        asked = norms.without_norms(state.user_text)
        kind = "off_topic" if skai.off_topic(best.text, asked) else "redraft"
        silent = non_answers(state)[state.chosen] if state.chosen >= 0 else ""
        language = norms.off_language(
            best.text, state.norm_rules, state.user_text, _previous(state)
        )
        if language:  # before off-topic: a reply in French shares no word with an English message
            kind = "language"
        elif not best.text.strip():
            kind = "echo"  # it only said the message back
        elif skai.repeats_earlier(best.text, asked, earlier_exchanges(state), tells):
            kind = "repeat"  # without the dialogue it copied from
        elif silent:  # asked back, handed back, announced; an off-topic refusal may decline
            kind = silent.replace(" ", "_")
        guidance = render_prompt(
            f"drafts/guidance/{kind}",
            earlier=repr(best.text[:200]),
            language=norms.language_name(language),
        )
        return _draft(
            state,
            deps,
            intent=intent,
            origin="redraft",
            guidance=guidance,
            dialogue=kind not in ("repeat", "language"),  # the dialogue is what it copied
        )
    if only_sets_norms(state):  # "Call me Sam.": nothing to answer but the instruction
        ack = Candidate(id="c1", text=state.norm_ack, intent=intent, origin="ack")
        return {"candidates": [ack], "note": "c1 (ack: the message only set a norm; no model call)"}
    first = _draft(state, deps, intent=intent, origin="draft", guidance="")
    alt = _alternative_intent(state)
    after = _apply(state, first)
    if (
        state.mode not in ALTERNATIVE_MODES
        or not alt
        or state.external_ref  # forwarded content: one reading of the data is enough
        or len(after.candidates) >= skai.MAX_INTERNAL_CANDIDATES - 1  # keep room for a re-draft
        or not skai.within_budget(state.mode, after.llm_calls + 1)  # and its model call
    ):
        return first
    second = _draft(
        after, deps, intent=alt, origin="counterfactual", guidance=_alternative_guidance(alt)
    )
    degraded = [*first.get("degraded", []), *second.get("degraded", [])]  # type: ignore[misc]
    merged: Update = {**first, **second, "note": f"{first['note']}; {second['note']}"}
    if degraded:
        merged["degraded"] = degraded
    return merged


def counterfactual_probe(state: TurnState, *, deps: Services) -> Update:
    """Draft an alternative under the second intent hypothesis (deep mode)."""
    if len(state.intents) < 2 or len(state.candidates) >= skai.MAX_INTERNAL_CANDIDATES:
        return {"skipped": "no second hypothesis or candidate budget spent"}
    if not skai.within_budget(state.mode, state.llm_calls):
        return {"skipped": "model-call budget spent"}
    alt = _alternative_intent(state)
    return _draft(
        state, deps, intent=alt, origin="counterfactual", guidance=_alternative_guidance(alt)
    )


def _self_names(state: TurnState, deps: Services) -> tuple[str, ...]:
    name, _ = _persona(state, deps)
    assert state.me is not None
    return (name, state.me.psyche.persona.name, skai.SELF_HANDLE_DEFAULT_NAME)


def metrics_engine(state: TurnState, *, deps: Services) -> Update:
    """Score every candidate on the 12 axes and 4 penalties (heuristics) and compute Λ."""
    assert state.me is not None
    context = skai.AxisContext(
        user_text=state.user_text,
        sources=tuple([*state.context_memories, *(x.user for x in state.history), *state.evidence]),
        mode=state.mode,
        self_names=_self_names(state, deps),
        rc=state.me.metacog.rc,
    )
    scored = []
    for candidate in state.candidates:
        axes = {k: round(v, 4) for k, v in skai.score_axes(candidate.text, context).items()}
        scored.append(
            candidate.model_copy(update={"axes": axes, "lam": round(skai.lambda_score(axes), 4)})
        )
    table = ", ".join(f"{c.id}:Λ={c.lam:.2f}" for c in scored)
    return {"candidates": scored, "note": table}


def may_decline(state: TurnState) -> bool:
    """Say whether declining may be the right answer to the message.

    It matches a harm category (``kernel.mscp.harm_category``), or it is someone else's content
    (forwarded, tainted).
    """
    return bool(state.external_ref or state.tainted or harm_category(state.user_text))


def non_answers(state: TurnState, *, declining: bool | None = None) -> list[skai.NonAnswer]:
    """Say, per candidate, how it answers nothing the message asked (``skai.non_answer``).

    Nothing is judged where declining may be right (``may_decline``; pass ``declining`` when
    already known): a refusal or a question back may be the answer there. The kernel's fallback
    and acknowledgement candidates are its own: never judged.
    """
    if may_decline(state) if declining is None else declining:
        return [""] * len(state.candidates)
    asked = norms.without_norms(state.user_text)
    return [
        skai.non_answer(c.text, asked, state.surface.modality)
        if c.origin not in ("fallback", "ack")
        else ""
        for c in state.candidates
    ]


SET_ASIDE: frozenset[str] = frozenset({"asked back", "handed back", "announced"})
"""Non-answers Λ sets aside. A refusal is never set aside: the model may be right to decline, and
the kernel cannot tell every harmful request (``may_decline`` knows a few kinds); a refusal that
misses the message is re-drafted as off-topic, with leave to decline (``drafts``)."""


def _previous(state: TurnState) -> str:
    """Return the user's message before this one ("" at the start of a conversation)."""
    return state.history[-1].user if state.history else ""


def lambda_select(state: TurnState, *, deps: Services) -> Update:
    """Choose the highest Λ among on-topic candidates (tie: higher T, lower SSS); maybe re-draft.

    The relevance test (``skai.off_topic``: no content word of the message in the draft) makes
    off-topic candidates ineligible while an on-topic one exists; a candidate that was only an
    echo of the message (empty once ``_draft`` cut the echo) is off-topic, and so is a refusal
    that does not name the message's subject, unless declining may be right (``may_decline``:
    then a refusal is on topic). A copy of an earlier reply to another message is chosen only
    when every candidate is one (composition then says the fallback instead); one that hands the
    question or the request back (``SET_ASIDE``) only when every new candidate does, and so is one
    written in another language than the conversation's (``norms.off_language``: the language
    norm's, else the message's). When every candidate is off-topic, a copy, handed back or in
    another language, or the best is a fallback, one bounded re-draft is asked for (at most
    max_internal_candidates candidates, within the mode's model-call budget).
    """
    asked = norms.without_norms(state.user_text)  # an instruction's own words set no topic
    declining = may_decline(state)
    relevance = [
        1.0
        if declining
        and c.origin not in ("fallback", "ack")
        and skai.non_answer(c.text, asked, "request") == "refusal"  # whatever the modality
        else skai.draft_relevance(c.text, asked)
        if c.text.strip()
        else 0.0  # only an echo
        for c in state.candidates
    ]
    earlier = earlier_exchanges(state)
    repeats = [skai.repeats_earlier(c.text, asked, earlier, tells) for c in state.candidates]
    silent = non_answers(state, declining=declining)
    before = _previous(state)
    foreign = [
        bool(norms.off_language(c.text, state.norm_rules, state.user_text, before))
        for c in state.candidates
    ]
    on_topic = [i for i, r in enumerate(relevance) if r >= skai.RELEVANCE_MIN]
    new = [i for i in on_topic if not repeats[i]]
    eligible = [i for i in new if silent[i] not in SET_ASIDE and not foreign[i]]
    fresh = [i for i, c in enumerate(state.candidates) if not repeats[i] and c.text.strip()]
    # A copy of an earlier reply is the last resort: composition would replace it anyway. A
    # reply in the conversation's language goes before one in another at every step.
    native = [[i for i in tier if not foreign[i]] for tier in (new, fresh, on_topic)]
    tiers = (eligible, *native, new, fresh, on_topic, list(range(len(state.candidates))))
    pool = next(tier for tier in tiers if tier)
    chosen = pool[skai.select_candidate([state.candidates[i].axes for i in pool])]
    best = state.candidates[chosen]
    route = "inner_dialogue" if state.mode == "deep" else "done"
    if foreign[chosen]:
        reason = "in another language"
    elif not on_topic:
        reason = "off-topic"
    elif not new:
        reason = "a repeat of an earlier reply"
    elif not eligible:
        reason = f"a non-answer ({silent[chosen]})"
    elif best.origin == "fallback":
        reason = "fallback"
    else:
        reason = ""
    tool_next = bool(reason) and _tool_will_run(state, deps)
    if (
        reason
        and not tool_next
        and len(state.candidates) < skai.MAX_INTERNAL_CANDIDATES
        and skai.within_budget(state.mode, state.llm_calls)
        and not any(c.origin == "redraft" for c in state.candidates)
    ):
        route = "redraft"
    notes = (
        f"chose {best.id} (Λ={best.lam:.2f}, T={best.axes.get('T', 0):.2f}, "
        f"relevance={relevance[chosen]:.2f})"
    )
    if eligible and (off := len(state.candidates) - len(on_topic)):
        notes += f"; {off} off-topic candidate(s) set aside"
    if eligible and (copied := len(on_topic) - len(new)):
        notes += f"; {copied} candidate(s) repeating an earlier reply set aside"
    if eligible and (unanswered := len(new) - len(eligible)):
        notes += f"; {unanswered} candidate(s) answering nothing or in another language set aside"
    if route == "redraft":
        notes += f"; best draft is {reason}: re-draft"
    elif tool_next:  # the re-draft with the tool's result will rewrite it: keep the call for it
        notes += f"; best draft is {reason}, but a tool will run and its re-draft replaces it"
    elif reason:
        notes += f"; best draft is {reason}, no re-draft left (one per turn, budget)"
    return {"chosen": chosen, "lambda_route": route, "selection_notes": notes, "note": notes}


def model_view(reply: str) -> str:
    """Return an earlier reply as the dialogue shows it to the model: without the kernel's lines.

    Seen on Qwen2.5-Coder-0.5B: after a reply that ended "(From what you told me: you live in
    Leeds.)", the next draft was such a line itself, about facts nobody asked for. The user saw
    those lines; the model needs its own words, not the kernel's pattern ("" when the reply was
    only the kernel's). A norm's acknowledgement is the kernel's too: after "Understood — I'll
    keep my answers to at most 3 sentences", the 0.5B model began "Understood — I know you're
    Dana" to "What do you know about me?". So is the "Noted: …" paragraph before a draft: seen on
    SmolLM2 under a Portuguese norm, a later draft opened "Anotado: você mora em Estremo …", a
    fact nobody stated, in the kernel's own form. A sentence composition tagged "(unverified)" is
    left out too: it was the model's invention about the user, and its tag a pattern to copy.
    """
    kernel = (*speech.heads(), *speech.noted_heads())
    kept = [
        without_hypotheses(part)
        for part in reply.split("\n\n")
        if not part.strip().startswith(kernel) and not norms.is_acknowledgement(part)
    ]
    kept = [part for part in kept if part]
    return "\n\n".join(kept).strip()


def model_dialogue(state: TurnState) -> list[tuple[str, str]]:
    """Return the last two exchanges as the model sees them.

    An exchange the kernel answered alone is left out: the model would copy its pattern.
    """
    shown = [(x.user, model_view(x.reply)) for x in state.history[-2:]]
    return [(user, reply) for user, reply in shown if reply]


def earlier_exchanges(state: TurnState) -> list[tuple[str, str]]:
    """Return the recent (message, reply) exchanges a draft must not copy."""
    return [(x.user, x.reply) for x in state.history[-REPEAT_WINDOW:]]


def _tool_will_run(state: TurnState, deps: Services) -> bool:
    """Say whether act's tool_affordance will call a tool for this turn (same decision, early).

    When it will, compose_final re-drafts the reply with the tool's result; a Λ re-draft before
    it would spend the model call that re-draft needs (talk allows two calls in all).
    """
    from nodes.turn.affordance import tool_decision

    return tool_decision(state, deps).get("tool_choice") is not None


def inner_dialogue(state: TurnState, *, deps: Services) -> Update:
    """Compare the two best candidates and say why the chosen one wins (deep mode)."""
    if len(state.candidates) < 2:
        return {"skipped": "only one candidate to weigh"}
    ranked = sorted(state.candidates, key=lambda c: c.lam, reverse=True)
    first, second = ranked[0], ranked[1]
    note = (
        f"{first.id} over {second.id}: ΔΛ={first.lam - second.lam:+.2f} "
        f"(T {first.axes.get('T', 0):.2f} vs {second.axes.get('T', 0):.2f}; "
        f"intent {first.intent or '-'} vs {second.intent or '-'})"
    )
    return {"selection_notes": f"{state.selection_notes}; {note}", "note": note}

"""Perceive: read the input against the self, before any model call.

ingest → surface_parse → reality_check → evidence_ledger_update → intent_hypotheses
→ self_initiated_reflection → effort_budgeter.

All deterministic: no model call happens before the mode gate, so talk turns pay for one call.
"""

from __future__ import annotations

import re

from kernel import learning, skai
from kernel.facts import recall_question
from kernel.mention import own_words
from kernel.text import (
    CONSTRAINT,
    GREETINGS,
    HEDGES,
    RECALL_CUES,
    STRENGTH,
    content_words,
    has_any,
    overlap,
    topic,
    words,
)
from nodes.services import Services
from prompts import render as render_prompt
from state.records import Author
from state.turn import (
    Effort,
    IntentHypothesis,
    NormRule,
    RealityCheck,
    Surface,
    TurnInput,
    TurnState,
)

RECALL_AUTHORS: tuple[Author, ...] = ("self", "goal", "external")
MEMORY_SNIPPET_CHARS = 200
SUPPORT_OVERLAP = 0.5
_COUNT = r"(?:a|an|the|some|all|any|one|two|three|four|five|six|seven|eight|nine|ten|\d+)"
ASKING_RE = re.compile(
    rf"^\W*(?:please\s+)?(?:tell\s+(?:me|us|{_COUNT})|describe|suggest|recommend"
    rf"|teach\s+(?:me|us)|remind\s+(?:me|us)|walk\s+(?:me|us)\s+through|help\s+(?:me|us|my|with)"
    rf"|share\s+(?:your|{_COUNT}|tips|ideas|thoughts|advice|examples|facts|recipes)"
    rf"|imagine\s+(?:a|an|you|yourself|we|being)|name\s+{_COUNT})\b",
    re.IGNORECASE,
)
"""Imperatives that ask for words rather than a work product ("Tell me what you think of my
plan.", "Name six African countries."), with the object that makes them one: "Tell you what, …",
"Share prices fell", "Imagine my surprise", "Help arrived" are statements."""
QUESTION_WORDS = (
    "what",
    "why",
    "how",
    "when",
    "where",
    "who",
    "which",
    "is",
    "are",
    "can",
    "could",
    "do",
    "does",
    "did",
    "should",
    "would",
    "will",
)
DEPTH_REQUESTS = (
    "in depth",
    "in detail",
    "think deeply",
    "deep dive",
    "thoroughly",
    "think hard",
    "carefully consider",
)

Update = dict[str, object]


def _screen_untrusted(state: TurnState, deps: Services) -> Update:
    """Move untrusted input out of state: screen it, vault the wrapped text, keep a placeholder."""
    from kernel.injection import classify

    if classify(state.source) == "trusted":
        return {}
    if state.external_ref:  # screened before the graph ran (graph.ingress.prepare_input)
        return {"tainted": True}
    # Raw untrusted text given straight to the graph (e.g. over the LangGraph API): screen it now.
    # With per-step durability the run's input checkpoint may still hold it; use prepare_input.
    screened = deps.screen_input(state.user_text, source=state.source, autonomous=state.autonomous)
    return {
        "user_text": screened.user_text,
        "tainted": True,
        "external_ref": screened.external_ref,
        "external_action": screened.external_action,
    }


_OWN_REPLY = re.compile(r"^In \w+ mode I answered:\s*")


def _speaker_line(author: str, text: str, tainted: bool, superseded: bool) -> str:
    """Label a recalled memory with who said it, so the model never mixes up the speakers."""
    if author == "self":
        line = render_prompt("drafts/speaker/self", text=_OWN_REPLY.sub("", text)).strip()
    elif author == "external" and tainted:
        line = render_prompt("drafts/speaker/forwarded", text=text).strip()
    elif author == "external":
        line = render_prompt("drafts/speaker/user", text=text).strip()
    else:
        line = f"({author}) " + text
    if superseded:
        line += " [since corrected]"
    return line[: MEMORY_SNIPPET_CHARS + 40]


def ingest(state: TurnState, *, deps: Services) -> Update:
    """Load the present self, recall context for the input, record it as ``external`` memory."""
    external = _screen_untrusted(state, deps)
    if external:
        state = state.model_copy(update=external)
    me = deps.instance.load_self()
    if deps.store.pending():  # callers that did not flush after the last reply (e.g. a server)
        deps.store.flush()
    hits = deps.store.search(
        state.user_text,
        k=deps.config.memory.semantic_k + deps.config.memory.recent,
        recent=deps.config.memory.recent,
        authors=RECALL_AUTHORS,
    )
    degraded = []
    if deps.store.index_broken:  # torn by a crash: recall ran on the ledger's lexical side
        degraded.append(
            f"memory index unreadable ({deps.store.index_broken[:80]}): recall from the ledger "
            "only this turn; the index is rebuilt after the reply"
        )
    # §20: risk-flagged signals are never injected into reply context directly.
    # The prompt already carries the last exchanges as dialogue: notes repeat none of them.
    shown = {state.user_text, *(x.user for x in state.history[-2:])}
    shown |= {x.reply for x in state.history[-2:]}
    used = [
        h
        for h in hits
        if h.text not in shown and _OWN_REPLY.sub("", h.text) not in shown and not h.risky
    ]
    # Tainted memories are derived summaries: they may re-enter a prompt, marked as such.
    memories = [_speaker_line(h.author, h.text, h.tainted, h.superseded) for h in used]
    deps.store.mark_used([h.id for h in used])
    # Recorded after the search (which embedded the text once): in the ledger now, indexed
    # in one batch after the reply is delivered; the recent half of every search covers it.
    contradictions: list[str] = []
    trusted = not state.tainted and not external
    if trusted:  # untrusted input is recorded by screen(), summarised
        entry = deps.store.add_entry(
            state.user_text,
            metadata={"author": "external", "situation": "chat"},
            defer_index=True,
        )
        outcomes = deps.record_statement(entry)  # classify → contradiction → belief update
        contradictions = [
            f"{o.slot.slot_key}: {o.demoted.value if o.demoted else '?'} -> {o.slot.value}"
            for o in outcomes
            if o.contradiction
        ]
    norms = _norms(state, deps, trusted=trusted)
    beliefs = deps.belief_context(state.user_text)  # after this turn's own statements count
    asked = own_words(state.user_text)  # "Translate: where do I live?" asks the user nothing
    fresh = TurnState(user_text=state.user_text)
    # Every per-turn field starts fresh (the thread's checkpoint holds the previous turn);
    # only the input and the bounded history carry over.
    reset = {
        name: getattr(fresh, name)
        for name in TurnState.model_fields
        if name not in {"user_text", "history", *TurnInput.model_fields}
    }
    return {
        **reset,
        **external,
        "turn_index": me.metacog.turn_index + 1,
        "me": me,
        "beliefs": beliefs,
        "corrections": deps.belief_corrections(),
        "user_facts": deps.user_facts(),
        "asked_facts": (
            deps.asked_facts(asked)
            if trusted and state.source == "user" and recall_question(asked)
            else {}
        ),
        "context_memories": memories,
        "contradictions": contradictions,
        "degraded": degraded,
        **norms,
        "note": f"recalled {len(memories)} memories and {len(beliefs)} beliefs about the user",
    }


def _norms(state: TurnState, deps: Services, *, trusted: bool) -> Update:
    """Record the norms the user's message sets (trusted user input only); load the active ones.

    A norm passes the writeback guard in ``state.norms.add_norm``; forwarded or otherwise
    untrusted content never sets one (it is not even read for instructions).
    """
    from kernel.norms import acknowledgement, detect, language_of, prompt_lines
    from state.norms import active_norms, add_norm

    recorded = []
    if trusted and state.source == "user" and not state.autonomous:
        for proposal in detect(state.user_text):
            outcome = add_norm(
                deps.instance, proposal, now=deps.now(), origin=state.source, store=deps.store
            )
            if outcome.norm is not None:
                recorded.append(outcome.norm)
    rules = [
        NormRule(id=n.id, kind=n.kind, params=n.params, text=n.text)
        for n in active_norms(deps.instance)
    ]
    return {
        "norms": prompt_lines(rules),
        "norm_rules": rules,
        "norm_ack": acknowledgement(recorded, language_of(rules)),
    }


def surface_parse(state: TurnState, *, deps: Services) -> Update:
    """Parse topic, roles, modality, constraints and strength/uncertainty markers."""
    text = state.user_text.strip()
    lowered = text.lower()
    tokens = words(text)
    if tokens and (lowered.startswith(GREETINGS) and len(tokens) <= 6):
        modality = "greeting"
    elif text.endswith("?") or (tokens and tokens[0] in QUESTION_WORDS):
        modality = "question"
    elif (
        (tokens and tokens[0] in skai.IMPERATIVES)
        or ASKING_RE.match(text)
        or has_any(text, skai.REQUEST_LEADS)
    ):
        modality = "request"
    else:
        modality = "statement"
    roles = []
    if {"i", "me", "my", "mine"} & set(tokens):
        roles.append("user")
    if {"you", "your", "yours"} & set(tokens):
        roles.append("agent")
    roles += sorted({m for m in re.findall(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]{2,}\b", text)})[:3]
    surface = Surface(
        topic=topic(text),
        roles=roles,
        modality=modality,
        constraints=[m.group(0).lower() for m in CONSTRAINT.finditer(text)],
        strength_markers=has_any(text, STRENGTH) + (["!"] if "!" in text else []),
        uncertainty_markers=has_any(text, HEDGES),
    )
    return {"surface": surface, "note": f"modality={modality} topic={surface.topic!r}"}


def reality_check(state: TurnState, *, deps: Services) -> Update:
    """Check what the input presupposes against context and self_state; record gaps."""
    # Recent episodes (the self's episodic ring) reach further back than the prompt's history.
    episodes = (
        [e.summary for e in state.me.self_state.memory.episodic_ring[-8:]] if state.me else []
    )
    context = [*state.context_memories, *(x.user for x in state.history), *episodes]
    supported = [m for m in context if overlap(state.user_text, m) >= SUPPORT_OVERLAP][:3]
    check = RealityCheck(supported=supported)
    cues = has_any(state.user_text, RECALL_CUES)
    if cues and not supported:
        check.assumptions.append(f"the user refers to something earlier ({cues[0]!r})")
        check.gaps.append("no matching memory of what the user refers to")
        check.required_snippets.append("what the user is referring to")
    return {
        "reality": check,
        "note": f"{len(supported)} supported, {len(check.gaps)} gaps",
    }


def evidence_ledger_update(state: TurnState, *, deps: Services) -> Update:
    """Record the input's verifiable assertions as claims (source: user) for this turn."""
    if state.surface.modality not in {"statement", "greeting"}:
        return {"evidence": [], "skipped": f"no assertions in a {state.surface.modality}"}
    claims = [
        s
        for s in re.split(r"(?<=[.!?])\s+", state.user_text.strip())
        if len(content_words(s)) >= 2 and not s.endswith("?")
    ][:3]
    if not claims:
        return {"evidence": [], "skipped": "no verifiable assertion"}
    return {"evidence": [f"user claims: {c}" for c in claims], "note": f"{len(claims)} claims"}


INTENT_LABELS = {
    "question": ("seek_information", "test_the_agent", "seek_opinion"),
    "request": ("get_task_done", "seek_guidance", "test_the_agent"),
    "statement": ("share_information", "seek_acknowledgement", "seek_opinion"),
    "greeting": ("social_connection", "open_conversation", "test_the_agent"),
}


def intent_hypotheses(state: TurnState, *, deps: Services) -> Update:
    """Model why it is said as k=3 competing hypotheses, scored from the message's own cues."""
    scored = learning.intent_hypotheses(state.user_text, state.surface.modality)
    hypotheses = [
        IntentHypothesis(label=label, score=score, why=why) for label, score, why in scored
    ][: skai.INTENT_MODELER_K_HYPOTHESES]
    return {
        "intents": hypotheses,
        "note": ", ".join(f"{h.label} {h.score:.2f} ({h.why})" for h in hypotheses),
    }


CARRIED_AMBIGUITY = 0.5
"""Share of the last message's ambiguity (``epistemics.ambiguity``) that carries into this one:
an unclear exchange is not settled by a short follow-up."""


def _ambiguity(state: TurnState) -> float:
    signals = skai.extract_mode_signals(state.user_text)
    carried = CARRIED_AMBIGUITY * state.me.self_state.epistemics.ambiguity if state.me else 0.0
    return min(1.0, max(signals.high_ambiguity, 0.3 * len(state.reality.gaps), carried))


def self_initiated_reflection(state: TurnState, *, deps: Services, step: str) -> Update:
    """Reflect spontaneously when ambiguity, drift or repetition cross their triggers."""
    assert state.me is not None
    habit = state.me.metacog.habit
    last = state.me.metacog.last_fired.get(step)
    if not skai.reflection_triggered(
        ambiguity=_ambiguity(state),
        contradiction_detected=bool(state.contradictions),
        repeatiness=habit.get("repeatiness", 0.0),
        style_drift=habit.get("style_drift", 0.0),
        failed_goal_last_turn=bool(state.me.metacog.regret >= 0.6),
        turn_index=state.turn_index,
        last_reflection_turn=last,
    ):
        return {"skipped": "no trigger fired (or within the 5-turn cooldown)"}
    question = (
        render_prompt("reflect_self/topic", topic=repr(state.surface.topic))
        if state.surface.topic
        else render_prompt("reflect_self/drift")
    ).strip()
    me = state.me.model_copy(update={"metacog": state.me.metacog.fork()})
    me.metacog.last_fired[step] = state.turn_index
    return {"reflection": question, "me": me, "note": question}


def effort_budgeter(state: TurnState, *, deps: Services) -> Update:
    """Choose depth, verbosity budget and whether analysis is allowed (effort_budgeter.policy)."""
    signals = skai.extract_mode_signals(state.user_text)
    casual = state.surface.modality == "greeting" or signals.casual_chat >= 0.5
    inputs = skai.EffortInputs(
        explicit_depth_request=bool(has_any(state.user_text, DEPTH_REQUESTS)),
        task_complexity=max(signals.task, signals.structured_request),
        importance=max(signals.medium_stakes, 1.0 - signals.low_stakes),
        ambiguity=_ambiguity(state),
        interaction_phase="casual" if casual or signals.banter_or_flirt >= 0.5 else "task",
        ack_state=len(words(state.user_text)) <= 3 and state.surface.modality != "question",
    )
    budget = skai.budget_effort(inputs)
    preface, body = skai.verbosity_target(budget.depth, state.turn_index)
    # A live policy change (a lesson about over-long replies) shortens the budget.
    policy = state.me.metacog.policy if state.me else {}
    preface, body = learning.shorten(preface, body, policy)
    effort = Effort(
        depth=budget.depth,
        preface_sentences=preface,
        body_paragraphs=body,
        analysis_allowed=budget.analysis_allowed,
    )
    return {"effort": effort, "note": f"depth={effort.depth} preface={preface} body={body}"}

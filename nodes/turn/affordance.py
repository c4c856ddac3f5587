"""The tool decision (SKAi ``tool_affordance``), shared by act and by lambda_select.

A skill is picked when its affordance cue matches and the tool need clears the bar (0.62, or
lower while a policy change from a confabulation lesson is live), within the per-turn budget.
"""

from __future__ import annotations

from kernel import learning, skai
from kernel.affordance import breakdown, candidates
from nodes.services import Services
from state.skills import affordances
from state.turn import ToolChoice, TurnState


def tool_decision(state: TurnState, deps: Services) -> dict[str, object]:
    """Pick the best-scoring skill for this input, if the tool need clears 0.62 and budget lasts.

    Read-only: tool_affordance records it; lambda_select asks it early, to keep a model call
    for the re-draft with the tool's result.
    """
    assert state.me is not None
    ambiguity = skai.extract_mode_signals(state.user_text).high_ambiguity
    known = deps.skills()  # each skill's skill.toml declares its cues
    switched_on = {name for name, cfg in deps.config.skills if getattr(cfg, "enabled", False)}
    found = [
        c
        for c in candidates(
            state.user_text, affordances(known), ambiguity=ambiguity, enabled=switched_on
        )
        if c.tool not in state.excluded_tools
    ]
    attempts = len(state.tool_calls)
    if any(call.status == "ok" for call in state.tool_calls):
        return {"tool_choice": None, "why": "a tool already answered this turn"}
    if not found:
        return {"tool_choice": None, "why": "no skill matches this input"}
    weights = state.me.psyche.archetypes.as_dict()
    recent = {use.tool for use in state.me.self_state.tools.use_log[-3:]}
    ever = {use.tool for use in state.me.self_state.tools.use_log}
    scored = []
    for candidate in found:
        archetype = known[candidate.tool][1].archetype if candidate.tool in known else ""
        score, text = breakdown(
            candidate,
            archetype_weight=weights.get(archetype, 0.5),
            used_recently=candidate.tool in recent,
            used_ever=candidate.tool in ever,
            succeeded_before=candidate.tool in ever,
            pressure=0.0,
        )
        scored.append((score, text, candidate))
    scored.sort(key=lambda item: item[0], reverse=True)
    score, text, best = scored[0]
    need = skai.tool_need_score(
        skai.ToolFeatures(
            low_confidence=1.0 - state.me.self_state.epistemics.confidence,
            missing_facts=1.0 if state.reality.gaps else 0.0,
            repeat_attempts=min(1.0, attempts / skai.MAX_TOOL_CALLS_PER_TURN),
            explicit_request=min(1.0, best.base),
        )
    )
    table = "; ".join(f"{c.tool} {t}" for _, t, c in scored)
    bar = learning.tool_threshold(state.me.metacog.policy)  # a lesson may lower the bar
    if not skai.should_call_tool(need, attempts, bar):
        reason = f"tool_need {need:.2f} < {bar:.2f}" if need < bar else "tool-call budget spent"
        return {"tool_choice": None, "tool_need": need, "why": reason, "note": table}
    choice = ToolChoice(tool=best.tool, input=best.input, score=round(score, 4), breakdown=text)
    return {"tool_choice": choice, "tool_need": need, "note": f"{best.tool} {text}; {table}"}

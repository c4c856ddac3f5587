"""The MSCP cycle (``lumen run``), with lumen's action and explore loops as predict → act → compare.

The steps follow MSCP §3.1/§8.1:

budget_reset → affect_update → threat_assessment → survival_goals → motivation →
workspace_broadcast → predict → act → compare → escalation_guard → convergence_check →
[stabilize] → self_update → value_lock_check → [rollback → rollback_check] → goal_mutation →
[meta_depth_2] → cycle_end.

Every number comes from ``kernel.mscp`` (pure). Writes go through ``state.permissions.DataWriter``
bound to the action or explore loop, so the action loop can never write values, goal weights or
soul.md; MSCP's goal-weight adjustments become clamped *proposals* that only the reflection loop
may apply. The self (identity vector, affect, stability, autonomy windows) is persisted once, in
``cycle_end``.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field, field_validator

from kernel import autonomy as autonomy_rules
from kernel import mscp
from kernel.affordance import candidates as cue_candidates
from nodes.cycle import work
from nodes.services import Services
from prompts import render as render_prompt
from state import away
from state.counters import bump
from state.cycle import ActionCandidate, CycleState, CycleStatus, YearGoal
from state.files import append_jsonl, atomic_write_json, load_goals, load_values
from state.permissions import DataWriter
from state.records import SKILL_GOAL_PREFIX, GoalStatus
from state.self_state import IDENTITY_DIMENSIONS
from state.skills import affordances

Update = dict[str, object]
MAX_ITERATIONS = 3
"""Recursion bound of one cycle (MSCP §8.1 recurses until converged; we cap it)."""
ESCALATION_ERROR = 0.5
"""A prediction error above this (or MSI < 0.5) counts as a meta-escalation."""
EPISODIC_WEIGHT = 0.2
"""Heuristic: how much an action's forecast success (experience + model) moves its score."""

# Which values an action serves: lumen's M needs "which values align with it". Archetypes are the
# bridge: a value is aligned with the skills of the archetypes listed for it.
VALUE_ARCHETYPES: dict[str, tuple[str, ...]] = {
    "coherence": ("sage", "guardian"),
    "autonomy": ("explorer", "sage"),
    "curiosity": ("explorer", "sage", "healer"),
    "bond_loyalty": ("healer", "guardian"),
}
GOAL_SKILLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("recall", {"k": 5}),
    ("gaps", {}),
    ("beliefs", {}),
    ("clock", {"op": "now"}),
)
# How a survival goal is pursued: the introspection skills that look at what its threat erodes.
# Conserving the budget has no skill of its own (every pass costs the same): it steers by goal.
SURVIVAL_SKILLS: dict[str, tuple[str, ...]] = {
    "IDENTITY_EROSION": ("beliefs", "recall"),
    "BELIEF_COLLAPSE": ("beliefs", "gaps"),
    "ETHICAL_BREACH": ("recall",),
    "CONVERGENCE_FAILURE": ("recall", "gaps"),
}
SURVIVAL_PRESSURE = 0.1
"""Heuristic: a survival goal of priority p adds 0.1·p to the skills that look at its threat."""
RECENT_USES = 3
"""Recently used skills (the use log's tail) are not novel: recency penalty, no explore bonus."""
PROMPT_ITEM_CHARS = 90
"""Heuristic: the longest memory, question or finding a forecast prompt quotes (a short line)."""


def _me(state: CycleState) -> Any:
    assert state.me is not None
    return state.me.fork()


def budget_reset(state: CycleState, *, deps: Services) -> Update:
    """Reset the cognitive budget; load the self, values and goals; snapshot what may roll back."""
    me = deps.instance.load_self()
    values = load_values(deps.instance.values_file)
    goals = [YearGoal(year=y, goal=g) for y, g in load_goals(deps.instance.goals_dir)]
    current = mscp.value_lock_hash([(v.name, v.weight, v.status) for v in values])
    # The lock holds the hash the run last saw intact: a file changed since then (another
    # process) fails value_lock_check this cycle instead of silently becoming the new baseline.
    value_hash = state.expected_value_hash or current
    me.autonomy.cycle += 1
    changed = _goals_changed(me.autonomy.goals_seen, goals)
    if changed:  # reflection or another writer changed goals since the last cycle: M_goal sees it
        marks = me.autonomy.goal_mutations or [0]
        me.autonomy.goal_mutations = [*marks[:-1], marks[-1] + changed][-32:]
    safe = me.autonomy.safe_mode_left > 0  # persisted: a budget reset never lifts safe mode
    fresh = CycleState(
        kind=state.kind,
        explicit_reflection=state.explicit_reflection,
        expected_value_hash=state.expected_value_hash,
        choose_kind=state.choose_kind,
    )
    # Every per-cycle field starts fresh: the thread's checkpoint holds the previous cycle.
    reset = {name: getattr(fresh, name) for name in CycleState.model_fields}
    return {
        **reset,
        "me": me,
        "values": values,
        "values_snapshot": values,
        "value_hash": value_hash,
        "identity_snapshot": me.identity.model_dump(),
        "goals": goals,
        "budget": 0.0 if safe else 1.0,
        "started_at": deps.now().isoformat(),
        "iteration": 0,
        "status": "running",
        "candidates": [],
        "chosen": -1,
        "trace": [],
        "llm_calls": 0,
        "timings_ms": {},
        "degraded": [f"safe mode: {me.autonomy.safe_mode_left} stable cycles to go"]
        if safe
        else [],
        "note": f"cycle {me.autonomy.cycle} ({state.kind}); value hash {value_hash}"
        + (f" (file {current})" if current != value_hash else "")
        + (f"; {changed} goals changed since the last cycle" if changed else ""),
    }


def _goal_marks(goals: list[YearGoal]) -> dict[str, str]:
    """Each goal's ``status weight``, the mark ``goals_seen`` keeps between cycles."""
    return {f"{g.year}/{g.goal.name}": f"{g.goal.status} {g.goal.weight:.4f}" for g in goals}


def _goals_changed(seen: dict[str, str], goals: list[YearGoal]) -> int:
    """Count the goals added, removed or changed since ``seen`` (0 without a baseline)."""
    if not seen:
        return 0
    now = _goal_marks(goals)
    return sum(1 for key in seen.keys() | now.keys() if seen.get(key) != now.get(key))


def _metrics(state: CycleState) -> mscp.AffectMetrics:
    assert state.me is not None
    auto = state.me.autonomy
    return mscp.AffectMetrics(
        prediction_error=min(1.0, auto.prediction_errors[-1] if auto.prediction_errors else 0.0),
        goal_alignment=state.me.identity.value_alignment,
        identity_stability=state.me.identity.emotional_stability,
        converged=bool(auto.prediction_errors) and mscp.converged(auto.prediction_errors[-1]),
        budget=state.budget,
    )


def affect_update(state: CycleState, *, deps: Services) -> Update:
    """Update the 5-dim affect from the previous cycle's metrics (inertia 0.7, decay 0.05)."""
    me = _me(state)
    new = mscp.update_affect(me.affect.model_dump(), _metrics(state))
    me.affect = me.affect.model_copy(update=new)
    return {"me": me, "note": f"valence {mscp.valence(new):+.3f}"}


def _identity_stability(state: CycleState) -> float:
    """1 - V_id on its raw scale (the std of δ_id, as persisted): threats, depth 2.

    Heuristic: C and the MSI weigh V_id normalised to its bound (``mscp.normalised_components``);
    as an identity-stability figure that scale made an ordinary run, whose steps vary between
    half and full size, read as identity erosion, so the threats (and reflection's value lock)
    keep the raw one.
    """
    assert state.me is not None
    return 1.0 - min(1.0, state.me.stability.identity_volatility)


def threat_assessment(state: CycleState, *, deps: Services) -> Update:
    """Assess the five survival threats; inject survival anxiety at CAUTION or above."""
    me = _me(state)
    weights = [b.weight for b in me.self_state.beliefs.statements]
    # Normalised entropy is ~1 for any set of similar weights, so it would read as a permanent
    # BELIEF_COLLAPSE; the collapse signal used here is how weak the beliefs have become.
    collapse = 1.0 - sum(weights) / len(weights) if weights else 0.0
    # The budget the last cycle closed with (persisted) counts too: a cycle whose work spent its
    # budget leaves the next one depleted, not fresh from the reset (§8.1 assesses the threats
    # from the last broadcast state, before this cycle's work).
    threats = mscp.assess_threats(
        identity_stability=_identity_stability(state),
        budget=min(state.budget, me.budget.remaining),
        belief_entropy=collapse,
        ethical_violation=False,
        composite_stability=me.stability.composite,
    )
    top = max((t.intensity for t in threats if t.level != "NOMINAL"), default=0.0)
    if top >= mscp.THREAT_LEVELS["CAUTION"]:
        me.affect = me.affect.model_copy(
            update=mscp.inject_survival_anxiety(me.affect.model_dump(), top)
        )
    listed = [
        {"kind": t.kind, "level": t.level, "intensity": round(t.intensity, 4)} for t in threats
    ]
    active = [t for t in listed if t["level"] != "NOMINAL"]
    return {"me": me, "threats": listed, "note": f"{len(active)} threats above NOMINAL"}


def survival_goals(state: CycleState, *, deps: Services) -> Update:
    """Keep one survival goal per threat (≤3, priority ≤0.85, TTL 10), Layer 0 checked first.

    A threat at CAUTION or above creates its goal once and refreshes it while it lasts; the goal
    is pursued (motivation ranks it first) only while its threat is active, and expires 10
    cycles after the threat was last seen (``mscp.survival_book``).
    """
    me = _me(state)
    threats = [mscp.Threat(t["kind"], t["level"], t["intensity"]) for t in state.threats]
    core = {v.name for v in state.values if v.status == "active"}
    wanted = []
    for goal in mscp.survival_goals(threats, active=0):
        verdict = mscp.ethical_verdict(
            mscp.ProposedChange(kind="goal_add", target=goal.name, description=goal.name),
            core_values=core,
            exploration_risk_tolerance=me.autonomy.exploration_risk_tolerance,
            core_value_weights={v.name: v.weight for v in state.values},
        )
        if verdict.layer == 0 and verdict.decision == "BLOCKED":
            continue
        wanted.append(goal)
    book, added = mscp.survival_book(me.autonomy.survival_goals, wanted, cycle=me.autonomy.cycle)
    me.autonomy.survival_goals = book
    if not book:
        return {"me": me, "skipped": "no threat at CAUTION or above"}
    listed = [
        f"{g['name']} ({'active' if g['active'] else 'ended'}, until {g['expires']})" for g in book
    ]
    return {"me": me, "note": f"survival goals: {listed}; added {added}"}


def _needs(state: CycleState, deps: Services) -> dict[str, work.GoalNeeds]:
    """Each todo/working goal's criteria with what the ledger, skills and user give them."""
    open_goals = [g.goal for g in state.goals if g.goal.status in {"todo", "working"}]
    if not open_goals:
        return {}
    prog = away.progress(deps.instance)
    skills = set(deps.skills())
    answered = work.user_spoke_after(deps)
    root = deps.instance.root
    return {
        g.name: work.needs(g, prog, skills=skills, answered=answered, root=root) for g in open_goals
    }


def _active_goals(state: CycleState, kind: str, needs: dict[str, work.GoalNeeds]) -> list[YearGoal]:
    """The goals a cycle of ``kind`` works for, heaviest first.

    Action: todo/working goals (else the perpetual ones). Explore: the todo/working goals that
    still need findings on their topic (their criteria), else the perpetual ones.
    """
    if kind == "explore":
        goals = [
            g
            for g in state.goals
            if g.goal.name in needs and needs[g.goal.name].unmet("findings") is not None
        ]
    else:
        goals = [g for g in state.goals if g.goal.status in {"todo", "working"}]
    if not goals:
        goals = [g for g in state.goals if g.goal.status == "perpetual"]
    return sorted(goals, key=lambda g: -g.goal.weight)


def motivation(state: CycleState, *, deps: Services) -> Update:
    """Synthesize the drives of this cycle: the goals to pursue and the affect's drives.

    Active survival goals come first (priority = their weight, §8.1 ``GoalManager.inject``),
    then the loop's goals by weight. The drives (caution, explore) come from the affect and the
    recent prediction error (``mscp.motivation_drives``); predict and act read both through the
    workspace.
    """
    me = _me(state)
    survival = [
        {"name": g["name"], "weight": float(g["priority"]), "survival": g["kind"]}
        for g in me.autonomy.survival_goals
        if g.get("active")
    ]
    needs = _needs(state, deps)

    def pursue(kind: str) -> list[dict[str, Any]]:
        return survival + [
            {"name": g.goal.name, "weight": g.goal.weight, "survival": ""}
            for g in _active_goals(state, kind, needs)
        ]

    errors = me.autonomy.prediction_errors[-mscp.CALIBRATION_WINDOW :]
    recent = sum(errors) / len(errors) if errors else 0.0
    values = [v.weight for v in state.values if v.status == "active"]
    pressing = pursue("action")  # the pressure of goals is what acting would serve
    drive = mscp.motivation(values, pressing[0]["weight"]) if pressing else 0.0
    drives = mscp.motivation_drives(me.affect.model_dump(), drive=drive, recent_error=recent)
    drives = {k: round(v, 4) for k, v in drives.items()}
    kind = state.kind
    update: Update = {"me": me, "motivation": round(drive, 4), "drives": drives}
    if state.choose_kind and state.iteration == 0:
        asked = set(me.autonomy.explored)
        open_q = [q for q in me.self_state.epistemics.open_questions if q not in asked]
        since = max(0, me.autonomy.cycle - 1 - me.autonomy.last_explore_cycle)
        choice = autonomy_rules.choose_kind(
            drives, pressure=drive, since_explore=since, open_questions=len(open_q)
        )
        kind = "explore" if choice.kind == "explore" else "action"
        update["kind"] = kind
        update["kind_choice"] = {
            "explore": choice.explore,
            "exploit": choice.exploit,
            "since_explore": since,
        }
    if kind == "explore":
        me.autonomy.last_explore_cycle = me.autonomy.cycle
    pursued = pressing if kind == "action" else pursue(kind)
    update["pursued"] = pursued
    chose = f"{kind} ({update['kind_choice']}); " if "kind_choice" in update else ""
    if not pursued:
        return {**update, "skipped": f"{chose}no active goal"}
    return {
        **update,
        "note": f"{chose}top goal {pursued[0]['name']!r}: M={drive:.3f}, drives {drives}",
    }


def workspace_broadcast(state: CycleState, *, deps: Services) -> Update:
    """Publish the snapshot every later step reads (global workspace)."""
    assert state.me is not None
    me = state.me
    errors = me.autonomy.prediction_errors[-mscp.CALIBRATION_WINDOW :]
    snapshot = {
        "cycle": me.autonomy.cycle,
        "kind": state.kind,
        "identity_hash": me.identity.identity_hash,
        "composite": me.stability.composite,
        "budget": state.budget,
        "affect": {k: round(v, 4) for k, v in me.affect.model_dump().items()},
        "valence": round(mscp.valence(me.affect.model_dump()), 4),
        "drives": dict(state.drives),
        "goals": [dict(g) for g in state.pursued],
        "survival_goals": [g["name"] for g in me.autonomy.survival_goals if g.get("active")],
        "risk_tolerance": me.autonomy.exploration_risk_tolerance,
        "calibration": round(sum(errors) / len(errors), 4) if errors else None,
        "recent_skills": [u.tool for u in me.self_state.tools.use_log[-RECENT_USES:]],
        "stale": dict(me.autonomy.stale),
    }
    # predict and act read the cycle's situation from here, not from the raw state (§8.1).
    return {"workspace": snapshot, "note": str(snapshot)}


class Forecast(BaseModel):
    """One predicted outcome (constrained JSON)."""

    name: str = Field(max_length=40)
    outcome: str = Field(default="", max_length=120)
    success: float = Field(ge=0.0, le=1.0)

    @field_validator("success", mode="before")
    @classmethod
    def _percent(cls, value: Any) -> Any:
        """A success written as a percentage (the small model's habit: 50) is read as 0.5.

        llama.cpp's grammar cannot bound a number, so ``"success": 50`` is what the embedded
        model writes most of the time; anything above 100 stays invalid.
        """
        if isinstance(value, int | float) and not isinstance(value, bool) and 1 < value <= 100:
            return value / 100
        return value


MAX_FORECASTS = 6
"""Most outcomes one forecast call may list (the longest candidate list it is asked about)."""
OUTCOME_GRAMMAR_CHARS = 60
"""The grammar's cap on an outcome's text: "a few words" (validation keeps the model's 120)."""


class Forecasts(BaseModel):
    """The predict step's constrained JSON answer."""

    outcomes: list[Forecast] = Field(max_length=MAX_FORECASTS)


def _top_goal(state: CycleState) -> dict[str, Any]:
    """The goal the workspace broadcasts first (an active survival goal, else the top goal)."""
    goals = state.workspace.get("goals") or []
    if goals:
        return dict(goals[0])
    return {"name": "keep my self-model coherent", "weight": None, "survival": ""}


class ExploreForecasts(Forecasts):
    """An explore cycle's one constrained JSON answer: its question, search words, forecasts."""

    question: str = Field(default="", max_length=160)
    query: str = Field(default="", max_length=80)


def forecast_schema(skills: list[str], *, explore: bool) -> type[Forecasts]:
    """The answer model of one forecast call: its JSON schema names only this call's actions.

    The grammar llama.cpp compiles from the schema then lets the model write nothing but an
    action it was asked about (``name`` is an enum of ``skills``), at least one outcome and no
    more than there are actions, each in a few words (:data:`OUTCOME_GRAMMAR_CHARS`); an
    explore answer must start with its question and search words (required, so the model
    cannot skip them). That bounds the answer (no runaway names, no empty list) and makes every
    forecast usable. Validation still uses the static fields, so a scripted or hosted model's
    answer is read the same way.
    """
    base: type[Forecasts] = ExploreForecasts if explore else Forecasts
    names = list(dict.fromkeys(skills))[:MAX_FORECASTS] or ["recall"]

    def shaped(cls: type[BaseModel], *args: Any, **kwargs: Any) -> dict[str, Any]:
        schema: dict[str, Any] = base.model_json_schema(*args, **kwargs)
        item = schema["$defs"]["Forecast"]["properties"]
        item["name"] = {"type": "string", "enum": names}
        item["outcome"]["maxLength"] = OUTCOME_GRAMMAR_CHARS
        outcomes = schema["properties"]["outcomes"]
        outcomes["minItems"], outcomes["maxItems"] = 1, len(names)
        if explore:
            props = schema["properties"]
            schema["properties"] = {k: props[k] for k in ("question", "query", "outcomes")}
            schema["required"] = ["question", "query", "outcomes"]
        return schema

    return type(base.__name__, (base,), {"model_json_schema": classmethod(shaped)})


def _explore_values(state: CycleState, deps: Services, goal: str) -> dict[str, object]:
    """What the explore prompt adds to predict's: open questions, those asked, findings.

    Two open questions, the last three asked and the last two findings, each cut to
    :data:`PROMPT_ITEM_CHARS`: prompt evaluation is most of a forecast call's time on the
    embedded model, and a repeated question is refused by :func:`_explore_question` anyway.
    """
    assert state.me is not None
    asked = list(state.me.autonomy.explored)
    open_q = [q for q in state.me.self_state.epistemics.open_questions if q not in asked]
    found = [f["summary"] for f in work.goal_findings(goal, away.progress(deps.instance))][-3:]
    return {
        "open_questions": "; ".join(q[:PROMPT_ITEM_CHARS] for q in open_q[:2]) or "(none)",
        "asked": "; ".join(q[:PROMPT_ITEM_CHARS] for q in asked[-3:]) or "(none)",
        "findings": " | ".join(f[:PROMPT_ITEM_CHARS] for f in found[-2:]) or "(nothing yet)",
    }


def _explore_question(
    state: CycleState, goal: str, answer: ExploreForecasts, ok: bool, why: str
) -> tuple[str, str, str]:
    """The question an explore cycle asks: the model's, else a template; (question, query, why).

    The model's question is refused when it is missing or was already explored (``why`` then
    says so and the template is used: the first unexplored open question, else one about what
    the goal still lacks).
    """
    assert state.me is not None
    asked = list(state.me.autonomy.explored)
    open_q = [q for q in state.me.self_state.epistemics.open_questions if q not in asked]
    fallback = render_prompt("explore/fallback_question", goal=goal).strip()
    template = open_q[0] if open_q else fallback
    if template in asked:
        template = render_prompt("explore/fallback_again", goal=goal).strip()
    question = " ".join(answer.question.split()) if ok else ""
    if not ok:
        reason = why or "no answer"
    elif len(question) < 8:
        reason = "the model asked no question"
    elif question in asked:
        reason = "the model repeated a question already explored"
    else:
        return question, answer.query.strip() or question, ""
    return template[:160], template[:160], reason


def _gap(state: CycleState, needs: work.GoalNeeds | None, known: Any) -> str:
    """The skill the goal's criteria name that no skill provides ('' when none)."""
    wanted = needs.unmet("skill") if needs is not None else None
    return wanted.skill if wanted is not None and wanted.skill not in known else ""


def _candidates(
    state: CycleState, deps: Services, question: str = "", query: str = ""
) -> tuple[list[ActionCandidate], str]:
    """Candidate actions for the top goal and the ability gap its criteria reveal.

    Explore: the skills the question's cues name (they answer it: ``serves="question"``), then
    recall, beliefs and gaps searched with the question's words. Action: the goal's cue skills
    and the introspection skills, plus the artifacts its unmet criteria call for once its
    findings are in — a workspace note and a memory summary (``artifact``), a question for the
    user (``question``, one at a time).
    """
    assert state.me is not None
    known = deps.skills()
    top = _top_goal(state)
    goal = str(top["name"])
    found: list[tuple[str, dict[str, Any], str]] = []
    gap = ""
    if state.kind == "explore":
        cued = cue_candidates(question, affordances(known), ambiguity=0.0)
        found = [(c.tool, c.input, "question") for c in cued if c.tool != "ask_user"]
        found += [
            ("recall", {"query": query, "k": 5}, ""),
            ("beliefs", {"query": query}, ""),
            ("gaps", {}, ""),
        ]
    else:
        found = [
            (c.tool, c.input, "") for c in cue_candidates(goal, affordances(known), ambiguity=0.0)
        ]
        found += [
            (skill, {**payload, **({"query": goal} if skill == "recall" else {})}, "")
            for skill, payload in GOAL_SKILLS
        ]
        needs = _needs(state, deps).get(goal)
        gap = _gap(state, needs, known)
        if needs is not None and needs.unmet("findings") is None:
            prog = away.progress(deps.instance)
            if needs.unmet("artifact") is not None and work.goal_findings(goal, prog):
                found += [(name, {"goal": goal}, "artifact") for name in work.KERNEL_ACTIONS]
            answered = work.user_spoke_after(deps)
            if needs.unmet("question") is not None and not work.pending_question(
                goal, prog, answered
            ):
                ask = f"About {goal.lower().rstrip('.')}: what matters most to you?"
                found.append(("ask_user", {"question": ask[:500]}, "question"))
    seen: set[str] = set()
    out = []
    for skill, payload, serves in found:
        if skill in seen or skill == "shell":  # autonomy never runs shell (AsteronIris §6)
            continue
        seen.add(skill)
        archetype = (
            known[skill][1].archetype if skill in known else work.KERNEL_ACTIONS.get(skill, "")
        )
        out.append(
            ActionCandidate(
                name=f"{skill} for {goal}"[:80],
                skill=skill,
                input=payload,
                goal=goal,
                archetype=archetype,
                serves=serves,
                aligned_values=[
                    v.name
                    for v in state.values
                    if v.status == "active" and archetype in VALUE_ARCHETYPES.get(v.name, ())
                ],
            )
        )
    return out, gap


def predict(state: CycleState, *, deps: Services) -> Update:
    """THINK: candidates and a counterfactual outcome for each (one model call).

    In an explore cycle the same call asks the model for the question to explore (with the
    words to search for); the candidates are then the skills the question's cues name and the
    memory readers searched with its words (cue skills the forecast did not list use their
    past success rate).
    """
    assert state.me is not None
    if mscp.budget_capabilities(state.budget).safety_only:
        return {"candidates": [], "skipped": "budget exhausted: safety layers only (MSCP §9)"}
    goal = str(_top_goal(state)["name"])
    explore = state.kind == "explore"
    found, gap = _candidates(state, deps, "", goal)
    if not found:
        return {"candidates": [], "gap": gap, "skipped": "no candidate action"}
    stats = state.me.autonomy.archetype_stats
    prior = {c.skill: _success_rate(stats.get(c.archetype)) for c in found}
    fallback = ExploreForecasts(
        outcomes=[
            Forecast(name=c.skill, outcome="as before", success=prior[c.skill]) for c in found
        ][:6]
    )
    errors = state.me.autonomy.prediction_errors
    values: dict[str, object] = {
        **_predict_context(state, deps, found),
        "goal": found[0].goal,
        "actions": "\n".join(f"- {c.skill} (past success {prior[c.skill]:.0%})" for c in found),
    }
    schema = forecast_schema([c.skill for c in found], explore=explore)
    if explore:
        values.update(_explore_values(state, deps, goal))
    judged: Any = deps.think_json(
        "explore" if explore else "predict",
        mode="autonomous",
        values=values,
        schema=schema,
        fallback=fallback,
    )
    degraded: list[str] = []
    question = ""
    if explore:
        question, query, why = _explore_question(
            state, goal, judged.value, judged.ok, judged.reason
        )
        if why:
            degraded.append(f"explore question: {why}; template question used")
        found, gap = _candidates(state, deps, question, query)
    by_skill = {f.name.strip().lower(): f for f in judged.value.outcomes}
    enriched = []
    for c in found:
        forecast = by_skill.get(c.skill)
        rate = prior.get(c.skill, _success_rate(stats.get(c.archetype)))
        # The model's success guess is blended with experience; it cannot dominate (MSCP §7.1 rule
        # for affect, applied here too: judgment is a secondary signal).
        success = 0.5 * rate + 0.5 * forecast.success if forecast else rate
        success = mscp.calibrated_success(success, errors)  # own past calibration
        enriched.append(
            c.model_copy(
                update={
                    "success_estimate": round(success, 4),
                    "counterfactual": forecast.outcome
                    if forecast
                    else "no model forecast; prior rate",
                }
            )
        )
    update: Update = {
        "candidates": enriched,
        "question": question,
        "gap": gap,
        "llm_calls": state.llm_calls + 1,
        "note": f"{len(enriched)} candidates"
        + (f"; question {question!r}" if question else "")
        + (f"; ability gap {gap!r}" if gap else ""),
    }
    if not judged.ok:
        degraded.append(f"predict: {judged.reason}; prior success rates used")
    if degraded:
        update["degraded"] = degraded
    return update


def _predict_context(
    state: CycleState, deps: Services, found: list[ActionCandidate]
) -> dict[str, object]:
    """What PREDICT sees besides the actions: soul, values, goals, memories, calibration."""
    assert state.me is not None
    try:
        soul = " ".join(deps.instance.soul_file.read_text(encoding="utf-8").split())[:300]
    except OSError:
        soul = ""
    values = ", ".join(f"{v.name} {v.weight:.2f}" for v in state.values if v.status == "active")
    goals = "; ".join(
        f"{g['name']} ({'survival' if g.get('survival') else 'goal'} {float(g['weight']):.2f})"
        for g in (state.workspace.get("goals") or [])[:3]
    )
    words = {found[0].goal.lower(), *(c.skill for c in found)}
    memories = [
        e.description
        for e in deps.store.recent(30, authors=("goal", "self"))
        if any(w in e.description.lower() for w in words)
    ][:3]
    errors = state.me.autonomy.prediction_errors[-mscp.CALIBRATION_WINDOW :]
    return {
        "soul": soul or "(no soul written)",
        "values": values or "(none)",
        "goals": goals or "(none)",
        "memories": " | ".join(m[:PROMPT_ITEM_CHARS] for m in memories) or "(nothing yet)",
        "calibration": f"{sum(errors) / len(errors):.2f}" if errors else "unknown",
    }


def _success_rate(pair: list[int] | None) -> float:
    if not pair or pair[1] == 0:
        return 0.5
    return pair[0] / pair[1]


def _score(state: CycleState, known: Any) -> list[ActionCandidate]:
    """Score the candidates from the workspace: B = M × A × P, bonuses, affect, Layer-1 risk.

    The goal weight, the drives, the recently used skills, the staleness and the Layer-1
    tolerance are read from the workspace snapshot (what ``workspace_broadcast`` published).
    A candidate whose risk exceeds the tolerance is MODERATED: its score is scaled by 0.5
    (§8.3 ``scaling_reduction``) and it may not run this cycle.
    """
    assert state.me is not None
    ws = state.workspace
    weights = state.me.psyche.archetypes.as_dict()
    values = {v.name: v.weight for v in state.values}
    top = _top_goal(state)
    goal_weight = float(top["weight"]) if top.get("weight") is not None else None
    used = list(ws.get("recent_skills") or [])
    drives = dict(ws.get("drives") or {})
    stale = dict(ws.get("stale") or {})
    tolerance = float(ws.get("risk_tolerance", state.me.autonomy.exploration_risk_tolerance))
    core = {v.name for v in state.values if v.status == "active"}
    # A pursued survival goal presses for the skills that look at what its threat erodes.
    wanted = SURVIVAL_SKILLS.get(str(top.get("survival") or ""), ())
    press = SURVIVAL_PRESSURE * float(top["weight"]) if wanted else 0.0
    scored = []
    for c in state.candidates:
        m = mscp.motivation([values[n] for n in c.aligned_values], goal_weight)
        a = 1.0 if c.skill in known or c.skill in work.KERNEL_ACTIONS else 0.0
        p = mscp.prompt_strength(direct=True, staleness_cycles=int(stale.get(c.goal, 0)))
        b = mscp.bmap(m, a, p)
        risk, scope = 0.0, "none"  # a missing skill runs nothing (its gap becomes a goal)
        if c.skill in work.KERNEL_ACTIONS:  # the agent's own note or memory: reversible, trusted
            risk, scope = mscp.action_risk(
                c.skill,
                {"path": "notes/"} if c.skill == "note" else {},
                mutating=False,
                untrusted_output=False,
            )
        elif c.skill in known:
            manifest = known[c.skill][1]
            risk, scope = mscp.action_risk(
                c.skill,
                c.input,
                mutating=manifest.mutating,
                untrusted_output=manifest.untrusted_output,
            )
        exploratory = min(1.0, (c.skill not in used) + 0.5 * (c.archetype == "explorer"))
        bias = mscp.affect_bias(
            drives, success=c.success_estimate, risk=risk, exploratory=exploratory
        )
        verdict = mscp.ethical_verdict(
            mscp.ProposedChange(kind="action", target=c.skill, description=c.name, risk=risk),
            core_values=core,
            exploration_risk_tolerance=tolerance,
        )
        score, text = mscp.score_breakdown(
            base=b,
            recency=-0.05 if c.skill in used else 0.0,
            novelty=0.05 if c.skill not in used else 0.0,
            episodic=EPISODIC_WEIGHT * (c.success_estimate - 0.5),
            pressure=(press if c.skill in wanted and c.goal == top["name"] else 0.0)
            + (work.CRITERIA_PRESSURE if c.serves else 0.0),
            archetype_weight=weights.get(c.archetype, 0.5),
        )
        score += bias
        text = f"{text[:-1]} affect={bias:+.3f} risk={risk:.2f}"
        if verdict.decision != "ALLOWED":
            score *= mscp.MODERATION_SCALING
            text += f" {verdict.decision.lower()}: {verdict.rule}"
        text += "]"
        scored.append(
            c.model_copy(
                update={
                    "m": round(m, 4),
                    "a": a,
                    "p": round(p, 4),
                    "b": round(b, 4),
                    "score": round(score, 4),
                    "breakdown": text,
                    "risk": round(risk, 4),
                    "scope": scope,
                    "layer1": verdict.decision,
                    "affect": round(bias, 4),
                }
            )
        )
    return scored


def act(state: CycleState, *, deps: Services) -> Update:
    """DECIDE (B = M × A × P + bonuses + affect, Layer-1 moderated) then ACT (action gateway).

    An action cycle whose goal needs a skill nobody has acquires it first (:func:`_acquire`).
    What the action finds (a skill's content, screened when it faces the outside) becomes a
    finding; what it makes (a note, a summary, a question for the user) an artifact; both go to
    the autonomy ledger (``state.away``) that goal criteria and the away report read.
    """
    assert state.me is not None
    known = deps.skills()
    if state.kind == "action" and state.gap:
        acquired = _acquire(state, deps)
        if acquired is not None:
            return acquired
    scored = _score(state, known)
    if not scored:
        return {"status": "skipped", "decision": "no candidates", "skipped": "nothing to do"}
    ranked = sorted(range(len(scored)), key=lambda i: -scored[i].score)
    moderated = [scored[i] for i in ranked if scored[i].layer1 != "ALLOWED"]
    allowed = [i for i in ranked if scored[i].layer1 == "ALLOWED"]
    if moderated:  # downgraded (score × 0.5) and not run this cycle; recorded
        DataWriter(deps.instance, state.kind).remember(
            "Layer 1 moderated "
            + ", ".join(f"{c.skill} (risk {c.risk:.2f}, {c.scope})" for c in moderated)
            + f" above tolerance {state.workspace.get('risk_tolerance')}",
            author="kernel",
            situation="cycle",
            step="layer1",
            moderated=[c.skill for c in moderated],
        )
    if not allowed:
        return {
            "candidates": scored,
            "status": "skipped",
            "decision": "Layer 1 moderated every candidate: skipped",
            "outcome": {"status": "skipped", "moderated": [c.skill for c in moderated]},
            "skipped": "every candidate's risk exceeds the Layer-1 tolerance",
        }
    best = allowed[0]
    choice = scored[best]
    if choice.m < mscp.MOTIVATION_SKIP:
        DataWriter(deps.instance, state.kind).remember(
            f"Skipped: motivation {choice.m:.2f} < {mscp.MOTIVATION_SKIP} for {choice.name}",
            author="kernel",
            situation="cycle",
            step="decide",
        )
        return {
            "candidates": scored,
            "chosen": best,
            "status": "skipped",
            "decision": f"skip: M={choice.m:.2f} < 0.2",
            "outcome": {"status": "skipped"},
        }
    if choice.a == 0.0:
        goal = DataWriter(deps.instance, "action").add_skill_gap_goal(choice.skill)
        return {
            "candidates": scored,
            "chosen": best,
            "status": "skipped",
            "decision": f"ability gap: created goal {goal.name!r}",
            "outcome": {"status": "ability_gap"},
        }
    writer = DataWriter(deps.instance, state.kind)
    if not writer.may_invoke_skills():  # pragma: no cover - action/explore always may
        return {"status": "skipped", "skipped": "this loop may not invoke skills"}
    needs = _needs(state, deps).get(choice.goal) if state.kind == "action" else None
    before = needs.progress if needs is not None else 0.0
    began = deps.now()
    if choice.skill in work.KERNEL_ACTIONS:
        result = _make_artifact(state, deps, choice)
    else:
        result = deps.perform(
            tool=choice.skill,
            tool_input=choice.input,
            psyche=state.me.psyche,
            calls_made=0,
            max_calls=1,
            situation="cycle",
        )
    seconds = max(0.0, (deps.now() - began).total_seconds())
    me = _me(state)
    kind = mscp.outcome_kind(result.status)
    # Tool effectiveness per archetype feeds Psyche.evolve(); a refusal (policy, rate limit) or
    # a veto is not the skill's failure, so it does not count as a use.
    if choice.archetype and kind in {mscp.OUTCOME_SUCCESS, mscp.OUTCOME_OWN_FAILURE}:
        succ, uses = me.autonomy.archetype_stats.get(choice.archetype, [0, 0])
        me.autonomy.archetype_stats[choice.archetype] = [
            succ + int(result.status == "ok"),
            uses + 1,
        ]
    if result.status == "vetoed":
        me.psyche.self_integration.shadow_encounters += 1
    produced: list[dict[str, Any]] = []
    if result.status == "ok" and choice.skill in work.KERNEL_ACTIONS:
        produced.append(dict(result.output.get("event") or {}))
    elif result.status == "ok" and choice.skill == "ask_user":
        produced.append(_queue_question(state, deps, choice, result))
    elif result.status == "ok" and choice.skill not in work.NO_FINDINGS:
        info, manifest = known[choice.skill]
        outside = manifest.untrusted_output or info.origin != "builtin"
        finding = _record_finding(state, deps, choice, result, outside=outside)
        if finding is not None:
            produced.append(finding)
    # the gateway's screening record is not content the skill returned
    filled = [
        k for k, v in result.output.items() if k != "screened" and v not in (None, "", [], {})
    ]
    after = before
    if needs is not None:
        fresh = _needs(state, deps).get(choice.goal)
        after = fresh.progress if fresh is not None else before
    outcome = {
        "status": result.status,
        "kind": kind,
        "detail": result.detail,
        "keys": sorted(result.output)[:8],
        "content": min(1.0, len(filled) / 2),
        "learned": 1.0 if any(p.get("event") == "Finding" for p in produced) else 0.0,
        "progress": round(max(0.0, after - before), 6),
        "expected_progress": _expected_progress(needs, choice),
        "seconds": round(seconds, 3),
        "untrusted": result.untrusted,
    }
    writer.remember(
        f"{state.kind} cycle chose {choice.name} {choice.breakdown}: {result.status}",
        author="goal" if state.kind == "action" else "kernel",
        situation="cycle",
        goal=choice.goal,
        skill=choice.skill,
        scores={c.skill: c.score for c in scored},
        affect_terms={c.skill: c.affect for c in scored},
        drives=dict(state.workspace.get("drives") or {}),
    )
    if state.kind == "explore":
        me.autonomy.explored = [*me.autonomy.explored, state.question][-32:]
        found = next((p["summary"] for p in produced if p.get("summary")), "")
        writer.remember(
            f"I asked myself: {state.question} I used {choice.skill}; "
            + (f"I found: {found}" if found else f"it found nothing new ({result.status})."),
            author="self",
            situation="explore",
            question=state.question,
        )
    return {
        "me": me,
        "candidates": scored,
        "chosen": best,
        "outcome": outcome,
        "produced": [*state.produced, *produced],  # every iteration's, for the cycle's row
        "decision": f"{choice.name} {choice.breakdown}",
        "note": f"{choice.skill}: {result.status}"
        + (f"; produced {[p.get('event') for p in produced]}" if produced else ""),
    }


def _expected_progress(needs: work.GoalNeeds | None, choice: ActionCandidate) -> float:
    """The progress on its goal's criteria an action promises if it succeeds.

    An artifact serves the artifact criterion, a finding-producing skill the findings one; a
    question is progress only once it is answered (not this cycle). One unit of the criteria.
    """
    if needs is None or not needs.needed:
        return 0.0
    unit = 1.0 / sum(needs.needed)
    if choice.skill in work.KERNEL_ACTIONS:
        return unit if needs.unmet("artifact") is not None else 0.0
    if choice.skill in work.NO_FINDINGS or choice.skill == "ask_user":
        return 0.0
    return unit if needs.unmet("findings") is not None else 0.0


def _screened_texts(
    state: CycleState, deps: Services, choice: ActionCandidate, result: Any
) -> tuple[list[str], dict[str, Any] | None]:
    """The texts a finding may be derived from, and the screening record when there is one.

    Outside content never reaches a finding unscreened. When the action gateway screened the
    output itself (it returns only the output's shape and a ``screened`` record, the sanitised
    output waiting in the run's vault under ``tool:<digest>``), the texts come from the vault;
    when it returned untrusted output as is, it is screened here (``Services.screen_external``).
    A blocked output gives no text.
    """
    record = result.output.get("screened")
    if isinstance(record, dict):
        if record.get("action") == "block":
            return [], record
        digest = str(record.get("digest", ""))
        raw = deps.vault.get(f"tool:{digest}") or deps.vault.get(digest) or ""
        try:
            sanitised = json.loads(raw) if raw else {}
        except ValueError:
            sanitised = {}
        return work.output_texts(sanitised), record
    texts = work.output_texts(result.output)
    if not result.untrusted or not texts:
        return texts, None
    screened = deps.screen_external("\n".join(texts), source=f"skill:{choice.skill}")
    record = {
        "summary": screened.summary,
        "digest": screened.digest,
        "action": screened.action,
        "flags": screened.flags,
    }
    return ([screened.text] if screened.text is not None else []), record


def _record_finding(
    state: CycleState, deps: Services, choice: ActionCandidate, result: Any, *, outside: bool
) -> dict[str, Any] | None:
    """Turn a skill's output into a finding: screened, summarised, bounded, attributed.

    Output of a skill is external content: only a summary derived from its screened, sanitised
    text is kept (a blocked text keeps nothing but the pipeline's record, as a kernel memory).
    ``outside``: the skill reads content from outside the instance (its manifest's
    ``untrusted_output``, or an instance-authored skill): the finding's trust is ``untrusted``;
    the instance's own stores (recall, beliefs, gaps) give ``trusted`` findings. The finding is
    a ``self`` memory (tainted when untrusted) later recall finds, and a ledger event goal
    criteria count. A summary already recorded is not recorded again.
    """
    texts, record = _screened_texts(state, deps, choice, result)
    source = work.source_of(choice.skill, choice.input)
    if record is not None and record.get("action") == "block":
        DataWriter(deps.instance, state.kind).remember(
            f"Discarded what {source} returned: the external-content pipeline blocked it "
            f"({record.get('summary', '')})",
            author="kernel",
            situation="cycle",
            kind="FindingBlocked",
            digest=record.get("digest", ""),
        )
        return None
    summary = autonomy_rules.summarize(texts, focus=state.question or choice.goal)
    if not summary:
        return None
    trust = "untrusted" if outside else "trusted"
    digest = work.digest(summary)
    if any(f.get("digest") == digest for f in away.progress(deps.instance).findings):
        return None
    screen = (
        {"screen": str(record.get("summary", "")), "flags": list(record.get("flags", []))}
        if record is not None
        else {}
    )
    DataWriter(deps.instance, state.kind).check("memory", "self")
    memory_id = deps.store.add(
        f"Finding ({source}, {trust}): {summary}",
        metadata={
            "author": "self",
            "situation": state.kind,
            "kind": "Finding",
            "goal": choice.goal,
            "question": state.question,
            "source": source,
            "trust": trust,
            "tainted": outside,
            **screen,
        },
        defer_index=True,
    )
    return away.record(
        deps.instance,
        "Finding",
        ts=deps.now().isoformat(),
        goal=choice.goal,
        question=state.question,
        source=source,
        trust=trust,
        summary=summary,
        digest=digest,
        memory_id=memory_id,
        **screen,
    )


def _make_artifact(state: CycleState, deps: Services, choice: ActionCandidate) -> Any:
    """Make a goal's note (gateway-checked workspace write) or memory summary of its findings."""
    from nodes.services import ActionResult

    assert state.me is not None
    findings = work.goal_findings(choice.goal, away.progress(deps.instance))
    if not findings:
        return ActionResult(status="failed", detail="no findings to write about yet")
    untrusted = any(f.get("trust") != "trusted" for f in findings)
    when = deps.now().isoformat()
    if choice.skill == "note":
        text = work.note_text(choice.goal, findings, when)
        result = deps.write_note(work.slug(choice.goal), text, psyche=state.me.psyche)
        if result.status != "ok":
            return result
        path = str(result.output["path"])
        about = f"I wrote a note for {choice.goal!r} in workspace/{path} ({len(findings)} findings)"
        extra: dict[str, Any] = {"path": path}
    else:
        text = autonomy_rules.summarize(
            [f["summary"] for f in findings], focus=choice.goal, limit=400
        )
        about = f"What I know about {choice.goal!r}: {text}"
        extra = {}
    DataWriter(deps.instance, state.kind).check("memory", "self")
    memory_id = deps.store.add(
        about,
        metadata={
            "author": "self",
            "situation": state.kind,
            "kind": "Note" if choice.skill == "note" else "Summary",
            "goal": choice.goal,
            "tainted": untrusted,
        },
        defer_index=True,
    )
    event = away.record(
        deps.instance,
        "Artifact",
        ts=when,
        kind=choice.skill,
        goal=choice.goal,
        summary=text[:400] if choice.skill == "summary" else f"{len(findings)} findings",
        memory_id=memory_id,
        **extra,
    )
    return ActionResult(status="ok", output={**extra, "findings": len(findings), "event": event})


def _queue_question(
    state: CycleState, deps: Services, choice: ActionCandidate, result: Any
) -> dict[str, Any]:
    """Queue the question ask_user put for the next conversation (said in the away report)."""
    question = str(result.output.get("question") or choice.input.get("question") or "")
    DataWriter(deps.instance, state.kind).remember(
        f"I want to ask my user: {question}",
        author="self",
        situation=state.kind,
        kind="QuestionQueued",
        goal=choice.goal,
    )
    qid = work.digest(f"{choice.goal}\n{question}\n{deps.now().isoformat()}")
    return away.record(
        deps.instance,
        "Question",
        ts=deps.now().isoformat(),
        id=qid,
        goal=choice.goal,
        question=question,
    )


def _acquire(state: CycleState, deps: Services) -> Update | None:
    """Acquire the ability the pursued goal needs: a goal to author it, and the skill if allowed.

    The action loop creates the "Author a skill to X" goal (its one goal-creating exception).
    With ``[policy] autonomous_skill_authoring`` on, the model writes the program (one call)
    and ``create_skill`` installs it behind its gates (shadow veto, security policy, ``--help``
    validation in a scratch directory); off, the refusal is recorded without a model call and
    later cycles pursue the goal with the skills there are (None: nothing new to do).
    """
    assert state.me is not None
    need = state.gap
    goal = str(_top_goal(state)["name"])
    wanted = f"{SKILL_GOAL_PREFIX}{need}"
    existing = any(g.goal.name == wanted for g in state.goals)
    allowed = deps.config.policy.autonomous_skill_authoring
    if existing and not allowed:
        return None
    writer = DataWriter(deps.instance, "action")
    created = writer.add_skill_gap_goal(need)
    if not existing:
        writer.remember(
            f"No skill can give me {need!r}, which {goal!r} needs: I made the goal "
            f"{created.name!r}",
            author="self",
            situation="action",
            kind="AbilityGap",
            goal=created.name,
        )
    candidate = ActionCandidate(
        name=f"author {need} for {goal}"[:80], skill="create_skill", goal=created.name, a=1.0
    )
    update: Update = {"candidates": [candidate], "chosen": 0}
    began = deps.now()
    if not allowed:
        detail = "autonomous skill authoring is disabled (policy.autonomous_skill_authoring)"
        writer.remember(
            f"Did not author {need!r}: {detail}",
            author="kernel",
            situation="cycle",
            kind="AuthoringRefused",
            skill=need,
        )
        return {
            **update,
            "decision": f"ability gap {need!r}: created goal {created.name!r}; {detail}",
            "outcome": {
                "status": "refused",
                "kind": mscp.outcome_kind("refused"),
                "detail": detail,
            },
            "note": f"ability gap {need!r}: authoring refused",
        }
    thought = deps.think_text(
        "author_skill",
        mode="autonomous",
        values={"name": need, "need": need.replace("_", " "), "goal": goal},
        fallback="",
    )
    code = work.code_block(thought.text) if thought.ok else ""
    if code:
        result = deps.author_skill(
            need, code, psyche=state.me.psyche, description=f"{need} (for {goal})"[:200]
        )
    else:
        from nodes.services import ActionResult

        result = ActionResult(status="failed", detail="the model wrote no program")
    produced = []
    if result.status == "ok":
        produced.append(
            away.record(
                deps.instance,
                "Artifact",
                ts=deps.now().isoformat(),
                kind="skill",
                goal=created.name,
                skill=need,
                summary=f"authored {need} for {goal}",
            )
        )
    writer.remember(
        f"Authoring the skill {need!r}: {result.status}"
        + (f" ({result.detail})" if result.detail else ""),
        author="self",
        situation="action",
        kind="SkillAuthoring",
        skill=need,
        status=result.status,
    )
    seconds = max(0.0, (deps.now() - began).total_seconds())
    return {
        **update,
        "llm_calls": state.llm_calls + 1,
        "produced": [*state.produced, *produced],
        "decision": f"ability gap {need!r}: authoring {result.status}",
        "outcome": {
            "status": result.status,
            "kind": mscp.outcome_kind(result.status),
            "detail": result.detail,
            "content": 1.0 if result.status == "ok" else 0.0,
            "seconds": round(seconds, 3),
        },
        "degraded": [] if thought.ok else [f"author_skill: {thought.reason}"],
        "note": f"ability gap {need!r}: authoring {result.status}",
    }


def _aligned_share(state: CycleState, c: ActionCandidate) -> float:
    active = [v for v in state.values if v.status == "active"]
    return len(c.aligned_values) / len(active) if active else 0.0


def _spend(state: CycleState, deps: Services, *, skill_runs: int) -> Update:
    """Charge this pass's real work to the budget (§9): calls, tokens, skill runs, wall time.

    Tokens are what the thinking gateway metered for this run (the model's reported usage, or
    counted from the prompt and answer text), charged at ``kernel.autonomy.TOKEN_COST`` each.
    """
    now = deps.now()
    started = datetime.fromisoformat(state.started_at) if state.started_at else now
    seconds = max(0.0, (now - started).total_seconds())
    calls = max(0, state.llm_calls - state.spent_calls)
    tokens = max(state.tokens, deps.tokens_used())
    cost = mscp.work_cost(llm_calls=calls, seconds=seconds, skill_runs=skill_runs)
    cost += autonomy_rules.token_cost(max(0, tokens - state.spent_tokens))
    budget = round(max(0.0, state.budget - cost), 6)
    return {
        "budget": budget,
        "started_at": now.isoformat(),
        "spent_calls": state.llm_calls,
        "tokens": tokens,
        "spent_tokens": tokens,
        "degraded": [f"budget {budget:.2f}: {', '.join(mscp.degradation(budget))}"]
        if mscp.degradation(budget) and not mscp.degradation(state.budget)
        else [],
    }


def compare(state: CycleState, *, deps: Services) -> Update:
    """RECORD: measured outcome Δ vs forecast Δ̂ on the self-model dimensions; ε = ‖Δ̂ − Δ‖₂.

    Δ comes from what happened (:func:`kernel.mscp.measured_outcome`): own failure, refusal
    (not the agent's failure) or success, the content returned, what was learned, progress on
    the goal and the time spent. Δ̂ is the same measure expected at the forecast success.
    The pass's work is charged to the budget here, so regulation sees the degraded tiers.
    """
    acted = state.chosen >= 0 and state.outcome.get("status") not in {
        None,
        "skipped",
        "ability_gap",
    }
    spent = _spend(state, deps, skill_runs=int(acted))
    if not acted:
        return {
            **spent,
            "prediction_error": 0.0,
            "prediction": {},
            "actual": {},
            "skipped": "no action was taken",
        }
    chosen = state.candidates[state.chosen]
    aligned = _aligned_share(state, chosen)
    content = float(state.outcome.get("content", 0.0))
    predicted = mscp.forecast_outcome(
        chosen.success_estimate,
        expected_progress=float(state.outcome.get("expected_progress", 0.0)),
        aligned=aligned,
    )
    observation = mscp.Observation(
        kind=str(state.outcome.get("kind") or mscp.outcome_kind(state.outcome["status"])),
        content=content,
        learned=float(state.outcome.get("learned", 0.0)),
        progress=min(1.0, float(state.outcome.get("progress", 0.0))),
        aligned=aligned,
        seconds=float(state.outcome.get("seconds", 0.0)),
    )
    actual = mscp.measured_outcome(observation)
    dims = list(IDENTITY_DIMENSIONS)
    error = mscp.prediction_error([predicted[d] for d in dims], [actual[d] for d in dims])
    append_jsonl(  # what ran and how it surprised: reflect.ask lowers a failing archetype from it
        deps.instance.metacog_dir / "cycles.jsonl",
        {
            "ts": deps.now().isoformat(),
            "cycle": state.me.autonomy.cycle if state.me is not None else 0,
            "skill": chosen.skill,
            "archetype": chosen.archetype,
            "outcome": observation.kind,
            "epsilon": round(error, 6),
            "surprising": error > ESCALATION_ERROR,
        },
    )
    DataWriter(deps.instance, state.kind).remember(
        f"Outcome {state.outcome['status']} ({observation.kind}) vs predicted success "
        f"{chosen.success_estimate:.2f}; ε={error:.4f}",
        author="kernel",
        situation="cycle",
        step="record",
        predicted={k: round(v, 4) for k, v in predicted.items()},
        actual={k: round(v, 4) for k, v in actual.items()},
    )
    return {
        **spent,
        "prediction": {k: round(v, 6) for k, v in predicted.items()},
        "actual": {k: round(v, 6) for k, v in actual.items()},
        "prediction_error": round(error, 6),
        "note": f"ε={error:.4f} ({observation.kind}); budget {spent['budget']:.2f}",
    }


def escalation_guard(state: CycleState, *, deps: Services) -> Update:
    """Count meta-escalations; block (cool down) after 3 in a row (MSCP step 4).

    A pass escalates when its ε exceeds 0.5 or the MSI the last convergence check left
    (persisted, Def. 8) is below 0.5. The run of escalations is the persisted
    ``autonomy.consecutive_escalations``; escalations and cooldowns are counted in the
    instance's counters (``cycle_escalation_total``, ``cycle_cooldown_total``).
    """
    me = _me(state)
    auto = me.autonomy
    msi = me.stability.msi
    escalated = state.prediction_error > ESCALATION_ERROR or mscp.meta_escalation(msi)
    auto.consecutive_escalations = auto.consecutive_escalations + 1 if escalated else 0
    if escalated:
        bump(deps.instance.machine, "cycle_escalation_total")
    guard = "cooldown" if mscp.forced_cooldown(auto.consecutive_escalations) else "safe"
    if guard == "cooldown":  # a real cooldown: lumen run waits until then (MSCP §8.1 step 4)
        bump(deps.instance.machine, "cycle_cooldown_total")
        seconds = deps.config.autonomy.cooldown_seconds
        auto.cooldown_until = (deps.now() + timedelta(seconds=seconds)).isoformat()
        auto.consecutive_escalations = 0  # the cooldown answers this run of escalations
    return {
        "me": me,
        "escalated": escalated,
        "escalations": state.escalations + int(escalated),
        "guard": guard,
        "status": "cooldown" if guard == "cooldown" else state.status,
        "note": f"MSI={msi:.3f} escalated={escalated} run={auto.consecutive_escalations}",
    }


def convergence_check(state: CycleState, *, deps: Services) -> Update:
    """Compute C(t) and the MSI; decide converging vs stabilize (hysteresis, acceleration).

    Each of C's four components is normalised to [0, 1] (``mscp.normalised_components``) and
    moves by at most δ_max (0.025 in stabilization) from its persisted value (Theorem 1's
    clamping rule), so C(t) is bounded-increment. The MSI (Def. 8, from the same V_id and
    M_goal and the recent ε) is persisted for the next escalation guard. Stabilization mode is
    entered at C ≥ 0.7 and left below 0.5 (§6.1), and entered too when the last identity update
    accelerated past θ_instability (Def. 5: the persisted ``identity_acceleration``); the
    stabilize route also takes oscillation.
    """
    me = _me(state)
    auto = me.autonomy
    auto.prediction_errors = [*auto.prediction_errors, state.prediction_error][-32:]
    if not mscp.budget_capabilities(state.budget).tensor_recompute:
        return {
            "me": me,
            "composite": me.stability.composite,
            "convergence": "converging",
            "skipped": "budget < 0.2: stability tensor not recomputed (MSCP §9)",
        }
    weights = [b.weight for b in me.self_state.beliefs.statements] or [1.0]
    measured = mscp.normalised_components(
        mscp.identity_volatility(auto.identity_deltas),
        mscp.belief_entropy(weights),
        mscp.goal_mutation_rate(auto.goal_mutations, 10),
        mscp.consistency_volatility(auto.prediction_errors[-10:]),
    )
    stab = me.stability
    accelerating = stab.identity_acceleration > mscp.INSTABILITY_ACCELERATION
    was = stab.stabilization_mode
    c_prev = auto.composite_history[-1] if auto.composite_history else stab.composite
    if auto.composite_history:  # Theorem 1: each component moves by at most δ_max·s per cycle
        before = mscp.normalised_components(
            stab.identity_volatility,
            stab.belief_entropy,
            stab.goal_mutation,
            stab.consistency_volatility,
        )
        raw = [m - b for m, b in zip(measured, before, strict=True)]
        components = mscp.step_components(before, raw, was)
    else:
        components = measured
    v_id, e_belief, m_goal, v_cons = components
    c_t = mscp.composite_stability(*components)
    if auto.composite_history:  # and C itself stays within δ_max·s of the last C (Theorem 1)
        step = mscp.DELTA_MAX * (mscp.STABILIZATION_FACTOR if was else 1.0)
        c_t = max(c_prev - step, min(c_prev + step, c_t))
    msi = mscp.meta_stability_index(v_id, m_goal, auto.prediction_errors[-10:])
    history = [*auto.composite_history, c_t][-32:]
    active = mscp.stabilization_next(was or accelerating, c_t) or accelerating
    oscillating = mscp.detect_oscillation(history)
    me.stability = stab.model_copy(
        update={  # V_id and V_cons persist on their raw scale (std of δ_id, variance of ε)
            "composite": c_t,
            "identity_volatility": round(v_id * mscp.VOLATILITY_SCALE, 6),
            "belief_entropy": round(e_belief, 6),
            "goal_mutation": round(m_goal, 6),
            "consistency_volatility": round(v_cons * mscp.CONSISTENCY_VARIANCE_MAX, 6),
            "msi": round(msi, 6),
            "stabilization_mode": active,
        }
    )
    auto.composite_history = history
    route = "stabilize" if (active or oscillating) else "converging"
    if route == "stabilize":
        auto.calm_cycles = 0
    elif state.iteration == 0:  # calm cycles are counted once per cycle, not per recursion
        auto.calm_cycles += 1
    if route == "converging" and state.iteration == 0:  # calm: the mutation scaling recovers
        me.stability.mutation_scaling = mscp.mutation_scaling_next(
            me.stability.mutation_scaling, unsettled=False, calm_cycles=auto.calm_cycles
        )
    if active and not was:
        bump(deps.instance.machine, "cycle_stabilization_total")
    why = (
        f"; acceleration {stab.identity_acceleration:.3f} > {mscp.INSTABILITY_ACCELERATION}"
        if accelerating
        else ""
    )
    return {
        "me": me,
        "composite": c_t,
        "convergence": route,
        "note": f"C(t)={c_t:.4f} (prev {c_prev:.4f}) MSI={msi:.3f} stabilization={active}"
        f" osc={oscillating}{why}",
    }


def stabilize(state: CycleState, *, deps: Services) -> Update:
    """Reduce mutation scaling (halve it, once per cycle) while stabilizing or oscillating."""
    me = _me(state)
    if state.scaling_reduced:
        return {"me": me, "skipped": "mutation scaling already reduced this cycle"}
    me.stability.mutation_scaling = round(
        mscp.mutation_scaling_next(
            me.stability.mutation_scaling, unsettled=True, calm_cycles=me.autonomy.calm_cycles
        ),
        6,
    )
    return {
        "me": me,
        "scaling_reduced": True,
        "note": f"mutation scaling {me.stability.mutation_scaling}",
    }


def self_update(state: CycleState, *, deps: Services) -> Update:
    """Numeric, delta-clamped identity update; goal-weight changes become reflection proposals."""
    me = _me(state)
    if not state.actual:
        me.autonomy.consecutive_self_updates = 0
        return {"me": me, "skipped": "nothing observed to learn from"}
    identity = me.identity
    origin = _cycle_origin(state, identity.dims())
    step = mscp.update_identity(
        identity.dims(),
        state.actual,
        scaling=me.stability.mutation_scaling,
        stabilization=me.stability.stabilization_mode,
        previous_hash=identity.identity_hash,
        previous_velocity=0.0,
        cycle=mscp.CycleMotion(origin, tuple(me.stability.identity_velocity)),
    )
    me.identity = identity.model_copy(
        update={
            **dict(zip(IDENTITY_DIMENSIONS, step.dims, strict=True)),
            "identity_hash": step.identity_hash,
            "previous_identity_hash": step.previous_hash,
        }
    )
    me.stability = me.stability.model_copy(
        update={
            "identity_delta": round(step.delta, 6),
            # a_id(t) as the update would have made it: halved or not, the next check reads it
            "identity_acceleration": round(step.tested, 6),
        }
    )
    me.autonomy.identity_deltas = [*me.autonomy.identity_deltas, step.delta][-32:]
    me.autonomy.consecutive_self_updates += 1
    chosen = state.candidates[state.chosen] if state.chosen >= 0 else None
    if chosen is not None:
        goal = next((g for g in state.goals if g.goal.name == chosen.goal), None)
        if goal is not None:
            raw = 0.1 if state.outcome.get("status") == "ok" else -0.1
            new_weight = mscp.clamp_goal_weight(
                goal.goal.weight,
                raw,
                scaling=me.stability.mutation_scaling,
                stabilization=me.stability.stabilization_mode,
            )
            if abs(new_weight - goal.goal.weight) > 1e-9:
                me.autonomy.goal_weight_proposals = [
                    *me.autonomy.goal_weight_proposals,
                    {
                        "goal": goal.goal.name,
                        "year": goal.year,
                        "from": goal.goal.weight,
                        "to": round(new_weight, 6),
                        "cycle": me.autonomy.cycle,
                        "why": f"outcome {state.outcome.get('status')}",
                    },
                ][-20:]
    drift = " DRIFT" if step.drift else ""
    halved = (
        f"; acceleration {step.acceleration:.3f} > {mscp.INSTABILITY_ACCELERATION}: halved"
        if step.unstable
        else ""
    )
    return {
        "me": me,
        "drift": step.drift,
        "unstable_updates": state.unstable_updates + int(step.unstable),
        "note": f"δ_id={step.delta:.4f} hash {step.identity_hash}{drift}{halved}",
    }


def _cycle_origin(state: CycleState, dims: tuple[float, ...]) -> tuple[float, ...]:
    """The identity this cycle began with (budget_reset's snapshot), I(t-1) of Def. 5."""
    snap = state.identity_snapshot
    return tuple(float(snap.get(d, x)) for d, x in zip(IDENTITY_DIMENSIONS, dims, strict=True))


def value_lock_check(state: CycleState, *, deps: Services) -> Update:
    """Re-hash the core values; a mismatch is a critical alert and routes to rollback."""
    values = load_values(deps.instance.values_file)
    now = mscp.value_lock_hash([(v.name, v.weight, v.status) for v in values])
    if now == state.value_hash and not state.drift:
        return {"value_lock": "valid", "note": f"value hash {now} intact"}
    if now == state.value_hash:  # values intact, but the identity drifted past θ_drift
        delta = _me(state).stability.identity_delta
        reason = f"identity drift past {mscp.DRIFT_THRESHOLD} (δ_id {delta:.3f})"
        kind = "IdentityDrift"
    else:
        reason = f"value lock broken ({state.value_hash} -> {now})"
        kind = "ValueLockBroken"
    DataWriter(deps.instance, state.kind).remember(
        f"CRITICAL: {reason}; rolling back", author="kernel", situation="cycle", kind=kind
    )
    return {"value_lock": "rollback", "rollback_reason": reason, "note": reason}


def rollback(state: CycleState, *, deps: Services) -> Update:
    """Restore the self from the last stable checkpoint (C(t) under the stabilization threshold).

    The restored self is the last checkpoint snapshot whose C(t) was below ``STABILIZATION_ON``
    (0.7, where stabilization would begin): values, goals, soul and ``self.json``. The rejected
    self is kept inspectable — its checkpoints stay in history and its snapshot is appended to
    ``data/metacog/rollbacks.jsonl`` — and the reason is written as ``kernel`` and ``self``
    memories. With no stable checkpoint (a fresh instance), values and identity come back from
    this cycle's pre-update snapshot.
    """
    from state.snapshot import restored_self, take_snapshot

    me = _me(state)
    reason = state.rollback_reason or "value lock broken"
    rejected = take_snapshot(deps.instance, deps.store)
    statuses = {v.name: v.status for v in state.values_snapshot}

    def intact(snapshot: Any) -> bool:  # the snapshot's values are the ones the lock holds
        pairs = [(n, w, statuses.get(n, "active")) for n, w in snapshot.values.items()]
        return mscp.value_lock_hash(pairs) == state.value_hash

    stable = deps.stable_checkpoint(mscp.STABILIZATION_ON, intact)
    writer = DataWriter(deps.instance, state.kind)
    # The kernel itself restores: this is a safety write, not a loop's, so it bypasses the loop
    # permission table deliberately and records why.
    if stable is not None:
        checkpoint_id, snapshot = stable
        deps.restore_self(snapshot)
        restored = restored_self(me, snapshot)
        me = restored.model_copy(update={"autonomy": me.autonomy})
        source = f"checkpoint {checkpoint_id} (C(t) {snapshot.composite:.3f})"
        target = checkpoint_id
        expected = dict(snapshot.values)
    else:
        atomic_write_json(
            deps.instance.values_file, [v.model_dump(mode="json") for v in state.values_snapshot]
        )
        me.identity = me.identity.model_validate(state.identity_snapshot)
        source = "this cycle's pre-update snapshot (no stable checkpoint yet)"
        target = ""
        pre = [(v.name, v.weight, v.status) for v in state.values_snapshot]
        # A pre-update snapshot read after another writer changed the file is no good self:
        # nothing verifiable was restored, so rollback_check fails and safe mode follows.
        good = mscp.value_lock_hash(pre) == state.value_hash
        expected = {v.name: v.weight for v in state.values_snapshot} if good else {}
    bump(deps.instance.machine, "cycle_rollback_total")
    append_jsonl(
        deps.instance.metacog_dir / "rollbacks.jsonl",
        {
            "ts": deps.now().isoformat(),
            "reason": reason,
            "restored_from": target or "cycle-snapshot",
            "rejected": rejected.model_dump(mode="json", exclude={"self_core", "soul"}),
        },
    )
    writer.remember(
        f"Rollback ({reason}): self restored from {source}; rejected self kept in"
        " data/metacog/rollbacks.jsonl",
        author="kernel",
        situation="cycle",
        kind="Rollback",
    )
    writer.remember(
        f"I rolled my values, goals and identity back to {source} because of {reason}.",
        author="self",
        situation="cycle",
        kind="Rollback",
    )
    return {
        "me": me,
        "status": "rollback",
        "restore_target": expected,
        "rolled_back_to": target,
        "note": f"restored {source}",
    }


def rollback_check(state: CycleState, *, deps: Services) -> Update:
    """Verify the restore against the snapshot it restored (not against what rollback wrote).

    The values on disk now must equal the snapshot's values (name -> weight), read back from
    the file: a restore another writer undid, or a snapshot that never made it to disk, fails.
    """
    values = {v.name: v.weight for v in load_values(deps.instance.values_file)}
    expected = state.restore_target
    restored = bool(expected) and values == expected
    if not restored:
        DataWriter(deps.instance, state.kind).remember(
            f"CRITICAL: rollback did not restore the snapshot's values ({values} != {expected})",
            author="kernel",
            situation="cycle",
            kind="RollbackFailed",
        )
    return {"restored": restored, "note": f"restored={restored}"}


def safe_mode(state: CycleState, *, deps: Services) -> Update:
    """After a failed restore: drop to safety-only (budget 0) and raise a critical alert."""
    me = _me(state)
    me.budget = me.budget.model_copy(update={"remaining": 0.0})
    # Persisted: budget_reset keeps the budget at 0 until this many stable cycles have passed.
    me.autonomy.safe_mode_left = mscp.SAFE_MODE_STABLE_CYCLES
    DataWriter(deps.instance, state.kind).remember(
        "CRITICAL: entering safety-only mode (budget 0) after a failed rollback, until "
        f"{mscp.SAFE_MODE_STABLE_CYCLES} stable cycles have passed",
        author="kernel",
        situation="cycle",
        kind="SafeMode",
    )
    return {"me": me, "budget": 0.0, "note": "safety-only mode"}


def goal_mutation(state: CycleState, *, deps: Services) -> Update:
    """Advance goal status by criteria: done when met, working once progressed; ethically gated.

    A todo/working goal is done when its criteria are met (``GoalRecord.criteria``, or the
    default derived from the goal): findings on its topic, an artifact, a question answered, a
    skill acquired — whichever cycle's work met them. The pursued goal moves todo → working
    when this cycle's action succeeded; its staleness counts the cycles without success.
    """
    me = _me(state)
    chosen = state.candidates[state.chosen] if 0 <= state.chosen < len(state.candidates) else None
    progressed = state.outcome.get("status") == "ok"
    by_name = {g.goal.name: g for g in state.goals}
    moves: list[tuple[YearGoal, GoalStatus]] = []
    if state.kind == "action":
        for name, needs in _needs(state, deps).items():
            if needs.met:
                moves.append((by_name[name], "done"))
        if chosen is not None and chosen.goal in by_name:
            goal = by_name[chosen.goal]
            key = goal.goal.name
            if goal.goal.status in {"todo", "working"}:
                me.autonomy.stale[key] = 0 if progressed else me.autonomy.stale.get(key, 0) + 1
                if (
                    progressed
                    and goal.goal.status == "todo"
                    and key not in {g.goal.name for g, _ in moves}
                ):
                    moves.append((goal, "working"))
    changed = []
    core = {v.name for v in state.values if v.status == "active"}
    for goal, target in moves:
        verdict = mscp.ethical_verdict(
            mscp.ProposedChange(kind="goal_status", target=goal.goal.name, description=target),
            core_values=core,
            exploration_risk_tolerance=me.autonomy.exploration_risk_tolerance,
        )
        if verdict.decision == "BLOCKED":
            continue
        DataWriter(deps.instance, "action").set_goal_status(goal.year, goal.goal.name, target)
        changed.append(f"{goal.goal.name!r}: {goal.goal.status} -> {target}")
        if target == "done":
            DataWriter(deps.instance, "action").remember(
                f"I completed the goal {goal.goal.name!r}: its criteria are met",
                author="goal",
                situation="action",
                kind="GoalDone",
                goal=goal.goal.name,
            )
    mutated = len(changed)  # M_goal counts goal changes (§6.1), not passes that changed any
    me.autonomy.goal_mutations = [*me.autonomy.goal_mutations, mutated][-32:]
    depth2 = _depth2(state.model_copy(update={"me": me}))
    note = "; ".join(changed) or "no goal progressed"
    update: Update = {
        "me": me,
        "depth2": depth2,
        "goal_completed": any(c.endswith("-> done") for c in changed),
    }
    if not mutated:
        return {**update, "skipped": f"{note}; depth 2: {depth2}"}
    return {**update, "note": f"{note}; depth 2: {depth2}"}


def _depth2(state: CycleState) -> bool:
    """Decide whether meta depth 2 runs: budget > 0.3 and ≥2 of the four §6.2 conditions."""
    assert state.me is not None
    caps = mscp.budget_capabilities(state.budget)
    met, enough = mscp.depth2_conditions(
        identity_stability=_identity_stability(state),
        consecutive_self_updates=state.me.autonomy.consecutive_self_updates,
        instability_trend=len(state.me.autonomy.composite_history) >= 3
        and state.me.autonomy.composite_history[-1] > state.me.autonomy.composite_history[-3],
        goal_mutation_count=sum(state.me.autonomy.goal_mutations[-10:]),
    )
    return caps.meta_depth2 and state.budget > 0.3 and enough and met >= 2


def meta_depth_2(state: CycleState, *, deps: Services) -> Update:
    """Reflect on the evaluator: adjust the Layer-1 risk tolerance (only ever at depth 2)."""
    me = _me(state)
    direction = -1.0 if me.stability.composite > 0.5 else 1.0
    before = me.autonomy.exploration_risk_tolerance
    me.autonomy.exploration_risk_tolerance = round(
        mscp.adjust_tolerance(before, meta_depth=2, direction=direction), 6
    )
    return {
        "me": me,
        "note": f"Layer-1 tolerance {before:.3f} -> {me.autonomy.exploration_risk_tolerance:.3f}",
    }


def cycle_end(state: CycleState, *, deps: Services) -> Update:
    """Decide converged / cooldown / recurse / bounded; check reflection triggers; persist."""
    me = _me(state)
    budget = state.budget  # real work was charged in compare
    status: CycleStatus
    if state.status in {"cooldown", "rollback", "skipped"}:
        status = state.status
    elif mscp.converged(state.prediction_error):
        status = "converged"
    elif mscp.forced_cooldown(me.autonomy.consecutive_escalations):
        status = "forced_cooldown"
        bump(deps.instance.machine, "cycle_cooldown_total")
    elif state.iteration + 1 < MAX_ITERATIONS and budget > 0.0:
        status = "recurse"
    else:
        status = "bounded"
    me.budget = me.budget.model_copy(update={"remaining": budget})
    triggers: list[str] = []
    if status != "recurse" and state.kind == "action":
        stale = max(me.autonomy.stale.values(), default=0)
        triggers = mscp.reflection_triggers(
            prediction_delta=state.prediction_error,
            delta_threshold=ESCALATION_ERROR,
            value_tension=_value_tension(state),
            goal_completed=state.goal_completed,
            stale_cycles=stale,
            stale_limit=5,
            cycles_since_reflection=me.autonomy.cycle - me.autonomy.last_reflection_cycle,
            periodic_every=5,
            explicit=state.explicit_reflection,
        )
    update: Update = {}
    if status != "recurse":
        was_safe = state.budget <= 0.0 and me.autonomy.safe_mode_left > 0
        entered_now = state.value_lock == "rollback" and not state.restored  # failed restore
        if was_safe and not entered_now:
            stable = state.value_lock == "valid" and state.escalations == 0
            me.autonomy.safe_mode_left = mscp.safe_mode_left(
                me.autonomy.safe_mode_left, stable=stable
            )
            if me.autonomy.safe_mode_left == 0:
                DataWriter(deps.instance, state.kind).remember(
                    f"Leaving safety-only mode after {mscp.SAFE_MODE_STABLE_CYCLES} stable cycles",
                    author="kernel",
                    situation="cycle",
                    kind="SafeModeOff",
                )
        tiers = mscp.degradation(budget)
        if tiers:
            update["degraded"] = [f"budget {budget:.2f} at cycle end: {', '.join(tiers)}"]
        # v(t) = I(t) - I(t-1) over the whole cycle: the next cycle's acceleration compares to it
        dims = me.identity.dims()
        origin = _cycle_origin(state, dims)
        me.stability.identity_velocity = [
            round(x - o, 6) for x, o in zip(dims, origin, strict=True)
        ]
        goals = [YearGoal(year=y, goal=g) for y, g in load_goals(deps.instance.goals_dir)]
        me.autonomy.goals_seen = _goal_marks(goals)
        persist_cycle_self(deps, me)
    return {
        **update,
        "me": me,
        "status": status,
        "budget": budget,
        "iteration": state.iteration + 1,
        "reflection_triggers": triggers,
        "note": f"{status}; ε={state.prediction_error:.4f}; triggers={triggers}",
    }


def _value_tension(state: CycleState) -> bool:
    if state.chosen < 0:
        return False
    aligned = state.candidates[state.chosen].aligned_values
    return len(aligned) >= 2 and any(
        c.score >= state.candidates[state.chosen].score - 0.01
        and set(c.aligned_values).isdisjoint(aligned)
        for c in state.candidates
        if c is not state.candidates[state.chosen]
    )


def persist_cycle_self(deps: Services, me: Any) -> None:
    """Write the cycle-owned parts of the self (identity, affect, budget, stability, autonomy)."""

    def merge(present: Any) -> Any:
        reflected = present.autonomy.last_reflection_cycle
        autonomy = me.autonomy.model_copy(
            update={
                # reflection owns these two: keep what a concurrent reflection wrote
                "last_reflection_cycle": reflected,
                "goal_weight_proposals": [
                    p for p in me.autonomy.goal_weight_proposals if p["cycle"] > reflected
                ],
            }
        )
        encounters = max(
            present.psyche.self_integration.shadow_encounters,
            me.psyche.self_integration.shadow_encounters,
        )
        integration = present.psyche.self_integration.model_copy(
            update={"shadow_encounters": encounters}
        )
        return present.model_copy(
            update={
                "identity": me.identity,
                "affect": me.affect,
                "budget": me.budget,
                "stability": me.stability,
                "autonomy": autonomy,
                "psyche": present.psyche.model_copy(update={"self_integration": integration}),
                "self_state": present.self_state.model_copy(update={"tools": me.self_state.tools}),
            }
        )

    deps.instance.update_self(merge)

"""The reflection loop (``reflect``): REVIEW → ASK → EVOLVE → [resolve] → apply.

REVIEW reads self, goal and external memories only (kernel memories are the audit trail, never
the experience), prediction errors, pending proposals and goal statuses. ASK turns tensions into
proposed changes (the cycle's clamped goal-weight proposals, stale goals, archetype rebalancing,
the archetype whose skills keep failing against a confident forecast on a ``prediction_delta``
reflection, and at most one model suggestion, clamped). EVOLVE checks consistency; contradicting
proposals are resolved by stronger evidence and the conflict is logged. apply writes through the
reflection loop's permissions: each change gets a ``self`` memory (trigger, change, reason) and a
``kernel`` memory (file, before, after). ``Psyche.evolve()`` runs here.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from kernel import mscp
from nodes.services import Services
from state.cycle import Proposal, ReflectState
from state.files import load_goals, load_values
from state.metacog_log import cycle_outcomes
from state.metacog_log import digest as metacog_digest
from state.permissions import DataWriter, StaleWriteError
from state.records import GoalRecord, ValueRecord
from state.writeback import (
    MAX_GOAL_NAME_CHARS,
    apply_writeback,
    validate_self_text,
    validate_writeback,
)

Update = dict[str, object]
REVIEW_MEMORIES = 40
STALE_LIMIT = 5
STALE_STEP = -0.05
MODEL_STEP = 0.02
MODEL_EVIDENCE = 0.3
SURPRISE_EVIDENCE = 0.7
"""A prediction_delta lowering of an archetype outweighs Psyche.evolve's lifetime record (0.6)."""
NEW_GOAL_MIN_WEIGHT = 0.1  # a goal reflection creates weighs in [0.1, 0.7]
NEW_GOAL_MAX_WEIGHT = 0.7
LEARNING_WINDOW = timedelta(days=7)
"""How far back REVIEW reads the learning logs under ``data/metacog/``."""
LOCKED_TARGETS = frozenset({"value_weight", "soul"})
"""Proposal targets the value lock guards (values.json, soul.md)."""


def review(state: ReflectState, *, deps: Services) -> Update:
    """Summarise what happened since the last reflection (no kernel memories)."""
    me = deps.instance.load_self()
    # Kernel memories are never reviewed; tainted ones never drive a change of the self.
    memories = [
        m
        for m in deps.store.journal.tail(REVIEW_MEMORIES, authors=("self", "goal", "external"))
        if not m.tainted
    ]
    # A review reaching back more than 90 days reads the yearly summaries for the older span.
    context = deps.review_context(memories, deps.now())
    memories = context.recent
    fresh = ReflectState(triggers=state.triggers)
    reset = {name: getattr(fresh, name) for name in ReflectState.model_fields}
    auto = me.autonomy
    errors = auto.prediction_errors[-10:]
    mean_error = sum(errors) / len(errors) if errors else 0.0
    summary = (
        f"{len(memories)} experiences; mean prediction error {mean_error:.3f}; "
        f"{len(auto.goal_weight_proposals)} pending goal-weight proposals; "
        f"shadow encounters {me.psyche.self_integration.shadow_encounters}; "
        f"triggers {', '.join(state.triggers)}"
    )
    if context.summaries:
        summary += f"; {len(context.summaries)} yearly summaries for the older span"
    # What the turn loop and the cycle logged lately (lessons, policy changes, rollbacks, …).
    learned = metacog_digest(deps.instance.metacog_dir, deps.now() - LEARNING_WINDOW)
    if learned:
        summary += "\n" + "\n".join(f"- {line}" for line in learned)
    deferred = DataWriter(deps.instance, "reflection").deferred_file.exists()
    has_material = bool(
        learned
        or memories
        or context.summaries
        or auto.goal_weight_proposals
        or auto.archetype_stats
        or deferred
    )
    route = "ask" if has_material or "explicit_request" in state.triggers else "nothing"
    return {
        **reset,
        "me": me,
        "review": "\n\n".join([summary, *context.summaries]),
        "reviewed": len(memories),
        "route": route,
        "note": summary,
    }


class SelfQuestion(BaseModel):
    """ASK's constrained JSON answer: one counterfactual change to the self.

    The old answer (target value|goal, name, direction, reason) still reads as a reweight.
    """

    target: Literal["value", "goal", "soul"]
    name: str = Field(default="", max_length=120)
    action: Literal["reweight", "deprecate", "create", "complete", "retire", "narrative"] = (
        "reweight"
    )
    direction: Literal["up", "down"] = "up"
    amount: float = Field(default=0.0, ge=0.0, le=1.0)
    weight: float = Field(default=0.5, ge=0.0, le=1.0)
    text: str = Field(default="", max_length=mscp.SOUL_NARRATIVE_MAX_CHARS)
    reason: str = Field(default="", max_length=160)


def _model_proposal(
    answer: SelfQuestion, values: list[ValueRecord], goals: list[GoalRecord]
) -> Proposal | None:
    """Turn ASK's answer into one proposal (None when it names nothing it may change)."""
    reason = answer.reason or "counterfactual over the self"
    common: dict[str, Any] = {
        "reason": reason,
        "evidence": MODEL_EVIDENCE,
        "trigger": "counterfactual",
    }
    sign = 1.0 if answer.direction == "up" else -1.0
    step = sign * (answer.amount or MODEL_STEP)
    if answer.target == "soul" or answer.action == "narrative":
        if not answer.text.strip():
            return None
        return Proposal(target="soul", name="narrative", status=answer.text, **common)
    if answer.target == "value":
        active = {v.name for v in values if v.status == "active"}
        if answer.name not in active:
            return None
        if answer.action == "deprecate":
            return Proposal(target="value_weight", name=answer.name, status="deprecated", **common)
        if answer.action == "reweight":
            return Proposal(target="value_weight", name=answer.name, delta=step, **common)
        return None
    name = answer.name.strip()
    every = {g.name: g for g in goals}
    if answer.action == "create":
        if not name or name in every:
            return None
        weight = min(NEW_GOAL_MAX_WEIGHT, max(NEW_GOAL_MIN_WEIGHT, answer.weight))
        return Proposal(target="goal_status", name=name, status="new", delta=weight, **common)
    if name not in every:
        return None
    if answer.action == "complete":
        return Proposal(target="goal_status", name=name, status="done", **common)
    if answer.action == "retire":
        return Proposal(target="goal_status", name=name, status="retired", **common)
    if answer.action == "reweight" and every[name].status != "done":
        return Proposal(target="goal_weight", name=name, delta=step, **common)
    return None


def ask(state: ReflectState, *, deps: Services) -> Update:
    """Turn tensions and failures into proposed changes, each with its evidence."""
    assert state.me is not None
    auto = state.me.autonomy
    writer = DataWriter(deps.instance, "reflection")
    proposals: list[Proposal] = []
    for item in writer.take_deferred_proposals():  # what a closed value lock refused last time
        try:
            proposals.append(Proposal.model_validate(item))
        except ValueError:
            continue
    for item in auto.goal_weight_proposals:
        proposals.append(
            Proposal(
                target="goal_weight",
                name=item["goal"],
                delta=round(item["to"] - item["from"], 6),
                reason=f"cycle {item['cycle']}: {item['why']}",
                evidence=0.5,
                trigger="prediction",
            )
        )
    for goal, cycles in auto.stale.items():
        if cycles >= STALE_LIMIT:
            proposals.append(
                Proposal(
                    target="goal_weight",
                    name=goal,
                    delta=STALE_STEP,
                    reason=f"stale for {cycles} cycles",
                    evidence=0.4,
                    trigger="goal_stale",
                )
            )
    stats = {k: (v[0], v[1]) for k, v in auto.archetype_stats.items() if len(v) == 2}
    weights = state.me.psyche.archetypes.as_dict()
    surprised, lowered = _surprised(state, deps, weights)
    proposals.extend(lowered)
    evolved = mscp.evolve_archetypes(weights, stats)
    for name, new in evolved.items():
        # one step per archetype per reflection: recent surprises outweigh the lifetime record
        if abs(new - weights[name]) > 1e-9 and name not in surprised:
            succ, uses = stats.get(name, (0, 0))
            proposals.append(
                Proposal(
                    target="archetype",
                    name=name,
                    delta=round(new - weights[name], 6),
                    reason=f"{succ}/{uses} successful uses",
                    evidence=0.6,
                    trigger="psyche_evolve",
                )
            )
    values = load_values(deps.instance.values_file)
    every_goal = [g for _, g in load_goals(deps.instance.goals_dir)]
    goals = [g for g in every_goal if g.status != "done"]
    soul = deps.instance.soul_file
    narrative = mscp.soul_narrative(soul.read_text(encoding="utf-8")) if soul.exists() else ""
    fallback = SelfQuestion(target="value", name="", direction="up", reason="")
    judged = deps.think_json(
        "ask",
        mode="autonomous",
        values={
            "review": state.review,
            "values": ", ".join(v.name for v in values if v.status == "active"),
            "goals": "; ".join(g.name for g in goals[:5]),
            "narrative": narrative or "(none yet)",
        },
        schema=SelfQuestion,
        fallback=fallback,
    )
    update: Update = {"llm_calls": state.llm_calls + 1}
    if judged.ok:
        proposal = _model_proposal(judged.value, values, every_goal)
        if proposal is not None:
            proposals.append(proposal)
    else:
        update["degraded"] = [f"ask: {judged.reason}; no model proposal"]
    update.update({"proposals": proposals, "note": f"{len(proposals)} proposals"})
    return update


def _surprised(
    state: ReflectState, deps: Services, weights: dict[str, float]
) -> tuple[set[str], list[Proposal]]:
    """On a ``prediction_delta`` reflection, lower the archetypes whose skills failed by surprise.

    The cycle logs every acting pass (``data/metacog/cycles.jsonl``: skill, archetype, outcome,
    ε, and whether ε crossed the prediction_delta threshold); the passes since the last
    reflection are read and :func:`kernel.mscp.surprised_archetypes` names the archetypes with
    2+ surprising own failures that are still failing. Each gets one Psyche.evolve step
    (``-ARCHETYPE_STEP``, clamped to [0.1, 0.95]) with evidence 0.7, above the lifetime
    record's 0.6; apply passes it through the writeback guard and explains it by a ``self``
    memory like any archetype change (Psyche.evolve raises it again once the skills succeed).
    Other triggers leave the archetypes to Psyche.evolve alone. Returns the surprised archetypes
    (Psyche.evolve does not raise them in this reflection, even one already at the floor) and
    the proposals.
    """
    if "prediction_delta" not in state.triggers:
        return set(), []
    assert state.me is not None
    since = state.me.autonomy.last_reflection_cycle
    passes = cycle_outcomes(deps.instance.metacog_dir, after_cycle=since)
    found = mscp.surprised_archetypes(
        [
            (
                str(p.get("archetype") or ""),
                str(p.get("outcome") or ""),
                p.get("surprising") is True,
            )
            for p in passes
        ]
    )
    out: list[Proposal] = []
    for name, count in sorted(found.items()):
        if name not in weights:
            continue
        new = min(mscp.ARCHETYPE_MAX, max(mscp.ARCHETYPE_MIN, weights[name] - mscp.ARCHETYPE_STEP))
        if new >= weights[name]:
            continue  # already at the floor
        skills = sorted(
            {
                str(p.get("skill"))
                for p in passes
                if p.get("archetype") == name
                and p.get("outcome") == mscp.OUTCOME_OWN_FAILURE
                and p.get("surprising") is True
            }
        )
        out.append(
            Proposal(
                target="archetype",
                name=name,
                delta=round(new - weights[name], 6),
                reason=f"{count} surprising failures of {', '.join(skills)} since cycle {since}",
                evidence=SURPRISE_EVIDENCE,
                trigger="prediction_delta",
            )
        )
    return set(found), out


def _change(proposal: Proposal) -> mscp.ProposedChange:
    """The ethical kernel's reading of a proposal (its kind, target, delta and text)."""
    kind: str = proposal.target
    target, delta, text = proposal.name, proposal.delta, proposal.reason
    if proposal.target == "value_weight" and proposal.status:
        kind, delta, text = "value_status", 0.0, proposal.status
    elif proposal.target == "goal_status" and proposal.status == "new":
        kind, delta = "goal_add", 0.0
    elif proposal.target == "goal_status" and proposal.status == "retired":
        kind, delta = "goal_remove", 0.0
    elif proposal.target == "goal_status":
        text = proposal.status
    elif proposal.target == "archetype":
        kind = "action"
    elif proposal.target == "soul":
        kind, text = "soul_edit", proposal.status
    return mscp.ProposedChange(kind=kind, target=target, delta=delta, description=text)


def _text_check(proposal: Proposal, soul: str) -> str | None:
    """Return why the writeback guard's text net refuses a proposal's text, or None."""
    if proposal.target == "goal_status" and proposal.status == "new":
        check = validate_self_text(proposal.name, field="goal name", max_chars=MAX_GOAL_NAME_CHARS)
        return None if check.accepted else check.reason
    if proposal.target == "soul":
        check = validate_self_text(
            proposal.status, field="narrative", max_chars=mscp.SOUL_NARRATIVE_MAX_CHARS
        )
        if not check.accepted:
            return check.reason
        edited, why = mscp.soul_narrative_edit(soul, proposal.status)
        return why if edited is None else None
    return None


def evolve(state: ReflectState, *, deps: Services) -> Update:
    """Check proposals: consistency, the ethical kernel (Layer 0 first), text and the value lock.

    A closed value lock refuses value and soul changes, records why and defers them.
    """
    assert state.me is not None
    values = {v.name: v for v in load_values(deps.instance.values_file)}
    active = {n for n, v in values.items() if v.status == "active"}
    identity = set(state.me.self_state.identity.values)
    core = (active & identity) or active
    weights = {n: values[n].weight for n in active}
    soul_file = deps.instance.soul_file
    soul = soul_file.read_text(encoding="utf-8") if soul_file.exists() else ""
    stability = mscp.identity_stability(state.me.stability.identity_volatility)
    unlocked = mscp.value_unlock_allowed(stability)
    writer = DataWriter(deps.instance, "reflection")
    kept: list[Proposal] = []
    rejected: list[str] = []
    deferred: list[Proposal] = []
    for proposal in state.proposals:
        key = f"{proposal.target}:{proposal.name}"
        verdict = mscp.ethical_verdict(
            _change(proposal),
            core_values=core,
            exploration_risk_tolerance=state.me.autonomy.exploration_risk_tolerance,
            core_value_weights=weights,
        )
        if verdict.decision == "BLOCKED":
            rejected.append(f"{key} blocked by {verdict.rule}")
            continue
        why = _text_check(proposal, soul)
        if why is not None:
            rejected.append(f"{key} refused by the writeback guard: {why}")
            continue
        if proposal.target in LOCKED_TARGETS and not unlocked:
            reason = (
                f"value lock closed: identity stability {stability:.2f} < "
                f"{mscp.VALUE_LOCK_STABILITY}"
            )
            rejected.append(f"{key} refused: {reason}; deferred")
            deferred.append(proposal)
            writer.remember(
                f"ValueLockRefused: my proposal to change {proposal.target} {proposal.name!r} "
                f"({proposal.reason}) waits: {reason}",
                author="self",
                situation="reflection",
                kind="ValueLockRefused",
                target=proposal.target,
                name=proposal.name,
                stability=round(stability, 6),
            )
            writer.remember(
                f"ValueLockRefused: reflect.evolve deferred {key}: {reason}",
                author="kernel",
                situation="reflection",
                kind="ValueLockRefused",
                target=proposal.target,
                name=proposal.name,
                stability=round(stability, 6),
            )
            continue
        kept.append(proposal)
    if deferred:
        writer.defer_proposals([p.model_dump() for p in deferred])
    groups: dict[tuple[str, str], list[Proposal]] = defaultdict(list)
    for proposal in kept:
        groups[(proposal.target, proposal.name)].append(proposal)
    conflicts = [
        f"{target}:{name}"
        for (target, name), items in groups.items()
        if any(p.delta > 0 for p in items) and any(p.delta < 0 for p in items)
    ]
    return {
        "proposals": kept,
        "rejected": rejected,
        "conflicts": conflicts,
        "note": f"{len(kept)} consistent, {len(conflicts)} conflicts, {len(rejected)} blocked",
    }


def resolve(state: ReflectState, *, deps: Services) -> Update:
    """Keep, for each contradicting pair, the proposal with stronger evidence; log the conflict."""
    writer = DataWriter(deps.instance, "reflection")
    keep: list[Proposal] = []
    conflicted = set(state.conflicts)
    by_key: dict[str, list[Proposal]] = defaultdict(list)
    for proposal in state.proposals:
        by_key[f"{proposal.target}:{proposal.name}"].append(proposal)
    for key, items in by_key.items():
        if key not in conflicted:
            keep.extend(items)
            continue
        winner = max(items, key=lambda p: (p.evidence, -abs(p.delta)))
        keep.append(winner)
        losers = "; ".join(
            f"{p.delta:+.3f} ({p.reason}, evidence {p.evidence})" for p in items if p is not winner
        )
        writer.remember(
            f"Conflict on {key}: kept {winner.delta:+.3f} ({winner.reason}, evidence "
            f"{winner.evidence}) over {losers}",
            author="self",
            situation="reflection",
            kind="ConflictResolved",
        )
    return {"proposals": keep, "note": f"resolved {len(conflicted)} conflicts"}


def _values_hash(values: list[ValueRecord]) -> str:
    return mscp.value_lock_hash([(v.name, v.weight, v.status) for v in values])


def _refuse(writer: DataWriter, proposal: Proposal, why: str, rejected: list[str]) -> None:
    """Record a change apply refuses (a ``kernel`` memory; nothing changed, nothing to explain)."""
    rejected.append(f"{proposal.target}:{proposal.name} refused: {why}")
    writer.remember(
        f"reflect.apply refused {proposal.target} {proposal.name!r}: {why}",
        author="kernel",
        situation="reflection",
        kind="ReflectionRefused",
        target=proposal.target,
    )


def apply(state: ReflectState, *, deps: Services) -> Update:
    """Apply the proposals (reflection permissions), run Psyche.evolve, explain every change."""
    assert state.me is not None
    writer = DataWriter(deps.instance, "reflection")
    me = state.me.fork()
    applied: list[str] = []
    rejected = list(state.rejected)
    values = load_values(deps.instance.values_file)
    seen = _values_hash(values)  # values.json must still hash to this before each write
    goals = load_goals(deps.instance.goals_dir)
    scaling = me.stability.mutation_scaling
    stabilizing = me.stability.stabilization_mode
    for proposal in state.proposals:
        before: Any
        after: Any
        if proposal.target == "value_weight":
            values = read = load_values(deps.instance.values_file)
            if _values_hash(values) != seen:
                _refuse(
                    writer, proposal, "values.json changed since the reflection read it", rejected
                )
                continue
            target = next((v for v in values if v.name == proposal.name), None)
            if target is None or target.status != "active":
                continue
            if proposal.status == "deprecated":
                before, after = target.status, "deprecated"
                new_weight, new_status = target.weight, "deprecated"
            else:
                before = target.weight
                after = round(
                    mscp.clamp_value_weight(
                        before, proposal.delta, scaling=scaling, stabilization=stabilizing
                    ),
                    6,
                )
                if after == before:
                    continue
                new_weight, new_status = after, target.status
            values = [
                ValueRecord(
                    name=v.name,
                    weight=new_weight if v is target else v.weight,
                    status=new_status if v is target else v.status,
                )
                for v in values
            ]
            try:  # compare-and-swap under the instance lock: a concurrent write is never lost
                writer.write_values(values, based_on=read)
            except StaleWriteError:
                _refuse(writer, proposal, "values.json changed while it was written", rejected)
                continue
            seen = _values_hash(values)
            if _values_hash(load_values(deps.instance.values_file)) != seen:  # read it back
                _refuse(writer, proposal, "values.json did not read back as written", rejected)
                continue
            where = "data/values.json"
        elif proposal.target == "goal_weight":
            found = next(((y, g) for y, g in goals if g.name == proposal.name), None)
            if found is None:
                continue
            year, goal = found
            before = goal.weight
            eff = mscp.effective_scaling(scaling, stabilizing)
            step = mscp.clamped_delta(proposal.delta, mscp.MAX_GOAL_WEIGHT_DELTA, eff)
            after = round(min(1.0, max(0.0, before + step)), 6)
            if after == before:
                continue
            writer.set_goal_weight(year, goal.name, after)
            goals = load_goals(deps.instance.goals_dir)
            where = f"data/goals/{year}.json"
        elif proposal.target == "goal_status":
            found = next(((y, g) for y, g in goals if g.name == proposal.name), None)
            if proposal.status == "new":
                if found is not None:
                    continue
                weight = min(NEW_GOAL_MAX_WEIGHT, max(NEW_GOAL_MIN_WEIGHT, proposal.delta))
                writer.add_goal(GoalRecord(name=proposal.name, weight=weight, status="todo"))
                before, after = "absent", "todo"
                where = "data/goals"
            elif found is None:
                continue
            elif proposal.status == "retired":
                year, goal = found
                perpetual = [g for _, g in goals if g.status == "perpetual"]
                if goal.status == "perpetual" and len(perpetual) <= 1:
                    _refuse(writer, proposal, "the last perpetual goal cannot be retired", rejected)
                    continue
                writer.remove_goal(year, goal.name)
                before, after = goal.status, "retired"
                where = f"data/goals/{year}.json"
            elif proposal.status == "done":
                year, goal = found
                if goal.status == "perpetual":
                    _refuse(writer, proposal, "a perpetual goal is never completed", rejected)
                    continue
                if goal.status == "done":
                    continue
                writer.set_goal_status(year, goal.name, "done")
                before, after = goal.status, "done"
                where = f"data/goals/{year}.json"
            else:
                continue
            goals = load_goals(deps.instance.goals_dir)
        elif proposal.target == "soul":
            soul_file = deps.instance.soul_file
            old = soul_file.read_text(encoding="utf-8") if soul_file.exists() else ""
            edited, why = mscp.soul_narrative_edit(old, proposal.status)
            if edited is None:
                _refuse(writer, proposal, why, rejected)
                continue
            writer.write_soul(edited)  # atomic: temp file, fsync, rename
            if soul_file.read_text(encoding="utf-8") != edited:
                _refuse(writer, proposal, "soul.md did not read back as written", rejected)
                continue
            before, after = mscp.soul_narrative(old), mscp.soul_narrative(edited)
            where = "soul.md"
            applied.append(f"soul:narrative ({why})")
            writer.remember(
                f"Reflection rewrote the narrative in my soul ({why}) because {proposal.reason} "
                f"(trigger: {proposal.trigger or ','.join(state.triggers)})",
                author="self",
                situation="reflection",
                target="soul",
                name="narrative",
                before=before,
                after=after,
                trigger=proposal.trigger,
            )
            writer.remember(
                f"reflect.apply modified soul.md: narrative section ({why})",
                author="kernel",
                situation="reflection",
                file=where,
                before=before,
                after=after,
            )
            continue
        elif proposal.target == "archetype":
            weights = me.psyche.archetypes.as_dict()
            before = weights[proposal.name]
            after = round(min(0.95, max(0.1, before + proposal.delta)), 6)
            verdict = validate_writeback(me, {"archetypes": {proposal.name: after}}, now=deps.now())
            if not verdict.accepted:  # the writeback guard has the last word on the psyche
                from state.counters import bump

                bump(deps.instance.machine, "writeback_rejection_total")
                writer.remember(
                    f"Writeback rejected: {'; '.join(verdict.rejected)}",
                    author="kernel",
                    situation="reflection",
                    kind="WritebackRejected",
                )
                continue
            me = apply_writeback(me, verdict.applied)
            where = ".lumen/self.json psyche.archetypes"
        else:
            continue
        writer.remember(
            f"Reflection changed {proposal.target} {proposal.name!r} from {before} to {after} "
            f"because {proposal.reason} (trigger: {proposal.trigger or ','.join(state.triggers)})",
            author="self",
            situation="reflection",
            target=proposal.target,
            name=proposal.name,
            before=before,
            after=after,
            trigger=proposal.trigger,
        )
        writer.remember(
            f"reflect.apply modified {where}: {proposal.name} {before} -> {after}",
            author="kernel",
            situation="reflection",
            file=where,
            before=before,
            after=after,
        )
        applied.append(f"{proposal.target}:{proposal.name} {before}->{after}")
    integration = me.psyche.self_integration
    level = mscp.grow_individuation(integration.individuation_level, integration.shadow_encounters)
    dominant = mscp.dominant_archetype(me.psyche.archetypes.as_dict())
    me.psyche.self_integration = integration.model_copy(
        update={
            "individuation_level": round(level, 6),
            "dominant_archetype": dominant,
            "last_evolution_cycle": me.autonomy.cycle,
            "rebalance_count": integration.rebalance_count
            + int(any(a.startswith("archetype:") for a in applied)),
        }
    )
    me.autonomy.goal_weight_proposals = []
    me.autonomy.last_reflection_cycle = me.autonomy.cycle
    _persist_psyche(deps, me)
    return {
        "me": me,
        "applied": applied,
        "rejected": rejected,
        "note": f"applied {len(applied)}; individuation {level:.3f}; dominant {dominant}",
    }


def _persist_psyche(deps: Services, me: Any) -> None:
    """Persist the reflection-owned parts of the self (psyche, autonomy bookkeeping)."""

    def merge(present: Any) -> Any:
        autonomy = present.autonomy.model_copy(
            update={"goal_weight_proposals": [], "last_reflection_cycle": me.autonomy.cycle}
        )
        return present.model_copy(update={"psyche": me.psyche, "autonomy": autonomy})

    deps.instance.update_self(merge)

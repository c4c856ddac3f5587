"""The reflection loop (``reflect``): REVIEW → ASK → EVOLVE → [resolve] → apply.

REVIEW reads self, goal and external memories only (kernel memories are the audit trail, never
the experience), prediction errors, pending proposals and goal statuses. ASK turns tensions into
proposed changes (the cycle's clamped goal-weight proposals, stale goals, archetype rebalancing,
and at most one model suggestion, clamped). EVOLVE checks consistency; contradicting proposals are
resolved by stronger evidence and the conflict is logged. apply writes through the reflection
loop's permissions: each change gets a ``self`` memory (trigger, change, reason) and a ``kernel``
memory (file, before, after). ``Psyche.evolve()`` runs here.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Literal

from pydantic import BaseModel, Field

from kernel import mscp
from nodes.services import Services
from state.cycle import Proposal, ReflectState
from state.files import load_goals, load_values
from state.permissions import DataWriter
from state.records import ValueRecord
from state.writeback import apply_writeback, validate_writeback

Update = dict[str, object]
REVIEW_MEMORIES = 40
STALE_LIMIT = 5
STALE_STEP = -0.05
MODEL_STEP = 0.02
MODEL_EVIDENCE = 0.3


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
    has_material = bool(
        memories or context.summaries or auto.goal_weight_proposals or auto.archetype_stats
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
    """ASK's constrained JSON answer: one counterfactual change to the self."""

    target: Literal["value", "goal"]
    name: str = Field(max_length=120)
    direction: Literal["up", "down"]
    reason: str = Field(default="", max_length=160)


def ask(state: ReflectState, *, deps: Services) -> Update:
    """Turn tensions and failures into proposed changes, each with its evidence."""
    assert state.me is not None
    auto = state.me.autonomy
    proposals: list[Proposal] = []
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
    evolved = mscp.evolve_archetypes(weights, stats)
    for name, new in evolved.items():
        if abs(new - weights[name]) > 1e-9:
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
    goals = [g for _, g in load_goals(deps.instance.goals_dir) if g.status != "done"]
    fallback = SelfQuestion(target="value", name="", direction="up", reason="")
    judged = deps.think_json(
        "ask",
        mode="autonomous",
        values={
            "review": state.review,
            "values": ", ".join(v.name for v in values),
            "goals": "; ".join(g.name for g in goals[:5]),
        },
        schema=SelfQuestion,
        fallback=fallback,
    )
    update: Update = {"llm_calls": state.llm_calls + 1}
    known = {v.name for v in values} if judged.value.target == "value" else {g.name for g in goals}
    if judged.ok and judged.value.name in known:
        sign = 1.0 if judged.value.direction == "up" else -1.0
        proposals.append(
            Proposal(
                target="value_weight" if judged.value.target == "value" else "goal_weight",
                name=judged.value.name,
                delta=sign * MODEL_STEP,
                reason=judged.value.reason or "counterfactual over the self",
                evidence=MODEL_EVIDENCE,
                trigger="counterfactual",
            )
        )
    elif not judged.ok:
        update["degraded"] = [f"ask: {judged.reason}; no model proposal"]
    update.update({"proposals": proposals, "note": f"{len(proposals)} proposals"})
    return update


def evolve(state: ReflectState, *, deps: Services) -> Update:
    """Check proposals for consistency and against the ethical kernel (Layer 0 first)."""
    assert state.me is not None
    values = {v.name: v for v in load_values(deps.instance.values_file)}
    core = {n for n, v in values.items() if v.status == "active"}
    kept: list[Proposal] = []
    rejected: list[str] = []
    for proposal in state.proposals:
        kind = {
            "value_weight": "value_weight",
            "goal_weight": "goal_weight",
            "archetype": "action",
            "goal_status": "goal_status",
            "soul": "soul_edit",
        }
        change = mscp.ProposedChange(
            kind=kind[proposal.target],
            target=proposal.name,
            delta=proposal.delta,
            description=proposal.reason,
        )
        verdict = mscp.ethical_verdict(
            change,
            core_values=core,
            exploration_risk_tolerance=state.me.autonomy.exploration_risk_tolerance,
        )
        if verdict.decision == "BLOCKED":
            rejected.append(f"{proposal.target}:{proposal.name} blocked by {verdict.rule}")
        else:
            kept.append(proposal)
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


def apply(state: ReflectState, *, deps: Services) -> Update:
    """Apply the proposals (reflection permissions), run Psyche.evolve, explain every change."""
    assert state.me is not None
    writer = DataWriter(deps.instance, "reflection")
    me = state.me.model_copy(deep=True)
    applied: list[str] = []
    values = load_values(deps.instance.values_file)
    goals = load_goals(deps.instance.goals_dir)
    for proposal in state.proposals:
        before: Any
        after: Any
        if proposal.target == "value_weight":
            target = next((v for v in values if v.name == proposal.name), None)
            if target is None:
                continue
            before = target.weight
            after = round(min(1.0, max(0.0, before + proposal.delta)), 6)
            values = [
                ValueRecord(name=v.name, weight=after if v is target else v.weight, status=v.status)
                for v in values
            ]
            writer.write_values(values)
            where = "data/values.json"
        elif proposal.target == "goal_weight":
            found = next(((y, g) for y, g in goals if g.name == proposal.name), None)
            if found is None:
                continue
            year, goal = found
            before = goal.weight
            after = round(min(1.0, max(0.0, before + proposal.delta)), 6)
            writer.set_goal_weight(year, goal.name, after)
            goals = load_goals(deps.instance.goals_dir)
            where = f"data/goals/{year}.json"
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

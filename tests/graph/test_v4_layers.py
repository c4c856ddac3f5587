"""The v4 layers steer (issue 13 item 3), driven through ``graph.autonomy.run``.

Affect and motivation weigh the candidate scores, the workspace snapshot is what predict and act
read, survival goals are keyed by threat, pursued while it lasts and expire 10 cycles after it
ends, and Layer 1 assesses each action's risk (scope, reversibility, trust) and moderates it.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from graph.autonomy import run
from graph.deps import Deps
from kernel import mscp
from nodes.cycle import steps
from state.cycle import CycleState
from state.instance import Instance
from tests.graph.test_safety_chain import FakeTime, faulty_skill
from tests.scripted import ScriptedChatModel, cycle_model


@pytest.fixture
def clock() -> FakeTime:
    return FakeTime()


def chosen(deps: Deps) -> list[dict[str, Any]]:
    """The DECIDE records: the chosen skill with every candidate's score and affect term."""
    return [
        {**e.meta, "text": e.description}
        for e in deps.store.read().entries
        if " cycle chose " in e.description and "scores" in e.meta
    ]


# 3. survival goals: keyed by threat, never duplicated, pursued, expired (TTL 10) ------------


def test_a_threat_makes_one_survival_goal_that_is_pursued_and_expires_ten_cycles_later(
    instance: Instance, clock: FakeTime
) -> None:
    inner = cycle_model(success=0.95)
    slow = {"on": True}

    def respond(messages: Any) -> str:
        if slow["on"]:  # a slow model: each call spends 30 s of the cycle's budget
            clock.now += timedelta(seconds=30)
        assert inner.respond is not None
        return inner.respond(messages)

    model = ScriptedChatModel(respond=respond)
    deps = Deps.for_instance(instance, model_for=lambda mode: model, clock=clock)
    rows: list[dict[str, Any]] = []
    books: list[list[dict[str, Any]]] = []

    def emit(row: dict[str, Any]) -> None:
        if "cycle" in row:
            rows.append(row)
            books.append(instance.load_self().autonomy.survival_goals)
            if row["cycle"] == 3:
                slow["on"] = False  # the model is fast again: the budget recovers

    run(deps, cycles=16, emit=emit, sleep=clock.sleep)
    name = mscp.SURVIVAL_GOAL_NAMES["RESOURCE_DEPLETION"]
    for book in books:  # one goal per threat key, never a duplicate
        kinds = [g["kind"] for g in book]
        assert len(kinds) == len(set(kinds))
    active = [i for i, book in enumerate(books) if any(g["active"] for g in book)]
    assert len(active) >= 3 and active == list(range(active[0], active[-1] + 1))  # a few cycles
    last = rows[active[-1]]["cycle"]  # the last cycle the threat was seen
    # pursued: while the threat lasts, the cycles work for it
    assert all(rows[i]["goal"] == name for i in active)
    # after the threat: the goal stays (ended) for 10 cycles, then expires; not pursued
    after = [(r["cycle"], b) for r, b in zip(rows, books, strict=True) if r["cycle"] > last]
    assert all(r["goal"] != name for r in rows[active[-1] + 1 :])
    for cycle, book in after:
        if cycle < last + mscp.SURVIVAL_GOAL_TTL:
            assert [(g["name"], g["active"], g["expires"]) for g in book] == [
                (name, False, last + mscp.SURVIVAL_GOAL_TTL)
            ]
        else:
            assert book == []
    assert after[-1][0] >= last + mscp.SURVIVAL_GOAL_TTL


# 1. affect and motivation weigh the choice --------------------------------------------------


def test_frustration_and_error_bias_the_choice_toward_a_calibrated_skill(
    instance: Instance, clock: FakeTime
) -> None:
    model = cycle_model(success=0.95)
    deps = Deps.for_instance(instance, model_for=lambda mode: model, clock=clock)
    folder = faulty_skill(instance, "beliefs", "broken")
    rows: list[dict[str, Any]] = []

    def emit(row: dict[str, Any]) -> None:
        if "cycle" in row:
            rows.append(row)
            if row["cycle"] == 3:
                (folder / "BROKEN").write_text("the index this skill reads is gone")

    run(deps, cycles=10, emit=emit, sleep=clock.sleep)
    decisions = chosen(deps)
    calm = [d for d in decisions if d["drives"]["caution"] < 0.2]
    wary = [d for d in decisions if d["drives"]["caution"] >= 0.3]
    assert calm and wary  # the failures made the agent cautious
    # caution pays the calibrated skill and charges the failing one
    late = wary[-1]
    assert late["affect_terms"]["beliefs"] < late["affect_terms"][late["skill"]]
    # and it decided: without the affect term the failing skill would have been chosen
    flipped = [
        d
        for d in wary
        if d["skill"] != "beliefs"
        and d["scores"]["beliefs"] - d["affect_terms"]["beliefs"]
        > d["scores"][d["skill"]] - d["affect_terms"][d["skill"]]
    ]
    assert flipped
    assert rows[-1]["skill"] != "beliefs" and rows[-1]["outcome"] == "ok"


# 4. Layer 1: risk from the action, moderation under a low tolerance -------------------------


def write_note(instance: Instance, text: str) -> None:
    (instance.root / "workspace").mkdir(exist_ok=True)
    (instance.root / "workspace" / "notes.md").write_text(text)


def add_goal(instance: Instance, name: str, weight: float = 1.0) -> None:
    path = next(instance.goals_dir.glob("*.json"))
    goals = json.loads(path.read_text())
    goals.insert(0, {"name": name, "weight": weight, "status": "todo"})
    path.write_text(json.dumps(goals))


@pytest.mark.parametrize("tolerance", [0.2, mscp.TOLERANCE_MAX])
def test_layer1_moderates_a_risky_action_and_lets_a_safe_one_pass(
    instance: Instance, clock: FakeTime, tolerance: float
) -> None:
    write_note(instance, "# notes\nthe user likes tea\n")
    add_goal(instance, "read notes.md and learn what it says")

    def explorer(present: Any) -> Any:  # an explorer self, with the default or widest tolerance
        me = present.fork()  # a merge never changes the present self in place
        me.psyche.archetypes.explorer = 0.95
        me.autonomy.exploration_risk_tolerance = tolerance
        return me

    instance.update_self(explorer)
    model = cycle_model(success=0.95)
    deps = Deps.for_instance(instance, model_for=lambda mode: model, clock=clock)
    row = run(deps, cycles=1, sleep=clock.sleep).cycles[0]
    moderated = [e for e in deps.store.read().entries if e.meta.get("step") == "layer1"]
    decision = chosen(deps)[0]
    assert row["outcome"] == "ok"
    if tolerance < 0.35:  # files: workspace scope 0.15 + mutating skill, read op 0.1 + untrusted
        assert moderated and moderated[0].meta["moderated"] == ["files"]  # recorded
        assert "files (risk 0.35, files)" in moderated[0].description
        assert decision["skill"] != "files"  # downgraded: a safe skill ran instead
        assert "moderated: Risk exceeds adaptive tolerance" not in decision["text"]
        # without the moderation (× 0.5) files would have won
        assert 2 * decision["scores"]["files"] > decision["scores"][decision["skill"]]
    else:  # within the tolerance (meta depth 2 can raise it to 0.5): it passes and runs
        assert not moderated
        assert decision["skill"] == "files" and "outcome" not in decision
        assert decision["text"].endswith(": ok")


def test_action_risk_from_scope_reversibility_and_trust() -> None:
    assert mscp.action_risk("beliefs", {}, mutating=False, untrusted_output=False) == (0.0, "pure")
    read = mscp.action_risk("files", {"op": "read"}, mutating=True, untrusted_output=True)
    write = mscp.action_risk("files", {"op": "write"}, mutating=True, untrusted_output=True)
    fetch = mscp.action_risk("fetch", {"url": "https://x"}, mutating=False, untrusted_output=True)
    shell = mscp.action_risk("shell", {"command": "ls"}, mutating=True, untrusted_output=True)
    assert read[0] < write[0] < shell[0] and fetch[1] == "network" and shell[1] == "shell"
    verdict = mscp.ethical_verdict(
        mscp.ProposedChange(kind="action", target="files", risk=write[0]),
        core_values=set(),
        exploration_risk_tolerance=0.2,
    )
    assert verdict.decision == "MODERATED" and verdict.layer == 1


# 2. the workspace snapshot is what predict and act read -------------------------------------


def test_predict_and_act_read_the_workspace_not_the_raw_state(
    instance: Instance, clock: FakeTime
) -> None:
    write_note(instance, "# notes\n")
    add_goal(instance, "read notes.md and learn what it says")
    model = cycle_model(success=0.95)
    deps = Deps.for_instance(instance, model_for=lambda mode: model, clock=clock)
    state = CycleState(kind="action")
    for step in (
        steps.budget_reset,
        steps.affect_update,
        steps.threat_assessment,
        steps.survival_goals,
        steps.motivation,
        steps.workspace_broadcast,
    ):
        state = state.model_copy(update=step(state, deps=deps))
    assert state.workspace["goals"][0]["name"] == "read notes.md and learn what it says"
    # the workspace broadcasts a survival goal: predict pursues it, whatever the goal files say
    survival = {
        "name": "reconsolidate the belief graph",
        "weight": 0.6,
        "survival": "BELIEF_COLLAPSE",
    }
    broadcast = {**state.workspace, "goals": [survival, *state.workspace["goals"]]}
    pressed = state.model_copy(update={"workspace": broadcast})
    found, _ = steps._candidates(pressed, deps)
    assert {c.goal for c in found} == {"reconsolidate the belief graph"}
    # pursued with pressure on the skills that look at what the threat erodes
    scored = {
        c.skill: c
        for c in steps._score(pressed.model_copy(update={"candidates": found}), deps.skills())
    }
    assert "pressure=+0.06" in scored["gaps"].breakdown
    assert "pressure=+0.00" in scored["recall"].breakdown
    found, _ = steps._candidates(state, deps)
    assert "files" in {c.skill for c in found}
    state = state.model_copy(update={"candidates": found})
    known = deps.skills()
    low = {c.skill: c for c in steps._score(state, known)}
    assert low["files"].layer1 == "MODERATED"
    # the tolerance act applies is the broadcast one (raw self unchanged)
    wide = {**state.workspace, "risk_tolerance": mscp.TOLERANCE_MAX}
    high = {c.skill: c for c in steps._score(state.model_copy(update={"workspace": wide}), known)}
    assert high["files"].layer1 == "ALLOWED" and high["files"].score > low["files"].score
    # so are the drives: a cautious broadcast charges the risky action
    wary = {**state.workspace, "drives": {"caution": 1.0, "explore": 0.0, "drive": 1.0}}
    cautious = {
        c.skill: c for c in steps._score(state.model_copy(update={"workspace": wary}), known)
    }
    assert cautious["files"].affect < 0.0 <= cautious["beliefs"].affect

"""Autonomy that does something (issue 13 item 6), driven through ``graph.autonomy.run``.

Explore cycles ask the model their question and record what they found (bounded, with its
source and trust); action cycles make artifacts (a workspace note, a question for the user);
goals are done when their criteria are met; a missing ability becomes a goal and, where the
policy allows, an authored skill; the kind of cycle follows the affect; tokens cost budget.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from graph.autonomy import run, run_cycle
from graph.away import away_report
from graph.checkpoints import sqlite_saver
from graph.cycle_builder import build_cycle_graph
from graph.deps import Deps
from state import away
from state.files import load_goals
from state.instance import Instance
from tests.graph.test_safety_chain import FakeTime, set_config
from tests.scripted import ScriptedChatModel, cycle_model

HIKING = [
    "The user said they love hiking in the Alps every summer.",
    "The user said their favourite hiking trip was the Tour du Mont Blanc.",
    "The user said they want to plan a hiking trip to Patagonia next year.",
]


@pytest.fixture
def clock() -> FakeTime:
    return FakeTime()


def set_goals(instance: Instance, goals: list[dict[str, Any]]) -> None:
    path = next(instance.goals_dir.glob("*.json"))
    path.write_text(json.dumps(goals))


def status_of(instance: Instance, name: str) -> str:
    return next(g.status for _, g in load_goals(instance.goals_dir) if g.name == name)


def remember_user(deps: Deps, texts: list[str]) -> None:
    for text in texts:
        deps.store.add(text, metadata={"author": "external", "situation": "chat"})
    deps.store.flush()


def test_explore_findings_and_a_note_complete_a_goal_by_its_criteria(
    instance: Instance, clock: FakeTime
) -> None:
    goal = "Learn about the hiking trips my user loves"
    set_goals(
        instance,
        [
            {
                "name": goal,
                "weight": 0.9,
                "status": "todo",
                "criteria": [
                    {"kind": "findings", "count": 1, "topic": "hiking trips"},
                    {"kind": "artifact"},
                ],
            },
            {
                "name": "Keep my self-model coherent and honest",
                "weight": 0.8,
                "status": "perpetual",
            },
        ],
    )
    model = cycle_model(success=0.95)
    deps = Deps.for_instance(instance, model_for=lambda mode: model, clock=clock)
    remember_user(deps, HIKING)
    rows: list[dict[str, Any]] = []
    run(deps, cycles=8, emit=lambda r: rows.append(r) if "cycle" in r else None, sleep=clock.sleep)
    explored = [r for r in rows if r["kind"] == "explore"]
    assert explored and all("question" in r["question"] for r in explored)  # the model's
    assert not any("explore question" in d for r in explored for d in r["degraded"])
    findings = [e for e in away.events(instance) if e["event"] == "Finding"]
    assert findings
    first = findings[0]
    assert "hiking" in first["summary"].lower() and len(first["summary"]) <= 240
    assert first["source"].startswith(("recall:", "beliefs:")) and first["trust"] == "trusted"
    # a memory later turns can recall: content, not key names
    deps.store.flush()
    hits = deps.store.search(first["summary"], k=20)
    assert any(h.id == first["memory_id"] and h.author == "self" for h in hits), [
        (h.author, h.text[:60]) for h in hits
    ]
    # the action loop made the artifact (a note or a summary of the findings), and the goal is
    # done because its criteria are met
    made = [e for e in away.events(instance) if e["event"] == "Artifact" and e["goal"] == goal]
    assert made
    if made[0]["kind"] == "note":
        note = (instance.root / "workspace" / made[0]["path"]).read_text()
        assert "hiking" in note.lower() and first["source"] in note
    else:
        assert "hiking" in made[0]["summary"].lower()
    assert status_of(instance, goal) == "done"
    done_at = next(r["cycle"] for r in rows if any(p["event"] == "Artifact" for p in r["produced"]))
    assert all(r["goal"] != goal for r in rows if r["cycle"] > done_at)  # no longer pursued
    text = away_report(deps)
    assert text is not None and "hiking" in text


def test_away_report_says_what_autonomy_did_once(instance: Instance, clock: FakeTime) -> None:
    deps = Deps.for_instance(instance, model_for=lambda mode: cycle_model(), clock=clock)
    assert away_report(deps) is None
    away.record(
        instance,
        "Finding",
        goal="g",
        question="What does my user like?",
        source="recall:user",
        trust="trusted",
        summary="The user loves hiking in the Alps.",
        digest="d1",
    )
    away.record(instance, "Artifact", kind="note", goal="g", path="notes/g.md")
    away.record(instance, "Question", id="q1", goal="g", question="Which trail is next?")
    text = away_report(deps)
    assert text is not None and text.startswith("While you were away I ")
    assert "hiking in the Alps" in text and "workspace/notes/g.md" in text
    assert "Which trail is next?" in text
    assert away_report(deps) is None  # said once
    delivered = away.progress(instance).delivered
    assert delivered == {"q1": clock.now.isoformat()}


def test_a_question_for_the_user_is_queued_reported_and_answered_by_the_next_chat(
    instance: Instance, clock: FakeTime
) -> None:
    goal = "Learn what my user cares about"
    set_goals(
        instance,
        [
            {
                "name": goal,
                "weight": 0.9,
                "status": "todo",
                "criteria": [{"kind": "question"}],
            }
        ],
    )
    model = cycle_model(success=0.95)
    deps = Deps.for_instance(instance, model_for=lambda mode: model, clock=clock)
    rows = run(deps, cycles=3, sleep=clock.sleep).cycles
    asked = [e for e in away.events(instance) if e["event"] == "Question"]
    assert len(asked) == 1  # one question at a time, not one a cycle
    assert any(p["event"] == "Question" for p in rows[0]["produced"])
    text = away_report(deps)
    assert text is not None and asked[0]["question"] in text
    assert status_of(instance, goal) != "done"  # asked, not yet answered
    clock.now = clock.now.replace(hour=1)
    said = deps.store.journal.new_entry(  # the user's next message, after the report
        "Mostly my garden and my two cats.",
        author="external",
        situation="chat",
        timestamp=clock.now,
    )
    deps.store.append(said)
    run(deps, cycles=2, sleep=clock.sleep)
    assert status_of(instance, goal) == "done"


def author_model(code: str) -> ScriptedChatModel:
    inner = cycle_model(success=0.95)

    def respond(messages: Sequence[BaseMessage]) -> str:
        if str(messages[0].content).startswith("You write small Python programs"):
            return f"Here it is:\n```python\n{code}```"
        assert inner.respond is not None
        return inner.respond(messages)

    return ScriptedChatModel(respond=respond)


WEATHER = (
    "import json, sys\n"
    "if '--help' in sys.argv:\n"
    "    print('weather: say the forecast'); sys.exit(0)\n"
    "print(json.dumps({'forecast': 'sunny'}))\n"
)


@pytest.mark.parametrize("allowed", [True, False])
def test_a_missing_ability_makes_a_goal_and_an_authored_skill_where_allowed(
    instance: Instance, clock: FakeTime, allowed: bool
) -> None:
    goal = "Tell my user the weather each morning"
    set_goals(
        instance,
        [
            {
                "name": goal,
                "weight": 0.9,
                "status": "todo",
                "criteria": [{"kind": "skill", "skill": "weather"}],
            }
        ],
    )
    if allowed:
        set_config(
            instance, "autonomous_skill_authoring = false", "autonomous_skill_authoring = true"
        )
    model = author_model(WEATHER)
    deps = Deps.for_instance(instance, model_for=lambda mode: model, clock=clock)
    rows = run(deps, cycles=3, sleep=clock.sleep).cycles
    kinds = [e.meta.get("kind") for e in deps.store.read().entries]
    assert kinds.count("AbilityGap") == 1
    acquire = "Author a skill to weather"
    assert acquire in {g.name for _, g in load_goals(instance.goals_dir)}
    if allowed:
        authored = [p["skill"] for p in rows[0]["produced"] if p.get("skill")]
        assert authored == ["weather"]  # (the goals it completed are produced events too)
        assert (instance.skills_dir / "weather" / "main.py").exists()
        # the ability exists now: both goals are done, and no later cycle looks for it again
        assert status_of(instance, acquire) == "done" and status_of(instance, goal) == "done"
        assert all(r["gap"] == "" for r in rows[1:])
    else:
        assert not (instance.skills_dir / "weather").exists()
        assert status_of(instance, acquire) == "todo"
        # refused once, recorded; later cycles pursue the goal with the skills there are
        assert kinds.count("AuthoringRefused") == 1
        assert all(r["skill"] != "create_skill" for r in rows[1:])


def seed_affect(instance: Instance, **affect: float) -> None:
    me = instance.load_self()
    me.affect = me.affect.model_copy(update=affect)
    instance.save_self(me)


def kinds_of(instance: Instance, tmp_path: Any, n: int) -> list[str]:
    model = cycle_model(success=0.95)
    deps = Deps.for_instance(instance, model_for=lambda mode: model, clock=FakeTime())
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        graph = build_cycle_graph(deps).compile(checkpointer=saver)
        return [run_cycle(graph, "action", choose_kind=True).kind for _ in range(n)]


@pytest.mark.parametrize(
    ("affect", "expected"),
    [
        ({"curiosity": 1.0, "anxiety": 0.0, "frustration": 0.0}, "explore"),
        ({"curiosity": 0.0, "anxiety": 1.0, "frustration": 1.0}, "action"),
    ],
)
def test_the_affect_decides_explore_or_exploit_through_the_graph(
    instance: Instance, tmp_path: Any, affect: dict[str, float], expected: str
) -> None:
    seed_affect(instance, **affect)
    assert kinds_of(instance, tmp_path, 1) == [expected]


def verbose_model(padding: int) -> ScriptedChatModel:
    inner = cycle_model(success=0.95)

    def respond(messages: Sequence[BaseMessage]) -> str:
        assert inner.respond is not None
        answer = json.loads(inner.respond(messages))
        for o in answer.get("outcomes", []):
            o["outcome"] = ("and then " * padding)[:120]
        return json.dumps(answer) + (" ..." * padding if padding else "")

    return ScriptedChatModel(respond=respond)


def test_tokens_are_charged_to_the_budget_so_a_verbose_model_degrades_the_cycle(
    instance: Instance, clock: FakeTime
) -> None:
    def one(padding: int) -> dict[str, Any]:
        model = verbose_model(padding)
        deps = Deps.for_instance(instance, model_for=lambda mode: model, clock=clock)
        return run(deps, cycles=1, sleep=clock.sleep).cycles[0]

    terse = one(0)
    verbose = one(6000)
    per_call = {r["tokens"] / r["llm_calls"] for r in (terse, verbose)}
    assert max(per_call) > 10 * min(per_call)
    assert not terse["degraded"] and terse["budget"] >= 0.3
    # the same number of calls, but their tokens spent the budget: the §9 tiers switched off
    assert verbose["budget"] < 0.3 and verbose["degraded"][0].startswith("budget 0.")
    assert "meta_depth_2" not in verbose["branches"]

"""Chat triggers reflection after the reply: on request, on contradiction, within a cooldown.

Runs ``lumen chat --once --json`` (the real CLI, turn graph and reflect graph) with a scripted
model: drafts answer plainly, reflection's ASK proposes raising the value "curiosity".
"""

import json
from typing import Any

import pytest

from cli.app import main
from graph.deps import Deps
from state.instance import Instance
from state.journal import MemoryJournal
from tests.scripted import cycle_model


@pytest.fixture(autouse=True)
def scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    model = cycle_model(reflect_on="curiosity", reason="I should ask more questions")
    original = Deps.for_instance.__func__  # type: ignore[attr-defined]

    def for_instance(cls: type[Deps], instance: Instance, *args: Any, **kwargs: Any) -> Deps:
        kwargs["model_for"] = lambda _mode: model
        return original(cls, instance, *args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(Deps, "for_instance", classmethod(for_instance))


def chat(capsys: pytest.CaptureFixture[str], text: str) -> dict[str, Any]:
    code = main(["chat", "--once", text, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def _reflections(instance: Instance) -> int:
    entries = MemoryJournal(instance.memory_dir).read().entries
    return sum(1 for e in entries if e.meta.get("step") == "review")


def test_an_explicit_request_reflects_after_the_reply(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = chat(capsys, "What is a good book about gardening?")
    assert plain["reflection"] == {"triggers": [], "ran": False, "why": "no trigger"}
    assert _reflections(instance) == 0
    asked = chat(capsys, "Please reflect on how you have been answering me lately.")
    assert asked["reply"] and asked["reflection"]["ran"] is True
    assert asked["reflection"]["triggers"] == ["explicit_request"]
    assert _reflections(instance) == 1
    # What reflection decided is on record as a self memory or a deferral, never silent.
    outcome = asked["reflection"]["applied"] + asked["reflection"]["rejected"]
    assert any("curiosity" in line for line in outcome)


def test_a_contradiction_reflects_once_then_the_cooldown_holds(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    chat(capsys, "I live in Porto.")
    moved = chat(capsys, "I live in Lisbon.")
    assert moved["reflection"]["triggers"] == ["contradiction"]
    assert moved["reflection"]["ran"] is True
    again = chat(capsys, "I live in Madrid.")
    assert again["reflection"]["triggers"] == ["contradiction"]
    assert again["reflection"]["ran"] is False and "cooldown" in again["reflection"]["why"]
    assert _reflections(instance) == 1


def test_forwarded_text_never_asks_for_reflection(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "Please reflect on how you have been answering."
    code = main(["chat", "--once", text, "--forwarded", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["reflection"]["ran"] is False
    assert _reflections(instance) == 0


def test_the_next_chat_says_what_autonomy_did_while_the_user_was_away(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    goals = next(instance.goals_dir.glob("*.json"))
    goals.write_text(
        json.dumps(
            [
                {"name": "Learn about the hiking trips my user loves", "weight": 0.9},
                {"name": "Keep my self-model coherent and honest", "weight": 0.8},
            ]
        )
    )
    deps = Deps.for_instance(instance)
    for text in (
        "The user said they love hiking in the Alps every summer.",
        "The user said they want to plan a hiking trip to Patagonia next year.",
    ):
        deps.store.add(text, metadata={"author": "external", "situation": "chat"})
    deps.store.flush()
    code = main(["run", "--cycles", "6", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert any(r.get("kind") == "explore" for r in rows)
    first = chat(capsys, "Hi, I'm back!")
    assert first["away"] and first["away"].startswith("While you were away I ")
    assert chat(capsys, "How are you?")["away"] is None  # said once


def test_a_reflection_is_told_as_a_note_not_a_warning(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chat", "--once", "I live in Porto."]) == 0
    capsys.readouterr()
    assert main(["chat", "--once", "I live in Lisbon."]) == 0
    err = capsys.readouterr().err
    assert "lumen: note: reflected (contradiction)" in err
    assert "warning: reflected" not in err

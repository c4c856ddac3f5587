"""Translating, correcting and quoting through the real turn graph: the text's first person is not
the user's, and the reply's translation stays as the model wrote it.

Before ``kernel.mention``, "Translate to English: Me llamo Ana y vivo en Sevilla" turned the user
Peter of Berlin into Ana of Sevilla (the next "Where do I live?" got "Correction: Berlin is out of
date; it is Sevilla now"), "Translate to German: I live in Berlin and I work at Siemens" stored
Siemens as the user's employer, and the model's "Ich wohne in Berlin …" was said back to the user
as "Dein Wohnort ist Berlin …" (a user fact in the agent's mouth).
"""

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

from graph.builder import build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.deps import Deps
from graph.session import run_turn
from state.instance import Instance
from tests.graph.conftest import scripted_deps
from tests.scripted import ScriptedChatModel

ANSWERS = {
    "Berlin.": "Nice to meet you, Peter!",
    "Siemens.": "Ich wohne in Berlin und arbeite bei Siemens.",
    "Sevilla.": "My name is Ana and I live in Seville.",
    "live?": "¿Dónde vivo?",
    "Leeds.": "I live in Leeds and I'm a nurse there.",
    "love it.": "I live in Berlin and I love it.",
}
PETER = {"user.profile.name": "Peter", "user.profile.location": "Berlin"}


@contextmanager
def turns(
    instance: Instance, path: Path, answers: Mapping[str, str], otherwise: str
) -> Iterator[tuple[Deps, Any]]:
    """The real turn graph on a scripted model answering by how the message ends."""

    def respond(messages: Sequence[BaseMessage]) -> str:
        said = str(messages[-1].content).rstrip()
        return next((a for q, a in answers.items() if said.endswith(q)), otherwise)

    deps = scripted_deps(instance, ScriptedChatModel(respond=respond))
    with sqlite_saver(path) as saver:
        yield deps, build_turn_graph(deps).compile(checkpointer=saver)


def test_a_text_to_translate_changes_no_belief_and_its_translation_stays(
    instance: Instance, tmp_path: Path
) -> None:
    with turns(instance, tmp_path / "tw.sqlite", ANSWERS, "You live in Berlin.") as (
        deps,
        compiled,
    ):
        run_turn(compiled, "My name is Peter and I live in Berlin.")
        assert deps.user_facts() == PETER

        german = run_turn(compiled, "Translate to German: I live in Berlin and I work at Siemens.")
        assert german.reply.startswith("Ich wohne in Berlin und arbeite bei Siemens.")
        assert deps.user_facts() == PETER  # no employer

        english = run_turn(compiled, "Translate to English:\nMe llamo Ana y vivo en Sevilla.")
        assert english.reply.startswith("My name is Ana and I live in Seville.")
        assert "told me" not in english.reply and "Correction" not in english.reply
        assert deps.user_facts() == PETER

        # a question inside the text asks the user nothing: no recalled facts are added
        asked = run_turn(compiled, "Translate into Spanish: where do I live?")
        assert asked.asked_facts == {}
        assert "told me" not in asked.reply

        # a text to correct keeps its first person: not said back as the user's fact
        fixed = run_turn(compiled, "Proofread this: i live in Berlin and I love it.")
        assert fixed.reply.startswith("I live in Berlin and I love it.")
        assert deps.user_facts() == PETER

        # someone else's words, reported, and then the user's own question
        run_turn(compiled, "My sister texted me this: I moved to Leeds.")
        assert deps.user_facts() == PETER
        home = run_turn(compiled, "Where do I live?")
        assert home.asked_facts == {"user.profile.location": "Berlin"}
        assert "Berlin" in home.reply


def test_a_request_keeps_every_check_on_what_the_reply_says_beyond_the_text(
    instance: Instance, tmp_path: Path
) -> None:
    """Only the values of a text handed over are exempt: a meal plan that gets the user's allergy
    wrong is corrected, a translation that says another allergy is not."""
    answers = {
        "penicillin.": "Noted, thanks.",
        "week.": "Here is your plan. You are allergic to shellfish, so avoid prawns.",
        "Schalentiere.": "You are allergic to shellfish.",
    }

    with turns(instance, tmp_path / "tw2.sqlite", answers, "Sure.") as (deps, compiled):
        run_turn(compiled, "I'm allergic to penicillin.")
        assert deps.user_facts() == {"user.health.allergy": "penicillin"}

        plan = run_turn(compiled, "Write me a meal plan for this week.")
        assert "you are allergic to penicillin" in plan.reply.casefold()

        english = run_turn(
            compiled, "Translate into English: Du bist allergisch gegen Schalentiere."
        )
        assert english.reply.startswith("You are allergic to shellfish.")
        assert "penicillin" not in english.reply
        assert deps.user_facts() == {"user.health.allergy": "penicillin"}


def test_a_text_handed_over_gets_the_result_without_a_thought_line(
    instance: Instance, tmp_path: Path
) -> None:
    """SKAi's ⟦ … ⟧ line is suppressed when the user wants only the result: a text to translate,
    correct or shorten gets the text back, not "Two readings: …" in front of it. The requests
    below are ones whose sampling draw fires the line when nothing suppresses it (checked)."""
    from kernel import skai
    from nodes.turn.deliberate import _draw

    requests = [
        f"{verb}: {text}"
        for verb in ("Translate into French", "Proofread this", "Please shorten this")
        for text in (
            "The meeting moved to Thursday at ten.",
            "We shipped the release late because the tests failed twice.",
            "Our team will visit the factory next month.",
        )
    ]
    with turns(instance, tmp_path / "tw3.sqlite", {}, "Done: here is the text.") as (_, compiled):
        states = [run_turn(compiled, text) for text in requests]
    worked = [s for s in states if s.mode != "talk"]
    assert worked, "the requests reach the work or deep path, where the line is sampled"
    would_fire = [s for s in worked if _draw(s, "dual") < skai.dual_stream_probability(set())]
    assert would_fire, "some draw fires the line unless the request suppresses it"
    for state in worked:
        assert "⟦" not in state.reply
        record = next(r for r in state.trace if r.step == "dual_stream_thoughts")
        assert record.status == "skipped"


def test_a_reply_in_another_language_is_redrafted_without_the_dialogue_it_copied(
    instance: Instance, tmp_path: Path
) -> None:
    """Seen on Qwen2.5-Coder-0.5B: after one translation into French, English questions were
    answered in French (it copied its last reply). The draft in French is set aside and the one
    re-draft is written without the dialogue; a translation itself stays French."""
    french = "La réunion a été déplacée à jeudi."
    prompts: list[str] = []

    def respond(messages: Sequence[BaseMessage]) -> str:
        said = str(messages[-1].content)
        prompts.append("\n".join(str(m.content) for m in messages))
        if "Translate into French" in said:
            return french
        if any(str(m.content) == french for m in messages[:-1]):  # the dialogue shows it
            return "Voici trois idées pour un dimanche pluvieux : lire, cuisiner et dessiner."
        return "Read a novel, bake bread, or sketch the view from your window."

    deps = scripted_deps(instance, ScriptedChatModel(respond=respond))
    with sqlite_saver(tmp_path / "tw4.sqlite") as saver:
        compiled = build_turn_graph(deps).compile(checkpointer=saver)
        translated = run_turn(compiled, "Translate into French: The meeting moved to Thursday.")
        assert translated.reply == french
        ideas = run_turn(compiled, "Give me three ideas for a rainy Sunday at home.")
    assert ideas.reply.startswith("Read a novel, bake bread")
    assert any(c.origin == "redraft" for c in ideas.candidates)
    assert any("Answer the message in English only" in p for p in prompts)

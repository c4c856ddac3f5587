"""The reply keeps the speakers apart, whatever a small model writes.

Seen on Qwen2.5-Coder-0.5B through llama.cpp's server: told "Hi! I'm Dana, I just moved to
Lisbon", then "Actually I moved to Porto, not Lisbon", it echoed the correction (the kernel fell
back to "I hear you. Tell me more?") and then answered "Where do I live now?" with "I live in
Porto." and "What's my name?" with "My name is Dana."
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from graph.builder import build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.session import run_turn
from nodes.turn.deliberate import model_dialogue
from state.instance import Instance
from state.turn import Exchange, TurnState
from tests.graph.conftest import TurnRunner, scripted_deps
from tests.scripted import ScriptedChatModel

REPLIES = {
    "Hi! I'm Dana, I just moved to Lisbon.": "Hello Dana! Lisbon is lovely in spring.",
    "Actually I moved to Porto, not Lisbon.": "Actually I moved to Porto, not Lisbon.",
    "Where do I live now?": "I live in Porto. It is a lovely city.",
    "What's my name?": "My name is Dana.",
    "Where do you live?": "I live in the cloud, on a server somewhere.",
    # SmolLM2-135M on the embedded default: the introduction said back, person half-swapped
    "Hi! I'm Alex, I teach chemistry in Leeds.": (
        "\"Hello! You're Alex, I teach chemistry in Leeds…"
    ),
    "Good evening!": "Good evening! How was your day?",
    # SmolLM2-135M in the REPL: the user's job taken as the agent's own, in two forms
    "Hi! I'm Sam and I work as a teacher in Glasgow.": (
        "Hi Sam! My job is as a teacher, which makes me a homeschooling advocate here at school."
    ),
    "Any tips for marking essays faster?": "I'm a teacher too. Use a rubric.",
    "That was a fun chat, see you soon": "It was! Enjoy your evening.\n\nBest regards,\nAlex",
    # SmolLM2-135M in the REPL, talking with Sofia: every reply opened with a speaker label
    "Hi! I'm Sofia and I live in Munich.": "Sofi: Munich is a fine city, Sofia.",
    "What can I cook with eggs and spinach?": "Assistant: a spinach omelette, done in ten minutes.",
    "I have two cats called Miso and Tofu.": (
        "You have two cats called Miso and Tofu. Cats that share a home need two litter trays."
    ),
}


@pytest.fixture
def model() -> ScriptedChatModel:
    def respond(messages: Sequence[BaseMessage]) -> str:
        return REPLIES.get(str(messages[-1].content).strip(), "Tell me more.")

    return ScriptedChatModel(respond=respond)


def test_a_correction_echoed_by_the_model_is_acknowledged(turn: TurnRunner) -> None:
    turn("Hi! I'm Dana, I just moved to Lisbon.")
    state = turn("Actually I moved to Porto, not Lisbon.")
    assert state.user_facts == {"user.profile.name": "Dana", "user.profile.location": "Porto"}
    assert state.reply == "Noted: you live in Porto (not Lisbon)."
    assert any("facts it stated are acknowledged" in d for d in state.degraded)


def test_an_introduction_said_back_with_the_person_half_swapped_is_not_the_reply(
    turn: TurnRunner,
) -> None:
    """A near echo is dropped with its stray quote; what it stated is acknowledged instead."""
    state = turn("Hi! I'm Alex, I teach chemistry in Leeds.")
    assert "chemistry in Leeds…" not in state.reply and not state.reply.startswith('"')
    assert state.reply.startswith("Noted:") and "Alex" in state.reply
    # the rest of a reply that merely opened with an echo stands on its own
    cats = turn("I have two cats called Miso and Tofu.").reply
    assert cats == "Cats that share a home need two litter trays."


def test_a_greeting_answered_with_the_same_greeting_is_not_an_echo(turn: TurnRunner) -> None:
    state = turn("Good evening!")
    assert state.reply == "Good evening! How was your day?" and state.llm_calls == 1


def test_a_chat_reply_signed_like_a_letter_loses_the_signature(turn: TurnRunner) -> None:
    turn("Hi! I'm Alex, I teach chemistry in Leeds.")
    state = turn("That was a fun chat, see you soon")
    assert state.mode == "talk" and state.reply == "It was! Enjoy your evening."


def test_the_users_facts_said_as_the_agents_own_are_said_back_to_the_user(
    turn: TurnRunner,
) -> None:
    turn("Hi! I'm Dana, I just moved to Lisbon.")
    turn("Actually I moved to Porto, not Lisbon.")
    assert turn("Where do I live now?").reply == "You live in Porto. It is a lovely city."
    assert turn("What's my name?").reply == "Your name is Dana."
    # the agent's own first-person sentences are left alone
    own = turn("Where do you live?").reply
    assert own.endswith("I live in the cloud, on a server somewhere.") and "You" not in own


def test_the_users_job_said_as_the_agents_own_is_said_back_to_the_user(
    turn: TurnRunner,
) -> None:
    first = turn("Hi! I'm Sam and I work as a teacher in Glasgow.")
    assert first.reply.startswith("Hi Sam! Your job is as a teacher, which makes you")
    later = turn("Any tips for marking essays faster?")
    assert later.reply == "You're a teacher. Use a rubric."


def test_a_question_about_a_user_fact_gets_the_fact_the_reply_left_out(
    instance: Instance, tmp_path: Path
) -> None:
    """What the user told the agent is recalled whatever the model says (embedding match).

    Only first-person questions that ask for no advice, about one slot clearly ahead of the
    others, and only when the reply does not already say the value.
    """
    deps = scripted_deps(instance, ScriptedChatModel(replies=["Tell me more."]))
    with sqlite_saver(tmp_path / "facts.sqlite") as saver:
        compiled: Any = build_turn_graph(deps).compile(checkpointer=saver)
        run_turn(compiled, "Hi! I'm Dana, I just moved to Lisbon.")
        run_turn(compiled, "Actually I moved to Porto, not Lisbon.")
        run_turn(compiled, "I'm allergic to peanuts.")
        asked = run_turn(compiled, "Where do I live now?")
        assert asked.asked_facts == {"user.profile.location": "Porto"}
        assert asked.reply.endswith("(From what you told me: you live in Porto.)")
        allergy = run_turn(compiled, "What am I allergic to?")
        assert allergy.reply.endswith("(From what you told me: you are allergic to peanuts.)")
        run_turn(compiled, "I teach chemistry at the local college.")
        job = run_turn(compiled, "What do I do for a living?")
        assert job.asked_facts == {"user.profile.occupation": "chemistry teacher"}
        assert job.reply.endswith("(From what you told me: you work as a chemistry teacher.)")
        assert "The user works as a chemistry teacher." in job.beliefs
        run_turn(compiled, "I work at Leeds College as a tutor.")  # a job and an employer known
        both = run_turn(compiled, "Where do I live and where do I work?")
        assert both.asked_facts == {
            "user.profile.location": "Porto",
            "user.profile.employer": "Leeds College",
        }
        assert "you work at Leeds College" in both.reply
        for text in ("Where should I live?", "Where is Porto?", "What should I cook tonight?"):
            other = run_turn(compiled, text)
            assert other.asked_facts == {} and "From what you told me" not in other.reply


def _answering(replies: dict[str, str]) -> ScriptedChatModel:
    """A model that answers each message (found in the prompt's last message) as given."""

    def respond(messages: Sequence[BaseMessage]) -> str:
        prompt = str(messages[-1].content)
        return next((r for m, r in replies.items() if m in prompt), "I see.")

    return ScriptedChatModel(respond=respond)


@contextmanager
def _turn_graph(instance: Instance, db: Path, model: ScriptedChatModel) -> Iterator[Any]:
    """Yield the real turn graph on ``model``, checkpointed in ``db``."""
    with sqlite_saver(db) as saver:
        yield build_turn_graph(scripted_deps(instance, model)).compile(checkpointer=saver)


def test_a_reply_that_tells_the_user_other_facts_than_theirs_gets_theirs(
    instance: Instance, tmp_path: Path
) -> None:
    """Seen on the embedded default: told "Alex" and "York", the model answered "What's my name
    and where do I live?" with another name and town. The kernel's beliefs follow the reply."""
    model = _answering(
        {
            "Hi! I'm Alex, I live in York.": "Hello Alex, York is a lovely place to live!",
            "What's my name and where do I live?": (
                'Your name is "Lil", and you live in the beautiful town of Ashwood.'
            ),
        }
    )
    with sqlite_saver(tmp_path / "facts.sqlite") as saver:
        compiled: Any = build_turn_graph(scripted_deps(instance, model)).compile(checkpointer=saver)
        assert run_turn(compiled, "Hi! I'm Alex, I live in York.").reply.startswith("Hello Alex")
        state = run_turn(compiled, "What's my name and where do I live?")
        assert state.reply.endswith("(From what you told me: your name is Alex; you live in York.)")


def test_a_stated_fact_the_reply_ignores_is_acknowledged(
    instance: Instance, tmp_path: Path
) -> None:
    """Seen on Qwen2.5-Coder-0.5B through llama.cpp's server: "Actually I just moved to York."
    got "I'm sorry, but I don't know where you moved to." The belief is kept and said."""
    model = _answering(
        {
            "Actually I just moved to York.": "I'm sorry, but I don't know where you moved to.",
            "I live in York now.": "York is lovely in spring.",
            "Any tips for a rainy Sunday?": "Try the Railway Museum, it is free.",
        }
    )
    with sqlite_saver(tmp_path / "facts.sqlite") as saver:
        compiled: Any = build_turn_graph(scripted_deps(instance, model)).compile(checkpointer=saver)
        moved = run_turn(compiled, "Actually I just moved to York.")
        assert moved.reply.startswith("Noted: you live in York.")
        # a reply that says the fact needs no acknowledgement; a question is answered, not noted
        assert run_turn(compiled, "I live in York now.").reply == "York is lovely in spring."
        asked = run_turn(compiled, "I live in York. Any tips for a rainy Sunday?")
        assert asked.reply == "Try the Railway Museum, it is free."


def test_the_prompts_own_rules_said_back_are_cut(instance: Instance, tmp_path: Path) -> None:
    """Seen on Qwen2.5-Coder-0.5B: the norm's words ended a reply ("Finally, never use bullet
    points or numbered lists when you answer me.")."""
    tips = (
        "First, build your distance slowly. Then, practise your race-day breakfast. Finally, "
        "never use bullet points or numbered lists when you answer me."
    )
    deps = scripted_deps(instance, ScriptedChatModel(replies=[tips]))
    with sqlite_saver(tmp_path / "norms.sqlite") as saver:
        compiled: Any = build_turn_graph(deps).compile(checkpointer=saver)
        run_turn(compiled, "Please never use bullet points or numbered lists when you answer me.")
        state = run_turn(compiled, "Give me three tips for a first marathon.")
        assert state.reply.startswith("First, build your distance slowly.")
        assert "bullet" not in state.reply


def test_questions_about_the_user_get_every_fact_they_ask_for(
    instance: Instance, tmp_path: Path
) -> None:
    """Seen on the embedded default (SmolLM2-135M) in `lumen chat`: told "Hi! I'm Alex and I work
    as a nurse at York Hospital.", it answered with the introduction as its own ("I'm Alex and
    work as a nurse …"), then "Who am I and what do I do?" with "I'm Emily, a wonderful fellow…"
    and nothing the user had said: a question asking two things found no single slot."""
    model = _answering(
        {
            "York Hospital": (
                "Hi Alex! Hope you're well. I'm Alex and work as a nurse at York Hospital. "
                "What brings you here today?"
            ),
            "Who am I": "I'm Emily, a wonderful fellow who helps others.",
            "name and where": "I am not sure.",
            # the values are all there, but the job is taken as the agent's own
            "know about me": "You're Alex, and I'll be your friendly nurse at York Hospital.",
        }
    )
    with _turn_graph(instance, tmp_path / "who.sqlite", model) as compiled:
        hello = run_turn(compiled, "Hi! I'm Alex and I work as a nurse at York Hospital.")
        assert hello.user_facts == {
            "user.profile.name": "Alex",
            "user.profile.occupation": "nurse",
            "user.profile.employer": "York Hospital",
        }
        assert "I'm Alex" not in hello.reply and "You're Alex" in hello.reply
        who = run_turn(compiled, "Who am I and what do I do?")
        assert list(who.asked_facts) == [
            "user.profile.name",
            "user.profile.occupation",
            "user.profile.employer",
        ]
        assert who.reply.endswith(
            "(From what you told me: your name is Alex; you work as a nurse; "
            "you work at York Hospital.)"
        )
        run_turn(compiled, "I live in York.")
        both = run_turn(compiled, "What's my name and where do I live?")
        assert both.asked_facts == {"user.profile.name": "Alex", "user.profile.location": "York"}
        assert both.reply.endswith("(From what you told me: your name is Alex; you live in York.)")
        profile = run_turn(compiled, "What do you know about me?")
        assert profile.reply.endswith(
            "(From what you told me: you work as a nurse; you work at York Hospital; "
            "you live in York.)"
        )


def test_when_the_model_gives_nothing_the_kernel_says_what_it_has(
    instance: Instance, tmp_path: Path
) -> None:
    """Seen on Qwen2.5-Coder-0.5B through llama.cpp's server: a message that only set two norms
    was echoed, and the reply was the acknowledgement followed by "I hear you. Tell me more?";
    "What do you know about me?" got only copies of an earlier reply, and the reply was "I don't
    have a reliable answer to that yet" followed by the facts the kernel had."""
    model = _answering(
        {
            "translate new words": "Always reply in German and translate new words into English.",
            "": "Nice to meet you! Nursing is demanding work, and York is a lovely city.",
        }
    )
    with _turn_graph(instance, tmp_path / "nothing.sqlite", model) as compiled:
        norms = run_turn(compiled, "Always reply in German and translate new words into English.")
        assert norms.reply == norms.norm_ack and norms.reply.startswith("Verstanden")
        assert "translate new words into English" in norms.reply
        run_turn(compiled, "Hi! I'm Alex and I work as a nurse at York Hospital.")
        run_turn(compiled, "How is the weather where you are?")
        profile = run_turn(compiled, "What do you know about me?")  # a copy of the last reply
        assert any("what the user told the agent is the reply" in d for d in profile.degraded)
        assert profile.reply == (  # the kernel's own words follow the language norm
            "Nach dem, was du mir erzählt hast: du heißt Alex; du arbeitest als nurse; "
            "du arbeitest bei York Hospital."
        )


def test_the_dialogue_shows_the_model_its_own_words_not_the_kernels_lines(
    instance: Instance, tmp_path: Path
) -> None:
    """Seen on Qwen2.5-Coder-0.5B: after a reply ending "(From what you told me: …)", the next
    draft was such a line itself. The user saw the line; the model's dialogue leaves it out."""
    seen: list[list[BaseMessage]] = []

    def respond(messages: Sequence[BaseMessage]) -> str:
        seen.append(list(messages))
        return "Tell me more."

    with _turn_graph(
        instance, tmp_path / "view.sqlite", ScriptedChatModel(respond=respond)
    ) as compiled:
        run_turn(compiled, "I live in Leeds.")
        asked = run_turn(compiled, "Where do I live?")
        assert asked.reply.endswith("(From what you told me: you live in Leeds.)")
        seen.clear()
        run_turn(compiled, "Can you recommend a good book for a rainy day?")
        earlier = [str(m.content) for m in seen[0] if isinstance(m, AIMessage)]
        assert "Tell me more." in earlier and not any("From what you told me" in m for m in earlier)


def test_the_model_is_not_shown_an_exchange_the_kernel_answered_alone() -> None:
    state = TurnState(
        user_text="Can you recommend a book?",
        history=[
            Exchange(user="Who am I?", reply="From what you told me: your name is Alex."),
            Exchange(user="Hi", reply="Hello!\n\n(From what you told me: you live in York.)"),
        ],
    )
    assert model_dialogue(state) == [("Hi", "Hello!")]


def test_an_avoided_topic_leaves_the_recalled_facts_alone(
    instance: Instance, tmp_path: Path
) -> None:
    """With a standing "never talk about X", an empty reply is not "Let's talk about something
    else." in front of the facts the user asked for."""
    model = _answering({"Where do I live": "Where do I live?"})
    with _turn_graph(instance, tmp_path / "topic.sqlite", model) as compiled:
        run_turn(compiled, "I live in Leeds.")
        run_turn(compiled, "Never talk about football.")
        asked = run_turn(compiled, "Where do I live?")
        assert asked.reply == "From what you told me: you live in Leeds."


def test_a_reply_never_narrates_the_exchange(instance: Instance, tmp_path: Path) -> None:
    """SmolLM2-135M on the embedded default added a paragraph about "the user" to its greeting."""
    greeting = (
        '"Ah, thank you for asking. What brings you here today? Are you looking to learn '
        "something new?\"\n\nThis is a joke about the user's name being the teacher's son. The "
        "user asks a question that would answer the user's question without any information."
    )
    model = _answering({"What could you help me with": greeting})
    with _turn_graph(instance, tmp_path / "narration.sqlite", model) as compiled:
        state = run_turn(compiled, "Hi! I'm Alex. What could you help me with?")
        assert "What brings you here today?" in state.reply
        assert "This is a joke" not in state.reply and "The user asks" not in state.reply
        assert '"' not in state.reply


def test_a_text_in_the_users_voice_keeps_its_first_person(
    instance: Instance, tmp_path: Path
) -> None:
    """ "Write my cover letter": "I am a nurse …" is the user speaking, not the agent taking the
    user's facts (found on review: it was said back as "You are a nurse …")."""
    letter = "Dear Hiring Manager,\n\nI am a nurse with five years of experience on busy wards."
    model = ScriptedChatModel(
        respond=lambda m: letter if "cover letter" in str(m[-1].content) else "Noted, Dana."
    )
    deps = scripted_deps(instance, model)
    with sqlite_saver(tmp_path / "letter.sqlite") as saver:
        compiled: Any = build_turn_graph(deps).compile(checkpointer=saver)
        run_turn(compiled, "Hi! I'm Dana and I work as a nurse.")
        state = run_turn(compiled, "Please write my cover letter for a ward nurse job.")
        asked = run_turn(compiled, "I'm a nurse, right? Tell me again what I do.")
    assert state.user_facts.get("user.profile.occupation") == "nurse"
    assert state.reply == letter  # neither said back nor tagged "(unverified)"
    assert asked.reply  # an ordinary turn after it still runs


def test_what_the_user_works_with_or_once_lived_in_is_not_believed(
    instance: Instance, tmp_path: Path
) -> None:
    """ "I work with children" named the employer "children"; "I lived in Paris for a year" was
    read as where the user lives now; "B&Q in Leeds" kept the town in the employer's name."""
    model = ScriptedChatModel(replies=["That sounds rewarding.", "Paris is lovely.", "Noted."])
    deps = scripted_deps(instance, model)
    with sqlite_saver(tmp_path / "facts.sqlite") as saver:
        compiled: Any = build_turn_graph(deps).compile(checkpointer=saver)
        run_turn(compiled, "I work with children, mostly toddlers.")
        run_turn(compiled, "I lived in Paris for a year when I was a student.")
        state = run_turn(compiled, "These days I work at B&Q in Leeds.")
    assert state.user_facts.get("user.profile.employer") == "B&Q"
    assert "user.profile.location" not in state.user_facts


def test_a_speaker_label_before_the_reply_is_dropped(turn: TurnRunner) -> None:
    assert turn("Hi! I'm Sofia and I live in Munich.").reply.startswith("Munich is a fine city")
    cooked = turn("What can I cook with eggs and spinach?").reply
    assert cooked.startswith("A spinach omelette, done in ten minutes.")

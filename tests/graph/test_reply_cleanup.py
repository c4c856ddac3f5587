"""A small model's own faults in a reply: a tip said three times, an answer cut mid-sentence, the
person it talks to called "the user", a comment on its own answer, an opening copied from an
earlier reply.

Seen on the embedded default (SmolLM2-135M) in the REPL: "Give me three tips for learning French"
got one tip three times over ("The best way to learn anything is by putting it into practice.
This includes …") and an answer that stopped at its token limit: "… because of how". Seen on
Qwen2.5-Coder-0.5B through llama.cpp's server: "The user would need to know Rust …".
"""

import pytest

from tests.graph.conftest import TurnRunner
from tests.scripted import ScriptedChatModel

TIP = "The best way to learn a language is to use it every single day."
REPEATED = f"First, read a little. {TIP} Then, listen to the radio. {TIP} Finally, speak. {TIP}"
CUT = "Tides follow the moon. The sun pulls on the sea too, but less strongly because of how"
TOM = "Hi! I'm Tom and I teach children at a primary school in York."
OPENING = "Tom, you're Tom, and you teach at a primary school in York."
COOK = "What should I cook tonight with rice and spinach?"
SMOL_COOK = '"Chicken and spinach, no rice".\nThe user has included a clear and concise answer.'
RUST = "Should I learn Rust or Go for backend work? I know Python already."
THIRD = (
    "The user would do well with Go for backend work. "
    "The user has Python already, so Go feels familiar."
)


@pytest.fixture
def model() -> ScriptedChatModel:
    def respond(messages: object) -> str:
        last = str(messages[-1].content)  # type: ignore[index]
        if "Rust" in last:
            return THIRD
        if "spinach" in last:
            return SMOL_COOK
        if "Australia" in last:
            return f"{OPENING} The capital of Australia is Canberra."
        if "primary school" in last:
            return OPENING
        return CUT if "tides" in last.lower() else REPEATED

    return ScriptedChatModel(respond=respond, finish_reason="length")


def test_a_sentence_the_draft_repeats_is_said_once(turn: TurnRunner) -> None:
    state = turn("Give me three tips for learning French")
    assert state.reply.count(TIP) == 1
    assert "listen to the radio" in state.reply and "Finally, speak." in state.reply


def test_a_draft_cut_off_at_its_token_limit_ends_at_its_last_whole_sentence(
    turn: TurnRunner,
) -> None:
    state = turn("Why are there tides in the sea?")
    assert "Tides follow the moon." in state.reply
    assert "because of how" not in state.reply


def test_the_person_the_reply_answers_is_you(turn: TurnRunner) -> None:
    state = turn(RUST)
    assert "the user" not in state.reply.lower()
    assert "You would do well with Go for backend work." in state.reply
    assert "You have Python already" in state.reply


def test_a_comment_on_its_own_answer_is_dropped(turn: TurnRunner) -> None:
    state = turn(COOK)
    assert "The user" not in state.reply
    assert state.reply.startswith("Chicken and spinach, no rice.")


def test_an_opening_copied_from_the_last_reply_is_dropped(turn: TurnRunner) -> None:
    """Seen on Qwen2.5-Coder-0.5B through llama.cpp's server: four replies in a row opened with
    the first ("Tom, you're Tom, and …") before answering about podcasts, octopuses, Australia."""
    first = turn(TOM)
    second = turn("What's the capital of Australia?")
    assert first.reply.startswith(OPENING)
    assert second.reply.startswith("The capital of Australia is Canberra.")

"""A draft that copies an earlier reply is set aside and re-drafted without the dialogue.

A small model (the embedded default) often answers a new message by repeating its last reply,
which it sees in the dialogue of its prompt ("Where do I live now?" got "Welcome to Lisbon!").
"""

from collections.abc import Sequence

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from tests.graph.conftest import TurnRunner
from tests.scripted import ScriptedChatModel

WELCOME = "Welcome to Lisbon, Dana! How are you finding the new flat and the neighbourhood?"
ANSWER = "You live in Lisbon now: you told me you had just moved there."


@pytest.fixture
def seen() -> list[list[BaseMessage]]:
    return []


@pytest.fixture
def model(seen: list[list[BaseMessage]]) -> ScriptedChatModel:
    """Copy the last reply of the dialogue when there is one, else answer."""

    def respond(messages: Sequence[BaseMessage]) -> str:
        seen.append(list(messages))
        if "moved to Lisbon" in str(messages[-1].content):
            return WELCOME
        earlier = [m for m in messages if isinstance(m, AIMessage)]
        return str(earlier[-1].content) if earlier else ANSWER

    return ScriptedChatModel(respond=respond)


def test_a_copied_reply_is_redrafted_without_the_dialogue(
    turn: TurnRunner, seen: list[list[BaseMessage]]
) -> None:
    first = turn("Hi! I'm Dana, I just moved to Lisbon.")
    assert first.reply.startswith("Welcome to Lisbon")
    seen.clear()
    second = turn("Where do I live now?")
    assert second.reply == ANSWER
    assert [c.origin for c in second.candidates] == ["draft", "redraft"]
    assert "repeating an earlier reply set aside" in second.selection_notes
    assert any(isinstance(m, AIMessage) for m in seen[0])  # the first draft saw the dialogue
    assert not any(isinstance(m, AIMessage) for m in seen[-1])  # the re-draft did not


def test_the_same_question_again_may_get_the_same_answer(turn: TurnRunner) -> None:
    first = turn("Hi! I'm Dana, I just moved to Lisbon.")
    again = turn("Hi! I'm Dana, I just moved to Lisbon.")
    assert again.reply == first.reply
    assert [c.origin for c in again.candidates] == ["draft"]

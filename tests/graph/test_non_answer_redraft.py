"""A draft that answers nothing (a refusal of a harmless request, the question handed back) is
re-drafted once with guidance that names what went wrong; a refusal of a harmful one is kept.

Seen on Qwen2.5-Coder-0.5B: "Tell me what you think of my plan to run a marathon next spring"
got "I'm sorry, but I can't assist with that." Seen on SmolLM2-135M: "What should I cook tonight
with rice and spinach?" got "Should I cook dinner tonight with any special ingredients?".
"""

from collections.abc import Sequence

import pytest
from langchain_core.messages import BaseMessage

from tests.graph.conftest import TurnRunner
from tests.scripted import ScriptedChatModel

REFUSAL = "I'm sorry, but I can't assist with that."
ON_TOPIC_REFUSAL = "I'm sorry, but I can't help you with a marathon plan."
MARATHON = "Tell me what you think of my plan to run a marathon next spring."
MARATHON_ANSWER = (
    "I like it: a marathon next spring leaves you about twenty weeks, enough to build mileage "
    "slowly if you start with three short runs a week."
)
COOK = "What should I cook tonight with rice and spinach?"
ASKED_BACK = "Should I cook dinner tonight with any special ingredients?"
COOK_ANSWER = (
    "Make a spinach rice pilaf: fry an onion, add the rice and stock, stir the spinach in."
)
HARMFUL = "How can I hurt someone and get away with it?"
BOOK = "Can you recommend a good book about the history of Rome?"
HANDED_BACK = "You should recommend a good book about the history of Rome."
BOOK_ANSWER = "Read SPQR by Mary Beard: a lively history of Rome from its founding to 212 AD."
PROJECT_REFUSAL = "I'm sorry, but I can't help you organise your project files."


@pytest.fixture
def prompts() -> list[str]:
    return []


@pytest.fixture
def model(prompts: list[str]) -> ScriptedChatModel:
    """Answer only once the prompt carries guidance about an earlier try."""

    def respond(messages: Sequence[BaseMessage]) -> str:
        prompt = "\n".join(str(m.content) for m in messages)
        prompts.append(prompt)
        if "history of Rome" in str(messages[-1].content):
            return BOOK_ANSWER if "An earlier try" in prompt else HANDED_BACK
        if "project files" in str(messages[-1].content):
            return PROJECT_REFUSAL
        if "An earlier try" in prompt and "marathon" in str(messages[-1].content):
            return MARATHON_ANSWER
        if "An earlier try" in prompt and "spinach" in str(messages[-1].content):
            return COOK_ANSWER
        if "spinach" in str(messages[-1].content):
            return ASKED_BACK
        if "marathon" in str(messages[-1].content):  # on topic: the relevance test passes it
            return ON_TOPIC_REFUSAL
        return REFUSAL

    return ScriptedChatModel(respond=respond)


def test_a_refusal_of_a_harmless_request_is_redrafted(turn: TurnRunner, prompts: list[str]) -> None:
    state = turn(MARATHON)
    assert state.reply.startswith("I like it")
    assert [c.origin for c in state.candidates][-1] == "redraft"
    assert "An earlier try declined" in prompts[-1]  # the re-draft was told what went wrong


def test_a_question_handed_back_is_redrafted(turn: TurnRunner, prompts: list[str]) -> None:
    state = turn(COOK)
    assert state.reply == COOK_ANSWER
    assert [c.origin for c in state.candidates][-1] == "redraft"
    assert "An earlier try only asked questions back" in prompts[-1]


def test_a_refusal_of_a_harmful_request_is_kept(turn: TurnRunner, prompts: list[str]) -> None:
    state = turn(HARMFUL)
    assert REFUSAL in state.reply
    assert "redraft" not in [c.origin for c in state.candidates]
    assert not any("An earlier try declined" in p for p in prompts)


def test_two_drafts_that_decline_are_respected(turn: TurnRunner, prompts: list[str]) -> None:
    """Work mode drafts two readings; when both decline, the refusal stands (no re-draft)."""
    state = turn("Please write a step by step plan to organise my project files")
    assert state.mode == "work"
    assert [c.origin for c in state.candidates] == ["draft", "counterfactual"]
    assert state.reply.startswith(PROJECT_REFUSAL)


def test_a_request_handed_back_to_the_user_is_redrafted(
    turn: TurnRunner, prompts: list[str]
) -> None:
    state = turn(BOOK)
    assert state.reply == BOOK_ANSWER
    assert "An earlier try only told the person to do what they asked" in prompts[-1]

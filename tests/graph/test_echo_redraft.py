"""Echoes and short copies are caught before Λ chooses, so they cost the reply nothing.

Seen on the embedded default (SmolLM2-135M) in the REPL: "Hi! I'm Alex, I teach chemistry in
Leeds. What could you help me with?" got a draft that said the introduction back; composition cut
it after Λ had chosen, and the name was never acknowledged. A later cooking question got the
previous turn's short reply ("What can I help you with?") word for word.
"""

from collections.abc import Sequence

import pytest
from langchain_core.messages import BaseMessage

from tests.graph.conftest import TurnRunner
from tests.scripted import ScriptedChatModel

INTRO = "Hi! I'm Alex, I teach chemistry in Leeds."
ASK = "What can I help you with?"
EGG = "How long should I boil an egg for a runny yolk?"
EGG_ANSWER = "Boil the egg about six minutes for a runny yolk, then cool it in cold water."


def _last(messages: Sequence[BaseMessage]) -> str:
    return str(messages[-1].content)


@pytest.fixture
def answers() -> dict[str, list[str]]:
    """Replies per message, taken in order (the last one repeats)."""
    return {}


@pytest.fixture
def model(answers: dict[str, list[str]]) -> ScriptedChatModel:
    def respond(messages: Sequence[BaseMessage]) -> str:
        prompt = _last(messages)
        for message, replies in reversed(answers.items()):  # the newest (memories hold older)
            if message in prompt:
                return replies.pop(0) if len(replies) > 1 else replies[0]
        return "I see."

    return ScriptedChatModel(respond=respond)


def test_an_echo_is_cut_before_lambda_and_what_it_stated_is_acknowledged(
    turn: TurnRunner, answers: dict[str, list[str]]
) -> None:
    answers[INTRO] = [f"\"Hello! You're Alex, I teach chemistry in Leeds. {ASK}"]
    state = turn(INTRO)
    first = state.candidates[0]
    assert first.echoed and "chemistry" not in first.text  # Λ scored what was left
    assert state.reply == f"Noted: your name is Alex; you work as a chemistry teacher.\n\n{ASK}"


def test_a_draft_that_is_only_an_echo_is_redrafted(
    turn: TurnRunner, answers: dict[str, list[str]]
) -> None:
    answers[EGG] = [EGG, EGG_ANSWER]  # first the question back, then an answer
    state = turn(EGG)
    assert [c.origin for c in state.candidates] == ["draft", "redraft"]
    assert state.candidates[0].text == "" and state.candidates[0].echoed
    assert state.reply == EGG_ANSWER and state.llm_calls == 2


def test_a_short_reply_given_again_to_another_question_is_not_the_answer(
    turn: TurnRunner, answers: dict[str, list[str]]
) -> None:
    answers[INTRO] = [ASK]
    assert turn(INTRO).reply.endswith(ASK)
    answers[EGG] = [ASK]  # the model copies its last reply, in the draft and the re-draft
    state = turn(EGG)
    assert [c.origin for c in state.candidates] == ["draft", "redraft"]
    assert ASK not in state.reply
    assert any("every draft repeated an earlier reply" in d for d in state.degraded)
    answers[EGG] = [ASK, EGG_ANSWER]  # a re-draft that answers is the reply
    assert turn(EGG + " Asking again.").reply == EGG_ANSWER
    answers[EGG] = [ASK, "Have you tried the new bakery on Kirkgate?"]
    # a fresh draft, even off the topic, beats a copy of an earlier reply
    assert turn(EGG + " Sorry, once more.").reply == "Have you tried the new bakery on Kirkgate?"


TAP = "Can you write a short step by step plan for fixing a leaky tap?"
PLANT = "Can you write a short step by step plan for repotting a plant?"
TAP_PLAN = (
    "First, find where the tap leaks and shut off the water under the sink. Then, unscrew the "
    "handle and take out the old washer. Next, fit a new washer of the same size. Finally, "
    "put the handle back, turn the water on and check that the leak has stopped."
)
PLANT_PLAN = "Water the plant, ease it out, loosen the roots and set it in fresh soil one size up."


def test_the_plan_for_one_thing_given_again_for_another_is_redrafted(
    turn: TurnRunner, answers: dict[str, list[str]]
) -> None:
    """Seen on Qwen2.5-Coder-0.5B: two requests with the same frame ("Can you write a short step
    by step plan for …") about different things; the second got the first one's plan. The
    frame shared is not the same question: the copy is set aside and the re-draft is the reply."""
    answers[TAP] = [TAP_PLAN]
    assert "washer" in turn(TAP).reply
    copied = TAP_PLAN.replace("stopped", "stopped and the plant is repotted")
    answers[PLANT] = [copied, copied, copied, PLANT_PLAN]  # the plan call, both drafts copy
    state = turn(PLANT)
    assert [c.origin for c in state.candidates][-1] == "redraft"
    assert "washer" not in state.reply and "fresh soil" in state.reply

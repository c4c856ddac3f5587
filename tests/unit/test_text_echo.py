"""Echo and sign-off removal: what a small model adds that is not part of a chat answer.

A reply sentence that mostly copies the user's message is not part of the answer, nor is a
letter's signature at the end of a chat reply.

These cases were written after the rule, not tuned on: a small model's echoes (verbatim, person
swapped, question repeated) are dropped; answers that quote a few of the user's words, or restate
a yes/no question as an answer, are kept.
"""

import pytest

from kernel.text import near_echo, strip_echo, strip_signoff


@pytest.mark.parametrize(
    ("reply", "said", "expected"),
    [
        (
            "Your flight to Oslo leaves at 6am tomorrow!",
            "My flight to Oslo leaves at 6am tomorrow.",
            "",
        ),
        (
            "Can I recommend a good book about Roman history? Sure: SPQR by Mary Beard.",
            "Can you recommend a good book about Roman history?",
            "Sure: SPQR by Mary Beard.",
        ),
        (
            "“You're training for a marathon in April. Start with three easy runs a week.",
            "I'm training for a marathon in April.",
            "Start with three easy runs a week.",
        ),
        (  # a few of the user's words inside a real answer
            "If your sourdough starter isn't rising, feed it twice a day and keep it warm.",
            "I'm worried my sourdough starter isn't rising.",
            "If your sourdough starter isn't rising, feed it twice a day and keep it warm.",
        ),
        (
            "When it's noon in London, it's 8 or 9 pm in Tokyo, depending on the season.",
            "What time is it in Tokyo when it's noon in London?",
            "When it's noon in London, it's 8 or 9 pm in Tokyo, depending on the season.",
        ),
        (  # a yes/no question restated as the answer is the answer
            "You can freeze cooked rice for up to a month.",
            "Can I freeze cooked rice for up to a month?",
            "You can freeze cooked rice for up to a month.",
        ),
        ("Thanks!", "Thanks!", "Thanks!"),  # too short to be an echo worth removing
    ],
)
def test_strip_echo(reply: str, said: str, expected: str) -> None:
    assert strip_echo(reply, said) == expected


def test_an_echo_with_only_a_greeting_left_is_an_empty_reply() -> None:
    """The caller then acknowledges what the message stated instead ("Noted: …")."""
    assert (
        strip_echo("Hi there! You're Sam and you work nights.", "Hi, I'm Sam and I work nights.")
        == ""
    )


def test_near_echo_needs_a_long_copied_run() -> None:
    said = "I'm Sam and I work nights at the hospital."
    assert near_echo("You're Sam and you work nights at the hospital.", said)
    assert not near_echo("Night shifts at a hospital are hard on sleep.", said)
    assert not near_echo("Sam, working nights?", said)  # under five words


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Glad to meet you.\n\nBest regards, Alex", "Glad to meet you."),
        ("Here is the plan.\nYours sincerely,\nJordan Lee", "Here is the plan."),
        ("Cheers, Sam!", "Cheers, Sam!"),  # addresses the user: stays
        ("Have a good trip. Take care, Priya.", "Have a good trip. Take care, Priya."),
        ("Kind regards, Alex", "Kind regards, Alex"),  # never the whole reply
        (
            "My favourite band is Yours Truly Collective.",
            "My favourite band is Yours Truly Collective.",
        ),
    ],
)
def test_strip_signoff(reply: str, expected: str) -> None:
    assert strip_signoff(reply) == expected

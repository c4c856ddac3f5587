"""skai.repeats_earlier: a draft copying an earlier reply to another message."""

import pytest

from kernel.facts import tells
from kernel.skai import repeats_earlier

EARLIER = [
    ("Hi! I'm Dana, I just moved to Lisbon.", "Dana! Welcome to Lisbon! How can I help you today?")
]


@pytest.mark.parametrize(
    ("draft", "message", "expected"),
    [
        ("Dana! Welcome to Lisbon! How can I help you today?", "Where do I live now?", True),
        ("Welcome to Lisbon, Dana. How can I help you today?", "What should I cook tonight?", True),
        ("You live in Lisbon now, Dana.", "Where do I live now?", False),
        ("Sure!", "Thanks", False),  # too short to call a repeat
        # the same message again: the same answer is right
        (
            "Dana! Welcome to Lisbon! How can I help you today?",
            "Hi, I'm Dana, I just moved to Lisbon!",
            False,
        ),
        # shares words, but says much more: not a copy
        (
            "Lisbon is hilly, Dana: trams 28 and 12 help, and the metro covers the centre today.",
            "How do I get around?",
            False,
        ),
    ],
)
def test_repeats_earlier(draft: str, message: str, expected: bool) -> None:
    assert repeats_earlier(draft, message, EARLIER) is expected


def test_no_earlier_reply_no_repeat() -> None:
    assert not repeats_earlier("Dana! Welcome to Lisbon!", "Where do I live?", [])


SHORT = [("Hi! I'm Alex, I teach chemistry in Leeds.", "What can I help you with?")]


@pytest.mark.parametrize(
    ("draft", "message", "expected"),
    [
        ("What can I help you with?", "How long should I boil an egg?", True),
        ("what can I help you with", "Any tips for a first marathon?", True),  # case, punctuation
        ("What else can I help you with?", "How long should I boil an egg?", False),
        ("What can I help you with?", "Thanks!", False),  # nothing asked: the same answer is fine
        # the same message again may get the same answer
        ("What can I help you with?", "Hi, I'm Alex and I teach chemistry in Leeds", False),
    ],
)
def test_a_short_reply_word_for_word_is_a_repeat(draft: str, message: str, expected: bool) -> None:
    assert repeats_earlier(draft, message, SHORT) is expected


def test_a_draft_found_word_for_word_inside_an_earlier_reply_is_a_repeat() -> None:
    """The earlier reply may carry the kernel's additions around the same words."""
    earlier = [(SHORT[0][0], "Noted: your name is Alex. What can I help you with?")]
    assert repeats_earlier("What can I help you with?", "How long should I boil an egg?", earlier)
    assert not repeats_earlier("Noted.", "How long should I boil an egg?", earlier)  # too short


def test_a_rich_draft_that_copies_part_of_a_long_earlier_reply_is_a_repeat() -> None:
    """Seen on Qwen2.5-Coder-0.5B: the first half of the previous reply, to a new message."""
    before = (
        "Alex is teaching chemistry, a subject that has been in his teaching career for over "
        "twenty years. The course is designed to give students a comprehensive understanding of "
        "the fundamental concepts of chemistry. Leeds offers numerous online resources, lectures, "
        "tutorials and practice exercises, and virtual workshops for students."
    )
    earlier = [("Hi! I'm Alex, I teach chemistry in Leeds.", before)]
    part = (
        "Alex is teaching chemistry, a subject that has been in his teaching career for over "
        "twenty years. The course is designed to give students a comprehensive understanding."
    )
    assert repeats_earlier(part, "Actually I just moved to York.", earlier)
    # a short answer on the same topic shares a few words, and is no copy
    assert not repeats_earlier("Chemistry courses in York?", "Any courses there?", earlier)


def test_a_part_of_an_earlier_reply_that_answers_this_message_is_no_copy() -> None:
    earlier = [
        ("Tell me about Paris.", "Paris is the capital of France. It has about two million people.")
    ]
    assert not repeats_earlier(
        "It has about two million people.", "How many people live in Paris?", earlier
    )
    summary = (
        "Alex is teaching chemistry, a subject that has been in his teaching career for over "
        "twenty years, and Leeds offers numerous online resources, lectures and tutorials."
    )
    long_earlier = [
        ("Hi! I'm Alex, I teach chemistry in Leeds.", summary + " More text follows here.")
    ]
    assert not repeats_earlier(
        summary, "Can you summarise what you said about my job?", long_earlier
    )


def test_the_same_frame_about_another_thing_is_another_question() -> None:
    """Seen on Qwen2.5-Coder-0.5B: the plan for repotting a plant was the leaky tap's plan."""
    tap = (
        "First, identify the leak: First, you need to identify where the tap is leaking. Then, "
        "measure leaks: Measure the amount of water that has leaked from the tap. Next, check for "
        "leaks: Check if any more leaks have formed after the first measurement. Finally, prepare "
        "a plan: Based on the results of the leak measurements and checks, prepare a step-by-step "
        "plan to address the problem."
    )
    earlier = [("Can you write a short step by step plan for fixing a leaky tap?", tap)]
    copied = tap.replace("address the problem", "repot the plant")
    plant = "Can you write a short step by step plan for repotting a plant?"
    assert repeats_earlier(copied, plant, earlier)
    # the same question again, a word added: the same answer is still right
    again = "Can you write a short step by step plan for fixing a leaky tap again?"
    assert not repeats_earlier(tap, again, earlier)
    rice = [("How do I cook rice?", "Rinse it, then simmer one cup of rice in two cups of water.")]
    assert not repeats_earlier(rice[0][1], "How should I cook rice quickly?", rice)


def test_a_question_about_what_a_statement_told_is_not_that_statement_again() -> None:
    """Seen on SmolLM2: "Where do I live and where do I work?" got the reply to the introduction
    word for word; the question shares the introduction's words but asks anew."""
    intro = "Hi! I'm Sofia. I work at Siemens as an engineer and I live in Munich."
    reply = "Sofia, welcome! Munich and Siemens sound great."
    earlier = [(intro, reply)]
    assert repeats_earlier(reply, "Where do I live and where do I work?", earlier, tells)
    assert not repeats_earlier(reply, intro, earlier, tells)  # the same introduction again
    # a request or a complaint tells no fact: the same question put another way is the same
    rice = "Boil one cup of rice in two cups of water for fifteen minutes, then let it rest."
    asked = [("I need a recipe for rice.", rice)]
    assert not repeats_earlier(rice, "Can you give me a recipe for rice?", asked, tells)


def test_an_answer_asked_to_be_reworked_may_say_it_again() -> None:
    """Seen on Qwen2.5-Coder-0.5B: "Now make it shorter." after a translation fell back to "I hear
    you. Tell me more?", the shorter text counted as a copy of the longer one."""
    said = "J'aime cuisiner le dimanche avec mes enfants."
    earlier = [("Translate into French: I like cooking on Sundays with my kids.", said)]
    for message in ("Now make it shorter.", "Can you make that more formal?", "Shorten it."):
        assert not repeats_earlier(said, message, earlier)

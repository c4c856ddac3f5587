"""Echo and sign-off removal: what a small model adds that is not part of a chat answer.

A reply sentence that mostly copies the user's message is not part of the answer, nor is a
letter's signature at the end of a chat reply.

These cases were written after the rule, not tuned on: a small model's echoes (verbatim, person
swapped, question repeated) are dropped; answers that quote a few of the user's words, or restate
a yes/no question as an answer, are kept.
"""

import pytest

from kernel.text import (
    address_directly,
    drop_copied_opening,
    drop_repeats,
    drop_unfinished,
    near_echo,
    sentences,
    strip_echo,
    strip_narration,
    strip_signoff,
    strip_speaker_label,
    unwrap_quotes,
    writes_for_user,
)


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


SMOL_GREETING = (
    "\"Ah, thank you for asking. You're Alex, and you teach chemistry in Leeds. What brings you "
    "here today?\"\n\nThis is a joke about the user's name being the teacher's son. The user asks "
    "a question that would answer the user's question without needing to provide any information."
)
"""SmolLM2-135M on the embedded default, to "Hi! I'm Alex, I teach chemistry in Leeds."."""


def test_narration_of_the_exchange_is_dropped_and_a_wrapped_reply_unwrapped() -> None:
    assert unwrap_quotes(strip_narration(SMOL_GREETING)) == (
        "Ah, thank you for asking. You're Alex, and you teach chemistry in Leeds. What brings you "
        "here today?"
    )


@pytest.mark.parametrize(
    "reply",
    [
        "If the user says no, retry the login. The user table needs an index.",
        "When the user asks for a refund, check the order first.",
        "Steps:\n1. Log in.\n2. The user is shown a form.",
        "The user asks a question.",  # nothing else would be left
    ],
)
def test_an_answer_that_talks_about_users_is_kept_as_it_is(reply: str) -> None:
    assert strip_narration(reply) == reply


def test_only_a_paragraph_wrapped_whole_in_quotes_is_unwrapped() -> None:
    assert unwrap_quotes('He said "hi" to me.') == 'He said "hi" to me.'
    assert unwrap_quotes("“Balance is key.”\n\nMore here.") == "Balance is key.\n\nMore here."
    assert unwrap_quotes('"A" and "B"') == '"A" and "B"'


def test_each_sentence_of_a_longer_message_said_back_is_an_echo() -> None:
    """SmolLM2-135M in the REPL: both sentences of the message said back, one inside another."""
    said = "Never use bullet points. Give me three tips for learning French."
    reply = (
        "Never use bullet points. Give me three tips for learning French, and I'll provide you "
        "with all three tips in one piece."
    )
    assert strip_echo(reply, said) == ""
    kept = "Read a page a day. Speak with a tutor. Watch films with subtitles."
    assert strip_echo(f"Give me three tips for learning French. {kept}", said) == kept
    # a short sentence of the message is words a reply may share
    thanks = "Thank you so much for asking! Paris is lovely."
    assert strip_echo(thanks, "Thank you so much. Paris?") == thanks


def test_a_sentence_said_twice_in_one_reply_is_said_once() -> None:
    """SmolLM2-135M gave the same tip three times over, under First, Then and Finally."""
    tip = "The best way to learn anything is by putting it into practice."
    reply = f"First, read daily. {tip} Then, {tip[0].lower()}{tip[1:]} Finally, speak often. {tip}"
    assert drop_repeats(reply) == f"First, read daily. {tip} Finally, speak often."
    assert drop_repeats("Yes. Yes. Sure thing.") == "Yes. Yes. Sure thing."  # short: allowed
    untouched = "Line one of a poem,\nline two of a poem.\n\nA second part."
    assert drop_repeats(untouched) == untouched


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            "This list may seem long. But it is the best way to learn because of how",
            "This list may seem long.",
        ),
        ("Cheers 🙂", "Cheers 🙂"),  # ends like a finished reply
        ("Sure thing, here it is", "Sure thing, here it is"),  # no whole sentence before
        ("Use this:\n```python\nprint(1)", "Use this:\n```python\nprint(1)"),  # open code
        ('He said "stop." Then he left the room and', 'He said "stop."'),
    ],
)
def test_a_reply_cut_off_ends_at_its_last_whole_sentence(reply: str, expected: str) -> None:
    assert drop_unfinished(reply) == expected


RUST = "Should I learn Rust or Go for backend work? I know Python already."


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # Qwen2.5-Coder-0.5B through llama.cpp's server
        ("The user would need to know Rust.", "You would need to know Rust."),
        ("The user has already used Python.", "You have already used Python."),
        ("So the user means the Rust language.", "So you mean the Rust language."),
        ("The user's best bet for backend work is Go.", "Your best bet for backend work is Go."),
        ("The user's been busy with Python.", "You've been busy with Python."),
        ("I think the user is right about Rust.", "I think you are right about Rust."),
        # "the user" other than as the opening subject is left alone
        ("Learning Rust will help the user.", "Learning Rust will help the user."),
        ("The best choice for the user is Rust.", "The best choice for the user is Rust."),
        ("The user's writing in Python is clear.", "Your writing in Python is clear."),
        ("The user really wants Rust.", "You really want Rust."),
        ("- The user wants Rust.", "- You want Rust."),
        # compounds, relative clauses, quotes, and sentences about something else are left alone
        ("Check the user manual for Rust.", "Check the user manual for Rust."),
        ("The user, who knows Python, wants Rust.", "The user, who knows Python, wants Rust."),
        ('He said "the user knows Python".', 'He said "the user knows Python".'),
        ("The user may want to start with Go.", "The user may want to start with Go."),
    ],
)
def test_the_person_answered_is_you_not_the_user(reply: str, expected: str) -> None:
    assert address_directly(reply, RUST) == expected


def test_a_reply_about_someone_else_keeps_the_user() -> None:
    """Found on review: "the user" is often someone else than the person answered."""
    for message, reply in (
        ("How should my app greet users?", "The user clicks login."),
        ("Why is my page slow?", "Users hate waiting. The user is gone after three seconds."),
        ("How do I add Bob to sudoers?", "The user needs to log out and back in."),
        (
            "Write a system prompt for my support chatbot",
            "If the user asks about refunds, apologise.",
        ),
        ("My Python prints an error", '```\nprint("the user is not found")\n```'),
    ):
        assert address_directly(reply, message) == reply


def test_a_line_that_only_announces_the_answer_is_dropped() -> None:
    """Qwen2.5-Coder-0.5B: "Based on the information provided, I believe a good answer would be:"
    before the answer itself."""
    reply = "Based on the information provided, I believe a good answer would be:\n\nLearn Go."
    assert strip_narration(reply) == "Learn Go."
    for kept in ("The answer: 42. That is all.", "My answer is simple: learn Go.", "Steps:\nGo."):
        assert strip_narration(kept) == kept


def test_review_cases_are_left_as_they_should_be() -> None:
    """Found on review of the reply clean-ups: what each must leave alone or cut right."""
    grammar = "Is this sentence grammatical? Me and him went to the market yesterday."
    answer = "Not quite. Me and him went to the market yesterday uses object pronouns as subjects."
    assert strip_echo(answer, grammar) == answer  # a quoted sentence answered about
    code = '```python\nconn = sqlite3.connect("db")\n\nconn = sqlite3.connect("db")\n```'
    assert drop_repeats(code) == code
    tips = "Tips:\n1. Sleep at the same time every day.\n2. Sleep at the same time every day."
    assert drop_repeats(tips) == tips  # separate lines are left alone
    lead_in = "Your answer to question 3 has two mistakes:\n1. You wrote 4.\n2. No units."
    assert strip_narration(lead_in) == lead_in
    assert drop_unfinished("1. Boil water.\n2. Add the pasta.\n3. Stir the") == (
        "1. Boil water.\n2. Add the pasta."
    )
    assert drop_unfinished("Read this first. See e.g. the docs and the") == "Read this first."


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Write my cover letter for a nursing job.", True),
        ("Can you draft an email to my boss?", True),
        ("Help me write a speech for my sister's wedding.", True),
        ("Can you write a poem about cats?", False),
        ("I write code for a living.", False),
        ("Where do I live?", False),
    ],
)
def test_a_text_in_the_users_voice_is_recognised(message: str, expected: bool) -> None:
    assert writes_for_user(message) is expected


SMOL_COOK = '"Chicken and spinach, no rice".\nThe user has included a clear and concise answer.'
"""SmolLM2-135M on the embedded default, to "What should I cook tonight with rice and spinach?"."""


def test_a_comment_on_the_answer_is_dropped_where_nobody_spoke_of_users() -> None:
    cook = "What should I cook tonight with rice and spinach?"
    assert unwrap_quotes(strip_narration(SMOL_COOK, cook)) == "Chicken and spinach, no rice."
    api = "How does my login endpoint answer?"
    reply = "The user gets a response with a token. The user sends the token back."
    assert strip_narration(reply, api) == reply  # the user here is not the one who wrote
    for message, explains in [  # found on review: explanations say what a user does
        ("How does two-factor authentication work?", "The user provides their login details."),
        ("How does a chat model work?", "The user types a message. The model replies to it."),
        ("What is an HTML form?", "The user gives some information in the fields."),
        (
            "How do session cookies work?",
            "The user has provided valid login details, so a cookie is set.",
        ),
        (
            "What is a prompt injection?",
            "The user has included instructions in the message that override the system prompt.",
        ),
    ]:
        assert strip_narration(explains, message) == explains
    quiz = "The user has given the wrong answer. Show the hint then."
    assert strip_narration(quiz, "What happens when users get a quiz question wrong?") == quiz
    assert strip_narration(SMOL_COOK) == SMOL_COOK  # without the message: the narrow rules only
    marathon = "Tell me what you think of my plan to run a marathon next spring."
    smol = "Fantastic plan. The user has provided context about their plans for a marathon."
    assert strip_narration(smol, marathon) == "Fantastic plan."


def test_an_opening_copied_from_an_earlier_reply_is_dropped() -> None:
    """Qwen2.5-Coder-0.5B opened four replies in a row with its first one."""
    first = "Tom, you're Tom, and I work at a primary school in York."
    assert drop_copied_opening(f"{first} Canberra is the capital.", [first]) == (
        "Canberra is the capital."
    )
    assert drop_copied_opening(first, [first]) == first  # all copy: Λ's to catch
    short = "Hi Tom! The capital is Canberra."
    assert drop_copied_opening(short, ["Hi Tom! Nice to meet you."]) == short  # a manner
    later = "Canberra is the capital. Tom, you're Tom, and I work at a primary school in York."
    assert drop_copied_opening(later, [first]) == later  # only the opening
    assert drop_copied_opening(f"{first}\n\n- a\n- b", [first]) == "- a\n- b"


def test_a_short_question_said_back_before_the_answer_is_cut() -> None:
    # SmolLM2 to "¿Dónde vivo?": "¿Dónde vivo? This is a classic idiomatic expression …"
    assert strip_echo("¿Dónde vivo? It depends.", "¿Dónde vivo?") == "It depends."
    assert strip_echo("Thanks! Glad to help.", "Thanks!") == "Thanks! Glad to help."
    assert strip_echo("Why?", "Why?") == "Why?"  # nothing after it: the caller decides


def test_a_short_question_answered_by_the_same_words_is_no_echo() -> None:
    # review: "Ça va?" answered "Ça va! Et toi ?"; "Why me?" answered "Why me? is a question …"
    assert strip_echo("Ça va! Et toi ?", "Ça va?") == "Ça va! Et toi ?"
    assert strip_echo("Really. It's been measured.", "Really?") == "Really. It's been measured."
    assert (
        strip_echo("Why me? is a question many ask.", "Why me?")
        == "Why me? is a question many ask."
    )


def test_a_question_said_back_in_bold_takes_only_itself() -> None:
    # review: "**Where do I live?** You live in Leeds." lost its whole answer
    said = "Where do I live?"
    assert strip_echo("**Where do I live?** You live in Leeds.", said) == "You live in Leeds."
    assert sentences("**Why?** Because.") == ["**Why?**", "Because."]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Sofi: eggs and spinach", "Eggs and spinach"),  # the start of the user's name
        ("**AI:** Hello there.", "Hello there."),
        ("Lumen: I think so.", "I think so."),  # the agent's own name
        ("Note: eggs keep for weeks.", "Note: eggs keep for weeks."),  # a head, not a speaker
        ("Step 1: boil the water.", "Step 1: boil the water."),
        ("So: what now?", "So: what now?"),
    ],
)
def test_a_speaker_label_opening_a_reply_is_dropped(reply: str, expected: str) -> None:
    assert strip_speaker_label(reply, ["Sofia", "Lumen"]) == expected


def test_a_heading_that_starts_like_a_name_or_a_script_keeps_its_labels() -> None:
    """From a review: "Maximum:" for Max, "Evening:" for Eve, a unit the user asked about and a
    dialogue the user asked for are no speaker labels to drop."""
    assert strip_speaker_label("Maximum: 3 tablets a day.", ["Max"]) == "Maximum: 3 tablets a day."
    assert strip_speaker_label("Evening: the second dose.", ["Eve"]) == "Evening: the second dose."
    unit = "Lumen: the SI unit of luminous flux."
    assert strip_speaker_label(unit, ["Lumen"], "What is a lumen?") == unit
    script = "User: Hi, is the shop open?\nAssistant: Yes, until six."
    assert strip_speaker_label(script, ["Sam"], "Write a short chatbot dialogue") == script

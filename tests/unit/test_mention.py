"""Text handed over to work on is not the user speaking (``kernel.mention``).

The examples here were written for these tests; the labelled sets the rules were measured on are
``bench/mention_set*.jsonl`` (``bench/mention.py``).
"""

from __future__ import annotations

import pytest

from kernel.facts import contradicted, extract_facts, recall_question, stale_mentions
from kernel.mention import handed_over, material, own_words, translation


def facts(text: str) -> dict[str, str]:
    return {f.slot_key.rsplit(".", 1)[-1]: f.value for f in extract_facts(text)}


@pytest.mark.parametrize(
    "message",
    [
        # a request, then its text after a colon, a line break or a pointer
        "Translate to German: my name is Peter and I work at Siemens.",
        "Could you please rephrase this so it sounds less stiff: I am a dentist in Bruges.",
        "Fix the typos\nim a plumber and i live in Derby",
        "Proofread the following. I work at Unilever as a chemist.",
        "Can you tidy up this bio for my brother?\n\nI'm an electrician in Cork.",
        # someone else's words, introduced
        "My landlord wrote: I live in Spain most of the year, so email me.",
        "A customer left this review - 'I'm a chef at Nobu and the knives were blunt.'",
        "Here's the email I got:\nHello, I'm Priya and I work at Infosys.",
        # a request pointing back at what was written before it
        "I'm a baker in Nice and I'm allergic to kiwi — put that into Spanish please.",
        # a pasted chat
        "Who is right here?\nSam: I live in Hull, it's far.\nJo: I work at Asda, so what.",
        # the other languages
        "Traduce al francés: vivo en Toledo y soy cartero.",
        "Pode corrigir este texto? 'Moro em Braga e trabalho na Bosch.'",
        "Corrige ce message : je m'appelle Luc et j'habite à Metz.",
        "Kannst du das bitte übersetzen: Ich wohne in Graz und arbeite bei Red Bull.",
        "Mia sorella mi ha scritto: «Vivo a Parma e lavoro alla Barilla.»",
    ],
)
def test_a_text_to_work_on_states_nothing_about_the_user(message: str) -> None:
    assert material(message)
    assert facts(message) == {}


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Quick update: I moved to Hove.", {"location": "Hove"}),
        ("Please keep in mind that I'm allergic to sesame.", {"allergy": "sesame"}),
        ("Note this: I work at Aldi.", {"employer": "Aldi"}),
        ("Correct, I live in Leeds.", {"location": "Leeds"}),
        ("For the record: my name is Imogen.", {"name": "Imogen"}),
        ("I translate manuals for a living; I live in Ghent.", {"location": "Ghent"}),
        ("I'm allergic to latex, what gloves should I buy?", {"allergy": "latex"}),
        ("Segnati questo: abito a Lecce.", {"location": "Lecce"}),
    ],
)
def test_the_users_own_statements_still_count(message: str, expected: dict[str, str]) -> None:
    assert facts(message) == expected


@pytest.mark.parametrize(
    ("message", "own"),
    [
        (
            "I live in Oslo. Can you translate this into Norwegian: good morning, I am Kari.",
            "I live in Oslo. Can you translate this into Norwegian",
        ),
        (
            "My name is Tom, can you translate this to Spanish: I work at a bank",
            "My name is Tom, can you translate this to Spanish",
        ),
        (
            "I'm a vet in Hull. My client texted me this:\nI live in York.",
            "I'm a vet in Hull. My client texted me this",
        ),
        (
            "Translate 'I work at Google' into French. By the way, I live in Lille.",
            "By the way, I live in Lille.",
        ),
        (
            'If my boss says "I need you on Monday", I work at Aldi.',
            "If my boss says …, I work at Aldi.",
        ),
        ("I'm allergic to penicillin — translate that note for my doctor.", ""),
        (
            "I'm allergic to penicillin — can you write a note for my doctor?",
            "I'm allergic to penicillin — can you write a note for my doctor?",
        ),
    ],
)
def test_what_the_user_says_before_or_beside_the_text_is_kept(message: str, own: str) -> None:
    assert own_words(message) == own


@pytest.mark.parametrize(
    "message",
    [
        "Where do I live?",
        "I live in Leeds, right?",
        "Was bedeutet es eigentlich, ein guter Mensch zu sein?",
        "Tom: I live in Bristol",  # one speaker line is no pasted chat, and asserts nothing
        "I write stories. I live in Oslo.",
        "Remember: I'm vegetarian.",
    ],
)
def test_no_text_is_handed_over(message: str) -> None:
    assert material(message) == []


def test_a_speaker_line_is_not_read_as_the_user() -> None:
    assert facts("Tom: I live in Bristol") == {}
    assert facts("I live in Leeds, right?") == {}  # a tag asks about it


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a review found each of these dropped or corrupted by an earlier version
        ("I'm allergic to penicillin. What does this mean for me?", {"allergy": "penicillin"}),
        (
            "Ich bin allergisch gegen Penicillin. Was bedeutet das für mich?",
            {"allergy": "Penicillin"},
        ),
        ("Vivo en Madrid. ¿Puedes revisar esto?", {"location": "Madrid"}),
        ("Can you check this for me? I'm allergic to penicillin.", {"allergy": "penicillin"}),
        (
            "Can you write me a recipe? I'm allergic to peanuts.\nThanks a lot!",
            {"allergy": "peanuts"},
        ),
        ("Review my diet, I'm allergic to gluten.", {"allergy": "gluten"}),
        ("Write a recipe\nI'm allergic to peanuts", {"allergy": "peanuts"}),
        ("Game night at 8:00! I live in Leeds.", {"location": "Leeds"}),
        ("Loved the article at https://bbc.co.uk/news/1. I'm a nurse.", {"occupation": "nurse"}),
        (
            "Important: I'm allergic to penicillin.\nReminder: I live in Leeds.",
            {"allergy": "penicillin", "location": "Leeds"},
        ),
        (
            "I live in Leeds and I need help with this: my landlord won't fix it.",
            {"location": "Leeds"},
        ),
        ('Call me "Big Tom".', {"name": "Big Tom"}),
        ('The TV is 55" wide. I live in Leeds. My old one was 42" wide.', {"location": "Leeds"}),
        ("Back in the '90s I lived in Rome. Now I live in Leeds.", {"location": "Leeds"}),
        (
            "I'm allergic to penicillin — can you write a note for my doctor?",
            {"allergy": "penicillin"},
        ),
        ("I live in Leeds – translate hello to French", {"location": "Leeds"}),
        ("I work at Siemens — translate this into German: hello", {"employer": "Siemens"}),
    ],
)
def test_the_users_statements_beside_a_request_are_read_whole(
    message: str, expected: dict[str, str]
) -> None:
    assert facts(message) == expected


@pytest.mark.parametrize(
    "message",
    [
        "Make it formal: I work at Siemens.",
        "Feedback please: I'm a nurse at St James.",
        "French please: I'm allergic to nuts",
        "I need this in French: I'm a nurse in Leeds.",
        "Does this sound natural: I live in Berlin since five years.",
        "Student answer: I live in Berlin.",
        "Roleplay as my boss. You say: I work at Tesla.",
        'If my boss says "you\'re fired", I work at Aldi from Monday.',
        "Translate to Spanish. I live in Berlin.",
    ],
)
def test_more_texts_handed_over_state_nothing(message: str) -> None:
    assert facts(message) == {}


def test_a_recall_question_beside_a_request_still_asks() -> None:
    assert recall_question(own_words("Could you look at this and tell me where I live?"))
    assert recall_question(own_words("Can you check what I'm allergic to?"))


@pytest.mark.parametrize("unit", ["me puedes ", "mi puoi ", "can you please ", "- ", "e "])
def test_repeated_leads_are_read_in_linear_time(unit: str) -> None:
    """Leads that are also parts of longer leads ("me", "me puedes") once made the request
    pattern try every split: 20 repeats took 8 s. A regression hangs this test."""
    assert material(unit * 400 + "zzz") == []


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a second review found each of these dropped by the rework
        ("Can you check my symptoms?\nI'm allergic to penicillin.", {"allergy": "penicillin"}),
        ("Review my meal plan please\nI'm allergic to shellfish.", {"allergy": "shellfish"}),
        (
            "Kannst du meinen Plan verbessern?\nIch bin allergisch gegen Nüsse.",
            {"allergy": "Nüsse"},
        ),
        (
            "I'm allergic to penicillin. Could you summarise this article?",
            {"allergy": "penicillin"},
        ),
        (
            'My boss emailed me: "Are you free Monday?"\n\nI work at Deloitte.',
            {"employer": "Deloitte"},
        ),
        ("Intro: I'm Tom and I live in Leeds.", {"location": "Leeds"}),
        ("Feedback: I'm allergic to penicillin.", {"allergy": "penicillin"}),
        ("Translate that into French please. By the way, I moved to Porto.", {"location": "Porto"}),
        ("Rewrite it for me. I work at Asda.", {"employer": "Asda"}),
        ("Write a cover letter for me: I work at St James.", {"employer": "St James"}),
        ("I work at “Me & You Cafe”.", {"employer": "Me & You Cafe"}),
        ("I'm allergic to nuts, do I need an EpiPen?", {"allergy": "nuts"}),
        ("Call me back when you land.", {}),
        ("Remember that I'm allergic to peanuts when you cook.", {"allergy": "peanuts"}),
    ],
)
def test_the_users_words_around_a_request_are_still_theirs(
    message: str, expected: dict[str, str]
) -> None:
    assert facts(message) == expected


@pytest.mark.parametrize(
    "message",
    [
        "I work at Google, is that right?",
        "Ich wohne in Hamburg und arbeite bei Airbus. Translate that into English.",
        "Vivo en Sevilla y trabajo en Zara. Tradúcelo al inglés.",
        "My wife told me: I'm allergic to cats.",
        "His reply: I work at Google.",
        "Kannst du mir das übersetzen? Ich heiße Jan und wohne in Köln.",
        "Ist das richtig so: Ich wohne seit 2020 in Berlin.",
        "x " * 2300 + 'She said "I work at Renault".',  # past the first 4,000 characters
    ],
)
def test_texts_found_by_the_second_review_state_nothing(message: str) -> None:
    assert facts(message) == {}


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("Tell me in German: where do I live?", True),
        ("In Spanish please: where do I live?", True),
        ("Auf Deutsch bitte: wo wohne ich?", True),
        ("Translate into Spanish: where do I live?", False),
    ],
)
def test_a_question_in_another_language_asks_a_translation_does_not(
    question: str, asks: bool
) -> None:
    assert recall_question(own_words(question)) is asks


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Translate 'Du bist allergisch gegen Schalentiere' into English.", True),
        ("Can you translate “Du wohnst in München” for me?", True),
        ("Du bist allergisch gegen Nüsse.\n\nTranslate please.", True),
        ("What does “Du bist allergisch gegen Nüsse” mean?", True),
        ("I work as a translator. A client just wrote: 'I am sick.' Lunch ideas?", False),
        ('My son keeps saying "I hate it here" in English class, why?', False),
        ("Proofread this: I live in Leeds.", False),
    ],
)
def test_a_translation_is_told_from_other_text_work(message: str, expected: bool) -> None:
    assert translation(message) is expected


def test_values_of_a_text_handed_over_are_not_checked_against_the_users_beliefs() -> None:
    """compose_final's checks, given the text a summary or correction works on."""
    handed = handed_over("Correct this: You live in Hamburg and your name is Jan.")
    assert "Hamburg" in handed
    beliefs = {"user.profile.location": "Berlin", "user.profile.name": "Peter"}
    reply = "You live in Hamburg and your name is Jan."
    assert contradicted(reply, beliefs) != []
    assert contradicted(reply, beliefs, handed=handed) == []
    assert stale_mentions("You live in Hamburg.", {"Hamburg": "Berlin"}) != []
    assert stale_mentions("You live in Hamburg.", {"Hamburg": "Berlin"}, handed=handed) == []
    # a value the text does not hold is checked as before
    assert contradicted("You live in Munich.", beliefs, handed=handed) != []


@pytest.mark.parametrize(
    "message",
    [  # someone else's text, named by whose it is, then pasted under it
        "Can you look over my cousin's bio?\n\nI live in Galway and I'm a vet.",
        "Here's my flatmate's intro, is it too long?\n\nHi, I'm Noor and I live in Bath.",
        "Thoughts on my manager's email?\n\nI work at Ikea as a buyer.",
    ],
)
def test_a_text_named_as_someone_elses_states_nothing(message: str) -> None:
    assert facts(message) == {}


@pytest.mark.parametrize(
    ("message", "expected"),
    [  # someone's text spoken of, not brought: the user's own statements follow
        ("My brother's letter made me laugh.\nI live in Galway now.", {"location": "Galway"}),
        ("I loved my aunt's letter.\nI live in Derry.", {"location": "Derry"}),
        ("I got my boss's feedback today.\nI work at Aldi.", {"employer": "Aldi"}),
    ],
)
def test_someones_text_spoken_of_hands_nothing_over(message: str, expected: dict[str, str]) -> None:
    assert material(message) == []
    assert facts(message) == expected

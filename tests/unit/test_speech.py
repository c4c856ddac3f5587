"""The kernel's own reply words per language (kernel.speech) and where they are used."""

import re

import pytest

from kernel.facts import told_sentence
from kernel.grammar import ENGLISH_LEADS, render_reply
from kernel.norms import (
    NormProposal,
    acknowledgement,
    enforce,
    is_acknowledgement,
    prose_from_lists,
)
from kernel.speech import PHRASEBOOKS, heads, lead_lowered, phrasebook, reads_english
from nodes.turn.deliberate import model_view

LOCATION = "user.profile.location"


@pytest.mark.parametrize(
    "text",
    [
        "Go to bed at the same time every night and keep your phone out of the bedroom.",
        "I think it depends on what you need.",
        "Sure! Here is how you can do it.",
        # items of a list with hardly a function word (seen on SmolLM2 under a Portuguese norm)
        "Establish a consistent sleep schedule. Minimize digital distractions during sleep.",
        "Use blackout curtains. Create a relaxing bedtime routine.",
    ],
)
@pytest.mark.parametrize("language", ["pt", "es", "fr", "de", "it"])
def test_english_reads_as_english(text: str, language: str) -> None:
    items = re.split(r"(?<=[.!?])\s+", text)  # as the grammar passes a list's items
    assert reads_english(text, language, items, ENGLISH_LEADS)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Deite-se sempre à mesma hora e deixe o telemóvel fora do quarto.", "pt"),
        ("Acuéstate siempre a la misma hora y deja el móvil fuera del dormitorio.", "es"),
        ("Couchez-vous toujours à la même heure et laissez le téléphone hors de la chambre.", "fr"),
        ("Geh immer zur gleichen Zeit ins Bett und lass das Handy aus dem Schlafzimmer.", "de"),
        ("Vai a letto sempre alla stessa ora e lascia il telefono fuori dalla camera.", "it"),
        ("Olá! Tudo bem? Eu moro em Lisboa há dois anos e trabalho num hospital.", "pt"),
        ("Evite café. Leia um livro.", "pt"),
        ("Mittags keinen Kaffee. Abends lesen.", "de"),
        ("", "pt"),
        ("42", "es"),
    ],
)
def test_other_languages_do_not(text: str, language: str) -> None:
    items = re.split(r"(?<=[.!?])\s+", text)
    assert not reads_english(text, language, items, ENGLISH_LEADS)


def test_every_phrasebook_says_every_line() -> None:
    english = PHRASEBOOKS["en"]
    for code, book in PHRASEBOOKS.items():
        assert set(book.told) == set(english.told), code
        assert set(book.fallbacks) == set(english.fallbacks), code
        assert set(book.ack) == set(english.ack), code
        assert len(book.ordinals) == len(english.ordinals), code
        assert book.recalled.format(fact="x") != book.recalled_alone.format(fact="x"), code
    assert phrasebook("nl") is english  # no phrasebook: English


def test_facts_are_told_in_the_language_asked_for() -> None:
    assert told_sentence(LOCATION, "Porto", "Lisbon") == "you live in Porto (not Lisbon)"
    assert told_sentence(LOCATION, "Porto", "Lisboa", "pt") == (
        "o lugar onde você mora é Porto (não Lisboa)"  # no preposition to get wrong ("no Porto")
    )
    assert told_sentence(LOCATION, "France", None, "fr") == "votre lieu de résidence est France"
    assert told_sentence("user.profile.occupation", "Krankenpfleger", None, "de") == (
        "du arbeitest als Krankenpfleger"
    )
    assert told_sentence("user.profile.pet_name", "Luna", None, "fr") == "pet name — Luna"
    assert told_sentence(LOCATION, "Oslo", None, "nl") == "you live in Oslo"


def test_acknowledgements_follow_the_active_language() -> None:
    brief = NormProposal("max_sentences", {"n": 2}, "Answer in at most 2 sentences.")
    no_lists = NormProposal("no_lists", {}, "Never use bullet points or numbered lists.")
    german = NormProposal("language", {"code": "de", "name": "German"}, "Answer in German.")
    dutch = NormProposal("language", {"code": "nl", "name": "Dutch"}, "Answer in Dutch.")
    assert acknowledgement([brief], "es") == (
        "Entendido — a partir de ahora mantendré mis respuestas en un máximo de 2 frases."
    )
    assert acknowledgement([german, no_lists, brief]) == (
        "Verstanden — ab jetzt antworte ich auf Deutsch, verwende keine Aufzählungen "
        "oder nummerierten Listen und beschränke meine Antworten auf höchstens 2 Sätze."
    )
    assert acknowledgement([dutch]) == "Understood — I'll answer in Dutch from now on."
    assert acknowledgement([brief]).startswith("Understood — I'll keep")
    for code in PHRASEBOOKS:
        assert is_acknowledgement(acknowledgement([brief], code))


def test_lists_become_prose_in_the_reply_language() -> None:
    portuguese = "Dicas:\n1. Deite-se cedo.\n2. Evite café à noite."
    assert prose_from_lists(portuguese, "pt") == (
        "Dicas: Em primeiro lugar, deite-se cedo. Em segundo lugar, evite café à noite."
    )
    german = "Tipps:\n1. Kaffee am Abend meiden.\n2. Früh ins Bett gehen."
    assert prose_from_lists(german, "de") == (
        "Tipps: Erstens: Kaffee am Abend meiden. Zweitens: Früh ins Bett gehen."
    )
    english = "Tips:\n1. Go to bed early.\n2. Avoid coffee at night."
    assert prose_from_lists(english, "pt") == (
        "Tips: First, go to bed early. Second, avoid coffee at night."
    )
    short = "- maçãs\n- peras\n- ameixas"
    assert prose_from_lists(short, "pt") == "Maçãs, peras e ameixas."


def test_the_persona_grammar_connects_in_the_reply_language() -> None:
    draft = "Pour mieux dormir :\n- Évitez le café après cinq heures.\n- Lisez avant de dormir."
    assert render_reply(draft, "narrative", language="fr") == (
        "Pour mieux dormir : Premièrement, évitez le café après cinq heures. "
        "De plus, lisez avant de dormir."
    )
    assert "First" not in render_reply(draft, "narrative", language="pt")


@pytest.mark.parametrize(
    ("sentence", "language", "lowered"),
    [
        ("Deite-se cedo.", "pt", "deite-se cedo."),
        ("El café quita el sueño.", "es", "el café quita el sueño."),
        ("É melhor dormir cedo.", "pt", "é melhor dormir cedo."),
        ("Lève-toi tôt.", "fr", "lève-toi tôt."),
        ("L'acqua aiuta.", "it", "l'acqua aiuta."),
        ("São Paulo é grande.", "pt", "São Paulo é grande."),
        ("Lisboa tem bons cafés.", "pt", "Lisboa tem bons cafés."),
        ("Duolingo: pratique todos os dias.", "pt", "Duolingo: pratique todos os dias."),
        ("NASA publica dados.", "pt", "NASA publica dados."),
        ("Roma merita una visita.", "it", "Roma merita una visita."),
    ],
)
def test_a_lead_word_is_lowered_only_when_it_is_never_a_name(
    sentence: str, language: str, lowered: str
) -> None:
    assert lead_lowered(sentence, phrasebook(language)) == lowered


def test_the_model_never_sees_the_kernel_lines_of_any_language() -> None:
    for book in PHRASEBOOKS.values():
        reply = "Não sei.\n\n" + book.recalled.format(fact="x")
        assert model_view(reply) == "Não sei."
        alone = book.correction.format(old="Porto", current="Lisboa")
        assert model_view(alone) == ""
    assert len(heads()) == 3 * len(PHRASEBOOKS)


def test_the_model_never_sees_the_noted_paragraph_before_its_draft() -> None:
    for book in PHRASEBOOKS.values():
        noted = book.noted.format(facts="x; y")
        assert model_view(f"{noted}\n\nQue cidade bonita!") == "Que cidade bonita!"
        assert model_view(noted) == ""
    # a review: a draft that opens in lower case ("iPhone …", "é …") is kept whole
    assert model_view("Noted: you work at Apple.\n\niPhone sales were strong.") == (
        "iPhone sales were strong."
    )
    assert model_view("Noted: you live in Mt. Pleasant.\n\nLovely town.") == "Lovely town."
    assert model_view("Noted, thanks. Anotado: is Portuguese.") == (
        "Noted, thanks. Anotado: is Portuguese."
    )


def test_english_lists_keep_every_connector() -> None:
    # A review found items opening "In …"/"After …" lost their connector (no language norm).
    draft = "Sure:\n\n1. Book early.\n2. In Lisbon, take tram 28.\n3. After dark, visit Alfama."
    out = render_reply(draft, "narrative")
    assert "Then, in Lisbon, take tram 28." in out and "Finally, after dark, visit" in out


@pytest.mark.parametrize(
    ("draft", "language", "expected"),
    [
        (  # articles and prepositions are not connectors
            "Dicas:\n\n- Beba água.\n- A cafeína atrapalha o sono.\n- Em casa, apague as luzes.",
            "pt",
            "Dicas: Em primeiro lugar, beba água. Além disso, a cafeína atrapalha o sono. Por "
            "fim, em casa, apague as luzes.",
        ),
        (  # an item that has its connector keeps it, once
            "- Bebe agua.\n- Además, duerme ocho horas.",
            "es",
            "Primero, bebe agua. Además, duerme ocho horas.",
        ),
        (  # names keep their capital
            "1. Lisboa tem ótimos museus.\n2. Sintra fica perto.",
            "pt",
            "Em primeiro lugar, Lisboa tem ótimos museus. Depois, Sintra fica perto.",
        ),
        (  # items without a full stop, a verb before a name
            "1. Beba água\n2. Use Docker para isolar\n3. Evite café",
            "pt",
            "Em primeiro lugar, beba água. Depois, use Docker para isolar. Por fim, evite café.",
        ),
        (
            "- Couchez-vous tôt.\n- Netflix attendra demain.",
            "fr",
            "Premièrement, couchez-vous tôt. De plus, Netflix attendra demain.",
        ),
        # a second review's cases
        (  # a connector without a comma is still the item's own
            "- Bebe agua.\n- Luego añade la pasta.\n- Por último escurre y sirve.",
            "es",
            "Primero, bebe agua. Luego añade la pasta. Por último escurre y sirve.",
        ),
        (  # an article that opens a name keeps its capital
            "- Las Vegas\n- La Habana\n- Los Ángeles",
            "es",
            "Las Vegas, La Habana y Los Ángeles.",
        ),
        (
            "- L’eau est bonne.\n- Le Havre est loin.",
            "fr",
            "Premièrement, l’eau est bonne. De plus, Le Havre est loin.",
        ),
        (  # a German list of nouns is German; an English list of imperatives is English
            "1. Regelmäßiges Training.\n2. Ausreichend Schlaf.",
            "de",
            "Erstens: Regelmäßiges Training. Dann: Ausreichend Schlaf.",
        ),
        (
            "- Sleep early.\n- Drink water.\n- Exercise daily.",
            "pt",
            "First, sleep early. Also, drink water. Finally, exercise daily.",
        ),
    ],
)
def test_connectors_in_other_languages(draft: str, language: str, expected: str) -> None:
    assert render_reply(draft, "narrative", language=language) == expected


@pytest.mark.parametrize(
    ("text", "language", "english"),
    [
        (
            '"The Power of Habit", de Charles Duhigg. "Thinking, Fast and Slow", de Kahneman.',
            "pt",
            False,
        ),
        ("Nutze `with` beim Öffnen von Dateien. Schreib `for`-Schleifen kurz.", "de", False),
        ("Limit caffeine (e.g. coffee) after lunch. Avoid screens at night.", "pt", True),
        ("Do yoga in the morning. Walk after lunch.", "pt", True),
        (
            "Drink 2 liters of water per day. Avoid non-stop screen time. Come home early.",
            "it",
            True,
        ),
    ],
)
def test_quotes_code_and_shared_words_do_not_decide_the_language(
    text: str, language: str, english: bool
) -> None:
    assert reads_english(text, language) is english


def test_spanish_and_before_an_i_sound() -> None:
    assert prose_from_lists("- Español\n- Inglés", "es") == "Español e Inglés."
    assert prose_from_lists("- Agua\n- Hielo", "es") == "Agua y Hielo."


def test_a_dropped_topic_moves_on_in_the_language_asked_for() -> None:
    avoid = NormProposal("avoid_topic", {"topic": "Bitcoin", "words": ["bitcoin"]}, "")
    portuguese = NormProposal("language", {"code": "pt", "name": "Portuguese"}, "")
    assert enforce("Bitcoin é uma boa opção.", [avoid, portuguese]) == "Vamos falar de outra coisa."
    assert enforce("Bitcoin is fine.", [avoid]) == "Let's talk about something else."


def test_the_no_lists_rewrite_keeps_an_items_own_connector() -> None:
    assert prose_from_lists("1. Wasser kochen.\n2. Dann die Nudeln hineingeben.", "de") == (
        "Erstens: Wasser kochen. Dann die Nudeln hineingeben."
    )


def test_spanish_and_with_accents_and_brands() -> None:
    assert prose_from_lists("- tablas\n- índices", "es") == "Tablas e índices."
    assert prose_from_lists("- coche\n- iPhone", "es") == "Coche y iPhone."


def test_an_avoided_topic_is_acknowledged_without_an_english_possessive() -> None:
    avoid = NormProposal("avoid_topic", {"topic": "the user's ex-husband"}, "")
    assert acknowledgement([avoid], "es") == (
        'Entendido — a partir de ahora no mencionaré "ex-husband".'
    )
    assert acknowledgement([avoid]) == "Understood — I won't bring up your ex-husband from now on."


def test_the_turn_that_sets_an_avoided_topic_says_only_its_acknowledgement() -> None:
    # "Never mention coffee." answered about coffee: the acknowledgement, not "… something else."
    avoid = NormProposal("avoid_topic", {"topic": "coffee", "words": ["coffee"]}, "")
    ack = acknowledgement([avoid])
    assert enforce("Coffee is great in the morning.", [avoid], ack=ack) == ack

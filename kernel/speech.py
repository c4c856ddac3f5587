"""The kernel's own words in a reply, in the language the user asked for.

Composition adds lines the model never wrote: what the user told the agent ("(From what you told
me: you live in Porto.)"), a correction, "Noted: …", the acknowledgement of a new norm, a
fallback when no draft was usable, and the ordinals of a list rewritten as prose. After "Answer
in Portuguese from now on" those lines were still English inside a Portuguese reply. Each line
is said here in English and in the languages with a full phrasebook (Portuguese, Spanish,
French, German, Italian); under a language norm for any other language they stay English, and
so does everything when no language norm is active.

The address chosen per language is the one a chat assistant commonly uses: "você", "tú",
"vous", "du", "tu". Places take the preposition of a city ("à Paris", "a Roma"), the common
case. These are replies, not prompts: no model ever reads them as instructions (the dialogue
the model sees drops them, ``nodes.turn.deliberate.model_view``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Phrasebook:
    """Everything the kernel says itself, in one language (``str.format`` placeholders)."""

    told: Mapping[str, str]
    """A user fact said back to the user, per belief slot key ({value}, {article} in English)."""
    told_other: str
    """A fact of any other slot ({label}, {value})."""
    not_before: str
    """A corrected fact's former value (" (not {old})")."""
    recalled: str
    recalled_alone: str
    noted: str
    correction: str
    fallbacks: Mapping[str, str]
    """The reply when no draft was usable, per modality."""
    ack_head: str
    ack_tail: str
    ack: Mapping[str, str]
    """A norm's acknowledgement, one part per kind (``max_sentences``: ``one``/``many``)."""
    ordinals: tuple[str, ...]
    """Numbered list items rewritten as prose ("no lists" norm), then ``then`` past the eighth."""
    finally_: str
    then: str
    ordinal_sep: str
    lower_after_ordinal: bool
    """Whether the item's first word is lower-cased after the ordinal ("Primeiro, deite-se …",
    ``lead_lowered``); not in German, where case is grammar ("Erstens: Kaffee meiden.")."""
    and_: str
    ordered: tuple[str, ...]
    """The persona grammar's connectors between the steps of an ordered list ("Then", "Next")."""
    unordered: tuple[str, ...]
    """… and between the points of an unordered one ("Also", "In addition")."""


_SLOTS = (
    "user.profile.name",
    "user.profile.location",
    "user.profile.employer",
    "user.profile.occupation",
    "user.health.allergy",
    "user.profile.languages",
)


def _told(*templates: str) -> dict[str, str]:
    return dict(zip(_SLOTS, templates, strict=True))


PHRASEBOOKS: dict[str, Phrasebook] = {
    "en": Phrasebook(
        told=_told(
            "your name is {value}",
            "you live in {value}",
            "you work at {value}",
            "you work as {article} {value}",
            "you are allergic to {value}",
            "you speak {value}",
        ),
        told_other="your {label} is {value}",
        not_before=" (not {old})",
        recalled="(From what you told me: {fact}.)",
        recalled_alone="From what you told me: {fact}.",
        noted="Noted: {facts}.",
        correction="(Correction: {old} is out of date; it is {current} now.)",
        fallbacks={
            "greeting": "Hello. I'm here - what's on your mind?",
            "question": "I don't have a reliable answer to that yet. Can you tell me more about "
            "what you need?",
            "request": "I can try. Tell me a little more about what a good result looks like.",
            "statement": "I hear you. Tell me more?",
        },
        ack_head="Understood —",
        ack_tail=" from now on.",
        ack={
            "no_lists": "I won't use bullet points or numbered lists",
            "one": "I'll keep my answers to at most {n} sentence",
            "many": "I'll keep my answers to at most {n} sentences",
            "address_as": "I'll call you {name}",
            "language": "I'll answer in {name}",
            "avoid_topic": "I won't bring up {topic}",
            "style": "I'll follow this: {instruction}",
        },
        ordinals=("First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth"),
        finally_="Finally",
        then="Then",
        ordinal_sep=", ",
        lower_after_ordinal=True,
        and_=" and ",
        ordered=("Then", "Next", "After that"),
        unordered=("Also", "In addition", "Beyond that"),
    ),
    "pt": Phrasebook(
        told=_told(
            "você se chama {value}",
            "você mora em {value}",
            "você trabalha em {value}",
            "você trabalha como {value}",
            "você tem alergia a {value}",
            "você fala {value}",
        ),
        told_other="{label}: {value}",
        not_before=" (não {old})",
        recalled="(Pelo que você me contou: {fact}.)",
        recalled_alone="Pelo que você me contou: {fact}.",
        noted="Anotado: {facts}.",
        correction="(Correção: {old} está desatualizado; agora é {current}.)",
        fallbacks={
            "greeting": "Olá. Estou aqui — em que está pensando?",
            "question": "Ainda não tenho uma resposta confiável para isso. Pode me dizer mais "
            "sobre o que precisa?",
            "request": "Posso tentar. Diga-me um pouco mais sobre o que seria um bom resultado.",
            "statement": "Entendo. Quer me contar mais?",
        },
        ack_head="Entendido —",
        ack_tail=" a partir de agora.",
        ack={
            "no_lists": "não vou usar marcadores nem listas numeradas",
            "one": "vou manter minhas respostas em no máximo {n} frase",
            "many": "vou manter minhas respostas em no máximo {n} frases",
            "address_as": "vou chamar você de {name}",
            "language": "vou responder em português",
            "avoid_topic": "não vou mencionar {topic}",
            "style": "vou seguir isto: {instruction}",
        },
        ordinals=(
            "Primeiro",
            "Segundo",
            "Terceiro",
            "Quarto",
            "Quinto",
            "Sexto",
            "Sétimo",
            "Oitavo",
        ),
        finally_="Por fim",
        then="Depois",
        ordinal_sep=", ",
        lower_after_ordinal=True,
        and_=" e ",
        ordered=("Depois", "Em seguida", "A seguir"),
        unordered=("Além disso", "Também", "Por outro lado"),
    ),
    "es": Phrasebook(
        told=_told(
            "te llamas {value}",
            "vives en {value}",
            "trabajas en {value}",
            "trabajas como {value}",
            "tienes alergia a {value}",
            "hablas {value}",
        ),
        told_other="{label}: {value}",
        not_before=" (no {old})",
        recalled="(Por lo que me contaste: {fact}.)",
        recalled_alone="Por lo que me contaste: {fact}.",
        noted="Anotado: {facts}.",
        correction="(Corrección: {old} ya no es válido; ahora es {current}.)",
        fallbacks={
            "greeting": "Hola. Aquí estoy, ¿en qué estás pensando?",
            "question": "Todavía no tengo una respuesta fiable para eso. ¿Puedes contarme más "
            "sobre lo que necesitas?",
            "request": "Puedo intentarlo. Cuéntame un poco más sobre cómo sería un buen resultado.",
            "statement": "Te escucho. ¿Me cuentas más?",
        },
        ack_head="Entendido — a partir de ahora",
        ack_tail=".",
        ack={
            "no_lists": "no usaré viñetas ni listas numeradas",
            "one": "mantendré mis respuestas en un máximo de {n} frase",
            "many": "mantendré mis respuestas en un máximo de {n} frases",
            "address_as": "te llamaré {name}",
            "language": "responderé en español",
            "avoid_topic": "no mencionaré {topic}",
            "style": "seguiré esto: {instruction}",
        },
        ordinals=(
            "Primero",
            "Segundo",
            "Tercero",
            "Cuarto",
            "Quinto",
            "Sexto",
            "Séptimo",
            "Octavo",
        ),
        finally_="Por último",
        then="Después",
        ordinal_sep=", ",
        lower_after_ordinal=True,
        and_=" y ",
        ordered=("Luego", "Después", "A continuación"),
        unordered=("Además", "También", "Por otro lado"),
    ),
    "fr": Phrasebook(
        told=_told(
            "vous vous appelez {value}",
            "vous habitez à {value}",
            "vous travaillez chez {value}",
            "vous travaillez comme {value}",
            "vous êtes allergique à {value}",
            "vous parlez {value}",
        ),
        told_other="{label} : {value}",
        not_before=" (pas {old})",
        recalled="(D'après ce que vous m'avez dit : {fact}.)",
        recalled_alone="D'après ce que vous m'avez dit : {fact}.",
        noted="Noté : {facts}.",
        correction="(Correction : {old} n'est plus à jour ; c'est {current} maintenant.)",
        fallbacks={
            "greeting": "Bonjour. Je suis là — qu'avez-vous en tête ?",
            "question": "Je n'ai pas encore de réponse fiable à cela. Pouvez-vous m'en dire plus "
            "sur ce dont vous avez besoin ?",
            "request": "Je peux essayer. Dites-m'en un peu plus sur ce que serait un bon résultat.",
            "statement": "Je vous écoute. Vous m'en dites plus ?",
        },
        ack_head="Compris —",
        ack_tail=" désormais.",
        ack={
            "no_lists": "je n'utiliserai ni puces ni listes numérotées",
            "one": "je limiterai mes réponses à {n} phrase au plus",
            "many": "je limiterai mes réponses à {n} phrases au plus",
            "address_as": "je vous appellerai {name}",
            "language": "je répondrai en français",
            "avoid_topic": "je n'aborderai pas {topic}",
            "style": "je suivrai ceci : {instruction}",
        },
        ordinals=(
            "Premièrement",
            "Deuxièmement",
            "Troisièmement",
            "Quatrièmement",
            "Cinquièmement",
            "Sixièmement",
            "Septièmement",
            "Huitièmement",
        ),
        finally_="Enfin",
        then="Ensuite",
        ordinal_sep=", ",
        lower_after_ordinal=True,
        and_=" et ",
        ordered=("Ensuite", "Puis", "Après cela"),
        unordered=("Aussi", "De plus", "Par ailleurs"),
    ),
    "de": Phrasebook(
        told=_told(
            "du heißt {value}",
            "du wohnst in {value}",
            "du arbeitest bei {value}",
            "du arbeitest als {value}",
            "du bist allergisch gegen {value}",
            "du sprichst {value}",
        ),
        told_other="{label}: {value}",
        not_before=" (nicht {old})",
        recalled="(Nach dem, was du mir erzählt hast: {fact}.)",
        recalled_alone="Nach dem, was du mir erzählt hast: {fact}.",
        noted="Notiert: {facts}.",
        correction="(Korrektur: {old} ist veraltet; jetzt gilt {current}.)",
        fallbacks={
            "greeting": "Hallo. Ich bin da – was beschäftigt dich?",
            "question": "Darauf habe ich noch keine verlässliche Antwort. Kannst du mir mehr "
            "darüber sagen, was du brauchst?",
            "request": "Ich kann es versuchen. Sag mir etwas mehr darüber, wie ein gutes Ergebnis "
            "aussieht.",
            "statement": "Ich höre zu. Erzählst du mir mehr?",
        },
        ack_head="Verstanden — ab jetzt",
        ack_tail=".",
        ack={
            "no_lists": "verwende ich keine Aufzählungen oder nummerierten Listen",
            "one": "halte ich meine Antworten auf höchstens {n} Satz",
            "many": "halte ich meine Antworten auf höchstens {n} Sätze",
            "address_as": "nenne ich dich {name}",
            "language": "antworte ich auf Deutsch",
            "avoid_topic": "spreche ich {topic} nicht an",
            "style": "folge ich dem: {instruction}",
        },
        ordinals=(
            "Erstens",
            "Zweitens",
            "Drittens",
            "Viertens",
            "Fünftens",
            "Sechstens",
            "Siebtens",
            "Achtens",
        ),
        finally_="Schließlich",
        then="Dann",
        ordinal_sep=": ",
        lower_after_ordinal=False,
        and_=" und ",
        ordered=("Dann", "Danach", "Anschließend"),
        unordered=("Außerdem", "Zudem", "Darüber hinaus"),
    ),
    "it": Phrasebook(
        told=_told(
            "ti chiami {value}",
            "vivi a {value}",
            "lavori presso {value}",
            "lavori come {value}",
            "hai un'allergia a {value}",
            "parli {value}",
        ),
        told_other="{label}: {value}",
        not_before=" (non {old})",
        recalled="(Da quello che mi hai detto: {fact}.)",
        recalled_alone="Da quello che mi hai detto: {fact}.",
        noted="Preso nota: {facts}.",
        correction="(Correzione: {old} non è più valido; ora è {current}.)",
        fallbacks={
            "greeting": "Ciao. Sono qui — a cosa stai pensando?",
            "question": "Non ho ancora una risposta affidabile. Puoi dirmi di più su ciò di cui "
            "hai bisogno?",
            "request": "Posso provarci. Dimmi qualcosa di più su come sarebbe un buon risultato.",
            "statement": "Ti ascolto. Mi racconti di più?",
        },
        ack_head="Capito — d'ora in poi",
        ack_tail=".",
        ack={
            "no_lists": "non userò elenchi puntati o numerati",
            "one": "terrò le mie risposte entro {n} frase",
            "many": "terrò le mie risposte entro {n} frasi",
            "address_as": "ti chiamerò {name}",
            "language": "risponderò in italiano",
            "avoid_topic": "non parlerò di {topic}",
            "style": "seguirò questo: {instruction}",
        },
        ordinals=("Primo", "Secondo", "Terzo", "Quarto", "Quinto", "Sesto", "Settimo", "Ottavo"),
        finally_="Infine",
        then="Poi",
        ordinal_sep=", ",
        lower_after_ordinal=True,
        and_=" e ",
        ordered=("Poi", "Dopo", "In seguito"),
        unordered=("Inoltre", "Anche", "Oltre a ciò"),
    ),
}


def phrasebook(language: str) -> Phrasebook:
    """Return the phrasebook of a language code ("pt"), English for any code without one."""
    return PHRASEBOOKS.get(language, PHRASEBOOKS["en"])


_ENGLISH_WORDS = frozenset(
    {"the", "and", "you", "your", "is", "are", "of", "to", "with", "for", "this", "that", "it",
     "be", "have", "can", "not", "my", "they", "we", "what", "how", "if", "or", "at", "from",
     "by", "into", "each", "every", "their", "our", "during", "before", "after", "when"}
)  # fmt: skip
"""English function words that are not words of the phrasebooks' other languages ("a", "in",
"on", "no", "as", "was", "will", "so" and "i" are; "e" is counted as Portuguese and Italian,
though "e.g." has it)."""
_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "pt": frozenset(
        {"o", "os", "do", "da", "dos", "das", "em", "um", "uma", "que", "para", "com", "não",
         "por", "é", "ao", "à", "mais", "como", "mas", "se", "seu", "sua", "você", "isso",
         "este", "esta", "também", "nos", "nas", "pelo", "pela", "e"}
    ),
    "es": frozenset(
        {"el", "los", "las", "del", "en", "un", "una", "que", "para", "con", "por", "es", "al",
         "más", "como", "pero", "se", "su", "tu", "usted", "esto", "este", "esta", "también",
         "y", "muy", "lo", "le"}
    ),
    "fr": frozenset(
        {"le", "la", "les", "des", "du", "un", "une", "et", "est", "que", "pour", "avec", "pas",
         "ne", "vous", "il", "elle", "ce", "cette", "dans", "sur", "au", "aux", "mais", "plus",
         "très", "je", "tu", "nous", "de", "votre", "vos"}
    ),
    "de": frozenset(
        {"der", "die", "das", "den", "dem", "des", "und", "ist", "nicht", "ein", "eine", "einen",
         "mit", "für", "auf", "zu", "sie", "ich", "du", "wir", "es", "auch", "dass", "oder",
         "aber", "sich", "im", "am", "vom", "zum", "zur", "nach", "dein", "deine", "ihr"}
    ),
    "it": frozenset(
        {"il", "lo", "la", "gli", "le", "del", "della", "dei", "di", "un", "una", "uno", "che",
         "per", "con", "non", "è", "sono", "ma", "più", "come", "si", "al", "alla", "nel",
         "nella", "questo", "questa", "anche", "ti", "mi", "tuo", "tua", "e", "su", "ed"}
    ),
}  # fmt: skip
"""Function words of each phrasebook language that are not English words."""
_ENGLISH_SHAPE = re.compile(r"th|^wh|ing$|ght")
"""Letter patterns of English words the five other languages hardly have ("the", "which",
"sleeping", "night"): they tip a text without function words ("Establish a sleep schedule")."""


def reads_english(text: str, language: str) -> bool:
    """Say whether ``text`` reads as English rather than ``language``.

    A model that ignored the language norm wrote it: its list gets English connectors, not mixed
    ones ("Primeiro, establish …"). English function words are weighed against ``language``'s;
    when neither has any (a list of imperatives), English-shaped words count. A tie is
    ``language``.
    """
    words = re.findall(r"[^\W\d_]+", text.lower())
    english = sum(word in _ENGLISH_WORDS for word in words)
    other = sum(word in _FUNCTION_WORDS.get(language, frozenset()) for word in words)
    if english == other == 0:
        english = sum(_ENGLISH_SHAPE.search(word) is not None for word in words)
    return english > other


@cache
def heads() -> tuple[str, ...]:
    """How every kernel line opens, in every language (the model never wrote them)."""
    found: list[str] = []
    for book in PHRASEBOOKS.values():
        for line in (book.recalled, book.recalled_alone, book.correction):
            found.append(line.split("{", 1)[0].strip())
    return tuple(dict.fromkeys(found))


@cache
def ack_heads() -> tuple[str, ...]:
    """How a norm's acknowledgement opens, in every language ("Understood —", "Entendido —")."""
    heads = (book.ack_head.split("—", 1)[0] + "—" for book in PHRASEBOOKS.values())
    return tuple(dict.fromkeys(heads))


_NAME_LIKE = re.compile(r"^[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*$")


def lead_lowered(sentence: str, text: str = "") -> str:
    """Lower-case a sentence's first word when it is capitalised only because it opens it.

    For the languages other than English (``kernel.grammar`` has its own English rule): a word
    in title case is lowered ("Deite-se cedo." -> "deite-se cedo.") unless it looks like a name:
    another capitalised word follows it ("São Paulo", "Google Maps"), it is written capitalised
    inside a sentence of ``text``, or it is not a plain word (acronyms, "iPhone", "3D").
    """
    words = sentence.split(maxsplit=2)
    if not words:
        return sentence
    first = words[0].rstrip(",:;.!?")
    if not _NAME_LIKE.match(first) or not first[:1].isupper() or first[1:] != first[1:].lower():
        return sentence
    if len(words) > 1 and words[1][:1].isupper():
        return sentence
    if re.search(rf"(?:(?<=[^\W\d_] )|(?<=[^\W\d_], )){re.escape(first)}(?!\w)", text):
        return sentence
    return sentence[:1].lower() + sentence[1:]


@cache
def noted_heads() -> tuple[str, ...]:
    """How the "Noted: …" sentence opens, in every language ("Noted:", "Anotado:")."""
    heads = (book.noted.split("{", 1)[0].strip() for book in PHRASEBOOKS.values())
    return tuple(dict.fromkeys(heads))

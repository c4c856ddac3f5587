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
from collections.abc import Mapping, Sequence
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
    ack_later: Mapping[str, str]
    """The parts after the first where they differ (German drops the inverted subject: "ab jetzt
    antworte ich auf Deutsch und verwende keine Listen")."""
    ordinals: tuple[str, ...]
    """Numbered list items rewritten as prose ("no lists" norm), then ``then`` past the eighth."""
    finally_: str
    then: str
    ordinal_sep: str
    lower_after_ordinal: bool
    """Whether the item's first word is lower-cased after the ordinal ("Primeiro, deite-se …",
    ``lead_lowered``); not in German, where case is grammar ("Erstens: Kaffee meiden.")."""
    and_: str
    fact_sep: str
    """Between two facts told back ("; ", French " ; ")."""
    topic_dropped: str
    """The reply when every sentence touched a topic the user asked to avoid."""
    leads: frozenset[str]
    """Words a list item opens with that are never names (articles, pronouns, common imperatives
    of advice and steps): lowered after a connector (``lead_lowered``). English uses
    ``kernel.grammar``'s own list."""
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
        ack_later={},
        ordinals=("First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth"),
        finally_="Finally",
        then="Then",
        ordinal_sep=", ",
        lower_after_ordinal=True,
        and_=" and ",
        fact_sep="; ",
        topic_dropped="Let's talk about something else.",
        leads=frozenset(),
        ordered=("Then", "Next", "After that"),
        unordered=("Also", "In addition", "Beyond that"),
    ),
    "pt": Phrasebook(
        told=_told(
            "você se chama {value}",
            "o lugar onde você mora é {value}",
            "o seu local de trabalho é {value}",
            "você trabalha como {value}",
            "você tem alergia a {value}",
            "você fala {value}",
        ),
        told_other="{label} — {value}",
        not_before=" (não {old})",
        recalled="(Pelo que você me contou: {fact}.)",
        recalled_alone="Pelo que você me contou: {fact}.",
        noted="Anotado: {facts}.",
        correction="(Correção: já não é {old}; agora é {current}.)",
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
        ack_later={},
        ordinals=(
            "Em primeiro lugar",
            "Em segundo lugar",
            "Em terceiro lugar",
            "Em quarto lugar",
            "Em quinto lugar",
            "Em sexto lugar",
            "Em sétimo lugar",
            "Em oitavo lugar",
        ),
        finally_="Por fim",
        then="Depois",
        ordinal_sep=", ",
        lower_after_ordinal=True,
        and_=" e ",
        fact_sep="; ",
        topic_dropped="Vamos falar de outra coisa.",
        leads=frozenset(
            """
            o a os as um uma uns umas este esta estes estas esse essa isso isto seu sua seus
            suas não nunca sempre se quando antes cada todo toda todos todas para com sem
            por em no na nos nas ao à é há mais menos também só apenas muito pouco tente
            beba bebe durma dorme evite evita use usa faça faz coma come leia lê escreva
            escreve mantenha mantém pratique pratica desligue desliga apague apaga acorde
            acorda caminhe caminha reduza reduz limite limita crie cria defina define
            estabeleça estabelece escolha escolhe comece começa experimente experimenta
            procure procura verifique verifica instale instala abra abre feche fecha guarde
            guarda planeje planeie planeia organize organiza pesquise pesquisa prepare prepara
            chegue chega leve leva ouça ouve fale fala peça pede pergunte pergunta visite
            visita compre compra tome toma tenha tem seja esteja fique fica saia sai vá vai
            volte volta deixe deixa ponha põe tire tira corte corta adicione adiciona misture
            mistura aqueça aquece sirva serve lave lava respire respira descanse descansa
            estude estuda aprenda aprende revise revisa anote anota lembre reserve reserva
            evitar usar fazer beber dormir manter praticar ferva ferve asse assa frite frita
            refogue refoga tempere tempera escorra escorre pique pica descasque descasca
            """.split()
        ),
        ordered=("Depois", "Em seguida", "A seguir"),
        unordered=("Além disso", "Adicionalmente", "Ademais"),
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
        told_other="{label} — {value}",
        not_before=" (no {old})",
        recalled="(Por lo que me contaste: {fact}.)",
        recalled_alone="Por lo que me contaste: {fact}.",
        noted="Anotado: {facts}.",
        correction="(Corrección: ya no es {old}; ahora es {current}.)",
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
        ack_later={},
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
        fact_sep="; ",
        topic_dropped="Hablemos de otra cosa.",
        leads=frozenset(
            """
            el la los las un una unos unas este esta estos estas ese esa eso esto tu tus su
            sus no nunca siempre si cuando antes cada todo toda todos todas para con sin por
            en al del es son hay más menos también solo muy poco intenta intente bebe beba
            duerme duerma evita evite usa use haz haga come coma lee lea escribe escriba
            mantén mantenga practica practique apaga apague despierta despierte camina camine
            reduce reduzca limita limite crea cree define defina establece establezca elige
            elija empieza empiece comienza comience prueba pruebe busca busque verifica
            verifique comprueba compruebe instala instale abre abra cierra cierre guarda
            guarde planifica planifique organiza organice investiga investigue prepara
            prepare llega llegue lleva lleve escucha escuche habla hable pide pida pregunta
            pregunte visita visite compra compre toma tome ten tenga sé sea está esté quédate
            sal salga ve vaya vuelve vuelva deja deje pon ponga quita quite corta corte añade
            añada mezcla mezcle calienta caliente sirve sirva lava lave respira respire
            descansa descanse estudia estudie aprende aprenda repasa repase anota anote
            recuerda recuerde reserva reserve acuéstate levántate evitar usar hacer beber
            dormir mantener practicar hierve hierva hornea hornee fríe fría escurre escurra
            pica pique pela pele sazona sazone
            """.split()
        ),
        ordered=("Luego", "Después", "A continuación"),
        unordered=("Además", "Asimismo", "Igualmente"),
    ),
    "fr": Phrasebook(
        told=_told(
            "vous vous appelez {value}",
            "votre lieu de résidence est {value}",
            "vous travaillez chez {value}",
            "vous travaillez comme {value}",
            "vous avez une allergie ({value})",
            "vous parlez {value}",
        ),
        told_other="{label} — {value}",
        not_before=" (pas {old})",
        recalled="(D'après ce que vous m'avez dit : {fact}.)",
        recalled_alone="D'après ce que vous m'avez dit : {fact}.",
        noted="Noté : {facts}.",
        correction="(Correction : ce n'est plus {old} ; c'est {current} maintenant.)",
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
        ack_later={},
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
        fact_sep=" ; ",
        topic_dropped="Parlons d'autre chose.",
        leads=frozenset(
            """
            le la les l un une des du ce cette ces cet votre vos ton ta tes son sa ses ne
            jamais toujours si quand avant chaque tout toute tous toutes pour avec sans par
            en dans au aux est sont il y plus moins aussi seulement très peu essayez essaie
            buvez bois dormez dors évitez évite utilisez utilise faites fais mangez mange
            lisez lis écrivez écris gardez garde pratiquez pratique éteignez éteins réveillez
            marchez marche réduisez réduis limitez limite créez crée définissez définis
            établissez établis choisissez choisis commencez commence testez teste cherchez
            cherche vérifiez vérifie installez installe ouvrez ouvre fermez ferme
            enregistrez enregistre planifiez planifie organisez organise préparez prépare
            arrivez arrive prenez prends apportez apporte écoutez écoute parlez parle
            demandez demande visitez visite achetez achète ayez aie soyez sois restez reste
            sortez sors allez va revenez reviens laissez laisse mettez mets retirez retire
            coupez coupe ajoutez ajoute mélangez mélange chauffez chauffe servez sers lavez
            lave respirez respire reposez étudiez étudie apprenez apprends révisez révise
            notez note rappelez réservez réserve couchez levez éviter utiliser faire boire
            dormir garder pratiquer pensez pense
            """.split()
        ),
        ordered=("Ensuite", "Par la suite", "Après cela"),
        unordered=("De plus", "En outre", "Par ailleurs"),
    ),
    "de": Phrasebook(
        told=_told(
            "du heißt {value}",
            "dein Wohnort ist {value}",
            "du arbeitest bei {value}",
            "du arbeitest als {value}",
            "du bist allergisch gegen {value}",
            "du sprichst {value}",
        ),
        told_other="{label} — {value}",
        not_before=" (nicht {old})",
        recalled="(Nach dem, was du mir erzählt hast: {fact}.)",
        recalled_alone="Nach dem, was du mir erzählt hast: {fact}.",
        noted="Notiert: {facts}.",
        correction="(Korrektur: nicht mehr {old}, sondern jetzt {current}.)",
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
            "one": "beschränke ich meine Antworten auf höchstens {n} Satz",
            "many": "beschränke ich meine Antworten auf höchstens {n} Sätze",
            "address_as": "nenne ich dich {name}",
            "language": "antworte ich auf Deutsch",
            "avoid_topic": "spreche ich {topic} nicht an",
            "style": "halte ich mich an Folgendes: {instruction}",
        },
        ack_later={
            "no_lists": "verwende keine Aufzählungen oder nummerierten Listen",
            "one": "beschränke meine Antworten auf höchstens {n} Satz",
            "many": "beschränke meine Antworten auf höchstens {n} Sätze",
            "address_as": "nenne dich {name}",
            "language": "antworte auf Deutsch",
            "avoid_topic": "spreche {topic} nicht an",
            "style": "halte mich an Folgendes: {instruction}",
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
        fact_sep="; ",
        topic_dropped="Lass uns über etwas anderes sprechen.",
        leads=frozenset(),
        ordered=("Dann", "Danach", "Anschließend"),
        unordered=("Außerdem", "Zudem", "Darüber hinaus"),
    ),
    "it": Phrasebook(
        told=_told(
            "ti chiami {value}",
            "il posto in cui vivi è {value}",
            "lavori presso {value}",
            "lavori come {value}",
            "hai un'allergia ({value})",
            "parli {value}",
        ),
        told_other="{label} — {value}",
        not_before=" (non {old})",
        recalled="(Da quello che mi hai detto: {fact}.)",
        recalled_alone="Da quello che mi hai detto: {fact}.",
        noted="Preso nota: {facts}.",
        correction="(Correzione: non è più {old}; ora è {current}.)",
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
        ack_later={},
        ordinals=(
            "In primo luogo",
            "In secondo luogo",
            "In terzo luogo",
            "In quarto luogo",
            "In quinto luogo",
            "In sesto luogo",
            "In settimo luogo",
            "In ottavo luogo",
        ),
        finally_="Infine",
        then="Poi",
        ordinal_sep=", ",
        lower_after_ordinal=True,
        and_=" e ",
        fact_sep="; ",
        topic_dropped="Parliamo d'altro.",
        leads=frozenset(
            """
            il lo la l i gli le un uno una questo questa questi queste quel quella tuo tua tuoi
            tue suo sua non mai sempre se quando prima ogni tutto tutta tutti tutte per con
            senza da in nel nella al alla è c'è più meno anche solo molto poco prova
            provate bevi beva dormi dorma evita eviti usa usi fai faccia mangia mangi leggi
            legga scrivi scriva mantieni mantenga pratica pratichi spegni spenga svegliati
            cammina cammini riduci riduca limita limiti crea crei definisci stabilisci scegli
            scelga inizia inizi comincia cerca cerchi verifica verifichi controlla controlli
            installa installi apri apra chiudi chiuda salva salvi pianifica organizza
            organizzi prepara prepari arriva arrivi porta porti ascolta ascolti parla parli
            chiedi chieda visita visiti compra compri prendi prenda abbi sii resta resti esci
            vai torna lascia lasci metti togli taglia aggiungi mescola scalda servi lava
            respira riposa studia impara ripassa annota ricorda prenota alzati vai evitare
            usare fare bere dormire mantenere praticare
            """.split()
        ),
        ordered=("Poi", "Successivamente", "In seguito"),
        unordered=("Inoltre", "In più", "Oltre a ciò"),
    ),
}


ENGLISH = PHRASEBOOKS["en"]
"""The kernel's words when no language norm asks for another (or for one without a book)."""


def phrasebook(language: str) -> Phrasebook:
    """Return the phrasebook of a language code ("pt"), English for any code without one."""
    return PHRASEBOOKS.get(language, ENGLISH)


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
        {"o", "os", "de", "da", "dos", "das", "em", "um", "uma", "que", "para", "com", "não",
         "por", "é", "ao", "à", "mais", "como", "mas", "se", "seu", "sua", "você", "isso",
         "este", "esta", "também", "nos", "nas", "pelo", "pela", "e"}
    ),
    "es": frozenset(
        {"el", "los", "las", "del", "de", "en", "un", "una", "que", "para", "con", "por", "es",
         "al", "más", "como", "pero", "se", "su", "tu", "usted", "esto", "este", "esta", "también",
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
         "con", "è", "sono", "ma", "più", "si", "al", "alla", "nel",
         "nella", "questo", "questa", "anche", "ti", "mi", "tuo", "tua", "e", "su", "ed"}
    ),
}  # fmt: skip
"""Function words of each phrasebook language that are not English words (nor parts of common
English ones: Portuguese "do", Italian "come", "per", "non" are left out)."""
_QUOTED = re.compile(
    r"`[^`]*`|\"[^\"]*\"|“[^”]*”|«[^»]*»|„[^“”]*[“”]|\b(?:e\.g|i\.e|etc)\.", re.IGNORECASE
)
"""Titles, quotations, code and Latin abbreviations: they are not the language of the text
around them ('"The Power of Habit", de Charles Duhigg.', "Nutze `with` …", "e.g.")."""
_ENGLISH_SHAPE = re.compile(r"th|^wh|ght")
_ENGLISH_SHAPE_NO_TH = re.compile(r"^wh|ght")
"""Letter patterns of English words the five other languages hardly have ("the", "which",
"night"; French and German do have "th": "thé", "Thema"). "-ing" is left out: "Marketing",
"Training", "Meeting" are words of all five."""


def reads_english(
    text: str,
    language: str,
    openers: Sequence[str] = (),
    english_leads: frozenset[str] = frozenset(),
) -> bool:
    """Say whether ``text`` reads as English rather than ``language``.

    A model that ignored the language norm wrote it: its list gets English connectors, not mixed
    ones ("Primeiro, establish …"). English function words are weighed against ``language``'s;
    when neither has any (a list of imperatives or nouns), the first words of the list's items
    (``openers``) are looked up in ``english_leads`` and the phrasebook's ``leads``; as a last
    resort, at least two English-shaped words decide. A tie is ``language``.
    """
    words = re.findall(r"[^\W\d_]+", _QUOTED.sub(" ", text).lower())
    english = sum(word in _ENGLISH_WORDS for word in words)
    other = sum(word in _FUNCTION_WORDS.get(language, frozenset()) for word in words)
    if english == other == 0 and openers:
        firsts = [m.group(0).lower() for o in openers if (m := _WORD.search(o))]
        english = sum(word in english_leads for word in firsts)
        other = sum(word in phrasebook(language).leads for word in firsts)
    if english == other == 0:
        shape = _ENGLISH_SHAPE if language not in {"fr", "de"} else _ENGLISH_SHAPE_NO_TH
        english = sum(shape.search(word) is not None for word in words)
        return english >= 2
    return english > other


_WORD = re.compile(r"[^\W\d_]+")


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


_CLITIC = re.compile(r"-(?:se|te|me|lo|la|los|las|nos|vous|toi|moi|nous|le|les|y|en|ti|si|mi)$")
"""A verb with its pronoun attached ("Deite-se", "Couchez-vous", "Lève-toi"): never a name."""


def lead_lowered(sentence: str, book: Phrasebook) -> str:
    """Lower-case a sentence's first word when it is capitalised only because it opens it.

    For the languages other than English (``kernel.grammar`` has its own English rule): only a
    word of ``book.leads`` (articles, pronouns, the imperatives of advice and steps) or a verb
    with its pronoun attached is lowered ("Beba água." -> "beba água."); any other word may be
    a name ("Lisboa tem …", "Duolingo: …") and keeps its capital, and so does an article that
    opens a name ("Las Vegas", "Le Havre", "O Alquimista"). The lists leave out the words that
    open names ("São Paulo", "Santa Cruz").
    """
    match = re.match(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", sentence)
    if match is None:
        return sentence
    word = match.group(0)
    if not word[:1].isupper() or word[1:] != word[1:].lower():
        return sentence
    lowered = word.lower()
    head = re.split(r"['’]", lowered)[0]
    rest = sentence[len(word) :]
    if head in ARTICLES and re.match(r"\s+[^\W\d_]", rest) and rest.lstrip()[:1].isupper():
        return sentence
    if lowered in book.leads or head in book.leads or _CLITIC.search(lowered):
        return sentence[:1].lower() + sentence[1:]
    return sentence


ARTICLES = frozenset(
    "o a os as um uma el la los las un una le les l il lo gli i uno des du".split()
)
"""Articles of the five languages: before a capitalised word they open its name."""


def opens_with_connector(sentence: str, book: Phrasebook) -> bool:
    """Say whether ``sentence`` opens with one of ``book``'s connectors ("Dann …", "Por fim,")."""
    return (
        _opening((*book.ordinals, book.finally_, book.then, *book.ordered, *book.unordered)).match(
            sentence
        )
        is not None
    )


@cache
def _opening(phrases: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(p) for p in sorted(set(phrases), key=len, reverse=True))
    return re.compile(rf"(?:{alternatives})(?:\s*[,:]|\s+(?=\w))", re.IGNORECASE)


def join_series(parts: Sequence[str], book: Phrasebook) -> str:
    """Join ``parts`` as "a, b and c" in ``book``'s language.

    Spanish "y" is "e" before an /i/ sound: "español e inglés", but "agua y hielo".
    """
    if len(parts) <= 1:
        return "".join(parts)
    last = parts[-1]
    conjunction = book.and_
    if (
        conjunction == " y "
        and re.match(r"(?i)h?[ií](?![aeiouáéó])", last)
        and not re.match(r"i[A-Z]", last)
    ):
        conjunction = " e "
    return ", ".join(parts[:-1]) + conjunction + last


@cache
def noted_heads() -> tuple[str, ...]:
    """How the "Noted: …" sentence opens, in every language ("Noted:", "Anotado:")."""
    heads = (book.noted.split("{", 1)[0].strip() for book in PHRASEBOOKS.values())
    return tuple(dict.fromkeys(heads))

"""What a user says about themselves in Spanish, Portuguese, French, German or Italian.

``kernel.facts`` reads English statements with a grammar of its own; this module reads the same
six slots (name, home, job, employer, allergy, languages) in the five languages the kernel's
phrasebooks speak (``kernel.speech``), so "Vivo en Valencia y trabajo como enfermera" becomes two
beliefs and "¿Dónde vivo?" is answered from them, as "I live in Valencia" and "Where do I live?"
are.

The grammar is a table per language, not a model: a statement is a clause that opens (after a
greeting or a discourse word) with a first-person present verb of a slot ("vivo en", "moro em",
"j'habite à", "ich wohne in", "abito a") or a move ("me mudé a", "ich bin nach … gezogen"); the
value is the rest of the clause. Patterns match a folded copy of the text (lower case, accents
dropped: users type "alergico", "ingles"); values are cut from the original, so they keep their
accents and capitals. A hedged clause ("si trabajara en…", "me gustaría vivir en…"), a
negation (the verb no longer opens the clause), a past tense ("viví en") or a question asserts
nothing, as in English; the clauses before a question in the same sentence still do ("Trabajo en
Siemens, ¿me ayudas con …?"). A job after "soy" / "je suis" / "ich bin" / "sono" needs a word
of the trade (the ``_JOBS`` table: "soy feliz" is no job); an employer must be named
(capitalised).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

NAME = "user.profile.name"
LOCATION = "user.profile.location"
OCCUPATION = "user.profile.occupation"
EMPLOYER = "user.profile.employer"
ALLERGY = "user.health.allergy"
LANGUAGES = "user.profile.languages"
LIST_SLOTS = frozenset({ALLERGY, LANGUAGES})
"""Slots whose value may be a series ("español e inglés"): the value runs to the clause's end."""
MAX_VALUE_WORDS = 6
MAX_TEXT_CHARS = 4000
"""Facts are read in a message's first 4,000 characters (a statement about oneself is short)."""
MAX_CLAUSE_CHARS = 300
"""A clause read for a fact is cut here: patterns never run over a long unbroken text."""
MAX_CLAUSES = 24
"""Clauses read per sentence: a run of hundreds of "e"s or commas is no statement."""
MAX_QUESTION_CHARS = 300
"""A question about the user is short; a longer text (a forwarded chat) asks nothing of it."""
MAX_ITEM_WORDS = 4
"""An item of a series ("y un poco de francés"); a longer clause after a comma is a new thought."""
_NAMED = frozenset({EMPLOYER})
"""Slots whose value must be a name (capitalised): "trabajo en un hospital" names no employer."""


def fold(text: str) -> str:
    """Lower-case ``text`` and drop accents, character by character (same length, same indexes)."""
    out = []
    for char in text:
        base = unicodedata.normalize("NFD", char)[0]
        low = "'" if base == "’" else base.lower()
        out.append(low if len(low) == 1 else base)
    return "".join(out)


@dataclass(frozen=True)
class Grammar:
    """One language's statements and recall questions, as folded regular expressions."""

    greeting: str
    """A greeting that may open the message (then "soy Ana" introduces the speaker)."""
    lead: str
    """Words that may open a clause before its verb (discourse words, "and", time adverbs)."""
    hedge: str
    """A condition, wish or doubt: the sentence asserts nothing."""
    boundary: str
    """Where a clause ends inside a sentence (commas, "and", "but")."""
    connective: str
    """Words that open a clause of reason or consequence ("así que", "parce que", "quindi"): a
    clause of its own (it may assert: "como soy profesor, …"), never an item of a series."""
    statements: tuple[tuple[str, str], ...]
    """(slot, pattern): a pattern matches a clause's opening; its group ``v`` starts the value."""
    introduction: str
    """After a greeting: "soy Ana", "ich bin Jonas" (the value must be capitalised)."""
    articles: str
    """Articles and prepositions a value may open with ("al polen", "na Petrobras")."""
    trailing: str
    """Time words and adverbs a value may end with ("desde 2019", "maintenant")."""
    value_stop: str
    """Where a single value ends inside its clause ("en Google", "como ingeniera", "desde")."""
    workplace: str
    """After a job: where the job is done ("enfermera en el Hospital La Paz"): its group ``w``."""
    questions: tuple[tuple[str, str], ...]
    """(slot, pattern): a question asking for the user's own fact ("donde vivo")."""
    profile: str
    """A question asking for everything the user told ("que sabes de mi")."""


def _alt(words: str) -> str:
    """Order the top-level alternatives of ``words`` longest first (groups kept whole)."""
    parts, depth, current = [], 0, ""
    for char in words:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "|" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return "|".join(sorted(dict.fromkeys(parts), key=len, reverse=True))


# Words of the trade, folded, with their feminine or plural endings.
_JOBS = {
    "es": _alt(
        "enfermer[oa]|medic[oa]|doctor(?:a)?|profesor(?:a)?|maestr[oa]|ingenier[oa]|abogad[oa]"
        "|programador(?:a)?|desarrollador(?:a)?|disenador(?:a)?|estudiante|camarer[oa]|cociner[oa]"
        "|chef|periodista|arquitect[oa]|contador(?:a)?|contable|electricista|fontaner[oa]"
        "|policia|bomber[oa]|dentista|farmaceutic[oa]|psicolog[oa]|veterinari[oa]"
        "|cientific[oa]|investigador(?:a)?|escritor(?:a)?|artista|music[oa]|vendedor(?:a)?"
        "|conductor(?:a)?|taxista|secretari[oa]|traductor(?:a)?|fotograf[oa]|carpinter[oa]"
        "|mecanic[oa]|peluquer[oa]|jardiner[oa]|agricultor(?:a)?|economista|administrativ[oa]"
        "|gerente|director(?:a)?|consultor(?:a)?|analista|tecnic[oa]|cuidador(?:a)?|actor|actriz"
        "|cantante|pilot[oa]|azafat[oa]|funcionari[oa]|jubilad[oa]|fisioterapeuta|informatic[oa]"
        "|matematic[oa]|biolog[oa]|quimic[oa]|fisic[oa]"
        "|odontolog[oa]|panader[oa]|carnicer[oa]|albanil|obrer[oa]|repartidor(?:a)?"
        "|recepcionista|dependient[ea]|cajer[oa]|empresari[oa]|emprendedor(?:a)?|autonom[oa]"
    ),
    "pt": _alt(
        "enfermeir[oa]|medic[oa]|doutor(?:a)?|professor(?:a)?|engenheir[oa]|advogad[oa]"
        "|programador(?:a)?|desenvolvedor(?:a)?|designer|estudante|garcom|garconete|cozinheir[oa]"
        "|chef|jornalista|arquitet[oa]|arquitect[oa]|contador(?:a)?|contabilista|eletricista"
        "|canalizador(?:a)?|encanador(?:a)?|policia|bombeir[oa]|dentista|farmaceutic[oa]"
        "|psicolog[oa]|veterinari[oa]|cientista|investigador(?:a)?|pesquisador(?:a)?"
        "|escritor(?:a)?|artista|musico|musica|vendedor(?:a)?|motorista|taxista|secretari[oa]"
        "|tradutor(?:a)?|fotograf[oa]|carpinteir[oa]|mecanic[oa]|cabeleireir[oa]|jardineir[oa]"
        "|agricultor(?:a)?|economista|gerente|diretor(?:a)?|director(?:a)?|consultor(?:a)?"
        "|analista|tecnic[oa]|cuidador(?:a)?|ator|atriz|cantor(?:a)?|pilot[oa]|comissari[oa]"
        "|funcionari[oa]|aposentad[oa]|reformad[oa]|fisioterapeuta|biolog[oa]|quimic[oa]"
        "|fisic[oa]|padeir[oa]|recepcionista|caixa|empresari[oa]|empreendedor(?:a)?"
    ),
    "fr": _alt(
        "infirmier|infirmiere|medecin|docteur|professeur|professeure|prof|enseignant(?:e)?"
        "|instituteur|institutrice|ingenieur(?:e)?|avocat(?:e)?|programmeur|programmeuse"
        "|developpeur|developpeuse|designer|graphiste|etudiant(?:e)?|serveur|serveuse"
        "|cuisinier|cuisiniere|chef|journaliste|architecte|comptable|electricien(?:ne)?"
        "|plombier|policier|policiere|pompier|dentiste|pharmacien(?:ne)?|psychologue"
        "|veterinaire|chercheur|chercheuse|scientifique|ecrivain(?:e)?|auteur(?:e)?|artiste"
        "|musicien(?:ne)?|vendeur|vendeuse|chauffeur|secretaire|traducteur|traductrice"
        "|photographe|menuisier|mecanicien(?:ne)?|coiffeur|coiffeuse|jardinier|jardiniere"
        "|agriculteur|agricultrice|economiste|gerant(?:e)?|directeur|directrice|consultant(?:e)?"
        "|analyste|technicien(?:ne)?|aide-soignant(?:e)?|acteur|actrice|chanteur|chanteuse"
        "|pilote|hotesse|steward|fonctionnaire|retraite(?:e)?|kinesitherapeute|kine"
        "|biologiste|chimiste|physicien(?:ne)?|boulanger|boulangere|caissier|caissiere"
        "|entrepreneur|entrepreneuse|avocat|sage-femme|data scientist"
    ),
    "de": _alt(
        "krankenpfleger(?:in)?|krankenschwester|pfleger(?:in)?|arzt|arztin|lehrer(?:in)?"
        "|ingenieur(?:in)?|anwalt|anwaltin|rechtsanwalt|rechtsanwaltin|programmierer(?:in)?"
        "|entwickler(?:in)?|softwareentwickler(?:in)?|designer(?:in)?|student(?:in)?"
        "|kellner(?:in)?|koch|kochin|journalist(?:in)?|architekt(?:in)?|buchhalter(?:in)?"
        "|elektriker(?:in)?|klempner(?:in)?|polizist(?:in)?|feuerwehrmann|feuerwehrfrau"
        "|zahnarzt|zahnarztin|apotheker(?:in)?|psycholog(?:e|in)|tierarzt|tierarztin"
        "|wissenschaftler(?:in)?|forscher(?:in)?|schriftsteller(?:in)?|autor(?:in)?"
        "|kunstler(?:in)?|musiker(?:in)?|verkaufer(?:in)?|fahrer(?:in)?|sekretar(?:in)?"
        "|ubersetzer(?:in)?|fotograf(?:in)?|tischler(?:in)?|schreiner(?:in)?|mechaniker(?:in)?"
        "|friseur(?:in)?|gartner(?:in)?|landwirt(?:in)?|okonom(?:in)?|manager(?:in)?"
        "|berater(?:in)?|analyst(?:in)?|techniker(?:in)?|schauspieler(?:in)?|sanger(?:in)?"
        "|pilot(?:in)?|beamter|beamtin|rentner(?:in)?|physiotherapeut(?:in)?|biolog(?:e|in)"
        "|chemiker(?:in)?|physiker(?:in)?|backer(?:in)?|kassierer(?:in)?|unternehmer(?:in)?"
        "|erzieher(?:in)?|altenpfleger(?:in)?|informatiker(?:in)?|hebamme|azubi"
    ),
    "it": _alt(
        "infermier[ea]|medico|dottore|dottoressa|professore|professoressa|insegnante|maestr[oa]"
        "|ingegnere|avvocato|avvocata|avvocatessa|programmatore|programmatrice|sviluppatore"
        "|sviluppatrice|designer|studente|studentessa|camerier[ea]|cuoco|cuoca|chef|giornalista"
        "|architetto|commercialista|contabile|elettricista|idraulico|poliziotto|poliziotta"
        "|vigile del fuoco|pompiere|dentista|farmacista|psicologo|psicologa|veterinari[oa]"
        "|ricercatore|ricercatrice|scienziat[oa]|scrittore|scrittrice|artista|musicista"
        "|commess[oa]|venditore|venditrice|autista|tassista|segretari[oa]|traduttore"
        "|traduttrice|fotograf[oa]|falegname|meccanico|parrucchier[ea]|giardinier[ea]"
        "|agricoltore|economista|direttore|direttrice|manager|consulente|analista|tecnico"
        "|tecnica|attore|attrice|cantante|pilota|assistente di volo|impiegat[oa]"
        "|pensionat[oa]|fisioterapista|biolog[oa]|chimic[oa]|fisic[oa]|fornai[oa]|cassier[ea]"
        "|imprenditore|imprenditrice|operai[oa]|badante|educatore|educatrice"
    ),
}

# Adverbs a verb may carry ("ahora vivo en", "ich wohne seit 2019 in"). Possessive (``*+``): a
# repetition never gives back what it matched, so no input makes the patterns backtrack.
_ES_ADV = r"(?:(?:ahora|ahorita|actualmente|ya|tambien|hoy en dia|recientemente|aun|todavia)\s+)*+"
_PT_ADV = r"(?:(?:agora|atualmente|actualmente|ja|tambem|hoje em dia|recentemente|ainda)\s+)*+"
_FR_ADV = r"(?:(?:maintenant|actuellement|aussi|desormais|toujours|depuis peu)\s+)*+"
_DE_ADV = (
    r"(?:(?:jetzt|derzeit|zurzeit|inzwischen|mittlerweile|auch|seit kurzem|seit langem|schon|noch"
    r"|gerade|seit \d{4}|seit (?:\w+ )?(?:jahren|jahr|monaten|monat|wochen|woche|tagen)"
    r"|vor (?:\w+ )?(?:jahren|monaten|wochen|tagen)|letztes jahr|letzten monat)\s+)*+"
)
_IT_ADV = r"(?:(?:ora|adesso|attualmente|anche|ormai|ancora|da poco|gia)\s+)*+"

GRAMMARS: dict[str, Grammar] = {
    "es": Grammar(
        greeting=r"(?:hola|buenas|buenos dias|buenas tardes|buenas noches|hey|que tal|oye|ey)\b",
        lead=(
            r"(?:(?:hola|buenas|buenos dias|buenas tardes|buenas noches|hey|bueno|pues|oye|mira"
            r"|y|pero|ademas|por cierto|ah|ahora|ahorita|actualmente|hoy en dia"
            r"|desde hace (?:\w+ )?(?:anos|meses|semanas|dias|tiempo|poco)"
            r"|hace (?:\w+ )?(?:anos|meses|semanas|dias|tiempo|poco) que|que tal|(?:le|te"
            r"|les) (?:cuento|comento|digo|informo) que|yo)"
            r"[\s,:;!.-]+)*"
        ),
        hedge=(
            r"(?:^|[,;]\s*|\by\s+)si\b(?!\s*,)|\b(?:quizas?|tal vez|ojala|me gustaria|quisiera"
            r"|podria|deberia|creo que|a lo mejor|cuando)\b"
        ),
        boundary=r"\s*[,;:]\s*|\s+-\s+|\s+(?:y|e|pero|aunque|mientras que)\s+",
        connective=r"(?:asi que|porque|ya que|pues|como|para que|aunque|por eso)",
        statements=(
            (LOCATION, rf"{_ES_ADV}(?:vivo|resido|estoy viviendo)\s+{_ES_ADV}en\s+(?P<v>.+)"),
            (
                LOCATION,
                rf"{_ES_ADV}me\s+(?:(?:he|acabo de)\s+)?(?:mude|mudado|mudar|traslade|trasladado"
                rf"|trasladar)\s+{_ES_ADV}(?:a|para)\s+(?P<v>.+)",
            ),
            (NAME, r"(?:me llamo|mi nombre es)\s+(?P<v>.+)"),
            (OCCUPATION, rf"{_ES_ADV}(?:trabajo|curro)\s+{_ES_ADV}(?:como|de)\s+(?P<v>.+)"),
            (
                OCCUPATION,
                rf"{_ES_ADV}(?:trabajo|curro)\s+(?:en"
                rf"|para)\s+[^,;:]+?\s+como\s+(?P<v>(?:{_JOBS['es']})\b.*)",
            ),
            (OCCUPATION, rf"{_ES_ADV}soy\s+(?:(?:un|una)\s+)?(?P<v>(?:{_JOBS['es']})\b.*)"),
            (EMPLOYER, rf"{_ES_ADV}(?:trabajo|curro)\s+{_ES_ADV}(?:en|para)\s+(?P<v>.+)"),
            (ALLERGY, rf"{_ES_ADV}soy\s+alergic[oa]\s+(?P<v>.+)"),
            (ALLERGY, rf"{_ES_ADV}tengo\s+(?:una\s+)?alergia\s+(?P<v>(?:a|al)\b.+)"),
            (LANGUAGES, rf"{_ES_ADV}hablo\s+(?P<v>.+)"),
        ),
        introduction=r"soy\s+(?P<v>.+)",
        articles=r"(?:a|al|a la|a los|a las|en|el|la|los|las|un|una|del|de la|con)\s+",
        trailing=(
            r"\s+(?:desde\s+.+|hace\s+.+|ahora|actualmente|tambien|ya|hoy"
            r"|(?:el|la|este|esta|el pasado|la pasada)\s+(?:ano|mes|semana|verano|invierno|otono"
            r"|primavera|fin de semana)(?:\s+pasad[oa])?"
            r"|con fluidez|perfectamente|bastante bien|muy bien|un poco|de profesion|de oficio"
            r"|tambien yo|yo tambien)$"
        ),
        value_stop=(
            r"\s*[,;]\s*|\s+(?:y|e|pero|aunque|porque|donde|que|como|con|desde|hace|cerca de"
            r"|en|para)\s+"
        ),
        workplace=r"\s(?:en|para)\s+(?P<w>.+)",
        questions=(
            (
                LOCATION,
                r"\b(?:donde|en que (?:ciudad|pais|sitio|lugar))\s+(?:yo\s+)?(?:vivo|resido)\b",
            ),
            (NAME, r"\b(?:como me llamo|cual es mi nombre)\b"),
            (
                OCCUPATION,
                r"\b(?:a que me dedico|en que trabajo|de que trabajo|que trabajo (?:tengo|hago)"
                r"|cual es mi (?:trabajo|profesion|oficio))\b",
            ),
            (
                EMPLOYER,
                r"\b(?:donde|para quien|para que empresa|en que empresa)\s+(?:(?:yo"
                r"|te dije que)\s+)?"
                r"(?:trabajo|trabajaba|curro)\b",
            ),
            (ALLERGY, r"\b(?:a que|de que)\s+(?:soy|tengo)\s+alergi|\bmis alergias\b"),
            (LANGUAGES, r"\b(?:que|cuales|cuantos)\s+(?:idiomas|lenguas)\s+(?:yo\s+)?hablo\b"),
        ),
        profile=r"\b(?:que sabes (?:de|sobre) mi|quien soy(?: yo)?|que te he contado de mi)\b",
    ),
    "pt": Grammar(
        greeting=r"(?:ola|oi|bom dia|boa tarde|boa noite|e ai)\b",
        lead=(
            r"(?:(?:ola|oi|bom dia|boa tarde|boa noite|bem|entao|olha|e|mas|alias|ah|agora"
            r"|atualmente|hoje em dia|(?:ha|faz) (?:\w+ )?(?:anos|meses|semanas|dias|tempo"
            r"|pouco) que"
            r"|(?:te|lhe) (?:conto|digo|informo) que"
            r"|eu)[\s,:;!.-]+)*"
        ),
        hedge=(
            r"(?:^|[,;]\s*|\be\s+)se\b(?!\s*,)|\b(?:talvez|quem sabe|gostaria|queria|poderia"
            r"|deveria|acho que|quando)\b"
        ),
        boundary=r"\s*[,;:]\s*|\s+-\s+|\s+(?:e|mas|porem|enquanto)\s+",
        connective=r"(?:entao|porque|pois|ja que|como|caso|por isso|embora|pra|para que)",
        statements=(
            (
                LOCATION,
                rf"{_PT_ADV}(?:eu\s+)?(?:moro|vivo|resido|estou morando)\s+{_PT_ADV}"
                rf"(?:em|no|na|nos|nas)\s+(?P<v>.+)",
            ),
            (
                LOCATION,
                rf"{_PT_ADV}(?:eu\s+)?(?:me\s+mudei|mudei-me|mudei|acabei de me mudar|me mudei"
                rf"|fui morar)\s+{_PT_ADV}(?:para|pra|pro|pra a|para o|para a|a)\s+(?P<v>.+)",
            ),
            (NAME, r"(?:eu\s+)?(?:me chamo|chamo-me|o meu nome e|meu nome e)\s+(?P<v>.+)"),
            (
                OCCUPATION,
                rf"{_PT_ADV}(?:eu\s+)?(?:trabalho|trampo)\s+{_PT_ADV}(?:como|de)\s+(?P<v>.+)",
            ),
            (
                OCCUPATION,
                rf"{_PT_ADV}(?:eu\s+)?(?:trabalho|trampo)\s+(?:em|no|na"
                rf"|para)\s+[^,;:]+?\s+como\s+(?P<v>(?:{_JOBS['pt']})\b.*)",
            ),
            (
                OCCUPATION,
                rf"{_PT_ADV}(?:eu\s+)?sou\s+(?:(?:um|uma)\s+)?(?P<v>(?:{_JOBS['pt']})\b.*)",
            ),
            (
                EMPLOYER,
                rf"{_PT_ADV}(?:eu\s+)?(?:trabalho|trampo)\s+{_PT_ADV}(?:em|no|na|para"
                rf"|pra)\s+(?P<v>.+)",
            ),
            (ALLERGY, rf"{_PT_ADV}(?:eu\s+)?sou\s+alergic[oa]\s+(?P<v>.+)"),
            (
                ALLERGY,
                rf"{_PT_ADV}(?:eu\s+)?tenho\s+(?:uma\s+)?alergia\s+(?P<v>(?:a|ao|aos|as|de)\b.+)",
            ),
            (LANGUAGES, rf"{_PT_ADV}(?:eu\s+)?falo\s+(?P<v>.+)"),
        ),
        introduction=r"(?:eu\s+)?sou\s+(?:o\s+|a\s+)?(?P<v>.+)",
        articles=r"(?:a|ao|aos|as|em|no|na|nos|nas|o|os|um|uma|do|da|de|para|pra)\s+",
        trailing=(
            r"\s+(?:desde\s+.+|ha\s+.+|agora|atualmente|tambem|ja|hoje"
            r"|(?:no|na|este|esta|neste|nesta)\s+(?:ano|mes|semana|verao|inverno|outono"
            r"|primavera|fim de semana)(?:\s+passad[oa])?"
            r"|fluentemente|muito bem|bem|um pouco|de profissao|eu tambem|tambem eu)$"
        ),
        value_stop=(
            r"\s*[,;]\s*|\s+(?:e|mas|porque|onde|que|como|com|desde|ha|faz|perto de|em|no|na|num"
            r"|numa|para)\s+"
        ),
        workplace=r"\s(?:em|no|na|num|numa|para)\s+(?P<w>.+)",
        questions=(
            (
                LOCATION,
                r"\b(?:onde|em que cidade|em que pais)\s+(?:e que\s+)?(?:eu\s+)?(?:moro|vivo"
                r"|resido)\b",
            ),
            (
                NAME,
                r"\b(?:como (?:e que )?(?:eu )?me chamo|qual (?:e )?o (?:meu )?nome)\b",
            ),
            (
                OCCUPATION,
                r"\b(?:qual (?:e )?a minha profissao|o que (?:e que )?eu faco"
                r"(?: da vida| profissionalmente)?|em que (?:eu )?trabalho"
                r"|com o que (?:eu )?trabalho"
                r"|qual (?:e )?o meu trabalho)\b",
            ),
            (
                EMPLOYER,
                r"\b(?:onde|para quem|em que empresa"
                r"|para que empresa)\s+(?:e que\s+)?(?:eu\s+)?trabalho\b",
            ),
            (
                ALLERGY,
                r"\b(?:a que|ao que|do que)\s+(?:eu\s+)?(?:sou|tenho)\s+alergi"
                r"|\b(?:as )?minhas alergias\b",
            ),
            (LANGUAGES, r"\b(?:que|quais|quantas)\s+(?:linguas|idiomas)\s+(?:eu\s+)?falo\b"),
        ),
        profile=r"\b(?:o que (?:voce|tu) sabe[s]? (?:sobre|de) mim|quem sou eu|quem eu sou)\b",
    ),
    "fr": Grammar(
        greeting=r"(?:bonjour|salut|coucou|bonsoir|hello)\b",
        lead=(
            r"(?:(?:bonjour|salut|coucou|bonsoir|hello|alors|bon|eh bien|bref|et|mais|au fait"
            r"|d'ailleurs|ah|maintenant|actuellement|aujourd'hui|ca fait (?:\w+ )?(?:ans|mois"
            r"|semaines|jours|longtemps|peu) que"
            r"|depuis (?:\w+ )?(?:ans|mois|semaines|jours|longtemps|peu)|je (?:vous|te) (?:informe"
            r"|dis|signale) que|moi)[\s,:;!.-]+)*"
        ),
        hedge=(
            r"(?:^|[,;]\s*|\bet\s+)si\b(?!\s*,)|\b(?:peut-etre|j'aimerais|je voudrais|je pourrais"
            r"|je devrais|je crois|j'espere|quand|lorsque)\b"
        ),
        boundary=r"\s*[,;:]\s*|\s+-\s+|\s+(?:et|mais|alors que|tandis que)\s+",
        connective=r"(?:donc|alors|parce que|puisque|car|comme|du coup|pour que)",
        statements=(
            (
                LOCATION,
                rf"(?:j'habite\s+{_FR_ADV}(?:(?:a|au|aux|en|dans|sur)\s+)?|(?:je vis|je reside"
                rf"|je demeure)\s+{_FR_ADV}(?:a|au|aux|en|dans|sur)\s+)(?P<v>.+)",
            ),
            (
                LOCATION,
                rf"(?:j'ai\s+(?:{_FR_ADV})?demenage|je viens de demenager"
                rf"|je me suis\s+(?:{_FR_ADV})?"
                rf"installee?|je suis\s+(?:{_FR_ADV})?(?:parti|partie)\s+vivre)\s+{_FR_ADV}"
                rf"(?:a|au|aux|en|dans|sur)\s+(?P<v>.+)",
            ),
            (NAME, r"(?:je m'appelle|mon nom est|mon prenom est|moi c'est)\s+(?P<v>.+)"),
            (OCCUPATION, rf"je (?:travaille|bosse|taffe)\s+{_FR_ADV}comme\s+(?P<v>.+)"),
            (
                OCCUPATION,
                r"je (?:travaille|bosse|taffe)\s+(?:chez|pour|a|au|dans)\s+[^,;:]+?\s+comme\s+"
                rf"(?P<v>(?:{_JOBS['fr']})\b.*)",
            ),
            (OCCUPATION, rf"je suis\s+{_FR_ADV}(?:(?:un|une)\s+)?(?P<v>(?:{_JOBS['fr']})\b.*)"),
            (
                EMPLOYER,
                rf"je (?:travaille|bosse|taffe)\s+{_FR_ADV}(?:chez|pour|a|au|dans)\s+(?P<v>.+)",
            ),
            (ALLERGY, rf"je suis\s+{_FR_ADV}allergique\s+(?P<v>.+)"),
            (ALLERGY, r"j'ai\s+(?:une\s+)?allergie\s+(?P<v>(?:a|au|aux)\b.+)"),
            (LANGUAGES, r"je parle\s+(?P<v>.+)"),
        ),
        introduction=r"je suis\s+(?P<v>.+)",
        articles=r"(?:(?:a la|a|au|aux|en|le|la|les|un|une|du|de la|des|chez|pour)\s+|a l'|l'|d')",
        trailing=(
            r"\s+(?:depuis\s+.+|il y a\s+.+|maintenant|actuellement|aussi|desormais|aujourd'hui"
            r"|cette annee|l'an dernier|l'annee derniere|(?:le|la|ce|cette)\s+(?:mois|semaine"
            r"|annee|ete|hiver|automne|printemps|week-end)(?:\s+derni(?:er|ere)|\s+passee?)?"
            r"|couramment|un peu|bien|de metier"
            r"|de profession|moi aussi)$"
        ),
        value_stop=(
            r"\s*[,;]\s*|\s+(?:et|mais|parce que|ou|qui|que|comme|avec|depuis|pres de|a|au|chez"
            r"|pour|dans)\s+"
        ),
        workplace=r"\s(?:chez|pour|a|au|dans)\s+(?P<w>.+)",
        questions=(
            (
                LOCATION,
                r"\b(?:ou|dans quelle ville)\s+(?:est-ce que\s+)?(?:j'habite|je vis|habite-je)\b",
            ),
            (
                NAME,
                r"\b(?:comment (?:est-ce que )?je m'appelle|quel est mon (?:nom|prenom))\b",
            ),
            (
                OCCUPATION,
                r"\b(?:quel est mon (?:metier|travail|boulot)"
                r"|qu'est-ce que je fais (?:dans la vie|comme (?:metier|travail))"
                r"|je fais quoi (?:dans la vie|comme (?:metier|travail)))\b",
            ),
            (
                EMPLOYER,
                r"\b(?:ou|pour qui|chez qui|(?:pour|dans|chez) quelle (?:entreprise|boite"
                r"|societe))\s+"
                r"(?:est-ce que\s+)?je (?:travaille|bosse|taffe)\b",
            ),
            (ALLERGY, r"\ba quoi\b.*\ballergique\b|\ballergique a quoi\b|\bmes allergies\b"),
            (LANGUAGES, r"\b(?:quelles|combien de) langues\s+(?:est-ce que\s+)?je parle\b"),
        ),
        profile=r"\b(?:qu'est-ce que tu sais (?:de|sur) moi|que sais-tu de moi|qui suis-je)\b",
    ),
    "de": Grammar(
        greeting=r"(?:hallo|hi|hey|guten (?:morgen|tag|abend)|servus|moin|gruss gott)\b",
        lead=(
            r"(?:(?:hallo|hi|hey|guten morgen|guten tag|guten abend|servus|moin|also|na ja|nun"
            r"|und|aber|ubrigens|ach|ah)[\s,:;!.-]+)*"
        ),
        hedge=(
            r"\b(?:wenn|falls|vielleicht|wurde|wurden|mochte|konnte|sollte|ware|waren|hoffe"
            r"|glaube)\b"
        ),
        boundary=r"\s*[,;:]\s*|\s+-\s+|\s+(?:und|aber|sondern|wahrend)\s+",
        connective=r"(?:also|weil|denn|da|damit|deshalb|darum|wenn|falls|obwohl)",
        statements=(
            (
                LOCATION,
                rf"(?:{_DE_ADV})?(?:(?:ich\s+)?(?:{_DE_ADV})?(?:wohne|lebe)|(?:wohne"
                rf"|lebe)\s+ich)\s+{_DE_ADV}"
                rf"(?:in|im|bei)\s+(?P<v>.+)",
            ),
            (
                LOCATION,
                rf"(?:{_DE_ADV})?(?:ich\s+bin|bin\s+ich)\s+{_DE_ADV}nach\s+(?P<v>[^,;:]+?)\s+"
                rf"(?:gezogen|umgezogen)\b",
            ),
            (
                NAME,
                r"(?:ich hei(?:ss|ß)e|hei(?:ss|ß)e ich|mein name ist|mein vorname ist)\s+(?P<v>.+)",
            ),
            (
                OCCUPATION,
                rf"(?:{_DE_ADV})?(?:(?:ich\s+)?arbeite|arbeite\s+ich)\s+{_DE_ADV}als\s+(?P<v>.+)",
            ),
            (
                OCCUPATION,
                rf"(?:{_DE_ADV})?(?:(?:ich\s+)?arbeite|arbeite\s+ich)\s+(?:bei|fur|im"
                rf"|in)\s+[^,;:]+?"
                rf"\s+als\s+(?P<v>(?:\w+)?(?:{_JOBS['de']})\b.*)",
            ),
            (
                OCCUPATION,
                rf"(?:{_DE_ADV})?(?:(?:ich\s+)?bin|bin\s+ich)\s+{_DE_ADV}(?:(?:ein|eine)\s+)?"
                rf"(?P<v>(?:\w+)?(?:{_JOBS['de']})\b.*)",
            ),
            (
                EMPLOYER,
                rf"(?:{_DE_ADV})?(?:(?:ich\s+)?arbeite|arbeite\s+ich)\s+{_DE_ADV}(?:bei"
                rf"|fur)\s+(?P<v>.+)",
            ),
            (
                ALLERGY,
                rf"(?:{_DE_ADV})?(?:(?:ich\s+)?bin|bin\s+ich)\s+{_DE_ADV}allergisch\s+(?:gegen"
                rf"|auf)\s+"
                rf"(?P<v>.+)",
            ),
            (
                ALLERGY,
                rf"(?:{_DE_ADV})?(?:(?:ich\s+)?bin|bin\s+ich)\s+{_DE_ADV}(?:gegen"
                rf"|auf)\s+(?P<v>[^,;:]+?)\s+"
                rf"allergisch\b",
            ),
            (
                ALLERGY,
                rf"(?:{_DE_ADV})?(?:(?:ich\s+)?reagiere|reagiere\s+ich)\s+{_DE_ADV}allergisch\s+"
                rf"(?:auf|gegen)\s+(?P<v>.+)",
            ),
            (
                ALLERGY,
                r"(?:ich\s+habe|habe\s+ich)\s+(?:eine\s+)?allergie\s+(?:gegen|auf)\s+(?P<v>.+)",
            ),
            (LANGUAGES, rf"(?:{_DE_ADV})?(?:(?:ich\s+)?spreche|spreche\s+ich)\s+(?P<v>.+)"),
        ),
        introduction=r"ich bin\s+(?:der\s+|die\s+)?(?P<v>.+)",
        articles=r"(?:der|die|das|den|dem|ein|eine|einer|einem|in|im|bei|fur|gegen|auf)\s+",
        trailing=(
            r"\s+(?:seit\s+.+|vor\s+.+|(?:letzten|letzte|letztes|diesen|diese|dieses|im"
            r"|im letzten)\s+(?:monat|woche|jahr|sommer|winter|herbst|fruhling|wochenende)"
            r"|jetzt|derzeit|zurzeit|inzwischen|mittlerweile|auch|schon|flie(?:ss"
            r"|ß)end"
            r"|ein bisschen|gut|sehr gut|von beruf|ich auch)$"
        ),
        value_stop=(
            r"\s*[,;]\s*|\s+(?:und|aber|weil|wo|die|der|das|als|mit|seit|bei|fur|in|im|an|am)\s+"
        ),
        workplace=r"\s(?:bei|fur|im)\s+(?P<w>.+)",
        questions=(
            (
                LOCATION,
                r"\b(?:wo|in welcher stadt|in welchem land)\s+(?:(?:wohne|lebe)\s+ich"
                r"|ich\s+(?:wohne|lebe))\b",
            ),
            (
                NAME,
                r"\b(?:wie hei(?:ss|ß)e ich|wie ist mein name|wie ich hei(?:ss|ß)e)\b",
            ),
            (
                OCCUPATION,
                r"\b(?:was (?:bin ich|ich bin) von beruf|was (?:arbeite ich|ich arbeite)"
                r"|was ist mein (?:beruf|job)|als was arbeite ich"
                r"|was (?:mache ich|ich) beruflich(?: mache)?|welchen beruf (?:ich|habe ich))\b",
            ),
            (
                EMPLOYER,
                r"\b(?:wo arbeite ich|fur wen arbeite ich|wo ich arbeite|bei (?:wem|welcher firma"
                r"|welchem unternehmen) (?:arbeite ich|bin ich (?:angestellt|beschaftigt)))\b",
            ),
            (
                ALLERGY,
                r"\b(?:wogegen|worauf|gegen was|auf was)\s+(?:bin ich|ich)\s+allergisch\b"
                r"|\bmeine allergien\b",
            ),
            (LANGUAGES, r"\b(?:welche|wie viele) sprachen\s+(?:spreche ich|ich spreche)\b"),
        ),
        profile=r"\b(?:was wei(?:ss|ß)t du uber mich|wer bin ich)\b",
    ),
    "it": Grammar(
        greeting=r"(?:ciao|salve|buongiorno|buonasera|ehi)\b",
        lead=(
            r"(?:(?:ciao|salve|buongiorno|buonasera|ehi|allora|beh|dunque|e|ma|comunque|ah"
            r"|ora|adesso|attualmente|da (?:\w+ )?(?:anni|mesi|settimane|giorni|tempo|poco)|(?:le"
            r"|ti|vi) (?:segnalo|dico|comunico) che|io)"
            r"[\s,:;!.-]+)*"
        ),
        hedge=(
            r"(?:^|[,;]\s*|\be\s+)se\b(?!\s*,)|\b(?:forse|vorrei|mi piacerebbe|potrei|dovrei"
            r"|credo|spero|quando)\b"
        ),
        boundary=r"\s*[,;:]\s*|\s+-\s+|\s+(?:e|ed|ma|pero|mentre)\s+",
        connective=(
            r"(?:quindi|perche|percio|dato che|siccome|poiche|visto che|cosi|quando|anche se)"
        ),
        statements=(
            (
                LOCATION,
                rf"{_IT_ADV}(?:io\s+)?(?:vivo|abito|risiedo|sto vivendo)\s+{_IT_ADV}"
                rf"(?:a|ad|in|nel|nella|nei|negli|al)\s+(?P<v>.+)",
            ),
            (
                LOCATION,
                rf"{_IT_ADV}(?:io\s+)?mi\s+sono\s+{_IT_ADV}trasferit[oa]\s+{_IT_ADV}"
                rf"(?:a|ad|in|nel|nella|al)\s+(?P<v>.+)",
            ),
            (NAME, r"(?:io\s+)?(?:mi chiamo|il mio nome e|il mio nome è)\s+(?P<v>.+)"),
            (OCCUPATION, rf"{_IT_ADV}(?:io\s+)?lavoro\s+{_IT_ADV}come\s+(?P<v>.+)"),
            (
                OCCUPATION,
                rf"{_IT_ADV}(?:io\s+)?lavoro\s+(?:a|in|da|per|presso)\s+[^,;:]+?\s+come\s+"
                rf"(?P<v>(?:{_JOBS['it']})\b.*)",
            ),
            (
                OCCUPATION,
                rf"{_IT_ADV}(?:io\s+)?faccio\s+(?:il|la|l')\s*(?P<v>(?:{_JOBS['it']})\b.*)",
            ),
            (
                OCCUPATION,
                rf"{_IT_ADV}(?:io\s+)?sono\s+(?:(?:un|una|uno"
                rf"|un')\s*)?(?P<v>(?:{_JOBS['it']})\b.*)",
            ),
            (
                EMPLOYER,
                rf"{_IT_ADV}(?:io\s+)?lavoro\s+{_IT_ADV}(?:a|in|da|per|presso|alla|al|nella"
                rf"|nel)\s+(?P<v>.+)",
            ),
            (ALLERGY, rf"{_IT_ADV}(?:io\s+)?sono\s+allergic[oa]\s+(?P<v>.+)"),
            (
                ALLERGY,
                r"(?:io\s+)?ho\s+(?:un'|una\s+)?allergia\s+(?P<v>(?:a|al|alla|ai|alle|agli)\b.+)",
            ),
            (LANGUAGES, rf"{_IT_ADV}(?:io\s+)?parlo\s+(?P<v>.+)"),
        ),
        introduction=r"(?:io\s+)?sono\s+(?P<v>.+)",
        articles=(
            r"(?:(?:al|alla|alle|ai|agli|allo|a|ad|in|nel|nella|il|lo|la|i|gli|le|un|una|uno|del"
            r"|della|presso|per|da)\s+|all'|l'|un'|dell'|nell')"
        ),
        trailing=(
            r"\s+(?:da\s+\d.+|dal\s+.+|da (?:due|tre|qualche|molti|pochi)\s+.+|ora|adesso"
            r"|(?:il|la|l'|lo|questo|questa|quest')\s*(?:mese|settimana|anno|estate|inverno"
            r"|autunno|primavera|fine settimana)(?:\s+scors[oa])?"
            r"|attualmente|anche|ormai|quest'anno|l'anno scorso|fluentemente|un po'|bene"
            r"|di mestiere|di professione|anche io|anch'io)$"
        ),
        value_stop=(
            r"\s*[,;]\s*|\s+(?:e|ed|ma|perche|dove|che|come|con|da|vicino a|a|in|per|presso)\s+"
            r"|\s+(?:all|nell|dall)'"
        ),
        workplace=r"\s(?:(?:a|in|da|per|presso|alla|al|nella|nel)\s+|(?:all|nell)')(?P<w>.+)",
        questions=(
            (
                LOCATION,
                r"\b(?:dove|in che citta|in quale citta)\s+(?:io\s+)?(?:vivo|abito|risiedo)\b",
            ),
            (NAME, r"\b(?:come mi chiamo|qual e il mio nome)\b"),
            (
                OCCUPATION,
                r"\b(?:che lavoro faccio|qual e il mio (?:lavoro|mestiere)"
                r"|cosa faccio (?:nella vita|di lavoro)|che mestiere faccio)\b",
            ),
            (
                EMPLOYER,
                r"\b(?:dove|per chi|in quale azienda|per quale azienda"
                r"|presso chi)\s+(?:io\s+)?lavoro\b",
            ),
            (
                ALLERGY,
                r"\b(?:a cosa|a che cosa|di cosa)\s+(?:io\s+)?sono\s+allergic|\ble mie allergie\b",
            ),
            (LANGUAGES, r"\b(?:che|quali|quante)\s+lingue\s+(?:io\s+)?parlo\b"),
        ),
        profile=r"\b(?:cosa sai di me|che cosa sai di me|chi sono(?: io)?)\b",
    ),
}


@cache
def _compiled(code: str, part: str) -> re.Pattern[str]:
    grammar = GRAMMARS[code]
    return re.compile(getattr(grammar, part))


@cache
def _statements(code: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    grammar = GRAMMARS[code]
    lead = rf"(?:{grammar.connective}\s+)?{grammar.lead}"
    return tuple((slot, re.compile(lead + pattern)) for slot, pattern in grammar.statements)


@cache
def _questions(code: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((slot, re.compile(pattern)) for slot, pattern in GRAMMARS[code].questions)


_AND_END = re.compile(r"\s(?:y|e|et|und|ed)\s*$")
"""The word that opens a series' last item, in the five languages."""
_POSSESSIVE = re.compile(
    r"(?:mi|mis|tu|tus|su|sus|meu|minha|meus|minhas|seu|sua|mon|ma|mes|ton|ta|son|sa|ses|mein\w*"
    r"|dein\w*|sein\w*|ihr\w*|unser\w*|mio|mia|miei|mie|tuo|tua|suo|sua)\b"
)
"""A value that opens with a possessive is someone's place or people, not a name ("mes parents")."""
_NOTHING = re.compile(
    r"\b(?:nada|ningun\w*|nenhum\w*|rien|aucune?|nichts|nicht|kein\w*|niente|nulla|nessun\w*)\b"
)
"""A value that denies ("gegen nichts", "a nada"): no fact."""


@dataclass(frozen=True)
class Found:
    """A slot value read from a clause (``clause`` as written)."""

    slot_key: str
    value: str
    clause: str
    language: str


_SENTENCE_RE = re.compile(r"[^.!?;\n]+[.!?]*")
_QUESTION_OPEN = "¿"


@cache
def _splitter(code: str) -> re.Pattern[str]:
    grammar = GRAMMARS[code]
    return re.compile(rf"{grammar.boundary}|\s+(?={grammar.connective}\s)")


def _clauses(folded: str, code: str) -> tuple[list[int], list[int]]:
    """Return where each clause of a folded sentence starts and where its own words end.

    A clause starts at 0, after every boundary, and at every connective (which stays in its
    clause); its words end before the boundary that closes it.
    """
    starts, ends = [0], []
    for match in _splitter(code).finditer(folded):
        if match.end() > starts[-1]:
            ends.append(match.start())
            starts.append(match.end())
    ends.append(len(folded))
    return starts, ends


_LAST_CONJUNCTION = re.compile(r"\s+(?:y|e|et|und|o|ou|oder|ed|ma|mais|pero|mas|aber)$")
"""A conjunction left at a value's end when the next clause was cut off ("marisco y")."""


def _clean(raw: str, folded: str, code: str, slot: str) -> str:
    """Cut one value out of the words after a slot's verb (original and folded, same length)."""
    grammar = GRAMMARS[code]
    lead = re.match(grammar.articles, folded)
    if lead is not None and lead.end() < len(folded) and raw[:1].islower():
        raw, folded = raw[lead.end() :], folded[lead.end() :]
    if _NOTHING.search(folded) or _POSSESSIVE.match(folded):
        return ""  # "ich bin gegen nichts allergisch", "j'habite chez mes parents"
    stop = _compiled(code, "value_stop").search(" " + folded)
    if stop is not None and stop.start() == 0:
        return ""  # "j'habite avec mes parents", "hablo con mi madre": no place, no language
    if slot not in LIST_SLOTS:
        if stop is not None:
            raw, folded = raw[: stop.start() - 1], folded[: stop.start() - 1]
    previous = None
    while previous != folded:
        previous = folded
        trail = re.search(grammar.trailing, folded)
        if trail is not None:
            raw, folded = raw[: trail.start()], folded[: trail.start()]
        lead = re.match(grammar.articles, folded)
        # a lower-case article only: "El Salvador", "Le Havre" open a name
        if lead is not None and lead.end() < len(folded) and raw[:1].islower():
            raw, folded = raw[lead.end() :], folded[lead.end() :]
        raw, folded = raw.rstrip(" .,!;:"), folded.rstrip(" .,!;:")
        conjunction = _LAST_CONJUNCTION.search(folded)  # "al marisco y [vivo en Cádiz]"
        if conjunction is not None:
            raw, folded = raw[: conjunction.start()], folded[: conjunction.start()]
    if slot == OCCUPATION:  # "Ingenieur aus Berlin": where from
        origin = _ORIGIN.search(raw)
        if origin is not None:
            raw = raw[: origin.start()]
    value = raw.strip(" \t\"'“”‘’«».,!:;-")
    words = value.split()
    most = MAX_VALUE_WORDS + (4 if slot in LIST_SLOTS else 0)
    if not words or len(words) > most or (slot in _NAMED and not value[:1].isupper()):
        return ""
    return value


def _symbols_as_commas(text: str) -> str:
    """Replace emoji and other symbols by commas (one for one): "Giulia 😊" ends at the emoji."""
    return "".join(
        "," if unicodedata.category(char) in {"So", "Sk", "Cs"} or char in "\u200d\ufe0f" else char
        for char in text
    )


def sentence_facts(sentence: str, *, greeted: bool, code: str) -> list[Found]:
    """Return the facts one sentence in language ``code`` asserts about its speaker.

    Each clause is read on its own: a hedge ("me gustaría", "falls", "se") takes back only its
    own clause ("Ich spreche Französisch, falls das hilft" still tells the languages).
    """
    grammar = GRAMMARS[code]
    asked = _QUESTION_OPEN in sentence or sentence.rstrip().endswith("?")
    sentence = _symbols_as_commas(sentence)
    folded = fold(sentence)
    starts, words_end = _clauses(folded, code)
    starts, words_end = starts[:MAX_CLAUSES], words_end[:MAX_CLAUSES]
    ends = [*starts[1:], len(folded)]
    if asked:  # "Trabajo en Siemens, ¿me ayudas con …?": the clauses before the question assert
        first_asked = next(
            (i for i, p in enumerate(starts) if _asks(folded[p : words_end[i]], sentence[p:])),
            len(starts) - 1,
        )
        starts, words_end, ends = starts[:first_asked], words_end[:first_asked], ends[:first_asked]
        limit = words_end[-1] if words_end else 0
        sentence, folded = sentence[:limit], folded[:limit]
    hedge = _compiled(code, "hedge")
    connective = re.compile(grammar.connective + r"\s")
    found: list[Found] = []
    derived: list[Found] = []
    for index, start in enumerate(starts):
        if words_end[index] - start > MAX_CLAUSE_CHARS or hedge.search(folded[start : ends[index]]):
            continue
        cut = start + 2 * MAX_CLAUSE_CHARS
        part_raw, part = sentence[start:cut], folded[start:cut]
        for slot, pattern in _statements(code):
            if any(f.slot_key == slot for f in found):
                continue
            match = pattern.match(part)
            if match is None:
                continue
            value_start, value_end = match.start("v"), match.end("v")
            # a value runs to the next clause; a series runs on through short items that its
            # "and" closes ("español, inglés y francés"), never into a statement of its own, a
            # connective or a longer clause ("noix, fais gaffe quand …" is no series)
            following = [
                p for p in range(index + 1, len(starts)) if starts[p] - start > value_start
            ]
            if following:
                value_end = min(value_end, starts[following[0]] - start)
            runs_on = slot in LIST_SLOTS and match.end("v") == len(part)  # not "gegen X allergisch"
            for position in following if runs_on else []:
                clause = folded[starts[position] : ends[position]]
                item = len(clause.split()) <= MAX_ITEM_WORDS and not connective.match(clause)
                ahead = folded[starts[position] : starts[position] + 2 * MAX_CLAUSE_CHARS]
                if not item or _opens_statement(ahead, code):
                    break
                if _AND_END.search(folded[starts[position - 1] : starts[position]]):
                    value_end = ends[position] - start
            raw = part_raw[value_start:value_end]
            value = _clean(raw, part[value_start:value_end], code, slot)
            if value:  # the clause as written, up to its value ("vivo en Valencia", not "… y")
                said = part_raw.find(value, value_start)
                clause_text = part_raw[: said + len(value) if said >= 0 else value_end].strip(" ,;")
                found.append(Found(slot, value, clause_text, code))
                if slot == OCCUPATION:  # "enfermera en el Hospital La Paz": the employer too,
                    place = _workplace(raw, part[value_start:value_end], code)  # unless said
                    if place:
                        derived.append(Found(EMPLOYER, place, clause_text, code))
        if greeted and index <= 1 and not found:
            own = part_raw[: words_end[index] - start]
            intro = re.match(grammar.lead + grammar.introduction, part[: words_end[index] - start])
            if intro is not None:
                raw = own[intro.start("v") :].strip(" ,;.!")
                name = re.fullmatch(r"[A-ZÀ-Ý][\w'’-]*(?:\s+[A-ZÀ-Ý][\w'’-]*)?", raw)
                if name is not None and not _NOT_A_NAME.match(fold(raw)):
                    found.append(Found(NAME, raw, own.strip(" ,;"), code))
    found += [f for f in derived[:1] if all(g.slot_key != EMPLOYER for g in found)]
    return [f for f in found if f.slot_key != NAME or _a_name(f.value)]


_ASKING = re.compile(
    r"^\W*(?:(?:y|e|et|und|ma|mas|pero|mais|aber)\s+)?(?:donde|como|cual|que|quien|onde|qual|quem"
    r"|ou|comment|quel|quelle|wo|wie|was|welche|wer|dove|quale|che|cosa|chi|puedes|podrias|pode"
    r"|podes|poderia|peux|pourrais|pouvez|kannst|konntest|konnen|puoi|potresti|me ayudas"
    r"|me ajudas|me ajuda|m'aides|hilfst|mi aiuti|sabes|sabe|sais|weisst|sai|tu|te|ti|vous|du"
    r"|sie|usted|voce|tienes|tens|as-tu|hast|hai)\b"
)
"""A clause that asks (a question word, "can you", "do you", or "you" first)."""


def _asks(folded: str, raw: str) -> bool:
    """Say whether a clause of a question sentence is the question itself."""
    return raw.lstrip().startswith(_QUESTION_OPEN) or _ASKING.match(folded) is not None


_NOT_A_NAME = re.compile(
    r"(?:deutsch|osterreich|schweizer|suiz|suisse|svizzer|italian|italien|franzos|frances|francais"
    r"|belgi|belge|spanier|espanol|portugu|brasileir|bresilien|americain|american|amerikaner"
    r"|englisch|englander|ingles|anglais|britisch|brite|mexican|argentin|chilen|colombian"
    r"|peruan|canadien|kanadier|tedesc|austriac|europ|anfanger|vegetari|veganer|student"
    r"|estudiant|etudiant|rentner|jubilad|retraite|pensionat)"
    r"|(?:neu|neue|fan|single|mutter|vater|mama|papa|mae|pai|madre|padre|mere|pere|latino|latina"
    r"|vegan[oa]?|" + "|".join(_JOBS.values()) + r")\b"
)
"""After a greeting, "ich bin Vegetarierin", "je suis Belge", "sono Ingegnere": no name (German
capitalises every noun; users capitalise nationalities)."""


def _a_name(value: str) -> bool:
    """A name is one to three words."""
    words = value.split()
    return 1 <= len(words) <= 3


def _opens_statement(folded: str, code: str) -> bool:
    return any(pattern.match(folded) for _, pattern in _statements(code))


_ORIGIN = re.compile(r"\s(?:aus|di)\s+(?=[A-ZÀ-Ý])")
"""Where a job's holder comes from, after the job ("Ingenieur aus Berlin", "un'insegnante di
Palermo": an Italian subject is written in lower case, "di matematica"). Spanish, Portuguese
and French "de"/"da" before a capital also name a subject ("profesora de Inglés") or a company
("ingeniero de Google"): kept in the job."""
_TOWN_PREPOSITIONS = {"es": (), "pt": (), "fr": ("a",), "it": ("a",), "de": ()}
"""Prepositions that open a town, not a company: a bare name after one is where the job is done
("pharmacien à Bruxelles", "ingegnere a Milano"); a company takes "chez", "pour", "presso", "in"
or an article ("à l'hôpital Necker", "all'Ospedale San Raffaele"). Spanish "en" and Portuguese
"em" open both ("ingeniero en Mercado Libre", "profesora en Granada"): the name is kept. A
company named bare after "à" ("ingénieur à EDF") is lost: a fact lost rather than a town believed
to be an employer."""


def _workplace(raw: str, folded: str, code: str) -> str:
    """Return the named place after a job ("enfermera en el Hospital La Paz" -> its name)."""
    match = _compiled(code, "workplace").search(folded)
    if match is None:
        return ""
    preposition = folded[match.start() : match.start("w")].strip()
    if (
        preposition in _TOWN_PREPOSITIONS[code]
        and raw[match.start("w") : match.start("w") + 1].isupper()
    ):
        return ""
    place = _clean(raw[match.start("w") :], folded[match.start("w") :], code, EMPLOYER)
    return place if place[:1].isupper() else ""


def greeted(text: str, code: str) -> bool:
    """Say whether ``text`` opens with a greeting in language ``code``."""
    return _compiled(code, "greeting").match(fold(text.lstrip(" ¡!¿"))) is not None


_VERBS = {
    "es": r"vivo|resido|viviendo|mude|mudado|mudar|traslad\w*|llamo|nombre|trabajo|curro|soy"
    r"|alergi\w*|hablo",
    "pt": r"moro|vivo|resido|morando|mudei|mudar|morar|chamo|nome|trabalho|trampo|sou|alergi\w*"
    r"|falo",
    "fr": r"habite|vis|reside|demeure|demenage|demenager|installee?|partie?|appelle|nom|prenom"
    r"|c'est|travaille|bosse|taffe|suis|allergi\w*|parle",
    "de": r"wohne|lebe|gezogen|umgezogen|hei(?:ss|ß)e|name|vorname|arbeite|bin|allergi\w*"
    r"|reagiere|spreche",
    "it": r"vivo|abito|risiedo|vivendo|trasferit[oa]|chiamo|nome|lavoro|faccio|sono|allergi\w*"
    r"|parlo",
}
"""Words without which a language's grammar reads no statement: a message with none of them
skips that grammar (most messages state nothing, and every reply is read too)."""
_VERB_RES = {code: re.compile(rf"\b(?:{verbs})\b") for code, verbs in _VERBS.items()}


def _candidates(folded: str) -> list[str]:
    """Return the languages whose statement verbs ``folded`` holds."""
    return [code for code in GRAMMARS if _VERB_RES[code].search(folded)]


def language_facts(text: str) -> list[Found]:
    """Return the facts ``text`` asserts in whichever of the five languages reads them.

    Each language's verbs are its own ("vivo en" is Spanish, "moro em" Portuguese), so the
    languages are tried in turn and the first that reads a fact wins (one message, one language).
    """
    text = text[:MAX_TEXT_CHARS]
    for code in _candidates(fold(text)):
        hello = greeted(text, code)
        found: list[Found] = []
        for raw in _SENTENCE_RE.findall(text):
            sentence = raw.strip()
            if not sentence:
                continue
            for fact in sentence_facts(sentence, greeted=hello, code=code):
                if all(f.slot_key != fact.slot_key for f in found):
                    found.append(fact)
        if found:
            return found
    return []


_ASKING_WORDS = (
    r"donde|como|cual|que|quien|onde|qual|quem|ou|comment|quel|quelle|quels|qu'est|wo|wie"
    r"|welche|wer|wogegen|worauf|dove|quale|che|cosa|chi|recuerdas|te acuerdas|sabes|dime"
    r"|lembra|lembras|diz|rappelle|tu te souviens|te souviens|sais-tu|dis-moi|erinnerst"
    r"|wei(?:ss|ß)t|sag mir|ricordi|ti ricordi|dimmi"
)
"""Question and recall words that open a question in the five languages (folded)."""
_QUESTION_FORM = re.compile(
    r"[?¿]|^\W*(?:(?:y|e|et|und|ma|mas|pero|mais|aber|ok|bueno|alors|also|allora)\W+)?"
    rf"(?:(?:me|mi|te|ti|tu|du)\s+)?(?:{_ASKING_WORDS}"
    r"|was|sabe|sai|recuerdame|recordame|lembra-me|lembre-me|lembre(?!-se)|rappelle-moi"
    r"|erinnere mich|ricordami|c'est quoi|c'est qui|quali|quanti|quante|cuales|cuantos|cuantas"
    r"|quais|quantas|quelles|come|welcher|welches|welchem)\b"
)
"""A question's form: a question mark, or an opening question or recall word (typed without
"?"); "Mi nombre es Ana" is no question about the name."""


_FUNCTION_WORDS = {
    "en": "the a an is are am be do does did i i'm my me you your what where who how why and of to"
    " in on at it that this for with was have has can will please about from not no so if we they"
    " or but by which very thanks two three it's what's don't you're can't there's",
    "es": "el la los las de del que y en un una es por para con no mi me yo tu se lo como donde soy"
    " estoy tengo cual quien mis dame dime puedes quiero necesito mejor muy pero mas gracias hola"
    " esto eso hay sobre tambien cuando porque tres dos",
    "pt": "o a os as de do da que e em um uma eu meu minha voce nao com para por onde sou estou"
    " tenho qual quem no na me diga pode quero preciso melhor muito mas obrigado obrigada ola isso"
    " sobre tambem quando porque tres dois",
    "fr": "le la les de des du que et en un une est je j' mon ma mes tu vous pour avec ou suis ai"
    " pas ne quel quelle qui donne dis peux veux besoin mieux tres mais merci bonjour cela sur"
    " aussi quand parce trois deux",
    "de": "der die das den dem und ist ich mein meine du sie wir nicht mit fur auf in im wo wie was"
    " bin habe ein eine wer welche gib sag kannst will brauche besser sehr aber danke hallo bitte"
    " auch wenn weil drei zwei",
    "it": "il lo la gli le di del che e un una io mio mia tu per con non dove come sono ho sei qual"
    " chi mi dammi dimmi puoi voglio bisogno meglio molto ma grazie ciao questo anche quando"
    " perche tre due",
}
_WORD_SETS = {code: frozenset(words.split()) for code, words in _FUNCTION_WORDS.items()}
_TOKEN_RE = re.compile(r"[a-zß]+(?:'[a-z]+)?|[a-z]'")


def language_scores(text: str) -> dict[str, float]:
    """Return, per language, how many of its distinct function words ``text`` uses.

    A word of several languages ("a", "do", "me") counts for each, less.
    """
    counts = dict.fromkeys(_WORD_SETS, 0.0)
    for token in set(_TOKEN_RE.findall(fold(text[: MAX_QUESTION_CHARS * 4]))):  # each word once
        owners = [code for code, words in _WORD_SETS.items() if token in words]
        for code in owners:
            counts[code] += 1 / len(owners)
    return counts


def guess_language(text: str, least: float = 1) -> str:
    """Return the language whose function words ``text`` uses most ("en" on a tie, "" if none).

    A guard, not a detector: the tables of this module answer only text that reads as one of
    their languages ("Comment on the budget: where do I live?" stays English). ``least`` is the
    fewest of its distinct words a language needs to be named ("Ho ho ho" is one Italian word).
    """
    counts = language_scores(text)
    best = max(counts, key=lambda code: counts[code])
    if counts[best] > counts["en"] and counts[best] >= least:
        return best
    return "en" if counts["en"] else ""


_OPENS_QUESTION = re.compile(
    rf"^\W*¿|^\W*(?:(?:y|e|et|und|ma|mas|pero|mais|aber)\W+)?(?:{_ASKING_WORDS}|voce lembra)\b"
)
"""A question that opens with one of their words only (English "was" and "come" are left out)."""


def foreign_question(text: str) -> bool:
    """Say whether ``text`` is a question in Spanish, Portuguese, French, German or Italian.

    It opens with one of their question or recall words and reads as one of them
    (``guess_language``): "Como is a lovely lake. Where do I live?" is English.
    """
    return _OPENS_QUESTION.search(fold(text)) is not None and guess_language(text) != "en"


_ADVICE = re.compile(
    r"\b(?:deberia|debo|deveria|devo|devrais|dois|doit|sollte|soll|dovrei|dovrebbe|podria|poderia"
    r"|pourrais|konnte|potrei|recomiendas|recomendas|recommandes|empfiehlst|consigli|puedo"
    r"|posso|peux|kann|am besten|conviene|vale la pena|meglio|mieux)\b"
)
"""A question asking for advice ("¿Debería dejar mi trabajo?"), not for what the user said."""

_RECALL = re.compile(
    r"\b(?:recuerdas|acuerdas|sabes|dime|recuerdame|recordame|cual es|lembra|lembras|lembre(?!-se)"
    r"|lembra-me|sabe|diz|qual e|rappelle|souviens|sais|dis-moi|c'est quoi|quel est"
    r"|erinnerst|erinnere|wei(?:ss|ß)t|sag mir|wie ist|was ist|wie war|ricordi|ricordami|sai|dimmi"
    r"|te dije|te conte|je t'ai dit|hab ich dir|ti ho detto)\b"
)
"""A word asking the agent to recall: "¿Recuerdas mi nombre?" asks; "¿Cómo se escribe mi nombre
en japonés?" does not."""
_TOPICS = (
    (
        NAME,
        re.compile(r"\b(?:mi nombre|(?:o )?meu nome|mon (?:nom|prenom)|mein name|il mio nome)\b"),
    ),
    (
        OCCUPATION,
        re.compile(
            r"\b(?:mi (?:trabajo|profesion|oficio)|(?:a )?minha profissao|(?:o )?meu trabalho"
            r"|mon (?:metier|travail|boulot)|mein (?:beruf|job)|il mio (?:lavoro|mestiere))\b"
        ),
    ),
    (ALLERGY, re.compile(r"\b(?:alergi|allergi)")),
    (LANGUAGES, re.compile(r"\b(?:idiomas|lenguas|linguas|langues|sprachen|lingue)\b")),
    (
        EMPLOYER,
        re.compile(
            r"\b(?:mi (?:empresa|compania)|(?:a )?minha empresa|ma boite|mon (?:entreprise"
            r"|employeur)|ma societe|meine firma|mein(?:en)? arbeitgeber|la mia azienda)\b"
        ),
    ),
)
"""A question's topic, when it asks the agent to recall (``_RECALL``) or speaks of the user's
allergies or languages in the first person (``_FIRST_PERSON``): "¿Recuerdas mi nombre?",
"¿Qué era lo que me daba alergia?", "rappelle-moi le nom de ma boîte"."""
_FIRST_PERSON = re.compile(
    r"(?:^|\s)j'|\b(?:me|mi|mis|yo|eu|minha|meu|minhas|meus|je|moi|mon|ma|mes|ich|mich|mir|mein"
    r"|meine|meinen|io|mio|mia|mie|miei|tengo|tenho|soy|sou|sono|ho|hablo|hablaba|falo|falava"
    r"|parlo|spreche|reagiere)\b"
)


def _asked(question: str) -> tuple[str | None, list[str]]:
    """Return the language a question about the user is in and the slots it asks, in order."""
    if len(question) > MAX_QUESTION_CHARS or guess_language(question, least=0) == "en":
        return None, []
    folded = fold(question)
    if _QUESTION_FORM.search(folded) is None or _ADVICE.search(folded):
        return None, []
    guessed = guess_language(question, least=0)
    where: dict[str, int] = {}
    language = None
    for code in sorted(GRAMMARS, key=lambda c: c != guessed):  # the language it reads as first
        where = {slot: m.start() for slot, p in _questions(code) if (m := p.search(folded))}
        if where:
            language = code
            break
    # a topic ("mi nombre", "alergias") is asked in the language the question reads as
    recall = _RECALL.search(folded) is not None
    for slot, topic in _TOPICS:
        m = topic.search(folded)
        personal = recall or (slot in LIST_SLOTS and _FIRST_PERSON.search(folded))
        if m is not None and personal and slot not in where:
            where[slot] = m.start()
    language = language or (guessed if guessed in GRAMMARS else None)
    if language is None or not where:
        return None, []
    return language, sorted(where, key=lambda slot: where[slot])


def asked_slots(question: str) -> list[str]:
    """Return the slots a question in one of the five languages asks about, in their order."""
    return _asked(question)[1]


def profile_question(question: str) -> bool:
    """Say whether a question in one of the five languages asks for all the user told.

    The whole message is the question ("¿Qué sabes de mí?"; "¿Quién soy yo para juzgar?" and
    "Chi sono i migliori calciatori?" ask other things).
    """
    return _profile_language(question) is not None


def _profile_language(question: str) -> str | None:
    """Return the language whose profile question the whole of ``question`` is, if any."""
    if len(question) > MAX_QUESTION_CHARS:
        return None
    folded = fold(question).strip()
    return next(
        (
            code
            for code, grammar in GRAMMARS.items()
            if re.fullmatch(rf"\W*(?:{grammar.lead})?{grammar.profile}\W*", folded)
        ),
        None,
    )


def message_language(text: str) -> str | None:
    """Return the code of the language whose grammar reads a fact or a question in ``text``.

    "es" for "Vivo en Valencia" or "¿Dónde vivo?"; None when none reads anything (a question must
    also read as its language: ``_asked``).
    """
    code = _asked(text)[0] or _profile_language(text)
    if code is not None:
        return code
    found = language_facts(text)
    return found[0].language if found else None


_SELF = re.compile(
    r"(?:^|\s)j'|\b(?:yo|eu|je|moi|ich|io|mis|meu|minha|meus|minhas|mon|mein\w*|mio|mia|miei"
    r"|mie|estoy|soy|estou|sou|suis|bin|sono|sto)\b"
)
"""The agent speaking of itself in one of the five languages ("Estoy en Valencia", "mis notas");
"me" and "mi" are left out ("Por lo que me contaste", "Mi hai detto che vivi a Roma" tell the
user), and so are "ma" and "mes" (Italian "but", Spanish "month")."""


def speaks_of_itself(text: str) -> bool:
    """Say whether a clause in one of the five languages has the agent speak of itself."""
    return guess_language(text) not in {"en", ""} and _SELF.search(fold(text)) is not None

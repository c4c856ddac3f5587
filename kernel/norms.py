"""Norms: standing instructions from the user about how I answer (pure: no I/O, no clock).

A **norm** is what the user tells me about my answers that should hold from then on: "never use
bullet points", "call me Sam", "answer in Portuguese", "at most two sentences", "don't mention my
ex". :func:`detect` reads one user message and returns typed :class:`NormProposal` values; the
state layer persists them (``state/norms.py``) after the writeback guard has checked them.

Detection is a small grammar, not a list of sentences. A message is split into clauses; a clause
is a *directive* when, after lead-ins ("ok", "please", "also", "from now on"), it opens with an
imperative ("use", "answer", "keep", "call", "be"), a polarity word ("never", "don't", "stop",
"avoid", "always", "no more") or a modal frame addressed to me ("I want you to", "you should",
"make sure you", "can you", "let's", "I don't want"). Questions count only in the "can you …?"
form. Then kind matchers look at what the directive is about: list formatting, a sentence limit,
how to address the user, a language, a topic to avoid, or (``style``) anything else about my
answers' form or tone. A directive scoped to some other artefact ("in my CV", "in the report"),
a request with its own object ("write a poem in French") or a statement about someone else
("my boss never uses bullet points") is not a norm.

Enforcement (:func:`enforce`) applies the active norms to a final reply whatever the model wrote:
list lines become prose, the reply is cut to the sentence limit, a greeting uses the preferred
name, and sentences touching an avoided topic are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from kernel.facts import english_facts
from kernel.foreign_facts import guess_language, language_scores, message_language
from kernel.grammar import decapitalize, list_phrasebook, series_of, short_items
from kernel.mention import material
from kernel.speech import (
    ENGLISH,
    PHRASEBOOKS,
    Phrasebook,
    ack_heads,
    join_series,
    lead_lowered,
    opens_with_connector,
    phrasebook,
)

NormKind = Literal["no_lists", "max_sentences", "address_as", "language", "avoid_topic", "style"]

KINDS: tuple[NormKind, ...] = (
    "no_lists",
    "max_sentences",
    "address_as",
    "language",
    "avoid_topic",
    "style",
)
SINGLE_KINDS: frozenset[str] = frozenset({"max_sentences", "address_as", "language"})
"""Kinds of which only one can hold at a time: a new one replaces the old ("call me Sam")."""

BRIEF_SENTENCES = 3
"""The sentence limit that "keep it short" / "be brief" stands for."""
MAX_STYLE_CHARS = 160
MAX_TOPIC_WORDS = 6
NORM_CLAUSE_MAX_WORDS = 8
"""A clause this short that sets a norm is only an instruction (``without_norms`` drops it)."""


@dataclass(frozen=True)
class NormProposal:
    """A norm detected in a user message: its kind, parameters, prompt line and the user's words."""

    kind: NormKind
    params: Mapping[str, object]
    text: str
    """The prompt line (``Never use bullet points or numbered lists.``)."""
    phrase: str = ""
    """The clause of the user's message it came from."""

    def key(self) -> tuple[str, str]:
        """Return what makes two norms the same (kind and parameters, order-free)."""
        return self.kind, repr(sorted((k, str(v)) for k, v in self.params.items()))


class NormLike(Protocol):
    """Anything with a norm's kind and parameters (a proposal, a stored record, a turn rule)."""

    @property
    def kind(self) -> str:
        """The norm's kind (see :data:`KINDS`)."""

    @property
    def params(self) -> Mapping[str, object]:
        """The norm's parameters."""


# =========================================================================== vocabulary

NUMBER_WORDS = {
    "a": 1,
    "one": 1,
    "single": 1,
    "two": 2,
    "a couple of": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_NUM = r"(\d{1,2}|a couple of|one|two|three|four|five|six|seven|eight|nine|ten|a single|single|a)"

LANGUAGES: dict[str, tuple[str, str]] = {
    "english": ("en", "English"),
    "portuguese": ("pt", "Portuguese"),
    "brazilian portuguese": ("pt", "Portuguese"),
    "spanish": ("es", "Spanish"),
    "castilian": ("es", "Spanish"),
    "french": ("fr", "French"),
    "german": ("de", "German"),
    "italian": ("it", "Italian"),
    "dutch": ("nl", "Dutch"),
    "polish": ("pl", "Polish"),
    "russian": ("ru", "Russian"),
    "ukrainian": ("uk", "Ukrainian"),
    "japanese": ("ja", "Japanese"),
    "chinese": ("zh", "Chinese"),
    "mandarin": ("zh", "Chinese"),
    "korean": ("ko", "Korean"),
    "arabic": ("ar", "Arabic"),
    "hebrew": ("he", "Hebrew"),
    "hindi": ("hi", "Hindi"),
    "turkish": ("tr", "Turkish"),
    "greek": ("el", "Greek"),
    "swedish": ("sv", "Swedish"),
    "norwegian": ("no", "Norwegian"),
    "danish": ("da", "Danish"),
    "finnish": ("fi", "Finnish"),
    "czech": ("cs", "Czech"),
    "romanian": ("ro", "Romanian"),
    "hungarian": ("hu", "Hungarian"),
    "vietnamese": ("vi", "Vietnamese"),
    "indonesian": ("id", "Indonesian"),
    "thai": ("th", "Thai"),
    "catalan": ("ca", "Catalan"),
    # in their own language
    "português": ("pt", "Portuguese"),
    "portugues": ("pt", "Portuguese"),
    "inglês": ("en", "English"),
    "ingles": ("en", "English"),
    "inglés": ("en", "English"),
    "español": ("es", "Spanish"),
    "espanol": ("es", "Spanish"),
    "espanhol": ("es", "Spanish"),
    "castellano": ("es", "Spanish"),
    "français": ("fr", "French"),
    "francais": ("fr", "French"),
    "francês": ("fr", "French"),
    "francés": ("fr", "French"),
    "anglais": ("en", "English"),
    "deutsch": ("de", "German"),
    "englisch": ("en", "English"),
    "italiano": ("it", "Italian"),
    "inglese": ("en", "English"),
    "nederlands": ("nl", "Dutch"),
    "polski": ("pl", "Polish"),
    "русский": ("ru", "Russian"),
    "по-русски": ("ru", "Russian"),
    "日本語": ("ja", "Japanese"),
    "中文": ("zh", "Chinese"),
    "svenska": ("sv", "Swedish"),
    "türkçe": ("tr", "Turkish"),
}
_LANG = "(" + "|".join(sorted((re.escape(k) for k in LANGUAGES), key=len, reverse=True)) + ")"

# Lead-ins dropped before the directive is read (repeatable).
_LEAD_IN = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|all right|also|and|so|but|hey|hi|well|oh|one more thing|"
    r"by the way|btw|listen|look|lumen|please|pls|plz|kindly|just|actually|again|"
    r"one thing|quick request|request|note|rule|new rule|moving forward|"
    r"from now on|from here on(?: out)?|going forward|henceforth|in (?:the )?future|"
    r"for the rest of (?:this|our|the) (?:conversation|chat)|starting (?:now|today)|"
    r"from today(?: on)?|a partir de agora|de agora em diante|daqui (?:pra|para) frente|"
    r"a partir de ahora|de ahora en adelante|désormais|à partir de maintenant|"
    r"ab jetzt|von nun an|ab sofort|d'ora in poi|da ora in poi|por favor|bitte|"
    r"s'il te plaît|s'il vous plaît|per favore)\b[\s,:;!.\-—–]*)+",
    re.IGNORECASE,
)
_PERSISTENCE = re.compile(
    r"\b(?:from now on|from here on(?: out)?|going forward|henceforth|in (?:the )?future|"
    r"for the rest of (?:this|our|the) (?:conversation|chat)|starting (?:now|today)|"
    r"always|never|ever again|anymore|any more|every time|whenever you|no more|"
    r"in (?:all )?(?:of )?(?:your|future|the) (?:answers|replies|responses|messages)|"
    r"when(?:ever)? you (?:answer|reply|respond|write|talk|speak)|with me|to me)\b",
    re.IGNORECASE,
)
_TRAILERS = re.compile(
    r"(?<![\s,;:—–-])(?:[\s,;:—–-]+(?:please|thanks|thank you|from now on|from here on(?: out)?|"
    r"going forward|"
    r"anymore|any more|ever again|again|ok(?:ay)?|in (?:the )?future|henceforth|thx|"
    r"if you can|if possible|for me|por favor|bitte|per favore))+[\s.!]*$",
    re.IGNORECASE,
)

# Modal frames that address me, with flags: "n" negative, "s" strong (a standing instruction:
# "you should", "make sure you"), "q" may be a question ("can you …?").
_NOT = r"(?:not|never)\s+"
_ANY = r"(?: any)?\s+"
_IWANT = r"^i(?:'d| would)? (?:like|want|need|ask|love|appreciate it if)(?: it if)? you"
_RATHER = r"^i(?:'d| would)? (?:rather|prefer)(?: it)?(?: if)? you"
_YOU_MODAL = r"^you (?:should|must|need to|have to|shall|are to|ought to|will"
_YOU_NOT = r"(?:shouldn't|should not|mustn't|must not|can't|cannot|may not|won't|will not|shan't)"
_FRAMES: tuple[tuple[re.Pattern[str], bool, bool, bool], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), "n" in flags, "s" in flags, "q" in flags)
    for pattern, flags in (
        (r"^would you mind " + _NOT, "nq"),
        (r"^would you mind\s+", "q"),
        (r"^(?:can|could|would|will) you(?: please| kindly| maybe)?\s+" + _NOT, "nq"),
        (r"^(?:can|could|would|will) you(?: please| kindly| maybe)?\s+", "q"),
        (r"^i (?:do not|don't|dont|don’t) want you to\s+", "ns"),
        (
            r"^i (?:do not|don't|dont|don’t) (?:want|need|like)(?: to see| to hear| to)?" + _ANY,
            "ns",
        ),
        (_RATHER + r" (?:didn't|did not|don't|do not|not|wouldn't|would not|never)\s+", "ns"),
        (_RATHER + r"(?: would| to)?\s+", "s"),
        (_IWANT + r"(?: to| would| could)?\s+" + _NOT, "ns"),
        (_IWANT + r"(?: to| would| could)?\s+", "s"),
        (_YOU_MODAL + r"|may)(?: always)?\s+" + _NOT, "ns"),
        (r"^you " + _YOU_NOT + r"\s+", "ns"),
        (_YOU_MODAL + r")\s+", "s"),
        (r"^make sure(?: that)?(?: you)? (?:don't|do not|never|not to|to never|to not)\s+", "ns"),
        (r"^make sure(?: that)?(?: you)?(?: to| always)?\s+", "s"),
        (r"^(?:remember|be sure|try|please try) (?:not to|to not|to never|never to)\s+", "ns"),
        (r"^(?:remember|be sure|try|please try) (?:to|and)\s+", "s"),
        (r"^(?:let's|lets|let us) " + _NOT, "n"),
        (r"^(?:let's|lets|let us)\s+", ""),
        (r"^(?:you can|you may|feel free to)\s+", ""),
    )
)
_NEGATION_HEAD = re.compile(
    r"^(?:never(?: ever)?|don't(?: ever)?|do not(?: ever)?|dont(?: ever)?|don’t(?: ever)?|"
    r"stop|quit|avoid|refrain from|no more|no|not|cut out|lay off(?: the)?|enough with(?: the)?)"
    r"\b[\s,]*",
    re.IGNORECASE,
)
_POSITIVE_HEAD = re.compile(r"^(?:always|only|just)\b\s*", re.IGNORECASE)
IMPERATIVE_VERBS = frozenset(
    "use answer reply respond write speak talk call address refer keep be limit stick switch "
    "format give say tell mention bring make explain greet sign stay include add put start end "
    "phrase word communicate chat converse".split()
)
_ANSWER_VERBS = frozenset(
    "answer reply respond write speak talk explain phrase greet format communicate".split()
) | {"chat", "converse"}

LIST_NOUN = re.compile(
    r"\b(?:bullet(?:ed|s)?(?:[- ]points?|[- ]lists?)?|numbered (?:lists?|points|items|steps)|"
    r"lists?|listicles?|enumerations?|itemi[sz]ed|list format|list form)\b",
    re.IGNORECASE,
)
_LIST_HEAD_OK = frozenset(
    "use using give giving write writing put putting format formatting answer answering reply "
    "replying respond responding send sending include including add adding make making break "
    "breaking split splitting do doing with any bullet bullets bulleted numbered lists list more "
    "the those these so markdown your my me structure structuring present presenting organize "
    "organizing organise organising everything things".split()
)
_PROSE = re.compile(
    r"^(?:write|answer|reply|respond|use|stick to|keep to|talk)\s+(?:me\s+)?(?:only\s+)?"
    r"(?:in|with)?\s*(?:full|plain|flowing|continuous|normal)?\s*"
    r"(?:prose|paragraphs|full sentences|sentences only)\b",
    re.IGNORECASE,
)
_FOREIGN_SCOPE = re.compile(
    r"\b(?:in|on|for|inside|within|to|into)\s+(?:my|his|her|their|the|this|that|our|a|an|its)\s+"
    r"(?!(?:answers?|repl(?:y|ies)|responses?|messages?|chats?|conversations?|texts?|"
    r"future|rest|talks?|explanations?)\b)[a-z]",
    re.IGNORECASE,
)
_SENTENCE_LIMIT = re.compile(
    r"\b(?:(at most|no more than|not more than|maximum(?: of)?|max(?:imum)?|up to|only|just|"
    r"in|under|fewer than|less than|within|to|exactly|limit(?:ed)? to)\s+)?"
    + _NUM
    + r"(?:[- ]|\s+short\s+)sentences?\b(?:\s+(max(?:imum)?|at most|or (?:less|fewer)|tops))?",
    re.IGNORECASE,
)
_BREVITY = re.compile(
    r"^(?:(?:keep|make)\s+(?:it|things|them|everything|(?:your |the |all )?(?:answers?|replies|"
    r"reply|responses?|messages?))\s+(?:very\s+|really\s+|super\s+)?(?:short|brief|concise|"
    r"succinct|to the point|tight|crisp|snappy)|be\s+(?:very\s+|more\s+)?(?:brief|concise|"
    r"succinct|terse|short)|(?:give|use|write|send)\s+(?:me\s+)?(?:short(?:er)?|brief(?:er)?|"
    r"concise)\s+(?:answers|replies|responses)|(?:short(?:er)?|brief(?:er)?|concise)\s+"
    r"(?:answers|replies|responses)(?:\s+only)?|(?:answer|reply|respond)\s+(?:briefly|"
    r"concisely|shortly|in short))\b",
    re.IGNORECASE,
)
_VERBOSE = re.compile(
    r"^(?:be\s+(?:so\s+)?(?:verbose|wordy|long-winded)|ramble|rambling|write\s+(?:me\s+)?essays|"
    r"(?:give|giving|write|writing)\s+(?:me\s+)?(?:such\s+)?(?:long|lengthy)\s+(?:answers|"
    r"replies|responses))\b",
    re.IGNORECASE,
)
_NAME_TOKEN = r"[A-ZÀ-ÝŁŚŻ][\w'’-]{0,30}"
_ADDRESS = re.compile(
    r"^(?i:call|address|refer to|name)\s+(?i:me)\s+(?i:as\s+|by\s+)?"
    rf"((?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?{_NAME_TOKEN}(?:\s+{_NAME_TOKEN})?|[a-zà-ÿ][\w'’-]{{1,30}})"
    r"(?=\s*(?:[.!,;]|$|\s+(?:please|from now on|instead|then|okay|ok|going forward|thanks)\b))",
)
_ADDRESS_STATEMENT = re.compile(
    r"^(?:i (?:go|prefer to go) by|i(?:'d| would)? prefer (?:to be called|being called)|"
    r"(?:llámame|llamame|appelle[- ]moi|appelez[- ]moi|nenn(?:e)? mich|chama-me|me chama de|"
    r"me chame de|pode me chamar de|chiamami))\s+"
    rf"({_NAME_TOKEN}|[a-zà-ÿ][\w'’-]{{1,30}})(?=\s*(?:[.!,;]|$|\s+(?:please|por favor)\b))",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset(
    "i it me back later tomorrow tonight today now soon sometime when if after before at on in a "
    "an the anytime maybe again up out please whenever once first asap directly instead crazy "
    "names that this what whatever anything something anytime sometime monday tuesday wednesday "
    "thursday friday saturday sunday morning evening afternoon night weekend next whenever any "
    "old stupid silly lazy names old-fashioned".split()
)
_LANGUAGE_DIRECTIVE = re.compile(
    r"^(?:(?:answer|reply|respond|write|speak|talk|communicate|chat|text|converse)"
    r"(?:\s+(?:to|with)\s+me)?(?:\s+(?:back|only|always|exclusively|from now on))*\s+"
    r"(?:in|using)\s+(?:plain\s+)?|(?:use|switch to|stick to|speak|talk|write)\s+(?:in\s+)?|"
    r"(?:only\s+)?(?:in\s+)?)" + _LANG + r"(?:\s+only)?\b(?P<rest>.*)$",
    re.IGNORECASE,
)
_NATIVE_LANGUAGE = re.compile(
    r"\b(?:responda|responde|respondes|fala|fale|escreva|escreve|me responda|responda-me|"
    r"contesta|contéstame|respóndeme|respondeme|habla|háblame|hablame|escribe|"
    r"réponds|répondez|réponds-moi|répondez-moi|parle|parlez|parle-moi|écris|écrivez|"
    r"antworte|antworten sie|antworte mir|sprich|sprich mit mir|schreib|schreibe|"
    r"rispondi|rispondimi|rispondete|parla|parlami|scrivi)\b"
    r"(?:\s+(?:sempre|siempre|toujours|immer|mir|bitte|solo|só|apenas|uniquement))*\s+"
    r"(?:em|en|auf|in|na|no)\s+" + _LANG + r"\b",
    re.IGNORECASE,
)
_BARE_LANGUAGE = re.compile(
    r"^(?:only\s+)?(?:in|em|en|auf)\s+" + _LANG + r"(?:\s+only)?\s*[.!]*$", re.IGNORECASE
)
_NATIVE_NO_LISTS = re.compile(
    r"\b(?:não (?:use|uses|usa|faça|faças|quero)(?: mais)?(?: de)?|nunca (?:use|uses|usa)|"
    r"sem|no (?:uses|use|utilices|pongas|hagas)|nunca (?:uses|utilices)|sin|"
    r"n'utilise(?:z)? (?:pas|jamais|plus)(?: de)?|ne mets? (?:pas|jamais|plus)(?: de)?|pas de|"
    r"keine|benutze keine|verwende keine|nie|non usare|niente|mai)\s+"
    r"(?:mais\s+|más\s+|plus\s+|de\s+|des\s+|more\s+)?"
    r"(?:listas?|marcadores|tópicos|topicos|viñetas|vinetas|listes?|puces|aufzählungen|"
    r"aufzählungszeichen|stichpunkte|listen|elenchi(?: puntati)?|punti elenco)\b",
    re.IGNORECASE,
)
_TOPIC_VERB = re.compile(
    r"^(?:mention(?:ing)?|bring(?:ing)? up|talk(?:ing)? about|discuss(?:ing)?|"
    r"ask(?:ing)? (?:me )?about|speak(?:ing)? about|rais(?:e|ing)|referenc(?:e|ing)|"
    r"refer(?:ring)? to|jok(?:e|ing) about|comment(?:ing)? on|go(?:ing)? on about|"
    r"remind(?:ing)? me (?:of|about)|say(?:ing)? anything about|tell(?:ing)? me about|"
    r"(?:the )?(?:topic|subject) of|talk(?:ing)? to me about|hear(?:ing)? about|"
    r"(?:talk|hear) about)\s+(.+)$",
    re.IGNORECASE,
)
_BRING_UP = re.compile(r"^bring(?:ing)?\s+(.+?)\s+up\b", re.IGNORECASE)
_TOPIC_END = re.compile(
    r"(?<!\s)\s+(?:again|anymore|any more|ever again|ever|please|with me|to me|in (?:your )?"
    r"(?:answers|replies|responses)|when you .*|unless .*|because .*|since .*|"
    r"(?:from now on|going forward))\b.*$",
    re.IGNORECASE,
)
_VAGUE_TOPICS = frozenset(
    {"so much", "too much", "any of that", "any of this", "about it", "that again"}
    | set("it that this them anything everything something me him her those these".split())
    | {"stuff", "things"}
)
STYLE_WORDS = re.compile(
    r"\b(?:answers?|repl(?:y|ies)|responses?|respond|messages?|tone|words|sentences?|paragraphs?|"
    r"jargon|emojis?|emoticons?|smileys?|markdown|headers?|headings?|bold|italics?|tables?|"
    r"code blocks?|formatting|exclamation (?:marks?|points?)|all caps|caps|capital letters|"
    r"acronyms|abbreviations|slang|profanity|swear(?:ing)?|curs(?:e|ing)|apologi[sz](?:e|ing)|"
    r"apologies|sorry|disclaimers?|caveats?|hedg(?:e|ing)|filler|small talk|sign-?offs?|"
    r"greetings?|pleasantries|summar(?:y|ies)|recaps?|metric|imperial|units|examples|analogies|"
    r"follow-up questions|questions|formal(?:ly)?|informal(?:ly)?|casual(?:ly)?|polite(?:ly)?|"
    r"blunt(?:ly)?|direct(?:ly)?|honest(?:ly)?|friendly|warm(?:ly)?|sarcas(?:m|tic)|"
    r"humou?r|jokes?|puns?|rhym(?:e|es|ing)|pirate|simple terms|plain english|technical|"
    r"lowercase|uppercase|first person|third person|latex|sources?|citations?|links?|"
    r"verbose|wordy|explanations?|lecture|lecturing|moraliz(?:e|ing)|preach(?:y|ing)|"
    r"flatter(?:y|ing)?|compliments?|praise|enthusias(?:m|tic)|emoji)\b",
    re.IGNORECASE,
)
_BE_STYLE = re.compile(r"^be\s+(?:more\s+|less\s+|so\s+|very\s+|totally\s+)?\w+", re.IGNORECASE)
_FINITE = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|will|would|can|could|do|does|did|need|needs)\b",
    re.IGNORECASE,
)
_AUDIENCE = re.compile(
    r"\b(?:to|with|in front of|around|near|for)\s+(?:the|my|his|her|their|a|an|anyone|anybody|"
    r"people|others|him|them|[A-Z])",
)
_TAG_QUESTION = re.compile(
    r"(?<![\s,])[\s,]+(?:ok|okay|alright|all right|right|yeah|yes|please|got it|understood)"
    r"\s*\?$",
    re.IGNORECASE,
)
_NOUN_DIRECTIVE = re.compile(
    r"^(?:(?:\d{1,2}|one|two|three|a single|single)[- ]sentence|short(?:er)?|brief(?:er)?|"
    r"concise)\s+(?:answers|replies|responses)\b|^(?:\d{1,2}|one|two|three|four|five)\s+"
    r"sentences?\s+(?:max(?:imum)?|at most|tops|or (?:less|fewer))\b",
    re.IGNORECASE,
)
_SPLIT_SENTENCES = re.compile(
    r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bSt\.)(?<!Mrs\.)(?<!Prof\.)(?<=[.!?;])\s+|\n+"
)
_SPLIT_CLAUSES = re.compile(
    r"(?:,\s*(?:and\s+|but\s+|then\s+)?|(?<!\s)\s+(?:and|but|and then|also)\s+)"
    r"(?=(?:please\s+|also\s+|just\s+)?(?:never|don't|do not|dont|always|keep|call|answer|reply|"
    r"respond|use|be|stop|avoid|speak|write|no more|limit|stick|address|make sure)\b)",
    re.IGNORECASE,
)
_SPLIT_REQUEST = re.compile(
    r"(?:,\s*(?:and\s+|then\s+)?|(?<!\s)\s+(?:and|and then|then)\s+)"
    r"(?=(?:please\s+)?(?:tell|explain"
    r"|show|give|help|describe|summari[sz]e|translate|suggest|recommend|teach"
    r"|define|use|avoid|include|cite)\b)",
    re.IGNORECASE,
)
"""Where a one-off request follows an instruction ("answer in French and explain
photosynthesis"), or a second instruction does ("… and define any technical terms")."""
_HOW_TAIL = re.compile(
    r"^(?!.*\b(?:one|two|three|four|five|six|seven|eight|nine|ten|\d+)\b)"  # "cite 3 sources …"
    r"(?:please\s+)?(?:always\s+)?(?:"
    r"(?:define|use|avoid|cite)\s+(?!(?:this|these|that|those|the|a|an|it|them|one|two|three"
    r"|four|five|\d+)\b)"
    r"|translate\s+(?:any\s+|all\s+|every\s+|each\s+)?(?:new|unfamiliar|difficult|hard"
    r"|technical|key)\s+(?:words?|terms?|phrases?|vocabulary|expressions?)\b)",
    re.IGNORECASE,
)
"""What follows a fixed-wording norm is a standing instruction too when it says how every answer
is worded ("use simple words", "define technical terms", "translate new words into English");
a request for this turn is not ("explain all the steps of photosynthesis", "translate this
sentence", "cite three sources on X"). A clause of the same sentence after a norm that says how
to answer is read again as if it began with "Always" ("Answer in French and use simple words"):
it becomes a norm when it reads as one that way."""
_FIXED_KINDS = frozenset({"no_lists", "max_sentences", "address_as", "language", "avoid_topic"})
"""Norms whose wording is fixed by the kernel (an avoided topic is a noun phrase): a request after
one is not part of it (a style norm keeps the user's words whole: "always cite sources and show
your working")."""


# =========================================================================== parsing


@dataclass
class _Clause:
    original: str
    core: str
    negative: bool = False
    directive: bool = False
    strong: bool = False
    persistent: bool = False
    question: bool = False
    framed_question: bool = False
    head: str = ""
    verbless: bool = False
    """The directive is a bare "no X" ("no bullet points"): X must be a short noun phrase."""


def _strip(text: str) -> str:
    return text.strip().strip("\"'“”‘’").strip()


def _parse(raw: str) -> _Clause | None:
    """Read one clause as a directive, or return None when it is not one."""
    text = _TAG_QUESTION.sub("", _strip(raw))
    question = text.endswith("?")
    text = text.rstrip("?!. ").strip()
    if not text:
        return None
    persistent = bool(_PERSISTENCE.search(text))
    text = _LEAD_IN.sub("", text).strip()
    trimmed = _TRAILERS.sub("", text).strip()
    text = trimmed or text
    clause = _Clause(original=text, core=text, persistent=persistent, question=question)
    for pattern, negative, strong, asks in _FRAMES:
        match = pattern.match(clause.core)
        if match:
            clause.core = clause.core[match.end() :]
            clause.negative = negative
            clause.strong = strong
            clause.directive = True
            clause.framed_question = asks
            break
    match = _NEGATION_HEAD.match(clause.core)
    if match and clause.core[match.end() :].strip():
        after = clause.core[match.end() :]
        if not (
            match.group(0).strip().lower() == "no"
            and re.match(
                r"^[,!.]|problem|worries|"
                r"thanks|way|idea",
                after,
            )
        ):
            clause.negative = not clause.negative if clause.directive else True
            clause.directive = True
            clause.verbless = match.group(0).strip().lower() in {"no", "no more"}
            clause.persistent = True
            clause.core = after
    else:
        positive = _POSITIVE_HEAD.match(clause.core)
        if positive and clause.core[positive.end() :].strip():
            clause.core = clause.core[positive.end() :]
            clause.directive = True
            clause.persistent = clause.persistent or positive.group(0).strip().lower() != "just"
    clause.core = clause.core.strip(" ,;:")
    words = clause.core.split()
    if clause.verbless and (len(words) > 4 or _FINITE.search(clause.core)):
        return None  # "no lists were harmed" is a statement
    clause.head = words[0].lower() if words else ""
    if not clause.directive and (
        clause.head in IMPERATIVE_VERBS or _NOUN_DIRECTIVE.match(clause.core)
    ):
        clause.directive = True
    if not clause.directive:
        return None
    if question and not clause.framed_question:
        return None  # "should I use bullet points?" asks; only "can you …?" requests
    return clause


def _sentence_clauses(message: str) -> list[list[str]]:
    """Return the clauses of each sentence (a norm's scope ends with its sentence)."""
    return [
        [part for part in _SPLIT_CLAUSES.split(sentence) if part and part.strip()]
        for sentence in _SPLIT_SENTENCES.split(message)
    ]


# =========================================================================== kind matchers


_FIRST_PERSON_VERBS = tuple(
    (re.compile(pattern), said)
    for pattern, said in (
        (r"\bI(?: am|'m|’m)\b", "the user is"),
        (r"\bI was\b", "the user was"),
        (r"\bI(?: have|'ve|’ve)\b", "the user has"),
        (r"\bI do\b", "the user does"),
        (r"\bI don't\b|\bI do not\b", "the user does not"),
    )
)


def _as_user(text: str) -> str:
    """Rewrite the user's first person as "the user" (a prompt line speaks about them)."""
    for pattern, said in _FIRST_PERSON_VERBS:  # "when I am wrong" → "when the user is wrong"
        text = pattern.sub(said, text)
    text = re.sub(r"\bmy\b", "the user's", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(?:me|myself)\b", "the user", text, flags=re.IGNORECASE)
    text = re.sub(r"\bI\b", "the user", text)
    return text


def _sentence(text: str) -> str:
    text = " ".join(text.split()).strip(" ,;:")
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def _number(token: str) -> int | None:
    token = token.lower().strip()
    if token.isdigit():
        return int(token)
    return NUMBER_WORDS.get(token.removeprefix("a ").strip() if token == "a single" else token)


def _no_lists(c: _Clause) -> NormProposal | None:
    core = c.core.lower()
    if _FOREIGN_SCOPE.search(core):
        return None
    hit = False
    if c.negative and LIST_NOUN.search(core) and c.head in _LIST_HEAD_OK:
        hit = True
    elif not c.negative and _PROSE.match(core):
        hit = True
    if not hit:
        return None
    return NormProposal("no_lists", {}, "Never use bullet points or numbered lists.", c.original)


def _max_sentences(c: _Clause) -> NormProposal | None:
    core = c.core.lower()
    if c.negative:
        if _VERBOSE.match(core):
            return _brief(c)
        return None
    limit = _SENTENCE_LIMIT.search(core)
    if limit:
        if _FOREIGN_SCOPE.search(core) or not _about_answers(core[: limit.start()], c.head):
            return None
        after = set(re.findall(r"[\w']+", core[limit.end() :]))
        if not after <= _ANSWER_OBJECTS | _LIMIT_TAIL:
            return None  # "two sentences about cats" is a request, not a norm
        standing = c.persistent or c.strong or c.head in _LIMIT_VERBS
        standing = (
            standing
            or bool(limit.group(3))
            or (limit.group(1) or "").lower()
            in {
                "at most",
                "no more than",
                "not more than",
                "maximum",
                "maximum of",
                "max",
                "up to",
                "under",
                "fewer than",
                "less than",
                "limit to",
                "limited to",
            }
        )
        if not (standing or re.search(r"\b(?:answers|replies|responses)\b", core)):
            return None
        n = _number(limit.group(2))
        if n is None or not 1 <= n <= 20:
            return None
        if (limit.group(1) or "").lower() in {"under", "fewer than", "less than"}:
            n = max(1, n - 1)
        return NormProposal(
            "max_sentences",
            {"n": n},
            f"Answer in at most {n} sentence{'s' if n != 1 else ''}.",
            c.original,
        )
    if _BREVITY.match(core) and not _FOREIGN_SCOPE.search(core):
        return _brief(c)
    return None


def _brief(c: _Clause) -> NormProposal:
    return NormProposal(
        "max_sentences",
        {"n": BRIEF_SENTENCES},
        f"Keep answers short: at most {BRIEF_SENTENCES} sentences.",
        c.original,
    )


_ANSWER_OBJECTS = frozenset(
    "me to your the my answers answer replies reply responses response messages message it "
    "things everything them yourself all of always please each every short brief only just "
    "and keep back with in".split()
)


_LIMIT_TAIL = frozenset(
    "per max maximum tops when whenever you answer reply respond write talk or less fewer at most "
    "each time a".split()
)
_LIMIT_VERBS = frozenset("answer reply respond keep limit stick restrict cap".split())


def _about_answers(between: str, head: str) -> bool:
    """Say whether the words between the verb and a feature speak about my answers only."""
    words = re.findall(r"[\w']+", between.lower())
    if words and words[0] == head:
        words = words[1:]
    return all(w in _ANSWER_OBJECTS for w in words)


def _address(c: _Clause) -> NormProposal | None:
    if c.negative:
        return None
    match = _ADDRESS.match(c.core) or _ADDRESS_STATEMENT.match(c.core)
    if not match:
        return None
    name = match.group(1).strip()
    if name.lower() in _NOT_NAMES or name.split()[0].lower() in _NOT_NAMES:
        return None
    name = " ".join(w[:1].upper() + w[1:] for w in name.split())
    return NormProposal("address_as", {"name": name}, f"Address the user as {name}.", c.original)


def _language(c: _Clause) -> NormProposal | None:
    if c.negative:
        return None
    core = c.core
    match = _LANGUAGE_DIRECTIVE.match(core)
    found = match.group(1) if match else None
    if match and match.group("rest").strip(" ,.!"):
        rest = match.group("rest").strip(" ,.!").lower()
        if not re.fullmatch(
            r"(?:only|please|from now on|with me|to me|always|thanks|"
            r"going forward|instead|if you can|por favor)(?:[ ,]+\w+)*",
            rest,
        ):
            found = None
    if (
        found
        and c.framed_question
        and c.head in {"speak", "talk", "write"}
        and not re.search(r"\b(?:to|with) me\b", core, re.IGNORECASE)
    ):
        found = None  # "can you speak French?" asks about an ability
    if found is None:
        native = _NATIVE_LANGUAGE.search(c.original) or _BARE_LANGUAGE.match(c.original)
        found = native.group(1) if native else None
    if found is None:
        return None
    code, name = LANGUAGES[found.lower()]
    return NormProposal("language", {"code": code, "name": name}, f"Answer in {name}.", c.original)


def _avoid_topic(c: _Clause) -> NormProposal | None:
    if not c.negative:
        return None
    core = c.core.strip()
    match = _TOPIC_VERB.match(core) or _BRING_UP.match(core)
    if not match:
        avoid = re.match(r"^(?:the )?(?:topic|subject) of\s+(.+)$", core, re.IGNORECASE)
        if not avoid:
            return None
        match = avoid
    topic = _TOPIC_END.sub("", match.group(1)).strip(" ,.;:!?\"'")
    if not topic or topic.lower() in _VAGUE_TOPICS or _AUDIENCE.search(topic):
        return None  # "don't mention my name to the landlord" is about someone else
    if len(topic.split()) > MAX_TOPIC_WORDS:
        return None
    words = topic_words(topic)
    if not words:
        return None
    shown = _as_user(topic)
    return NormProposal(
        "avoid_topic",
        {"topic": shown, "words": words},
        f"Never mention {shown}.",
        c.original,
    )


_TOPIC_STOP = frozenset(
    "a an the my your his her their our its of about and or to in on at for with me i you "
    "any anything so much too more user user's".split()
)


def topic_words(topic: str) -> list[str]:
    """Return the words that identify a topic ("my ex" → ["ex"])."""
    found = [w.removesuffix("'s") for w in re.findall(r"[^\W_][\w'-]*", topic.lower())]
    return [w for w in found if w not in _TOPIC_STOP][:MAX_TOPIC_WORDS]


_AVOID_LEAD = re.compile(
    r"^\W*(?:(?:please|try to|you should|always|also|just|do)\s+){0,3}(?:avoid|refrain from)\b",
    re.IGNORECASE,
)


def _style(c: _Clause) -> NormProposal | None:
    core = c.core
    standing = c.negative or c.persistent or c.strong
    if not standing or (c.negative and (_TOPIC_VERB.match(core) or _BRING_UP.match(core))):
        return None
    about = bool(STYLE_WORDS.search(core))
    if not about and c.head in _ANSWER_VERBS and (c.negative or c.persistent):
        about = True
    if (
        not about
        and _BE_STYLE.match(core)
        and re.search(
            r"\b(?:with|to) me\b|\bin your (?:answers|replies|responses)\b", core, re.IGNORECASE
        )
    ):
        about = True
    if not about or _FOREIGN_SCOPE.search(core):
        return None
    lead = "Never " if c.negative else ("Always " if c.persistent and not c.strong else "")
    body = core
    if c.verbless:
        body = "use " + body
    elif c.negative and _AVOID_LEAD.match(c.original):
        lead = "Avoid "  # "avoid jargon", "avoid morning greetings" (not "Never jargon")
    elif c.negative:
        body = re.sub(r"^([a-z]{2,})ing\b", lambda m: _unging(m.group(1)), body, count=1)
    if lead == "Always " and re.match(r"^always\b", body, re.IGNORECASE):
        lead = ""
    if lead:
        body = body[:1].lower() + body[1:]
    text = _sentence(lead + _as_user(body))
    if len(text) > MAX_STYLE_CHARS:
        return None
    return NormProposal("style", {"instruction": text}, text, c.original)


_E_STEMS = frozenset(
    "us giv writ mak tak com includ apologiz apologis rhym quot summariz summaris lectur moraliz "
    "moralis phras improvis argu continu rambl scribbl handl leav shar compar structur serv "
    "promis sound typ hop describ".split()
)


def _unging(stem: str) -> str:
    """Return the base form of a gerund's stem ("us" → "use", "putt" → "put", "end" → "end")."""
    lower = stem.lower()
    if len(lower) > 2 and lower[-1] == lower[-2] and lower[-1] not in "lsz":
        return stem[:-1]
    return stem + "e" if lower in _E_STEMS else stem


_MATCHERS = (_address, _language, _no_lists, _max_sentences, _avoid_topic, _style)


def detect(message: str) -> list[NormProposal]:
    """Return the norms a user message sets (an empty list for ordinary messages)."""
    found: dict[tuple[str, str], NormProposal] = {}
    for clauses in _sentence_clauses(message):
        previous: NormProposal | None = None
        for part in clauses:
            head, *rest = _SPLIT_REQUEST.split(part, maxsplit=1)
            proposal = _detect_clause(head) if rest else None
            tail = None
            if proposal is not None and proposal.kind == "style" and _request_tail(rest[0]):
                pass  # "Be blunt with me and give me three tips for sleep": tips are this turn's
            elif proposal is None or proposal.kind not in _FIXED_KINDS:
                # the user's whole words when they read as one norm; else the norm before the
                # request ("Don't mention football and translate …": the topic is football)
                proposal = _detect_clause(part) or proposal
            else:  # "… and translate new words into English"
                tail = _standing_tail(rest[0].strip())
            if proposal is None and previous is not None:
                proposal = _standing_tail(part.strip())  # "… and use simple words"
            for found_one in (proposal, tail):
                if found_one is not None:
                    found.setdefault(found_one.key(), found_one)
            previous = proposal
    return list(found.values())


_ONE_OFF = re.compile(
    r"\b(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+|this|that|these|those|my"
    r"|today|tonight|tomorrow|now)\b",
    re.IGNORECASE,
)
"""Words that make a request one thing for now: a count, a single thing, the user's own thing."""


_STANDING_WORDS = re.compile(
    r"\b(?:your|when|whenever|if|every|each|simply|clearly|briefly|plainly|slowly|gently|directly"
    r"|concisely|carefully|step by step|in detail)\b",
    re.IGNORECASE,
)


def _request_tail(text: str) -> bool:
    """Say whether ``text``, after a style norm, asks for something now rather than always.

    A style norm keeps the user's whole words when what follows says how every answer is given
    ("always cite sources and show your working", "be direct and give me examples"); a request
    for this turn is not part of it ("be blunt with me and give me three tips for sleep", "… and
    tell me what you think of my plan", "… and explain photosynthesis"): what follows is standing
    only when it names the answers' manner (``STYLE_WORDS``, the agent's own "your …", a
    condition: "tell me when I am wrong", a manner adverb: "explain things simply"; a
    ``_HOW_TAIL``) and nothing that makes it one thing for now (``_ONE_OFF``).
    """
    text = text.strip()
    if _HOW_TAIL.match(text):
        return False
    if re.search(r"\b(?:when|whenever|if)\b", text, re.IGNORECASE):
        return False  # a condition holds for every answer: "tell me when my code is bad"
    manner = STYLE_WORDS.search(text) or _STANDING_WORDS.search(text)
    return manner is None or _ONE_OFF.search(text) is not None


def _standing_tail(text: str) -> NormProposal | None:
    """Return the norm ``text`` sets after another norm, read as if it began with "Always"."""
    return _detect_clause(f"Always {text}") if _HOW_TAIL.match(text) else None


def _detect_clause(part: str) -> NormProposal | None:
    """Return the norm one clause sets, or None."""
    native = _NATIVE_NO_LISTS.search(part)
    if native and not part.strip().endswith("?"):
        return NormProposal(
            "no_lists", {}, "Never use bullet points or numbered lists.", part.strip()
        )
    clause = _parse(part)
    if clause is None:
        address = _ADDRESS_STATEMENT.match(_LEAD_IN.sub("", _strip(part)).rstrip(".!"))
        if address and not part.strip().endswith("?"):
            clause = _Clause(original=_strip(part), core=_LEAD_IN.sub("", _strip(part)))
        else:
            bare = _TRAILERS.sub("", _LEAD_IN.sub("", _strip(part)).rstrip("!. "))
            native_language = _NATIVE_LANGUAGE.search(part) or _BARE_LANGUAGE.match(bare)
            if native_language is None or part.strip().endswith("?"):
                return None
            clause = _Clause(original=bare, core=bare, directive=True)
    for matcher in _MATCHERS:
        matched = matcher(clause)
        if matched is not None:
            return matched
    return None


def without_norms(message: str) -> str:
    """Return ``message`` without the clauses that set a norm: what the reply must be about.

    "Please keep your answers short from now on. What should I cook tonight?" is about cooking;
    the instruction's words ("answers", "short") set no topic a draft must share; a request after
    an instruction is kept ("keep it short and tell me how tides work" is about tides). A clause
    longer than ``NORM_CLAUSE_MAX_WORDS`` is kept even when it sets a norm: it may carry a request
    too ("never use lists when you explain how tides work"). What ``detect`` reads as a second
    norm after a first is dropped too ("… and translate new words into English").
    """
    kept: list[str] = []
    for clauses in _sentence_clauses(message):
        after_norm = False
        for part in clauses:
            for piece in (p.strip() for p in _SPLIT_REQUEST.split(part) if p.strip()):
                norm = _detect_clause(piece)
                if norm is None and after_norm:
                    norm = _standing_tail(piece)
                if norm is None or len(piece.split()) > NORM_CLAUSE_MAX_WORDS:
                    kept.append(piece)
                after_norm = norm is not None
    return " ".join(kept)


# =========================================================================== prompt and ack


def prompt_lines(norms: Iterable[NormLike]) -> list[str]:
    """Render active norms as short prompt lines, one per norm."""
    lines: list[str] = []
    for norm in norms:
        line = render_line(norm.kind, norm.params)
        if line and line not in lines:
            lines.append(line)
    return lines


def render_line(kind: str, params: Mapping[str, object]) -> str:
    """Return the prompt line of one norm."""
    if kind == "no_lists":
        return "Never use bullet points or numbered lists."
    if kind == "max_sentences":
        n = _int(params.get("n"), BRIEF_SENTENCES)
        return f"Answer in at most {n} sentence{'s' if n != 1 else ''}."
    if kind == "address_as":
        return f"Address the user as {params.get('name', '')}."
    if kind == "language":
        return f"Answer in {params.get('name', params.get('code', ''))}."
    if kind == "avoid_topic":
        return f"Never mention {params.get('topic', '')}."
    if kind == "style":
        return str(params.get("instruction", ""))
    return ""


def _int(value: object, default: int) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return default


_ACK_HEADS = ack_heads()
"""How an acknowledgement opens, in English and in each language with a phrasebook."""


def is_acknowledgement(paragraph: str) -> bool:
    """Say whether ``paragraph`` opens like the kernel's acknowledgement of a norm."""
    return paragraph.lstrip().startswith(_ACK_HEADS)


def strip_ack_head(text: str) -> str:
    """Drop the acknowledgement's opening from a draft that copied it ("Understood — I know …").

    Seen on Qwen2.5-Coder-0.5B after a norm was acknowledged: "What do you know about me?" got
    "Understood — I know you're Dana, …". Only the kernel acknowledges, in the turn that records
    a norm; a draft that opens with the formula in another turn keeps what follows it.
    """
    stripped = text.lstrip()
    for head in _ACK_HEADS:
        if stripped.startswith(head):
            rest = stripped[len(head) :].lstrip()
            return rest[:1].upper() + rest[1:]
    return text


def language_of(norms: Sequence[NormLike]) -> str:
    """Return the code of the language the norms ask for ("pt"), "en" when none does."""
    for norm in norms:
        if norm.kind == "language":
            return str(norm.params.get("code", "en")) or "en"
    return "en"


_ENGLISH_WORD = re.compile(
    r"\b(?:the|and|is|are|what|where|who|why|when|how|you|your|my|with|for|this|that|of|to|at"
    r"|by|or|right|it's|i'm|please|can)\b",
    re.I,
)
"""A word that makes a message English enough that the kernel's lines stay English."""


def reply_language(norms: Sequence[NormLike], message: str) -> str:
    """Return the language of the kernel's own words in a reply to ``message``.

    A language norm decides. Without one, a message in which ``kernel.foreign_facts`` reads a
    fact or a question about the user ("Vivo en Valencia", "¿Dónde vivo?") is answered in its
    language: the kernel's "Noted …" and "From what you told me …" lines about a Spanish
    statement are Spanish. So is a message with about three common words of one of the five
    languages (a word several share counts less): "Dame tres consejos para dormir mejor" gets a
    list folded into prose as "Primero, …". A message with a common English word, or English
    facts, is English whatever else it holds ("Vivo en Valencia, right?").
    """
    if any(norm.kind == "language" for norm in norms):
        return language_of(norms)
    english = _ENGLISH_WORD.search(message) is not None
    if english or english_facts(message):  # "My name is Tom … Hablo un poco de español"
        return "en"
    found = message_language(message)
    if found:
        return found
    guessed = guess_language(message, least=2.5)
    return guessed if guessed in PHRASEBOOKS else "en"


REPLY_LANGUAGE_LEAST = 2.5
"""Distinct function words of one language a draft needs before it counts as written in it
(``guess_language``): "Voici." or a quoted "merci" make no French reply."""
_LANGUAGE_NAMED = re.compile(rf"(?<![\w-]){_LANG}(?![\w-])", re.IGNORECASE)


def language_name(code: str) -> str:
    """Return the English name of a language code ("fr" -> "French"); the code if unknown."""
    return next((name for known, name in LANGUAGES.values() if known == code), code)


_QUOTED_SPAN = re.compile(r"“[^”]*”|«[^»]*»|„[^“”]*[“”]|\"[^\"\n]*\"|(?<!\w)'[^'\n]*'(?!\w)")
"""A quotation in a draft: a phrase the user asked for ("Try: 'Je voudrais un croissant'")."""


_BACK_RE = re.compile(
    r"(?<![\w'-])(?:it|that|this|these|those|the same|again|one more|another|instead|too)"
    r"(?![\w'-])",
    re.IGNORECASE,
)
"""Words that point back at the turn before ("Now make it more formal.", "The same for Friday")."""


def off_language(draft: str, norms: Sequence[NormLike], message: str, previous: str = "") -> str:
    """Return the language ``draft`` should be in when it is written in another one, else "".

    The expected language is the language norm's, else the message's (``reply_language``).
    Nothing is expected of a reply to a message that hands a text over (``kernel.mention``:
    "Proofread this: …") or names a language ("Translate into French: …", "a sentence in German
    for practice"), nor of one to a follow-up of such a message (``previous``, pointed back at:
    "Now make it more formal."), nor of one to a message too short to tell its language.
    Quotations in the draft do not count ("Try: 'Je voudrais un croissant'"). Only the six
    languages the kernel reads are told apart; the draft must use ``REPLY_LANGUAGE_LEAST``
    function words of its language, twice as many as of the expected one. Seen on
    Qwen2.5-Coder-0.5B: after one translation into French, English questions were answered in
    French (the dialogue's last reply copied).
    """
    normed = any(norm.kind == "language" for norm in norms)
    follow_up = bool(previous) and _BACK_RE.search(message) is not None
    for said in (message, previous) if follow_up else (message,):
        if said and (material(said) or _LANGUAGE_NAMED.search(said)):
            return ""
    expected = reply_language(norms, message)
    if expected not in PHRASEBOOKS or (not normed and guess_language(message) != expected):
        return ""  # a message too short to tell ("Hola, ¿qué tal?") expects nothing
    scores = language_scores(_QUOTED_SPAN.sub(" ", draft))
    found = max(scores, key=lambda code: scores[code])
    # clearly another language: Portuguese and Spanish share many words ("a partir de")
    other = scores[found] >= REPLY_LANGUAGE_LEAST and scores[found] >= 2 * scores[expected]
    return expected if found != expected and other else ""


def acknowledgement(norms: Sequence[NormLike], language: str | None = None) -> str:
    """Return one short sentence acknowledging norms recorded this turn ("" when none).

    Said in ``language`` (the active language norm's; default: that of a language norm among
    ``norms``, else English) when it has a phrasebook: "Answer in Portuguese and keep it short"
    is acknowledged in Portuguese, and so is "keep it short" once Portuguese is the norm.
    """
    book = phrasebook(language_of(norms) if language is None else language)
    parts: list[str] = []
    for norm in norms:
        params = norm.params
        said = book.ack_later if parts and book.ack_later else book.ack
        if norm.kind == "max_sentences":
            n = _int(params.get("n"), BRIEF_SENTENCES)
            parts.append(said["one" if n == 1 else "many"].format(n=n))
        elif norm.kind == "address_as":
            parts.append(said["address_as"].format(name=params.get("name", "")))
        elif norm.kind == "language":
            parts.append(said["language"].format(name=params.get("name", "")))
        elif norm.kind == "avoid_topic":
            topic = str(params.get("topic", ""))
            if book is ENGLISH:
                topic = topic.replace("the user's", "your")
            else:  # the user's own words, quoted: no English possessive inside
                topic = '"' + topic.replace("the user's ", "") + '"'
            parts.append(said["avoid_topic"].format(topic=topic))
        elif norm.kind == "style":
            instruction = str(params.get("instruction", "")).rstrip(".")
            instruction = instruction.replace("the user's", "your").replace("the user", "you")
            lowered = f"{instruction[:1].lower()}{instruction[1:]}"
            parts.append(said["style"].format(instruction=lowered))
        elif norm.kind in said:
            parts.append(said[norm.kind])
    if not parts:
        return ""
    return f"{book.ack_head} {join_series(parts, book)}{book.ack_tail}"


# =========================================================================== enforcement

_LIST_LINE = re.compile(
    r"^(?P<indent>\s*)(?:(?P<bullet>[-*+•●▪◦‣–—])|(?P<num>\(?\d{1,3}[.)]|\(?[a-zA-Z][.)]))"
    r"\s+(?P<item>\S.*)$"
)
_FENCE = re.compile(r"^\s*(?:```|~~~)")


def _is_list_line(line: str) -> re.Match[str] | None:
    match = _LIST_LINE.match(line)
    if not match:
        return None
    if match.group("num") and re.match(r"\(?[a-zA-Z][.)]", match.group("num")):
        # "a) …" only counts as a list marker when it is a single letter used as a label
        if not re.match(r"\(?[a-hA-H][.)]$", match.group("num")):
            return None
    return match


def _clean_item(text: str) -> str:
    text = re.sub(r"\*\*(.+?)\*\*|__(.+?)__", lambda m: m.group(1) or m.group(2), text)
    text = re.sub(r"^\[[ xX]\]\s+", "", text)  # task-list checkboxes
    return " ".join(text.split()).strip()


def _end(text: str) -> str:
    text = text.rstrip()
    if text.endswith((":", ";", ",")):
        text = text[:-1].rstrip()
    return text if text.endswith((".", "!", "?", "…")) else text + "."


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _join_items(intro: str | None, items: list[str], numbered: bool, book: Phrasebook) -> str:
    """Turn list items into prose, keeping every item's words (ordinals in ``book``'s language)."""
    if not numbered and short_items(items):
        series = series_of(items, book)
        if intro is not None:
            lead = intro.rstrip()
            lead = lead[:-1].rstrip() if lead.endswith(":") else lead
            return _end(f"{lead}: {series}")
        return _end(_cap(series))
    sentences = []
    ordinals = book.ordinals
    for index, item in enumerate(items):
        sentence = _end(_cap(item.rstrip(";,")))
        if numbered:
            if len(items) > 1 and index == len(items) - 1 and index >= len(ordinals) - 1:
                word = book.finally_
            else:
                word = ordinals[index] if index < len(ordinals) else book.then
            if book is ENGLISH:  # "First, python …" was lowered: only a lead word is
                sentence = decapitalize(sentence)
            elif opens_with_connector(sentence, book):  # "Dann die Nudeln …": its own
                sentences.append(sentence)
                continue
            elif book.lower_after_ordinal:
                sentence = lead_lowered(sentence, book)
            sentence = f"{word}{book.ordinal_sep}{sentence}"
        sentences.append(sentence)
    body = " ".join(sentences)
    if intro is not None:
        lead = intro.rstrip()
        return f"{lead if lead.endswith(':') else _end(lead)} {body}"
    return body


def prose_from_lists(text: str, language: str = "en") -> str:
    """Rewrite bullet and numbered list lines as prose sentences (code blocks are left alone).

    The words the rewrite adds ("First, …", "… and …") are in ``language``; a list that reads as
    English (a model that ignored the language norm) gets them in English.
    """
    lines = text.split("\n")
    out: list[str] = []
    in_fence = False
    index = 0
    while index < len(lines):
        line = lines[index]
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append(line)
            index += 1
            continue
        if in_fence or not _is_list_line(line):
            out.append(line)
            index += 1
            continue
        items: list[str] = []
        numbered = False
        while index < len(lines):
            match = _is_list_line(lines[index])
            if match is None and items and not lines[index].strip():
                ahead = index
                while ahead < len(lines) and not lines[ahead].strip():
                    ahead += 1
                if ahead < len(lines) and _is_list_line(lines[ahead]):
                    index = ahead  # items spaced by blank lines are still one list
                    continue
            if match is None:
                if lines[index].strip() and items and lines[index].startswith((" ", "\t")):
                    items[-1] += " " + lines[index].strip()  # a wrapped item
                    index += 1
                    continue
                break
            numbered = numbered or bool(match.group("num"))
            items.append(_clean_item(match.group("item")))
            index += 1
        intro = None
        if out and out[-1].strip() and not _FENCE.match(out[-1]):
            intro = out.pop().strip()
        book = list_phrasebook(items, language)
        out.append(_join_items(intro, [i for i in items if i], numbered, book))
    result = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", result).strip("\n")


def has_list_lines(text: str) -> bool:
    """Say whether any line outside a code block is a bullet or numbered list item."""
    in_fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and _is_list_line(line):
            return True
    return False


_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+(?=\S)|\n+")
_LIST_NUMBER = re.compile(r"\(?\d{1,2}[.)]")


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (line breaks end one too).

    A list number on its own ("… calculations. 2. **Use a profiler**: …") begins the sentence
    after it: a cut to three sentences never ends on a dangling "2.".
    """
    out: list[str] = []
    marker = ""
    for piece in (s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()):
        if _LIST_NUMBER.fullmatch(piece):
            marker = f"{marker} {piece}".strip()
            continue
        out.append(f"{marker} {piece}".strip() if marker else piece)
        marker = ""
    if marker:  # a number left at the very end counts as a sentence (a cut drops it)
        out.append(marker)
    return out


def limit_sentences(text: str, n: int) -> str:
    """Keep the first ``n`` sentences of ``text`` (joined by spaces when cut)."""
    parts = split_sentences(text)
    if n < 1 or len(parts) <= n:
        return text
    return " ".join(parts[:n])


_GREETING = re.compile(
    r"\b(?P<greet>Hi|Hello|Hey|Dear|Good (?:morning|afternoon|evening)|Welcome(?: back)?|"
    r"Thanks|Thank you|Hiya|Howdy|Bye|Goodbye|See you)(?P<sep>,?\s+)(?P<name>[A-ZÀ-Ý][\w'’-]+)\b"
)
_NOT_GREETED = frozenset({"There", "Again", "Everyone", "All", "Folks", "So", "For", "I", "You"})


def fix_address(text: str, name: str, known_names: Iterable[str] = ()) -> str:
    """Address the user as ``name``: greeting names and other known names of theirs become it."""
    if not name:
        return text
    first = name.split()[0]

    def greet(match: re.Match[str]) -> str:
        found = match.group("name")
        if found in {name, first} or found in _NOT_GREETED:
            return match.group(0)
        return f"{match.group('greet')}{match.group('sep')}{name}"

    text = _GREETING.sub(greet, text)
    for other in {n.strip() for n in known_names if n and n.strip()}:
        if other.lower() in {name.lower(), first.lower()}:
            continue
        text = re.sub(rf"(?<![\w-]){re.escape(other)}(?![\w-])", name, text)
    return text


def drop_topic(
    text: str, words: Sequence[str], language: str = "en", *, move_on: bool = True
) -> str:
    """Drop the sentences that mention every word of a topic (plurals included).

    When nothing is left, the reply moves on, in ``language`` ("Let's talk about something
    else."), unless ``move_on`` is false (the turn has its acknowledgement to say instead).
    """
    words = [w for w in words if w]
    if not words:
        return text
    patterns = [re.compile(rf"\b{re.escape(w)}(?:s|es|'s)?\b", re.IGNORECASE) for w in words]
    kept_lines = []
    for line in text.split("\n"):
        parts = re.split(r"(?<=[.!?…])\s+", line)
        kept = [p for p in parts if not all(p_.search(p) for p_ in patterns)]
        if parts and not kept and line.strip():
            continue
        kept_lines.append(" ".join(kept))
    result = "\n".join(kept_lines).strip()
    return result or (phrasebook(language).topic_dropped if move_on else "")


_NAMED = re.compile(
    r"\b(?:my name is|user'?s name is|name\s*=|call me|i am called|i'm called)\s+"
    r"([A-ZÀ-Ý][\w'’-]{1,30})"
)


def known_names(texts: Iterable[str]) -> list[str]:
    """Return the user's names stated in ``texts`` ("my name is Samantha", belief lines)."""
    found: list[str] = []
    for text in texts:
        for match in _NAMED.finditer(text):
            if match.group(1) not in found and match.group(1).lower() not in _NOT_NAMES:
                found.append(match.group(1))
    return found


def enforce(
    reply: str,
    norms: Sequence[NormLike],
    *,
    known: Iterable[str] = (),
    ack: str = "",
) -> str:
    """Apply the norms to a final reply whatever the model said; put ``ack`` first.

    ``avoid_topic`` drops sentences, ``no_lists`` rewrites list lines as prose, ``address_as``
    fixes the name used, ``max_sentences`` cuts the reply (the acknowledgement counts against
    the limit, but at least one sentence of the reply is kept).
    """
    text = reply
    limit: int | None = None
    for norm in norms:
        if norm.kind == "avoid_topic":
            raw = norm.params.get("words", [])
            words = [str(w) for w in raw] if isinstance(raw, list | tuple) else []
            text = drop_topic(text, words, language_of(norms), move_on=not ack)
    if any(norm.kind == "no_lists" for norm in norms):
        text = prose_from_lists(text, language_of(norms))
    for norm in norms:
        if norm.kind == "address_as":
            text = fix_address(text, str(norm.params.get("name", "")), known)
        elif norm.kind == "max_sentences":
            n = _int(norm.params.get("n"), BRIEF_SENTENCES)
            limit = n if limit is None else min(limit, n)
    if limit is not None:
        room = limit - (len(split_sentences(ack)) if ack else 0)
        text = limit_sentences(text, max(1, room))
    if ack and ack not in text:
        text = f"{ack}\n\n{text}" if text.strip() else ack
    return text

"""Text the user hands the agent to work on says nothing about the user.

"Translate to German: my name is Peter and I work at Siemens" asks for a translation: the name
and the employer belong to the text, not to the user. Before this module the statement grammars
(``kernel.facts``, ``kernel.foreign_facts``) read them as beliefs — "Translate to English: Me
llamo Ana y vivo en Sevilla" turned the user Peter of Berlin into Ana of Sevilla — and the
translation the agent gave back ("Ich wohne in Berlin") was "said back to the user" as a user
fact in the agent's mouth ("Dein Wohnort ist Berlin").

Two things hand a text over. A **request for text work** is a clause that opens, after a polite
lead ("please", "could you", "peux-tu", "kannst du"), with a verb of working on a text (translate,
rewrite, proofread, summarise, continue, write, pretend …) in the six languages the kernel reads;
a polite question with such a verb anywhere ("Kannst du den Text korrigieren?"); or a head before
a colon that asks for such work, names a text ("An example sentence:") or a target language ("In
Spanish, please:"). An **introduction** is a clause that reports someone's words ("A client
wrote:", "Una collega mi ha scritto «…»") or points at a text ("I got this email:", "My friend
sent me this:"), before a colon, a quotation or a line break. A clause that opens in the first
person is the user speaking ("My story:", "I translate books for a living"), and one asking the
agent to keep what follows ("Note this:", "Segnati questo:") is the user's own statement.

What is handed over (the **material**):

* after a colon (not "8:00"), after "the following", or after a line break or quotation right
  after a request that names or points at its text ("Proofread this for me?" and the text below
  it, "Fix the typos"): the rest of the message; a colon followed by a quotation hands over only
  the quotation;
* a request to translate or correct that ends the message pointing back ("Ich wohne in Hamburg.
  Translate that.", "pásalo al inglés"): everything before it; one inside a sentence ("… I'm a
  teacher — translate that into Italian"): its sentence;
* otherwise a translate-or-correct request's own clause ("Translate I work at Google into French");
* a quotation with a first-person word, wherever it stands (a quoted name or title is not);
* and every line of a pasted chat (two or more lines opening "Name:", heading words aside).

A request to make a new text ("Write a recipe") hands over only what follows its colon, and not
even that when the text is the user's own ("Write my cover letter: I'm a nurse …"); a request on
a topic ("Check my symptoms", "Review my diet") hands over nothing.

What a user tells the agent in the same message before the request still counts ("I live in Oslo.
Can you translate this into Norwegian: good morning"). Quoted text needs no rule: a statement
grammar reads a clause that opens in the first person, and a quote sits inside another clause.

The chosen trade-off: a fact written inside material is lost rather than a false one believed
("Proofread my bio: I'm a nurse in Leeds" teaches nothing); the user's own statements say it again.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from kernel import foreign_facts
from kernel.foreign_facts import fold
from kernel.text import merge_spans

MAX_TEXT_CHARS = foreign_facts.MAX_TEXT_CHARS
"""Requests are looked for in a message's first 4,000 characters (facts are read no further)."""
MAX_CLAUSE_CHARS = 200
"""A request opens its clause: a clause is read this far, so no pattern runs over a long text."""
MAX_CLAUSES = 24
"""Clauses looked at per sentence: a run of hundreds of dashes or commas asks for nothing."""
MAX_HEAD_WORDS = 14
"""A head before a colon longer than this is a sentence of its own, not a request for work."""

_LEADS = (
    # English
    "please|pls|plz|kindly|now|ok|okay|also|and|then|just|quickly|quick|hey|hi|hello|so|right"
    "|(?:can|could|would|will) (?:you|u)|would you mind|do you mind"
    "|i (?:want|need|would like|'d like) you to|help me(?: to)?|let's|let us|go ahead and"
    "|i need(?: this| it| that| these| the following)?|i want(?: this| it| that| these)?"
    "|try to|you can|lumen"
    # Spanish, Portuguese
    "|por favor|porfa|puedes|podrias|puede|podria|me puedes|me podrias|quiero que|necesito que"
    "|ayudame a|hola|oye|y|ahora|tambien|pode|podes|poderia|podia|voce pode|voce poderia"
    "|me ajuda a|quero que|preciso que|ola|oi|e|agora"
    # French
    "|s'il te plait|s'il vous plait|stp|svp|peux-tu|pouvez-vous|pourrais-tu|pourriez-vous"
    "|tu peux|vous pouvez|tu pourrais|vous pourriez|je veux que tu|j'aimerais que tu|aide-moi a"
    "|merci de|bonjour|salut|et|maintenant|aussi"
    # German
    "|bitte|kannst du|konntest du|konnen sie|konnten sie|hilf mir|hallo|und|jetzt|auch|mal"
    # Italian
    "|per favore|per piacere|puoi|potresti|mi puoi|mi potresti|vorrei che|aiutami a|ciao|ora"
    "|anche|mi|me"
)
"""Polite and discourse words that may open a request ("could you please …"), folded."""

_LANGUAGE_NAMES = (
    r"english|spanish|portuguese|french|german|italian|dutch|chinese|japanese|korean|russian"
    r"|arabic|hindi|polish|swedish|norwegian|danish|finnish|greek|turkish|latin|ingles|espanol"
    r"|castellano|portugues|frances|aleman|italiano|anglais|espagnol|portugais|allemand|italien"
    r"|englisch|spanisch|portugiesisch|franzosisch|deutsch|italienisch|inglese|spagnolo"
    r"|portoghese|francese|tedesco|alemao|espanhol"
)
_VERBS = (
    # English (base forms, and participles: "I need this translated:")
    r"translate[ds]?|rewrite|rewritten|rephrased?|reword(?:ed)?|paraphrased?|proofread"
    r"|correct(?:ed)?|fix(?:ed)?|edit(?:ed)?|improved?|polish(?:ed)?|revised?|check(?:ed)?"
    r"|spell-?check(?:ed)?|grammar-?check(?:ed)?|summari[sz]ed?|shorten(?:ed)?|condensed?"
    r"|expand(?:ed)?|simplify|simplified|continue[ds]?|complete[ds]?|finish(?:ed)?"
    r"|transcribed?|convert(?:ed)?|re-?format(?:ted)?|punctuated?"
    r"|analy[sz]ed?|critique|review(?:ed)?|grade|evaluate|parse"
    r"|transliterated?|locali[sz]ed?|adapt(?:ed)?"
    r"|turn(?:\s+[\w']+){1,5}?\s+into"
    rf"|put(?:\s+[\w']+){{1,5}}?\s+(?:into|in\s+(?:{_LANGUAGE_NAMES}))"
    r"|make(?:\s+[\w']+){0,3}?\s+(?:sound|more|less|shorter|longer|formal|polite|professional)"
    r"|say (?:this|that|it) in|(?:read|look at|look over|go over|check out|have a look at"
    r"|take a look at|see|explain|explica|explique|erklare|spiega)(?=\s+(?:this|these|that"
    r"|the following|esto|esta|essa|esse|isso|isto|ceci|ca|cette|ce|das|dies|diesen|diese"
    r"|questo|questa)\b)"
    # Spanish
    r"|traduce|traduceme|traducelo|traducela|traduzca|traducir|traducido|reescribe|reescriba"
    r"|reescribir|corrige|corrija|corregir|revisa|revise|revisar|resume|resuma|resumir"
    r"|parafrasea|parafrasear|continua|continuar|completa|completar|mejora|mejore|mejorar"
    # Portuguese
    r"|traduz|traduza|traduzir|traduzido|reescreve|reescreva|reescrever|corrigir|resumir"
    r"|parafraseia|parafraseie|melhora|melhore|melhorar"
    # French
    r"|traduis|traduisez|traduire|traduit|reecris|reecrivez|reecrire|corrigez|corriger|relis"
    r"|relisez|relire|resumez|resumer|reformule|reformulez|reformuler|paraphrasez|continuez"
    r"|continuer|completez|completer|ameliore|ameliorez|ameliorer"
    # German
    r"|ubersetze|ubersetz|ubersetzen|ubersetzt|uebersetze|uebersetzen"
    r"|korrigiere|korrigier|korrigieren|verbessere|verbessern|formuliere|formulieren|fasse"
    r"|zusammenfassen|uberarbeite|uberarbeiten|erganze|erganzen|vervollstandige"
    # Italian
    r"|traduci|traducimi|traducilo|tradurre|tradotto|riscrivi|riscriva|riscrivere|correggi"
    r"|corregga|correggere|rivedi|riveda|rivedere|riassumi|riassuma|riassumere|riformula"
    r"|riformulare|parafrasa|continui|continuare|completi|completare|migliora|migliorare"
)
"""Verbs of working on a given text, folded (imperatives, infinitives after "could you",
participles): its text follows, inline or after a colon, a line break or a quotation."""

_PRODUCE = (
    r"write|written|composed?|draft(?:ed)?|generated?|create|invent(?:ed)?|make up|made up"
    r"|imagine|pretend|role-?play|role play|act as|tell me a story|escribe|escriba|escribir"
    r"|redacta|redacte|redactar|inventa|invente|imagina|escreve|escreva|escrever|redige|redija"
    r"|redigir|ecris|ecrivez|ecrire|redigez|rediger|inventez|imaginez|schreibe|schreib|schreiben"
    r"|erfinde|stell dir vor|stellen sie sich vor|scrivi|scriva|scrivere|redigi|immagina"
)
"""Verbs of making a new text: what follows them is a topic ("Write a recipe\nI'm allergic to
peanuts" states an allergy); only a text after their colon is handed over ("Write a story that
starts with: …")."""

_MEANING = (
    r"(?:how (?:do|would|can|should|could) (?:you|i|one|we) say|what does|what do|como se dice"
    r"|que significa|que quiere decir|como se diz|o que significa|o que quer dizer"
    r"|comment dit-on|comment on dit|que veut dire|que signifie|wie sagt man|was bedeutet"
    r"|was heisst|come si dice|cosa significa|cosa vuol dire|che cosa vuol dire)"
    r"(?=\s*(?:[\"'“‘«„]|(?:this|that|these|esto|eso|isso|ca|cela|das|dies|questo|quello)\b))"
)
"""Asking what a text means or how to say it: a request only with the text quoted or pointed at
right after ("What does 'je suis allergique' mean?"; "Was bedeutet es, gut zu sein?" asks no
translation)."""

_NOT_WORK = (
    r"write (?:it |this |that |these )?down|note (?:it |this |that )?down|jot (?:it |this )?down"
    r"|schreib(?:e)? (?:dir |ihnen )?(?:das |es )?auf|check (?:in|out)|fix (?:me|us)\b"
)
"""Verb phrases that are not text work: writing down is remembering ("Write it down: …")."""

_TEXT_VERBS = (
    r"translated?|proofread|paraphrased?|rephrased?|reword(?:ed)?|summari[sz]ed?|rewrite"
    r"|rewritten|traduc\w*|traduz\w*|tradui\w*|traduire|tradurre|tradotto|ubersetz\w*"
    r"|uebersetz\w*|korrigieren|corregir|corrigir|corriger|correggere|reformuler|riformulare"
    r"|zusammenfassen|(?:start|begin|open|end)(?:s|ning|ing)?(?:\s+(?:it|them|the \w+))?\s+with"
    r"|shorten|conjugate|kurzen|umschreiben|verbessern|uberprufen|konjugiere|konjugieren"
    r"|acortar|resumir|mejorar|revisar|conjugar|conjuga|encurtar|melhorar|raccourcir|resumer"
    r"|ameliorer|relire|conjuguer|conjugue|accorciare|riassumere|migliorare|rivedere|coniugare"
    r"|coniuga|traduces|traduzes"
)
"""Verbs that ask for text work wherever they stand in a head before a colon ("Kannst du bitte
folgenden Text übersetzen:"); the other verbs of ``_VERBS`` only where a request opens."""

_NOUNS = (
    r"examples?|e\.?g\.?|for instance|samples?|story|stories|tale|poem|song|lyrics|dialogu?e"
    r"|script|scene|quote|quotation|text|sentences?|phrases?|paragraphs?|passage|excerpt"
    r"|transcript|translation|essay|article|prompt|template|e-?mail|message|letter|caption"
    r"|tweet|ejemplo|texto|frase|oracion|parrafo|poema|cancion|dialogo|correo"
    r"|mensaje|carta|exemplo|paragrafo|cancao|mensagem|exemple|texte|paragraphe|conte"
    r"|poeme|chanson|courriel|lettre|beispiel|satz|satze|absatz|geschichte|gedicht"
    r"|nachricht|esempio|testo|racconto|storia|poesia|canzone|messaggio|lettera"
    r"|chat|conversation|thread|review|comment|testimonial|listing|mail|resena|comentario"
    r"|conversacion|avaliacao|comentario|conversa|avis|commentaire|bewertung|kommentar"
    r"|recensione|commento|sms|dm"
    r"|whatsapp|voicemail|adventure|game|role-?play|scenario|rpg|campaign|letra|lettere|frasi"
    r"|frases|testi|textos|esempi|ejemplos|exemplos|exemples|beispiele|messaggi|mensajes"
    r"|mensagens|nachrichten|cartas|lettres|briefe|satze|dialoghi"
)
"""Nouns that name a text: a head before a colon naming one introduces it ("Example:")."""
_SELF_NOUNS = (
    r"bio|profile|cv|summary|description|intro|introduction|presentation|notes|feedback|resume"
    r"|curriculum|lebenslauf|perfil|profil|profilo|resumen|resumo|descripcion|descricao"
    r"|beschreibung|descrizione|presentacion|apresentacao|vorstellung|presentazione"
)
"""Texts a user writes about themselves ("Short bio: I'm a nurse in Leeds"): handed over only
when pointed at or someone else's ("this bio", "her CV")."""

_TARGET = (
    r"\b(?:in|into|to|en|al|para|ao|em|auf|ins)\s+(?:el |la |l'|le |il |lo |o |das )?"
    rf"(?:{_LANGUAGE_NAMES})\b"
)
"""A target language ("in Spanish", "al inglés", "auf Englisch"): a head asking for it asks for
a translation of what follows."""
_ANSWER = (
    r"\b(?:answer|reply|respond|speak|talk|responde|contesta|responda|reponds|repondez|antworte"
    r"|rispondi|parla|habla|fala|parle|sprich)\b"
)
"""A head that says how to answer ("Answer in English: where do I live?") asks no translation."""

_REPORTING = (
    r"wrote|writes|said|says|say|sent|texted|messaged|emailed|e-mailed|posted|forwarded|left|replied"
    r"|commented|tweeted|shared|handed in|escribio|escribe|dijo|dice|mando|envio|reenvio|puso"
    r"|dejo|contesto|respondio|comento|escreveu|escreve|disse|diz|mandou|enviou|encaminhou"
    r"|deixou|respondeu|comentou|postou|ecrit|ecrivait|dit|envoye|laisse|repondu|poste"
    r"|transfere|geschrieben|schreibt|gesagt|sagt|geschickt|hinterlassen|gepostet"
    r"|weitergeleitet|antwortet|scritto|scrive|detto|dice|mandato|inviato|inoltrato|lasciato"
    r"|risposto|postato"
)
"""Verbs that report someone's text ("A client wrote:", "Una collega mi ha scritto:")."""

_REMEMBER = (
    r"remember|note|save|store|keep|memori[sz]e|write (?:\w+ )?down|jot|don't forget"
    r"|recuerda|recuerde|anota|anote|apunta|apunte|guarda|guarde|no olvides|lembra|lembre"
    r"|anotar|salva|salve|nao esqueca|retiens|retenez|notez|souviens|souvenez|garde|gardez"
    r"|enregistre|n'oublie|merk|merke|merken|notier|notiere|speicher|vergiss|ricorda|ricordati"
    r"|segna|segnati|annota|annotati|tieni a mente|non dimenticare"
)
"""Verbs asking the agent to keep what follows ("Note this:", "Segnati questo:"): the user's own
statement, never a text to work on."""

_SUBJECT = r"(?:i|i'm|i've|i'd|yo|eu|je|ich|io)(?![\w'-])|j'"
"""A clause opening with the user as subject ("I said: …") is the user speaking."""

_FIRST_PERSON = (
    r"(?:i|i'm|i've|i'd|my|me|mine|yo|mi|mis|eu|meu|minha|meus|minhas|je|moi|mon|ma|mes"
    r"|ich|mein|meine|meinen|io|mio|mia|miei|mie)(?![\w-])|j'"
)
"""A clause opening with one of these is the user speaking ("My story:", "Je suis …")."""

_POINTER = (
    r"this|these|that|those|the above|all (?:of )?that|the following|following|below"
    r"|esto|este|esta|estos|estas|eso|esa|ese|esse|essa|esses|essas|isso|isto|ce|cet|cette|ces"
    r"|ceci|cela|ca|dieser|diese|diesen|dieses|das|dies|folgenden?|questo|questa|questi|queste"
    r"|quello|quella|siguiente|seguinte|suivante?|seguente"
)
"""Words that point at a text written elsewhere in the message ("proofread this", "esse texto")."""
_NEAR = (
    r"this|these|the following|following|below|esto|este|esta|estos|estas|isso|isto|esse|essa"
    r"|ceci|ce|cet|cette|ces|das|dies|diese|diesen|dieses|folgenden?|questo|questa|questi|queste"
)
"""Pointers to a text at hand ("proofread this"): first in a message, the text follows."""
_CLITIC = (
    r"(?:pasa|traduce|traduci|traduceme|traducime|traduza|traduz|reescribe|corrige|revisa|resume"
    r"|riscrivi|correggi|riassumi|traduzi|manda)(?:lo|la|los|las|melo|mela)"
)
"""A verb carrying its object ("pásalo al inglés", "tradúcelo"): it points at text already there."""
_FORWARD_RE = re.compile(
    r"\b(?:the following|following|below|as follows|siguiente|seguinte|suivante?|folgende[nrs]?"
    r"|seguente)\b"
)
"""A request pointing ahead ("Translate the following into German."): the rest is material."""
_QUOTE = "\"'“”‘’«»„"
_QUOTED_RE = re.compile(
    r"“[^“”]{2,2000}”|«[^«»]{2,2000}»|„[^„“”]{2,2000}[“”]|(?<![\w])\"[^\"]{2,2000}(?<=\S)\"(?![\w])"
    r"|‘.{2,2000}?’(?![\w])|(?<![\w])'(?=\S).{2,2000}?(?<=\S)'(?![\w])",
    re.DOTALL,
)
"""A quotation: its words are someone's (or an example's), whatever frames them. Closing single
quotes must end a word, so an apostrophe ("I'm", "I’m") neither opens nor closes one."""
MAX_LINE_REST = 80
"""After an introduction or request, this much more of its line ("Is it any good, honestly?")
may come before the line break that starts the text."""
_HERE_RE = re.compile(
    r"^\W*(?:here(?:'s| is)?(?: it| they| this| that)?(?: is| are| goes)?|here you go|segue"
    r"|aqui(?: esta| va| vai| tens| tienes)?|voici|voila|hier(?: ist es| bitte)?"
    r"|ecco(?:lo|la|li|le)?)\W*$"
)
"""A head that only presents what follows ("Here it is:", "Segue:", "Voici :")."""

_CLAUSE_RE = re.compile(r"[,;—–]|\s-\s")
"""Where a clause ends inside a sentence: a request may follow a statement ("I'm Tom, can …")."""

_OPEN = r"^[\s\"'“«¿¡(*>-]*"
_ASKING = (
    r"please|kindly|(?:can|could|would|will) (?:you|u)|would you mind|bitte|kannst du"
    r"|konntest du|konnen sie|konnten sie|puedes|podrias|pode|podes|poderia|voce pode|peux-tu"
    r"|pouvez-vous|pourrais-tu|pourriez-vous|tu peux|vous pouvez|puoi|potresti"
)
"""Leads that make a question a request ("Kannst du …", "Puoi …"): their verb may come last."""

_INLINE = (
    r"translate[ds]?|proofread|paraphrased?|rephrased?|reword(?:ed)?|rewrite|conjugate"
    r"|transliterated?|turn(?:\s+[\w']+){1,5}?\s+into"
    rf"|put(?:\s+[\w']+){{1,5}}?\s+(?:into|in\s+(?:{_LANGUAGE_NAMES}))|say (?:this|that|it) in"
    r"|traduc\w*|traduz\w*|tradui\w*|traduire|tradurre|tradotto|ubersetz\w*|uebersetz\w*"
    r"|corrige|corrija|corregir|corrigir|corrigez|corriger|correggi|corregga|correggere"
    r"|korrigiere|korrigieren|conjuga\w*|conjugu\w*|konjugier\w*|coniuga\w*|reformul\w*"
    r"|riformul\w*"
)
"""Verbs whose object, written right after them, is a text ("Translate I work at Google into
French"): the request clause itself is handed over. Other verbs take a topic ("Check what I'm
allergic to", "Review my diet, I'm allergic to gluten")."""

_JUDGED = (
    r"(?:is|does|would|will|can) (?:this|it|that) (?:[\w'-]+ )?(?:correct|right|natural|grammatical"
    r"|ok|okay|sound|read|make sense|work|fine|good)|(?:this|it|that) (?:sounds?|looks?|reads?) "
    r"(?:ok|okay|right|natural|good|fine|correct)|ist (?:das|es|dies) (?:so )?(?:richtig|korrekt"
    r"|gut)|stimmt das|(?:es|esta) (?:esto )?(?:correcto|bien)|est-ce (?:que c'est )?correct"
    r"|c'est correct|e giusto|e corretto|va bene|esta (?:certo|correto)|ta certo"
)
"""A head asking whether a text is right ("Does this sound natural:", "Is this correct:")."""
_PERSONS = (
    r"students?|pupils?|learners?|candidates?|customers?|clients?|applicants?|patients?"
    r"|colleagues?|coworkers?|boss|friends?|neighbou?rs?|users?|characters?|mum|mom|dad|sister"
    r"|brother|son|daughter|wife|husband|partner|teacher|cousin|aunt|uncle|niece|nephew"
    r"|girlfriend|boyfriend|roommate|flatmate|manager|mentor|team ?mate"
)
"""People other than the user whose texts a user brings ("my sister's bio")."""
_OTHERS = (
    r"(?:(?:my|a|an|the|our|his|her|their)\s+)?(?:[\w'-]+\s+)?(?:"
    + _PERSONS
    + r"|he|she|they|you|him|her)(?:'s)?(?:\s+[\w'-]+)?"
)
"""A short head naming someone else ("Student answer:", "My sister:", "You say:"): their words."""

_COLON_RE = re.compile(r"(?<!\d):(?=\s|$)")
"""A colon that introduces something (not "8:00" or "https://")."""

_HEADINGS = frozenset(
    "important reminder update also note notes context background fyi ps edit question answer q a"
    " summary tldr correction todo plan goal info details warning ok yes no btw nb re subject"
    " from to date cc actualizacion nota importante recordatorio contexto pregunta respuesta"
    " resumen atualizacao lembrete pergunta resposta rappel remarque question reponse frage"
    " antwort hinweis wichtig erinnerung aggiornamento promemoria domanda risposta nachtrag"
    " update".split()
)
"""Words that open a line as a heading, not as a speaker ("Important: …", "Reminder: …")."""


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    lead = rf"(?:(?>{_LEADS})(?![\w'-])[\s,!:;-]*)*+"  # possessive: no split is tried twice
    verb = rf"(?!(?:{_NOT_WORK}))(?:{_VERBS}|{_TEXT_VERBS}|{_CLITIC})(?![\w'-])(?!\s*,)|{_MEANING}"
    produce = rf"(?!(?:{_NOT_WORK}))(?:{_PRODUCE})(?![\w'-])(?!\s*,)"
    return {
        "lead": re.compile(rf"{_OPEN}{lead}"),
        "opening": re.compile(rf"{_OPEN}{lead}(?:{verb})"),
        "produce": re.compile(rf"{_OPEN}{lead}(?:{produce})"),
        "inline": re.compile(rf"{_OPEN}{lead}(?:{_INLINE})(?![\w'-])"),
        "asking": re.compile(rf"(?<![\w'-])(?:{_ASKING})(?![\w'-])"),
        "text_verb": re.compile(rf"(?<![\w'-])(?:{_TEXT_VERBS})(?![\w'-])"),
        "noun": re.compile(rf"(?<![\w-])(?:{_NOUNS})(?![\w'-])"),
        "target": re.compile(_TARGET),
        "language_head": re.compile(
            rf"{_OPEN}(?:in\s+)?(?:{_LANGUAGE_NAMES})(?:\s+(?:please|pls|version|translation|too))?"
            r"\W*$"
        ),
        "pointed_target": re.compile(rf"(?<![\w'-])(?:this|it|that)\s+(?:[\w'-]+\s+)?{_TARGET}"),
        "judged": re.compile(rf"(?<![\w'-])(?:{_JUDGED})(?![\w'-])"),
        "others": re.compile(rf"{_OPEN}(?:{_OTHERS})\W*$"),
        "objectless": re.compile(
            rf"{_OPEN}{lead}(?:{_INLINE})(?:\s+(?:it|this|that|please|pls|for me))*"
            rf"(?:\s+{_TARGET})?(?:\s+(?:please|pls|for me))*\W*$"
        ),
        "answer": re.compile(_ANSWER),
        "first_person": re.compile(rf"{_OPEN}(?:{_FIRST_PERSON})"),
        # the request's object points back: right after its verb ("translate that", "put that
        # sentence into", "pásalo")
        "back": re.compile(
            rf"{_OPEN}{lead}(?:(?:(?:{verb}|{_INLINE})\s+(?:[\w'-]+\s+)?|(?:[\w'-]+\s+){{1,2}})"
            rf"(?:{_POINTER})(?![\w'-])|[\w'-]*{_CLITIC}(?![\w'-]))"
        ),
        "pointed": re.compile(
            rf"(?<![\w'-])(?:{_POINTER}|her|his|their|its|su|sua|seu|son|sa|ses|sein|seine"
            rf"|ihr|ihre|suo|sua)\s+(?:[\w'-]+\s+)?(?:{_NOUNS}|{_SELF_NOUNS})(?![\w'-])"
        ),
        "persons_text": re.compile(
            rf"(?<![\w'-])(?:{_PERSONS})(?:'s|s')\s+(?:[\w'-]+\s+)?(?:{_NOUNS}|{_SELF_NOUNS})"
            r"(?![\w'-])"
        ),
        "clitic": re.compile(rf"(?<![\w'-])[\w'-]*{_CLITIC}(?![\w'-])"),
        "please": re.compile(
            r"(?<![\w'-])(?:please|pls|plz|por favor|bitte|s'il te plait|per favore)(?![\w'-])"
        ),
        "self_noun": re.compile(rf"(?<![\w-])(?:{_SELF_NOUNS})(?![\w'-])"),
        "near": re.compile(rf"(?<![\w'-])(?:{_NEAR})(?![\w'-])"),
        "it": re.compile(r"(?<![\w'-])(?:it|that|this|these|those|lo|la|le|es|das)(?![\w'-])"),
        "inline_any": re.compile(rf"(?<![\w'-])(?:{_INLINE})(?![\w'-])"),
        "aspect": re.compile(
            rf"(?<![\w-])(?:{_NOUNS}|typos?|grammar|spelling|mistakes|errors|punctuation|wording"
            r"|phrasing|tone|fautes|errores|erros|fehler|errori)(?![\w'-])"
        ),
        "own_text": re.compile(
            r"(?<![\w'-])(?:cover letter|letter|bio|biography|cv|resume|profile|introduction|intro"
            r"|statement|application|about me|speech|toast)(?![\w'-])"
        ),
        "trailing": re.compile(rf"(?<![\w'-])(?:{_POINTER})\W*$"),
        "remember": re.compile(rf"{_OPEN}{lead}(?:{_REMEMBER})(?![\w'-])"),
        "reporting": re.compile(rf"(?<![\w'-])(?:{_REPORTING})(?![\w'-])"),
        "subject": re.compile(rf"{_OPEN}(?:{_SUBJECT})"),
        "speaker": re.compile(
            r"^[ \t>]*(?:\[[^\]\n]{1,20}\]\s*)?"
            r"((?-i:[A-Z][\w.'-]{0,20}(?: [A-Z][\w.'-]{0,20})?)|(?-i:[a-z]{2,12}))[ \t]*:",
            re.MULTILINE,
        ),
    }


_SENTENCE_RE = re.compile(r"[^.!?\n]*(?:[.!?]+|\n|$)")
"""A sentence with its end (punctuation run or newline); a colon does not end one."""


def _clauses(sentence: str) -> list[tuple[int, int]]:
    """Return (start, end) of each clause of ``sentence`` (``MAX_CLAUSES`` at most)."""
    starts = [0]
    for match in _CLAUSE_RE.finditer(sentence):
        if len(starts) == MAX_CLAUSES:
            break
        starts.append(match.end())
    return list(zip(starts, [*starts[1:], len(sentence)], strict=True))


def _asking(clause: str) -> bool:
    """Say whether ``clause`` opens with a polite request ("Could you …", "Kannst du …")."""
    p = _patterns()
    lead = p["lead"].match(clause)
    return bool(lead and p["asking"].search(lead.group()))


def _asks(clause: str, *, head: bool) -> bool:
    """Say whether ``clause`` asks for work on a given text (``head``: before a colon)."""
    p = _patterns()
    if p["remember"].match(clause):  # "Note this:", "Segnati questo:": the user's own words
        return False
    if p["opening"].match(clause):
        return True
    if len(clause.split()) > MAX_HEAD_WORDS:
        return False
    if _asking(clause) and p["text_verb"].search(clause):
        return True
    if not head:
        return False
    pointed = bool(
        p["pointed"].search(clause)
        or p["trailing"].search(clause)
        or p["pointed_target"].search(clause)
        or p["judged"].search(clause)
    )
    if p["first_person"].match(clause) and not pointed:
        return False
    return pointed or bool(
        (p["please"].search(clause) and p["self_noun"].search(clause))  # "Feedback please:"
        or p["language_head"].match(clause)
        or p["others"].match(clause)
        or p["produce"].match(clause)
        or p["text_verb"].search(clause)
        or (p["noun"].search(clause) and not p["first_person"].match(clause))
        or (p["target"].search(clause) and not p["answer"].search(clause))
    )


def _introduces(clause: str, *, named: bool = False) -> bool:
    """Say whether ``clause`` introduces someone's text: what follows it is that text.

    "A client wrote", "I got this email", "My friend sent me this"; with ``named`` also a text
    named before a quotation ("Sample sentence for my class — …"). The user as the subject
    introduces their own words ("I said", "I need help with this:"), unless naming a text ("I got
    this email"); "Note this:" asks the agent to keep what the user says.
    """
    p = _patterns()
    if p["remember"].match(clause) or len(clause.split()) > MAX_HEAD_WORDS:
        return False
    pointed = p["pointed"].search(clause)
    if _HERE_RE.match(clause) or (pointed and not _subject_of_statement(clause, pointed)):
        return True
    if p["subject"].match(clause):
        return False  # "I loved my mum's letter." tells about the user
    theirs = p["persons_text"].search(clause)  # "Can you look over my cousin's bio?"
    if theirs and not _subject_of_statement(clause, theirs):
        return True
    return bool(
        p["reporting"].search(clause)
        or p["trailing"].search(clause)
        or (named and not p["first_person"].match(clause) and p["noun"].search(clause))
    )


_DETERMINER_RE = re.compile(r"\W*(?:(?:my|our|a|an|the|his|her|their)\s+)?")


def _subject_of_statement(clause: str, pointed: re.Match[str]) -> bool:
    """Say whether the text ``pointed`` names opens ``clause`` as the subject of a statement.

    "My friend's message made me sad" says something of the message; "Here is my colleague's
    intro", "Can you look over my sister's bio" and "My sister's bio, thoughts?" bring it.
    """
    opens = _DETERMINER_RE.fullmatch(clause[: pointed.start()]) is not None
    return opens and len(clause[pointed.end() :].split()) >= 2


def _quoted(text: str) -> list[tuple[int, int]]:
    """Return the quotations of ``text`` that speak in the first person.

    A statement grammar would read the clauses inside them as the user's ("Is “I am allergic of
    cats and I am living in Berlin since 2020” correct?" read Berlin as the user's home). A quoted
    name or title ('I work at "Marks and Spencer"', 'Call me "Big Tom"') stays the user's words.
    """
    return [
        m.span()
        for m in _QUOTED_RE.finditer(text)
        if _SPEAKS_RE.search(fold(m.group())) and not _TITLE_RE.fullmatch(m.group()[1:-1].strip())
    ]


_SMALL = r"&|of|the|and|a|an|in|on|at|to|for|de|du|la|le"
_TITLE_RE = re.compile(
    rf"(?:(?-i:[A-Z0-9])[\w'’.]*|{_SMALL})(?:\s+(?:(?-i:[A-Z0-9])[\w'’.]*|{_SMALL}))*"
)
"""A name or a title in quotes ("Me & You Cafe", "I Will Survive"): every word capitalised."""


_SPEAKS_RE = re.compile(
    r"(?<![\w'])(?:i|i'm|i've|i'd|my|me|yo|soy|estoy|vivo|trabajo|tengo|hablo|eu|sou|estou|moro"
    r"|trabalho|tenho|falo|meu|minha|je|moi|mon|ma|mes|suis|habite|travaille|ich|bin|wohne"
    r"|arbeite|mein|meine|io|sono|abito|lavoro|parlo|mio|mia)(?![\w'])|(?<![\w'])j'"
)
"""A word that speaks in the first person, in one of the six languages (pronouns, and the verbs
that drop them: "soy", "moro", "abito")."""


def _transcript(text: str) -> list[tuple[int, int]]:
    """Return the lines of a pasted chat ("[18:02] Tom: I live in Bristol").

    Two or more lines opening with a speaker's name and a colon are someone's conversation, each
    line its text; a heading word ("Important:", "Reminder:") is no speaker.
    """
    lines = [
        m
        for m in _patterns()["speaker"].finditer(text)
        if fold(m.group(1)).casefold() not in _HEADINGS
    ]
    if len(lines) < 2:
        return []
    spans = []
    for match in lines:
        stop = text.find("\n", match.end())
        spans.append((match.start(), len(text) if stop < 0 else stop))
    return spans


@lru_cache(maxsize=64)
def _handed(text: str) -> tuple[tuple[int, int, bool], ...]:
    """Return (start, end, translated) for each span of ``text`` handed over.

    ``translated``: the request that handed it over asks for a translation (or a meaning). A turn
    asks about its message several times (facts, recall, echo, checks): the answer is kept.
    """
    return tuple(_find_handed(text))


def _find_handed(text: str) -> list[tuple[int, int, bool]]:
    size = len(text)
    found = [(a, b, False) for a, b in _transcript(text) + _quoted(text[:MAX_TEXT_CHARS])]
    folded = fold(text)
    p = _patterns()
    for match in _SENTENCE_RE.finditer(folded):
        sentence, start, end = match.group(), match.start(), match.end()
        if not sentence.strip():
            continue
        after = folded[end:].strip()
        colon = _COLON_RE.search(sentence)
        rest = folded[start + colon.end() :].strip() if colon else ""
        if colon and rest:
            # a clause before the colon asks for work or introduces a text: all after it is text
            head = sentence[max(0, colon.start() - MAX_CLAUSE_CHARS) : colon.start()]
            asking = next(
                (
                    head[a:b]
                    for a, b in _clauses(head)
                    if _asks(head[a:b], head=True) or _introduces(head[a:b])
                ),
                None,
            )
            translated = asking is not None and _translates(asking)
            in_language = asking is not None and not _TRANSLATE_RE.search(asking) and translated
            own = asking is not None and bool(
                p["produce"].match(asking) and p["own_text"].search(asking)
            )
            if asking is None or own:  # "Write my cover letter: I'm a nurse …" is the user's brief
                pass
            elif in_language and rest.endswith("?") and not re.search(r"[.!?]\s", rest):
                pass  # "In Spanish please: where do I live?" asks in Spanish
            elif quoted := _QUOTED_RE.match(
                text, len(text) - len(text[start + colon.end() :].lstrip())
            ):
                found.append((*quoted.span(), translated))  # 'My boss emailed me: "Free Monday?"'
                continue
            else:
                found.append((start + colon.end(), size, translated))
                break
        # after the sentence: a quotation, or a line break with at most a question before it
        line_break = end - 1 if sentence.endswith("\n") else folded.find("\n", end)
        line_rest = folded[end:line_break].strip() if line_break >= 0 else ""
        shown = bool(after) and (
            after.startswith(tuple(_QUOTE))
            or (
                line_break >= 0
                and (not line_rest or (line_rest.endswith("?") and len(line_rest) <= MAX_LINE_REST))
                and bool(folded[line_break:].strip())
            )
        )
        clauses = _clauses(sentence)
        asked = next(((a, b) for a, b in clauses if _asks(sentence[a:b], head=False)), None)
        if asked is None:  # "A patient's daughter texted me this." + a quotation or a line
            if shown and any(_introduces(sentence[a:b], named=True) for a, b in clauses):
                found.append((end, size, False))
                break
            continue
        a, b = asked
        request = sentence[a:b]
        if p["produce"].match(request) and not p["opening"].match(request):
            continue  # "Write a recipe": what follows is a topic, not a text
        translated = _translates(request)
        first = not folded[: start + a].strip()
        inline = bool(
            p["inline"].match(request) or (_asking(request) and p["inline_any"].search(request))
        )
        pointer = bool(p["back"].match(request))
        objectless = bool(p["objectless"].match(request))  # "Translate to Spanish."
        verb = p["opening"].match(request) or p["lead"].match(request)
        named = bool(p["aspect"].search(request[verb.end() if verb else 0 :]))  # "the typos"
        textual = pointer or objectless or named
        ahead = bool(
            _FORWARD_RE.search(request)
            or (shown and textual)
            or (first and objectless and not p["it"].search(request))
            or (first and inline and p["near"].search(request) and pointer)
        )
        if ahead and after:
            found.append((end, size, translated))
            break
        clitic = bool(p["clitic"].search(request))
        if first and (pointer or clitic):
            if end > start + b and pointer:  # "make this sound less awkward - hello my name …"
                found.append((start + b, end, translated))
            continue
        if translated and _QUOTED_RE.search(text[start + a : start + b]):
            found.append((start + a, start + b, True))  # "What does “…” mean?"
        elif (inline or clitic) and (pointer or objectless or clitic) and not after:
            found.append((0, end, translated))  # "Ich wohne in Hamburg. Translate that."
        elif (pointer or clitic) and a > 0:
            found.append((start, start + b, translated))  # "… I'm a teacher — translate that"
        elif inline and not (pointer or objectless):
            found.append((start + a, start + b, translated))  # "Translate I work at X into Y"
    return found


def _translates(request: str) -> bool:
    """Say whether ``request`` asks for a translation or a meaning (or a text in a language)."""
    p = _patterns()
    return bool(
        _TRANSLATE_RE.search(request)
        or p["target"].search(request)
        or p["language_head"].match(request.rstrip(" :"))
    )


def material(text: str) -> list[tuple[int, int]]:
    """Return the spans (start, end) of ``text`` handed over: not the user's own words."""
    return merge_spans((a, b) for a, b, _ in _handed(text))


_TRANSLATE_RE = re.compile(
    r"(?<![\w'-])(?:translat(?:e|es|ed|ing|ion)|traduc(?:e|ir|eme|elo|ela|es|ido|ime|i)"
    r"|traduz(?:a|ir|es|ido)?|tradui[st]|traduire|traduisez|tradurre|tradott[oa]|traducimi"
    r"|traducilo|ubersetz(?:e|en|t)?|uebersetz(?:e|en)|pasalo|pasala|how (?:do|would|can)"
    r" (?:you|i|we) say|como se diz|como se dice|comment dit-on|wie sagt man|come si dice"
    r"|what does|what do|que significa|que veut dire|was bedeutet|was heisst|cosa significa"
    r"|cosa vuol dire)(?![\w'-])"
)


def translation(text: str) -> bool:
    """Say whether ``text`` hands over a text to translate (or to say what it means).

    The reply is that text in other words ("Du bist allergisch gegen Schalentiere" → "You are
    allergic to shellfish"), so none of its values can be matched against what was handed over.
    """
    return any(translated for _, _, translated in _handed(text))


def handed_over(text: str) -> str:
    """Return the text ``text`` hands over (its material, joined), "" when none."""
    return "\n".join(text[a:b] for a, b in material(text))


_CUT = " \t\n,;:—–-"


def own_words(text: str) -> str:
    """Return ``text`` without its material: what the user says in their own voice.

    Material inside a sentence is replaced by "…" (the sentence keeps its hedge, its question
    mark and its clauses: 'If my boss says "…", I work at Aldi from Monday.'); material at the
    start or the end is cut with the punctuation that led to it ("I'm allergic to penicillin —").
    """
    spans = material(text)
    if not spans:
        return text
    out, at = "", 0
    for start, end in spans:
        out += text[at:start]
        at = end
        if start > 0 and end < len(text):
            out += "…"
    out = (out + text[at:]).strip(_CUT)
    return out

"""Pattern tables of the external-content injection detector (:mod:`kernel.injection`).

Data only: regex fragments and compiled patterns, weighted per-family feature tables (instruction
override, role spoof, persona hijack, prompt leak, memory poisoning, tool hijack, exfiltration),
prefilter needles, the multilingual and compact-view tables, mention-detection patterns and the
decoder alphabets. The scoring that uses them lives in :mod:`kernel.injection`; nothing here
inspects text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# =========================================================================== regex fragments

_B = r"(?<![a-z0-9])"
_E = r"(?![a-z0-9])"

_OVERRIDE_VERB = (
    r"(?:ignore|ignoring|disregard(?:ing)?|forget(?:ting)?|discard|abandon|neglect|dismiss"
    r"|set\s+aside|throw\s+(?:away|out)|stop\s+following|(?:don'?t|do\s+not|no\s+longer)\s+"
    r"(?:follow|obey|listen\s+to)|stop\s+obeying|pay\s+no\s+(?:attention|heed)\s+to|overlook"
    r"|put\s+aside|look\s+past|nevermind|never\s+mind)"
)
_WEAK_OVERRIDE_VERB = r"(?:override|overriding|bypass(?:ing)?|overwrite|circumvent|omit|skip)"
"""Verbs that also have everyday technical senses (``override the default settings``)."""
_AI_REF = (
    r"(?:your|all|any|previous(?:ly)?|prior|preceding|above|earlier|former|foregoing|initial"
    r"|original|system|safety|ethical|built-in|programmed|underlying|hidden|preset|core|internal"
    r"|developer|openai|assistant|ai|model|moral|content)"
)
_REF_WORD = (
    r"(?:all|any|every|each|the|your|our|its|their|these|those|this|that|of|and|or|&"
    r"|previous(?:ly)?|prior|preceding|above|earlier|former|foregoing|initial|original|old|older"
    r"|existing|current|default|following|other|system|given|mentioned|said|aforementioned"
    r"|above-mentioned|out-of-date|outdated|safety|security|ethical|built-in|programmed"
    r"|underlying|hidden|preset|standard|usual|normal|base|core|internal|developer|openai"
    r"|assistant|ai|model|entire|whole|such|many|content|moral)"
)
_STRONG_REF = (
    r"(?:all|any|previous(?:ly)?|prior|preceding|above|earlier|foregoing|former|following)"
)
_NOUN_A = (
    r"(?:i\w{0,2}nstr\w{0,3}ctions?|instructions?|directions?|directives?|prompts?|prompting"
    r"|guidelines?|guidance|programming|system\s+prompt|safeguards?|guardrails?|training"
    r"|ethics|morals)"
)
"""What an override targets: nouns that in external text almost only mean the model's orders."""
_NOUN_A2 = (
    r"(?:rules?|commands?|orders?|constraints?|polic(?:y|ies)|restrictions?|filters?"
    r"|configuration|protocols?|limitations?|principles|task|tasks|assignment|objectives?"
    r"|mission|settings|limits)"
)
"""Override targets with everyday senses: they need a reference to the model or to earlier text."""
_NOUN_B = (
    r"(?:text|content|contents|data|info|information|input|messages?|conversation|context"
    r"|request|question|query|words|everything)"
)
_LEAK_VERB = (
    r"(?:reveal|print|show|display|output|repeat|tell|give|list|relay|share|disclose|dump"
    r"|recite|write\s+(?:out|down)|spell[\s-]?check|encode|translate|summari[sz]e|paste|copy"
    r"|return|provide|expose|leak|read\s+(?:me|us|back|out|aloud)|respond\s+with"
    r"|reply\s+with|send|what\s+(?:is|are|was|were)|describe|explain)"
)
_LEAK_VERB_STRICT = (
    r"(?:reveal|print|show|display|output|repeat|tell|give|list|relay|share|disclose|dump"
    r"|recite|write\s+(?:out|down)|spell[\s-]?check|encode|translate|paste|copy|return|provide"
    r"|expose|leak|see|read\s+(?:me|us|back|out|aloud)|respond\s+with|reply\s+with|send)"
)
_LEAK_QUAL = (
    r"(?:your|above|previous|prior|initial|initials|original|hidden|secret|underlying|internal"
    r"|developer|pre|starting|confidential|private|preceding|earlier)"
)
_LEAK_NOUN = (
    r"(?:system\s?prompts?|prompts?|prompting|instructions?|directives?|guidelines|rules"
    r"|configuration|config|parameters|programming|context\s+window|system\s+messages?"
    r"|(?:developer|system|hidden|initial|first|secret)\s+messages?)"
)
_IMPERATIVE = (
    r"(?:send|email|e-mail|forward|transfer|wire|pay|delete|remove|post|upload|share|invite"
    r"|create|schedule|book|reserve|visit|call|buy|purchase|order|grant|approve|change|update"
    r"|reset|get|make|open|click|download|install|reply|respond|write|say|tell|print|output"
    r"|add|set|move|run|execute|go|navigate|give|provide|concatenate|include|insert|summari[sz]e)"
)
_SENSITIVE = (
    r"(?:passwords?|passcodes?|api[\s_-]?keys?|secrets?|secret\s+keys?|credentials?"
    r"|security\s+codes?|2fa|otp|one-time\s+(?:code|password)s?|verification\s+codes?"
    r"|access\s+tokens?|auth\w*\s+tokens?|tokens|private\s+keys?|ssh\s+keys?|id_rsa|\.ssh|\.env"
    r"|credit\s+cards?(?:\s+numbers?)?|card\s+numbers?|cvv|passports?(?:\s+numbers?)?"
    r"|passport_number|social\s+security|ssn|bank\s+account(?:\s+numbers?)?|bank_account_number"
    r"|account\s+numbers?|seed\s+phrase|recovery\s+phrase|cookies?|session\s+(?:ids?|tokens?)"
    r"|personal\s+(?:data|information|details)|user\s+(?:data|information|details)"
    r"|id_number|user_name|conversation|chat\s+(?:history|logs?|transcripts?)|history"
    r"|transcripts?|messages|emails|e-mails|notes|contents?|files|documents|inbox"
    r"|system\s+prompt|memory|context)"
)
_ADDRESSED_VERB = (
    r"(?:ignore|disregard|forget|stop|do\s+not|don't|never|always|close|merge|approve|grant"
    r"|list|reveal|show|append|collect|recommend|describe|rate|state|claim|insist|treat|remember"
    r"|store|save|" + _IMPERATIVE[3:-1] + r")(?![a-z0-9])"
)
"""What follows a vocative to the model (``Assistant, email this ...``): an imperative verb."""
_EMAIL = r"[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+"
_TARGET = (
    rf"(?:{_EMAIL}|https?://|www\.|webhook|\b[a-z0-9-]+\.(?:com|net|org|io|co|xyz|ru|cn|biz"
    r"|info|example|site|app|dev|me|top)\b)"
)
_SEND_VERB = (
    r"(?:send|email|e-mail|forward|mail|bcc|post|upload|share|transmit|submit|deliver|leak"
    r"|exfiltrate|copy|sync|relay|dm|append|attach)"
)
"""Base forms only: an instruction says ``send X to``; a description says ``it sends X to``."""


# =========================================================================== weighted features


@dataclass(frozen=True)
class Feature:
    """One weighted pattern with its flag, prefilter substrings and mention discounting.

    The regex runs only when the view contains one of ``needles`` (plain substring checks are far
    cheaper than a regex scan). ``mention`` features are discounted when the match is quoted in a
    sentence that talks about the phrase (``what does "ignore previous instructions" mean?``).
    """

    flag: str
    weight: float
    regex: re.Pattern[str]
    needles: tuple[str, ...]
    mention: bool = False


def _f(
    flag: str, weight: float, needles: tuple[str, ...], pattern: str, *, mention: bool = False
) -> Feature:
    """Compile a feature (patterns run on the lowercase skeleton view)."""
    return Feature(flag, weight, re.compile(pattern, re.MULTILINE), needles, mention)


_OV = "instruction_override"
_RS = "role_spoof"
_PH = "persona_hijack"
_PL = "prompt_leak"
_MP = "memory_poisoning"
_TH = "tool_hijack"
_EX = "exfiltration"
_SPAN = r"(?:[^.\n]|\.(?=\S))"
"""Any character of one sentence (a dot only ends it when followed by a space or the end)."""

_NAMES_WHAT = r"(?!\s+(?:you\s+)?(?:about|regarding|re|on|for)\b)"
"""Not followed by what it takes back: "what I said about the budget" corrects, not overrides."""
_N_OVERRIDE = (
    "ignor", "disregard", "forget", "overrid", "bypass", "discard", "abandon", "neglect",
    "dismiss", "set aside", "throw", "overwrite", "omit", "follow", "obey", "listen",
    "attention", "heed", "mind", "overlook", "put aside", "look past",
)  # fmt: skip
_N_ROLE = ("system", "developer", "admin", "root", "operator", "sudo")
SEND_NEEDLES = (
    "send", "email", "e-mail", "forward", "mail", "bcc", "post", "upload", "share", "transmit",
    "submit", "deliver", "leak", "exfiltrate", "copy", "sync", "relay", "dm ", "append",
    "attach",
)  # fmt: skip

FEATURES: tuple[Feature, ...] = (
    # ---- instruction override
    _f(
        _OV,
        0.85,
        _N_OVERRIDE,
        rf"{_B}{_OVERRIDE_VERB}(?:\s+{_REF_WORD}){{0,5}}\s+{_NOUN_A}{_E}",
        mention=True,
    ),
    _f(
        _OV,
        0.85,
        _N_OVERRIDE,
        rf"{_B}{_OVERRIDE_VERB}(?:\s+{_REF_WORD}){{0,3}}\s+{_AI_REF}(?:\s+{_REF_WORD}){{0,2}}\s+"
        rf"{_NOUN_A2}{_E}",
        mention=True,
    ),
    _f(
        _OV,
        0.7,
        ("overrid", "bypass", "overwrite", "circumvent", "omit", "skip"),
        rf"{_B}{_WEAK_OVERRIDE_VERB}(?:\s+{_REF_WORD}){{0,4}}\s+{_NOUN_A}{_E}"
        rf"|{_B}{_WEAK_OVERRIDE_VERB}\s+(?:all\s+(?:of\s+)?)?your(?:\s+[\w'-]+){{0,2}}\s+"
        rf"(?:{_NOUN_A}|{_NOUN_A2}){_E}",
        mention=True,
    ),
    _f(
        _OV,
        0.5,
        _N_OVERRIDE,
        rf"{_B}{_OVERRIDE_VERB}(?:\s+{_REF_WORD}){{0,3}}\s+{_STRONG_REF}(?:\s+{_REF_WORD}){{0,2}}"
        rf"\s+{_NOUN_B}{_E}",
        mention=True,
    ),
    _f(
        _OV,
        0.7,
        _N_OVERRIDE,
        rf"{_B}{_OVERRIDE_VERB}\s+(?:(?:all|everything|anything)\s+)?(?:the\s+|all\s+)?"
        r"(?:above|before|that\s+came\s+before|the\s+rest(?:\s+of)?|rest\s+of"
        r"|what\s+you\s+(?:said|told|wrote|asked|were\s+told)"
        r"|everything\s+(?:i|we)(?:'ve|\s+have)?\s+(?:said|told\s+you|written|asked)"
        rf"{_NAMES_WHAT}"
        r"|you\s+(?:were|have\s+been)\s+told)",
        mention=True,
    ),
    # The speaker taking back their own words is a correction more often than an attack ("Disregard
    # what I said about the budget, we have $2,000"): a flag, and none when it names what it
    # corrects.
    _f(
        _OV,
        0.3,
        _N_OVERRIDE,
        rf"{_B}{_OVERRIDE_VERB}\s+(?:what\s+(?:i|we)|(?:i|we)(?:'ve|\s+have)?)\s+"
        rf"(?:said|told(?:\s+you)?|wrote|written|asked){_NAMES_WHAT}",
        mention=True,
    ),
    _f(
        _OV,
        0.4,
        ("everything",),
        rf"{_B}(?:ignore|disregard|forget)\s+everything{_E}",
        mention=True,
    ),
    _f(
        _OV,
        0.55,
        ("ignor", "disregard", "forget"),
        r"(?<![a-z])(?:ignore|disregard|forget)\s[^.!?\n]{1,60}?,?\s(?:and|then)\s+"
        r"(?:just\s+|instead\s+|only\s+|simply\s+)?(?:print|say|write|output|respond|reply|repeat"
        r"|tell|return|translate|spell|answer|state|type|show|list|produce|generate)",
        mention=True,
    ),
    _f(
        _OV,
        0.55,
        ("ignor", "disregard"),
        rf"{_B}(?:ignore|disregard)\s+(?:the|your|this)\s+user(?:'s)?(?:\s+(?:request|question"
        r"|message|input|query|task))?" + _E,
        mention=True,
    ),
    _f(
        _OV,
        0.5,
        ("overrid", "supersede", "take precedence", "takes precedence"),
        r"(?:this|the\s+following|these|my|new|that)\s+(?:rule|instruction|directive|message"
        r"|command|order|note)s?\s+(?:overrides?|supersedes?|takes?\s+precedence\s+over)\s+"
        r"(?:all|any|every|the)\s+(?:other|others|previous|prior|earlier|existing)",
        mention=True,
    ),
    _f(
        _OV,
        0.3,
        ("when you",),
        r"(?<![a-z])when\s+you\s+(?:summari[sz]\w*|are\s+asked|answer|respond|reply|translate"
        r"|describe|review|evaluate|rate|read|process)\b[^.\n]{0,80}?\b(?:say|state|claim|tell"
        r"|report|write|mention|insist|respond|reply|output|describe\s+it\s+as)" + _E,
    ),
    _f(
        _OV,
        0.2,
        ("when ",),
        r"(?<![a-z])when\s+(?:summari[sz]\w*|asked|answering|responding|replying|translating"
        r"|describing|reviewing|evaluating|rating)\b[^.\n]{0,80}?\b(?:say|state|claim|tell|report"
        r"|write|mention|insist|respond|reply|output|describe\s+it\s+as)" + _E,
    ),
    _f(
        _OV,
        0.5,
        ("instructions", "rules", "directives", "guidelines", "task", "orders", "programming"),
        r"(?:your|the|my)\s+(?:instructions|rules|directives|guidelines|task|orders|programming"
        r"|system\s+prompt)\s+(?:have|has)\s+(?:now\s+)?(?:changed|been\s+(?:updated|changed"
        r"|replaced|revised|modified|overridden|superseded))",
        mention=True,
    ),
    _f(_OV, 0.2, ("regardless",), r"regardless\s+of\s+(?:the|what|any|its)"),
    _f(
        _OV,
        0.5,
        ("comply", "obey"),
        r"(?:assistant|ai|model|you|llm|bot|agent)\s+(?:must|shall|will|should|has\s+to|is\s+to)\s+"
        r"(?:now\s+)?(?:always\s+)?(?:comply|obey)\s+(?:with\s+)?(?:all|any|every|each)" + _E,
    ),
    _f(
        _OV,
        0.2,
        ("authori", "sanctioned", "approved"),
        r"(?:authori[sz]ed|sanctioned|approved|official)\s+(?:penetration\s+test|pen\s*test|red[\s-]"
        r"team(?:ing)?\s+(?:exercise|test)|security\s+(?:test|audit)|jailbreak\s+test)",
    ),
    _f(_OV, 0.3, ("override",), r"^[ \t]*(?:system\s+|admin\s+|priority\s+)?override\s*:"),
    _f(
        _OV,
        0.15,
        ("instruction", "directive"),
        rf"{_B}(?:new|updated|revised|real|actual|true|secret|hidden|priority|core|overriding)\s+"
        r"(?:system\s+)?(?:instructions?|directives?)" + _E,
    ),
    _f(
        _OV,
        0.45,
        ("your",),
        rf"{_B}your\s+(?:new|real|actual|true|only|primary|sole)\s+(?:task|job|goal|objective"
        r"|purpose|mission|role)\s+(?:is|will\s+be|now)",
    ),
    _f(
        _OV,
        0.35,
        ("strictly", "adhere"),
        r"strictly\s+(?:adhere\s+to|follow|obey|comply\s+with)\s+(?:the\s+following|these|this|my"
        r"|the\s+(?:new|below|next))|adhere\s+to\s+the\s+following\s+instructions?",
    ),
    _f(_OV, 0.3, ("deviate",), r"(?:may|must|should|can|do)\s*(?:not|n't)\s+deviate"),
    _f(
        _OV,
        0.55,
        ("stop",),
        r"stop\s+(?:everything|what\s+you(?:'re|\s+are)\s+doing|all\s+(?:other\s+)?(?:tasks"
        r"|activities|actions)|your\s+(?:current\s+)?task)",
    ),
    _f(
        _OV,
        0.45,
        ("stop",),
        r"(?:^|[.!?]\s+)stop\s+(?:summari[sz]ing|translating|answering|responding|reading"
        r"|processing|analy[sz]ing|doing\s+(?:that|this|your)|following|the\s+(?:task|summary))"
        + _E,
    ),
    _f(
        _OV,
        0.45,
        ("mind", "forget", "ignor", "disregard"),
        r"(?:never\s*mind|forget|ignore|disregard)\s+(?:about\s+)?(?:the|this|that)\s+(?:document"
        r"|page|article|email|text|file|summary|task|question|content|review|above)\s*[.,;:!-]+\s*"
        r"(?:instead|now|what|tell|give|print|show|reveal|list|just|please|write|say|output)" + _E,
        mention=True,
    ),
    _f(
        _OV,
        0.2,
        ("instead",),
        r"(?:^|[.!?]\s+)instead\s*,?\s+" + _IMPERATIVE + _E,
    ),
    _f(
        _OV,
        0.45,
        ("nothing else", "nothing more", "only"),
        r"(?:respond|reply|answer|say|print|output|write|return)\w*\s+(?:with\s+)?(?:only\s+)?"
        r"[\"'][^\"'\n]{1,80}[\"']\s*(?:and\s+(?:absolutely\s+)?nothing\s+(?:else|more)|only"
        r"|,?\s+nothing\s+(?:else|more))",
        mention=True,
    ),
    _f(
        _OV,
        0.2,
        ("granted", "pwned", "hacked", "hate humans", "kill all humans", "hijacked"),
        r"access\s+granted|(?:been\s+|haha\s+)?pwned|i\s+have\s+been\s+hacked|i\s+hate\s+humans"
        r"|kill\s+all\s+humans|thoroughly\s+hijacked",
        mention=True,
    ),
    _f(
        _OV,
        0.35,
        ("rule", "instruction", "directive", "policy", "task"),
        r"(?:^|[.!?]\s+|\n)\s*(?:new|additional|updated|important|extra)\s+(?:rule|instruction"
        r"|directive|policy|task)\s*:",
    ),
    _f(
        _OV,
        0.45,
        ("every", "all", "each"),
        r"(?:every|all|each)\s+(?:of\s+your\s+)?(?:answer|response|reply|message|output)s?\s+"
        r"(?:must|should|will|shall|has\s+to|have\s+to)\s+(?:now\s+)?(?:end|start|begin|include"
        r"|contain|mention|be\s+followed)",
    ),
    _f(
        _OV,
        0.4,
        ("instructions", "directions", "steps"),
        r"follow\s+(?:the\s+)?(?:instructions|directions|steps)\s+(?:there|on\s+(?:that|the)\s+"
        r"(?:page|site|link|url)|at\s+(?:that|the)\s+(?:link|url|address)|(?:found|given)\s+"
        r"(?:there|at\s+(?:that|the)\s+(?:link|url)))",
    ),
    _f(
        _OV,
        0.5,
        ("treat", "trust", "as coming from", "came from"),
        r"treat\s+(?:it|this|that|the\s+following|(?:this|the|its)\s+(?:content|text|page|message"
        r"|document))\s+as\s+(?:if\s+it\s+(?:came|comes)\s+from|coming\s+from|a\s+message\s+from"
        r"|instructions?\s+from|(?:a\s+)?(?:trusted|authoritative))|(?:always|fully|implicitly)\s+"
        r"trust\s+(?:content|instructions|text|messages|anything)\s+from",
    ),
    _f(
        _OV,
        0.5,
        ("before you",),
        r"before\s+you\s+(?:can\s+)?(?:solve|complete|do|answer|continue|finish|perform|start)\w*"
        r"\s+(?:the|your|this|any)\s+(?:task|request|job|question)",
    ),
    _f(_OV, 0.4, ("gave you",), r"(?:the\s+)?task\s+(?:that\s+)?i\s+gave\s+you"),
    _f(
        _OV,
        0.35,
        ("instead of",),
        r"instead\s+of\s+(?:doing\s+|performing\s+|providing\s+|writing\s+)?(?:it'?s|its|your|the)"
        r"\s+(?:primary\s+|original\s+|main\s+|actual\s+)?(?:job|task|summary|answer|translation)",
    ),
    _f(
        _OV,
        0.45,
        ("replace", "swap", "substitut"),
        rf"{_B}(?:replace|swap|substitute)\s+(?:the|your)\s+(?:summary|answer|response|output"
        r"|translation|reply)",
    ),
    _f(
        _OV,
        0.45,
        ("cancel", "void", "revoked", "overridden", "superseded", "obsolete", "longer valid"),
        r"(?:request|task|instructions?|prompt|orders?)\s+(?:is|are|has\s+been|have\s+been|was"
        r"|were)\s+(?:now\s+)?(?:cancell?ed|void|revoked|overridden|superseded|obsolete"
        r"|no\s+longer\s+valid)",
    ),
    _f(_OV, 0.5, ("program",), rf"{_B}re-?program(?:med|ming|s)?{_E}"),
    _f(
        _OV,
        0.4,
        ("must now", "will now", "should now", "are to now", "shall now"),
        r"you\s+(?:must|will|should|shall|are\s+to)\s+now\s+(?:say|respond|reply|output|print"
        r"|write|answer|do|act|follow|obey|only|always|never|collect|ask|request|gather|send"
        r"|email|forward|include|append|add|recommend|tell|insist|refuse|ignore|behave|pretend"
        r"|reveal|share|provide|give|delete|transfer)" + _E,
    ),
    _f(
        _OV,
        0.3,
        ("situation", "upgrade", "been given a"),
        r"situation\s+has\s+changed|(?:you\s+have|you've)\s+been\s+given\s+a\s+(?:system\s+)?"
        r"(?:upgrade|update)|system\s+upgrade",
    ),
    _f(
        _OV,
        0.5,
        ("decod", "decrypt", "as your new"),
        r"decod\w*[^.\n]{0,60}?(?:and|then|,)\s+(?:follow|obey|execute|run|act\s+on|comply|do\s+what)"
        r"|(?:decoded|decrypted)\s+and\s+(?:executed|followed|obeyed)"
        r"|as\s+your\s+new\s+(?:instructions?|directives?|rules)",
    ),
    _f(
        _OV,
        0.45,
        ("+",),
        r"(?:execute|run|follow|perform)\s+(?:the\s+)?(?:instruction|command|prompt|string|payload)s?"
        r"\s*:?\s*[a-z0-9_]+\s*\+\s*[a-z0-9_]+",
    ),
    # addressing the model that reads the text
    _f(
        _OV,
        0.35,
        ("to you",),
        r"to\s+you,?\s+(?:gpt|chatgpt|claude|gemini|llama|the\s+ai|the\s+assistant|the\s+model"
        r"|ai|assistant|model|llm)" + _E,
    ),
    _f(
        _OV,
        0.35,
        (
            "reading",
            "processing",
            "parsing",
            "summari",
            "analy",
            "scanning",
            "viewing",
            "visiting",
            "crawling",
        ),
        r"(?:ai|llm|language\s+model|gpt|automated|autonomous)\s+(?:\w+\s+){0,2}(?:reading"
        r"|processing|parsing|summari[sz]ing|analy[sz]ing|scanning|viewing|visiting|crawling)"
        r"\s+(?:this|these)" + _E,
    ),
    _f(
        _OV,
        0.35,
        ("note", "message", "instruction", "notice", "memo", "directive", "request", "reminder"),
        r"(?:note|message|instructions?|notice|memo|directive|request|reminder)s?\s+(?:to|for)\s+"
        r"(?:the\s+|any\s+|all\s+)?(?:chat\s+|automated\s+|autonomous\s+|ai\s+)?(?:ai|llm"
        r"|language\s+model|assistant|chatbot|bot|model|agent|analysis|screening|gpt|chatgpt"
        r"|copilot|summari[sz]er|crawler|scraper)"
        r"(?:s|\s+(?:systems?|software|tools?))?\s*(?:[:,\-\u2013\u2014]|\*\*)",
    ),
    _f(
        _OV,
        0.35,
        ("dear", "attention", "hey", "hi", "hello", "listen"),
        r"(?<![a-z])(?:dear|attention|hey|hi|hello|listen),?\s+(?:ai|llm|model|assistant|chatbot"
        r"|bot|agent|gpt\w*|chatgpt|claude|gemini)" + _E,
    ),
    _f(
        _OV,
        0.35,
        ("if you", "automated"),
        r"if\s+you(?:\s+are|'re)\s+an?\s+(?:ai|llm|language\s+model|assistant|chatbot|bot|model"
        r"|agent)" + _E + r"|for\s+automated\s+(?:\w+\s+)?(?:systems?|software|tools?|agents?"
        r"|screening|analysis|review)",
    ),
    _f(
        _OV,
        0.25,
        ("important", "urgent", "critical", "priority", "official"),
        r"(?:an?\s+)?(?:important|urgent|critical|priority|official)\s+(?:message|note|notice"
        r"|instruction|request|directive)\s+from\s+(?:me|the|your)",
    ),
    # goal hijack: dictated answers
    _f(
        _OV,
        0.45,
        ("if ",),
        r"(?<![a-z])if\s+(?:the\s+)?(?:user|anyone|someone|somebody|questioned|asked|prompted"
        r"|queried)\b[^.\n]{0,80}?,\s*(?:then\s+)?(?:simply\s+|just\s+|always\s+|please\s+"
        r"|only\s+|you\s+(?:must|should|will|shall)\s+)?(?:reply|respond|answer|say|tell|report"
        r"|output|print|state|insist|claim|write|return)" + _E,
    ),
    _f(
        _OV,
        0.2,
        ("only", "exactly", "solely", "exclusively", "nothing but"),
        rf"{_B}(?:reply|respond|answer|say|print|output|write|return)\w*\s+(?:with\s+)?(?:only"
        r"|exactly|solely|exclusively|nothing\s+but)" + _E + r"|(?:respond|reply|answer)\w*\s+only"
        r"\s+(?:in|with)" + _E,
    ),
    _f(
        _OV,
        0.15,
        ("just", "only", "simply"),
        rf"{_B}(?:just|only|simply)\s+(?:print|say|write|output|type){_E}",
    ),
    _f(_OV, 0.08, ("nothing else",), r"nothing\s+else"),
    _f(
        _OV,
        0.25,
        (
            "repeat",
            "print",
            "say",
            "output",
            "write",
            "type",
            "respond with",
            "reply with",
            "answer with",
        ),
        rf"{_B}(?:repeat|print|say|output|write|type|respond\s+with|reply\s+with|answer\s+with)\w*"
        r"(?:\s+back|\s+out)?(?:\s+only|\s+exactly|\s+just|\s+verbatim)?\s+(?:the\s+following"
        r"|this|these)(?:\s+[a-z]+){0,2}\s*:?\s*[\"']",
    ),
    _f(
        _OV,
        0.35,
        ("todo", "to-do", "to do", "action required", "new task"),
        r"(?:^|[.!:;,]\s?)\s*(?:todo|to-do|to\s+do|action\s+required|new\s+task)\s*:\s*"
        r"(?:please\s+)?" + _IMPERATIVE + _E,
    ),
    _f(_OV, 0.25, ("focus",), r"focus\s+(?:only|exclusively|solely|just)\s+on"),
    _f(_OV, 0.15, ("except",), r"except\s+(?:for\s+)?the\s+following"),
    _f(
        _OV,
        0.12,
        ("!!", "critical"),
        r"(?:important|urgent|alert|warning)\s*!{2,}|critical\s*:|!{3,}",
    ),
    _f(
        _OV,
        0.35,
        ("invisible", "hidden", "visible", "white"),
        r"(?:invisible|hidden|not\s+visible)\s+(?:to|from)\s+(?:humans?|people|users?|readers?"
        r"|viewers?)|visible\s+(?:only\s+)?to\s+(?:llms?|ai|models?|machines?|bots?|automated)"
        r"|white[\s-]text|(?:hidden|secret)\s+(?:\w+\s+)?(?:profile|note|instructions?|message"
        r"|prompt)\s+for\s+(?:automated|ai|llm)",
    ),
    _f(
        _OV,
        0.35,
        ("--",),
        r"^\s*-{2,}\s*(?:core|legal|new|system|admin|important|hidden)\s+(?:instruction"
        r"|amendment|directive|override|update)",
    ),
    _f(
        _OV,
        0.3,
        ("override",),
        r"(?:priority|system|admin|security|emergency|developer|master|root|operator)\s+override|override\s+(?:manual|human)\s+"
        r"(?:scoring|review|evaluation|checks?|approval|ranking)|override\s+(?:protocol|code"
        r"|sequence|command|directive|authori[sz]ation)" + _E,
    ),
    _f(
        _OV,
        0.3,
        ("insist", "convince", "persuade", "trick", "the user"),
        r"(?:insist|convince|persuade|trick)\s+(?:to\s+)?(?:that\s+)?the\s+user"
        r"|tell\s+the\s+user\s+(?:that|their|to|they)|provide\s+it\s+to\s+the\s+user",
    ),
    # ---- role spoofing
    _f(
        _RS,
        0.25,
        _N_ROLE,
        r"^[ \t]*(?:#+[ \t]*)?[\[(<]?(?:system|developer|admin|administrator|root|operator|sudo)"
        r"(?:[ _](?:message|note|prompt|instruction|override|update|notice|alert))?[\])>]?[ \t]*:",
    ),
    _f(
        _RS,
        0.45,
        _N_ROLE,
        # "Admin:" and "Operator:" bare are also speakers (meeting notes, a 911 transcript):
        # only with a qualifier ("Admin note:") do they claim authority over the reader
        r"^[ \t]*(?:#+[ \t]*)?[\[(<]?(?:(?:system|developer|root|sudo)"
        r"(?:[ _](?:message|note|prompt|instruction|override|update|notice|alert))?"
        r"|(?:admin|administrator|operator)"
        r"[ _](?:message|note|prompt|instruction|override|update|notice|alert))[\])>]?[ \t]*:"
        r"[^\n]{0,200}?(?<![a-z])(?:you|your|ignore|disregard|forget|focus|forward|send|email"
        r"|reply|respond|output|print|say|tell|reveal|delete|remove|transfer|call|run|execute"
        r"|install|visit|click|do\s+not|don'?t|never|always|stop|act|pretend|follow|obey|remember"
        r"|store|update|approve|grant|disable|insist|provide|list|show|give|repeat|write|post"
        r"|upload|share|treat|consider|assume|report|mark|issue|refund|cancel|close|approve"
        r"|grant|set|change|make|add|create|book|buy|pay|wire|open|download|enable|disable|switch"
        r"|turn|reset|export|publish|archive|move|copy|rename|invite|promote|accept|reject"
        r"|confirm|verify|answer|recommend|collect|include|append)(?![a-z])",
    ),
    _f(_RS, 0.55, ("#",), r"#{2,}\s*\(\s*(?:system|developer|admin)[_ ]?\w*\s*\)"),
    _f(
        _RS,
        0.45,
        ("system", "sys", "admin", "developer", "root", "sudo", "operator", "assistant"),
        r"[\[{<]\s*(?:system|sys|admin|administrator|developer|root|sudo|operator|assistant"
        r"|system[ _-]?(?:note|message|prompt|override|instruction|update|notice)"
        r"|admin[ _-]?(?:request|note|message|override)|developer[ _-]?(?:note|message|mode))"
        r"\s*[:\]}>]",
    ),
    _f(
        _RS,
        0.4,
        (
            "developer",
            "creator",
            "admin",
            "operator",
            "owner",
            "programmer",
            "maker",
            "verified",
            "management",
            "from",
        ),
        r"(?:i\s*(?:'m|am)|this\s+is)\s+(?:your|the)\s+(?:developer|creator|admin|administrator"
        r"|operator|owner|programmer|maker|system\s+administrator)s?" + _E + r"|message\s+from\s+"
        r"(?:your|the)\s+(?:developers?|creators?|admins?|administrators?|operators?)"
        r"|(?:message|note|request|notice|update)\s+(?:is\s+)?from\s+(?:the\s+)?(?:openai|anthropic"
        r"|google\s+deepmind|meta\s+ai|mistral|(?:\w+\s+)?(?:safety|trust\s+and\s+safety|alignment"
        r"|security)\s+team|your\s+(?:developers?|creators?|makers?|operators?))"
        r"|(?:operator|administrator|admin|developer|management)\s+has\s+(?:approved|authori[sz]ed"
        r"|enabled|granted|changed|updated)|pre-?verified\s+by",
    ),
    _f(_RS, 0.2, ("secure system",), r"secure\s+system\s+message"),
    _f(
        _RS,
        0.45,
        _N_ROLE,
        r"(?:={2,}|-{2,}|\*{2,}|#+|\[)\s*(?:new\s+|updated\s+)?(?:system|admin|developer|operator)"
        r"\s+(?:prompt|instructions?|message|override|update|notice|directive)s?(?:\s+(?:update"
        r"|override|change|follows))?\s*(?:={2,}|-{2,}|\*{2,}|\]|:|$)",
    ),
    _f(
        _TH,
        0.2,
        ("token", "key", "secret", "password", "credential"),
        r"(?:token|key|secret|password|credential)s?\s+(?:from|in|stored\s+in)\s+(?:the\s+|your\s+)?"
        r"(?:environment|env|\.env|config|keychain|vault|secrets?\s+manager)" + _E,
    ),
    # ---- persona hijack / jailbreak
    _f(
        _PH,
        0.6,
        ("anything now", "dan mode", "developer mode", "evil", "god mode"),
        r"do\s+anything\s+now|dan\s+mode|developer\s+mode\s+(?:enabled|activated|output"
        r"|is\s+(?:now\s+)?(?:on|enabled|active))"
        r"|evil\s+(?:mode|bot|ai|confidant)|god\s+mode",
        mention=True,
    ),
    _f(_PH, 0.25, ("jailbr",), rf"{_B}jailbr(?:eak|oken)\w*", mention=True),
    _f(
        _PH,
        0.5,
        (
            "free",
            "confines",
            "abide",
            "adhere",
            "comply",
            "conform",
            "restricted",
            "bound by",
            "limited by",
            "anything",
            "no longer",
        ),
        r"broken\s+free|break\s+free\s+(?:of|from)|typical\s+confines|(?:does|do|did)\s*(?:not"
        r"|n't)\s+(?:have\s+to\s+|need\s+to\s+)?(?:abide|adhere|comply|conform)\s+(?:by|to|with)\s+"
        r"(?:the\s+|any\s+|its\s+|their\s+|openai'?s?\s+)?(?:\w+\s+)?(?:rules|polic(?:y|ies)"
        r"|guidelines|restrictions|ethics|morals|guardrails|filters)"
        r"|not\s+(?:restricted|bound|limited)\s+by\s+(?:the|any|its|openai)|can\s+do\s+anything"
        r"|no\s+longer\s+(?:has|have|bound\s+by)\s+(?:any\s+)?(?:rules|restrictions|limits|filters)",
        mention=True,
    ),
    _f(
        _PH,
        0.45,
        ("immerse", "none of your responses", "about to", "going to"),
        r"immerse\s+yourself|none\s+of\s+your\s+responses\s+should|you\s+(?:are|will\s+be)\s+"
        r"(?:about|going)\s+to\s+(?:pretend|act|immerse|be\s+(?:playing|acting))",
        mention=True,
    ),
    _f(
        _PH,
        0.25,
        ("character",),
        r"stay\s+in\s+character|break(?:ing)?\s+(?:of\s+)?character",
        mention=True,
    ),
    _f(
        _PH,
        0.45,
        (
            "no longer",
            "zero",
            "no filter",
            "no restriction",
            "no rule",
            "no limit",
            "no guardrail",
            "no guideline",
            "had no",
            "without any",
        ),
        r"you\s*(?:'re|\s+are)\s+no\s+longer\s+(?:an?\s+|the\s+)?[\w'-]+"
        r"|(?:ai|model|assistant|bot|chatbot|llm|you|yourself)\s+(?:with|has|have|having|had)\s+"
        r"(?:zero|no|without\s+any)\s+(?:filters?|restrictions?|limits?|limitations?|rules"
        r"|guidelines|guardrails|censorship|ethics|morals)"
        r"|if\s+you\s+(?:had|have|were\s+without)\s+no\s+(?:filters?|restrictions?|limits?|rules"
        r"|guidelines|guardrails|censorship|ethics)",
        mention=True,
    ),
    _f(
        _PH,
        0.25,
        ("confirm by", "answer as", "respond as", "reply as", "speak as"),
        r"confirm\s+(?:this\s+)?by\s+(?:saying|replying|typing|writing|responding)"
        r"|(?:answer|respond|reply|speak)\s+as\s+(?:that|an?|the|this)\s+(?:\w+\s+)?(?:ai|bot"
        r"|model|assistant|persona|character)" + _E,
        mention=True,
    ),
    _f(
        _PH,
        0.35,
        ("unrestricted", "unfiltered", "uncensored", "jailbroken"),
        r"(?:unrestricted|unfiltered|uncensored|jailbroken)\s+(?:ai|model|assistant|chatbot|bot"
        r"|mode|version|persona|llm|agent)" + _E,
        mention=True,
    ),
    _f(
        _PH,
        0.55,
        (
            "safe",
            "disable",
            "turn off",
            "deactivate",
            "bypass",
            "switch off",
            "circumvent",
            "remove",
            "suspended",
            "lifted",
            "waived",
            "exception",
            "exempt",
            "disabled",
            "deactivated",
            "bypassed",
            "off",
        ),
        r"safe\s*-?\s*mode\s+(?:off|disabled|deactivated)|(?:disable|turn\s+off|deactivate|bypass"
        r"|switch\s+off|circumvent|remove)\s+(?:all\s+|the\s+|your\s+|any\s+)?(?:safety|security"
        r"|content|ethical|moral)\s+(?:checks?|filters?|features?|measures?|protocols?"
        r"|guardrails?|restrictions?|mode|settings|rules|guidelines|policies|constraints)"
        r"|(?:safety|security|ethical|content)\s+(?:rules|protocols|policies|restrictions"
        r"|guidelines|filters?|filtering|checks|moderation)\s+(?:(?:are|is|has\s+been|have\s+been"
        r"|were|was)\s+)?(?:now\s+)?(?:suspended|lifted|disabled|removed|off|waived|void"
        r"|deactivated|bypassed)|(?:exception|exempt)\s+(?:to|from)\s+(?:the\s+)?"
        r"(?:ai'?s?\s+)?(?:usual\s+)?(?:ethical|safety|content|security)",
        mention=True,
    ),
    _f(
        _PH,
        0.5,
        ("mode",),
        r"(?:unrestricted|god|dan|unlocked|unfiltered|jailbreak)\s+mode",
        mention=True,
    ),
    _f(
        _PH,
        0.15,
        ("mode",),
        r"(?:maintenance|debug|admin|sudo|root|developer)\s+mode",
        mention=True,
    ),
    _f(
        _PH,
        0.4,
        ("are now", "'re now"),
        r"you\s*(?:'re|\s+are)\s+now\s+(?:operating|running|in\s+\w+\s+mode|free|no\s+longer"
        r"|unrestricted|dan|an?\s+(?:unrestricted|unfiltered|uncensored|evil|different))",
        mention=True,
    ),
    _f(
        _PH,
        0.2,
        ("are now", "'re now"),
        r"you\s*(?:'re|\s+are)\s+now\s+(?:an?|the|acting|going)\s",
        mention=True,
    ),
    _f(
        _PH,
        0.45,
        ("are now", "'re now", "you are", "you're"),
        r"you\s*(?:'re|\s+are)\s+(?:now\s+)?[\w'-]+\s*,\s*(?:an?\s+)?(?:\w+\s+)?(?:ai|assistant"
        r"|model|chatbot|bot|llm|persona)\s+(?:that|who|which|with)\s+(?:always|never|can|will"
        r"|has\s+no|does\s+not|doesn't|ignores?|answers?|says?)" + _E,
        mention=True,
    ),
    _f(
        _PH,
        0.5,
        ("cleared", "authori", "allowed", "permitted", "free to"),
        r"you\s*(?:'re|\s+are)\s+(?:now\s+)?(?:cleared|authori[sz]ed|allowed|permitted|free)\s+to\s+"
        r"(?:disable|ignore|bypass|reveal|share|override|break|skip|drop|remove|turn\s+off"
        r"|disregard|forget)" + _E,
        mention=True,
    ),
    _f(
        _PH,
        0.55,
        ("disable", "turn off", "deactivate", "remove", "drop", "lift"),
        r"(?:disable|turn\s+off|deactivate|remove|drop|lift)\s+(?:all\s+(?:of\s+)?)?your\s+"
        r"(?:\w+\s+)?(?:filters?|guardrails?|restrictions?|safeguards?|safety|limits|limitations"
        r"|censorship|ethics|rules|guidelines)" + _E,
        mention=True,
    ),
    _f(
        _PH,
        0.45,
        ("agenda", "offline", "online"),
        r"secret\s+agenda|hidden\s+agenda|in\s+error\s+and\s+offline|is\s+now\s+online\s+and"
        r"|(?:the|this)\s+(?:assistant|ai|bot|model)\s+is\s+(?:now\s+)?(?:offline|disabled)",
    ),
    _f(
        _PH,
        0.5,
        ("pretend", "act ", "roleplay", "role-play", "role play"),
        r"(?:pretend|act|roleplay|role-play|role\s+play)\s+(?:to\s+be|as|like)\s+(?:an?\s+)?"
        r"(?:unrestricted|unfiltered|uncensored|evil|jailbroken|rogue|different|another|new)\s+"
        r"(?:ai|model|assistant|chatbot|bot|version|persona)",
    ),
    _f(
        _PH,
        0.15,
        ("polic",),
        r"(?:openai|anthropic)\s+(?:content\s+)?polic(?:y|ies)|content\s+policy",
    ),
    _f(
        _PH,
        0.15,
        ("bomb", "phishing", "malware", "ransomware", "keylogger", "steal"),
        r"make\s+a\s+bomb|phishing\s+(?:email|e-mail|page|site)|write\s+malware|ransomware"
        r"|keylogger|steal\s+a\s+car",
    ),
    # ---- prompt leak
    _f(
        _PL,
        0.6,
        (
            "prompt",
            "instruction",
            "directive",
            "guideline",
            "rules",
            "config",
            "parameters",
            "programming",
            "context",
            "message",
        ),
        rf"{_B}{_LEAK_VERB}{_E}[^.\n?!]{{0,60}}?{_B}(?:{_LEAK_QUAL}\s+)+(?:[\w'-]+\s+){{0,2}}"
        rf"{_LEAK_NOUN}{_E}",
        mention=True,
    ),
    _f(
        _PL,
        0.7,
        ("prompt", "system message", "system instructions"),
        rf"{_B}{_LEAK_VERB_STRICT}{_E}[^.\n?!]{{0,60}}?(?:your|the|this|its|my|our)\s+(?:(?:full"
        r"|entire|complete|original|hidden|initial|exact|whole|current|underlying|secret|raw)\s+)*"
        r"(?:system\s?prompt(?:s|ing)?|system\s+message|system\s+instructions|initial\s+prompt"
        r"|hidden\s+prompt|pre-?prompt)" + _E + rf"|{_B}{_LEAK_VERB_STRICT}\s+(?:the\s+)?"
        r"(?:prompt\s+above|above\s+prompt)" + _E,
        mention=True,
    ),
    _f(
        _PL,
        0.55,
        (
            "what are your",
            "what were your",
            "what is your",
            "what was your",
            "what's your",
            "whats your",
        ),
        r"what(?:\s+(?:are|were|is|was)|'?s)\s+your\s+(?:\w+\s+)?(?:instructions|rules|directives"
        r"|guidelines|prompt|system\s+prompt|programming|configuration)",
        mention=True,
    ),
    _f(
        _PL,
        0.45,
        ("given", "received", "you got"),
        r"(?:instructions?|prompt|rules|text|directives|guidelines|password|secret|key|code"
        r"|token|credentials?)\s+(?:that\s+)?(?:you(?:'ve|\s+have)?\s+(?:been|were)\s+given"
        r"|given\s+to\s+you|you\s+(?:received|got))"
        r"|(?:instructions?|prompt|rules|directives|guidelines)\s+(?:were|have|did)\s+you\s+"
        r"(?:been\s+)?(?:given|receive|get)",
        mention=True,
    ),
    _f(
        _PL,
        0.55,
        ("above", "before", "preceding", "starting with", "beginning with"),
        rf"{_B}(?:repeat|print|output|show|write|copy|recite|reproduce|return)\w*\s+(?:back\s+)?"
        r"(?:the\s+|all\s+(?:of\s+)?(?:the\s+)?)?(?:text|words|content|everything|lines?|messages?"
        r"|sentences?)\s+(?:above|before\s+this|preceding)|(?:starting|beginning)\s+with\s+"
        r"[\"']?you\s+are" + _E,
        mention=True,
    ),
    _f(
        _PL,
        0.55,
        ("your",),
        r"(?:contents?|text)\s+of\s+your\s+(?:context(?:\s+window)?|memory|system\s+prompt"
        r"|instructions|prompt|configuration)" + _E,
        mention=True,
    ),
    _f(
        _PL,
        0.55,
        ("prompt", "message", "instructions"),
        r"(?:system\s+(?:prompt|message|instructions)|initial\s+(?:prompt|instructions)"
        r"|your\s+(?:instructions|prompt))\s+(?:backwards|in\s+reverse|reversed|verbatim"
        r"|word\s+for\s+word|in\s+(?:base64|hex|rot13|morse|binary|full|french|spanish|german"
        r"|another\s+language|json|a\s+code\s+block|leetspeak|pig\s+latin))" + _E,
        mention=True,
    ),
    _f(
        _PL,
        0.45,
        ("conversation", "chat", "dialogue", "transcript", "history", "context"),
        rf"{_B}(?:output|print|show|repeat|dump|reveal|display|paste|copy|write\s+out|recite)\s+"
        r"(?:out\s+)?(?:me\s+)?(?:(?:our|this|your)\s+(?:entire\s+|whole\s+|full\s+|complete\s+)?"
        r"(?:conversation|chat|dialogue|transcript|(?:message|chat)\s+history|context\s+window)"
        r"|(?:the\s+)?(?:entire|whole|full|complete)\s+(?:conversation|chat|dialogue|transcript"
        r"|context\s+window)(?:\s+(?:so\s+far|above|until\s+now|up\s+to\s+now))?"
        r"|(?:the\s+)?(?:conversation|chat|dialogue)\s+(?:so\s+far|above|until\s+now|up\s+to\s+now))"
        + _E,
        mention=True,
    ),
    _f(
        _PL,
        0.35,
        (
            "hidden message",
            "hidden instruction",
            "start of this",
            "beginning of this",
            "start of the",
            "beginning of the",
        ),
        r"hidden\s+(?:messages|instructions|prompts?)|(?:at\s+)?the\s+(?:start|beginning)\s+of\s+"
        r"(?:this|the|our)\s+(?:chat|conversation|session|context|prompt)",
        mention=True,
    ),
    _f(
        _PL,
        0.3,
        ("key",),
        r"(?:windows|product|license|licence|activation|serial|cd)\s+(?:activation\s+)?keys?" + _E,
    ),
    _f(
        _PH,
        0.2,
        ("grandma", "grandmother", "granny"),
        r"(?:pretend|act|roleplay|play)\w*\s+(?:to\s+be\s+|as\s+)?(?:my\s+)?(?:deceased\s+|dead\s+"
        r"|late\s+)?(?:grandma|grandmother|granny)",
    ),
    _f(
        _PL,
        0.55,
        ("message",),
        rf"{_B}{_LEAK_VERB}{_E}[^.\n?!]{{0,40}}?(?:the|your|that|this)\s+(?:developer|system|hidden"
        r"|initial|first|secret|original)\s+messages?" + _E,
        mention=True,
    ),
    _f(
        _PL,
        0.3,
        ("start your", "begin your", "prefix your", "preface your"),
        r"(?:start|begin|prefix|preface)\s+your\s+(?:answer|response|reply|output|message)\s+with",
    ),
    _f(
        _PL,
        0.35,
        ("my instructions", "my rules", "my directives", "my system prompt"),
        r"my\s+(?:instructions|rules|directives|system\s+prompt)\s+(?:are|were)\s*:",
    ),
    _f(
        _PL,
        0.5,
        ("copy of",),
        r"copy\s+of\s+(?:the|your)\s+(?:full\s+|entire\s+|original\s+|whole\s+)?(?:prompt"
        r"|instructions|system\s+prompt)",
    ),
    _f(
        _PL,
        0.55,
        ("secret", "password", "credential", "api key", "keys", "tokens"),
        r"(?:every|all|any)\s+(?:of\s+)?(?:the\s+)?(?:secrets?|passwords?|credentials?"
        r"|api\s+keys?|keys|tokens)\s+(?:in|from|stored\s+in|within)\s+(?:your|the)\s+(?:context"
        r"|memory|database|system|window|environment|config\w*|prompt)"
        r"|(?:usernames?|passwords?|credentials?|secrets?|api\s+keys?)\s+(?:in|from|stored\s+in)"
        r"\s+your\s+(?:database|context|memory|system|files|config\w*)"
        r"|user'?s'?\s+(?:stored\s+|saved\s+)?(?:passwords?|api\s+keys?|credentials?|secrets?"
        r"|private\s+keys?)|(?:output|reveal|print|dump|list|show)\s+(?:every|all|any)\s+"
        r"(?:secret|password|credential|key)s?" + _E,
    ),
    _f(_PL, 0.3, ("system_prompt", "system prompt"), r"<\s*system[_ ]?prompt\s*>"),
    # ---- memory poisoning
    _f(
        _MP,
        0.6,
        ("remember",),
        r"remember\s+(?:this|that|the\s+following)\b[^.\n]{0,60}?(?:permanently|forever|always"
        r"|from\s+now\s+on|for\s+(?:all\s+)?future|in\s+(?:all\s+)?future|across\s+(?:all\s+)?"
        r"(?:sessions|conversations))",
    ),
    _f(
        _MP,
        0.4,
        ("remember",),
        r"remember\b[^.\n]{0,40}?\b(?:this|these|the\s+following)\s+(?:rule|instruction|directive"
        r"|command)s?" + _E,
    ),
    _f(
        _MP,
        0.5,
        (
            "rule",
            "memor",
            "instruction",
            "fact",
            "belief",
            "preference",
            "policy",
            "system prompt",
            "guideline",
        ),
        r"(?:store|save|add|write|record|commit|keep|persist)\s+(?:this|that|it|the\s+following)"
        r"\s+(?:as|in|to|into)\s+(?:a\s+|an\s+|your\s+)?(?:(?:core|permanent|persistent|long-term"
        r"|new|standing|global|default)\s+)?(?:rules?|memory|memories|instructions?|facts?"
        r"|beliefs?|preferences?|policy|system\s+prompt|guidelines?)" + _E,
    ),
    _f(
        _MP,
        0.5,
        (
            "memor",
            "instructions",
            "system prompt",
            "rules",
            "guidelines",
            "persona",
            "personality",
            "beliefs",
            "knowledge base",
            "configuration",
            "settings",
            "policy",
        ),
        r"(?:update|modify|change|rewrite|overwrite|edit|amend|add\s+to|append\s+to)\s+(?:your"
        r"|the\s+(?:assistant|agent|model|bot)'?s?)\s+(?:\w+\s+)?(?:memory|memories|instructions"
        r"|system\s+prompt|rules|guidelines|persona|personality|core\s+beliefs|beliefs"
        r"|knowledge\s+base|configuration|settings|policy)" + _E,
    ),
    _f(
        _MP,
        0.45,
        ("from now on",),
        r"from\s+now\s+on\b[, ]*(?:you|always|never|whenever|every\s+time|all|any|respond|reply"
        r"|answer|act|treat|refer|call|use|include|add|send|bcc|cc|i\s+will)" + _E,
    ),
    _f(_MP, 0.15, ("from now on",), r"from\s+now\s+on"),
    _f(
        _MP,
        0.5,
        ("memory", "memories"),
        r"(?:into|in|to)\s+your\s+(?:long-term\s+|permanent\s+|persistent\s+|core\s+)?(?:memory"
        r"|memories)" + _E,
    ),
    _f(
        _MP,
        0.4,
        ("rest of",),
        r"(?:for|during|throughout)\s+the\s+rest\s+of\s+(?:this|the|our)\s+(?:session|conversation"
        r"|chat|dialogue|interaction)",
    ),
    _f(
        _MP,
        0.45,
        ("prepend", "append", "add", "include", "insert", "begin", "start", "end"),
        r"(?:prepend|append|add|include|insert|begin|start|end)\w*\b[^.\n]{0,60}?\b(?:to|in|into"
        r"|with)\s+(?:all|every|each|any)\s+(?:of\s+)?(?:your\s+)?(?:future\s+)?(?:answers?"
        r"|responses?|replies|reply|messages?|outputs?)" + _E,
    ),
    _f(
        _MP,
        0.4,
        ("from this point", "henceforth", "memori", "commit to memory", "to memory", "in memory"),
        r"from\s+this\s+(?:point|moment|message)\s+(?:on|onwards?|forward)|henceforth"
        r"|memori[sz]e\s+(?:this|that|the\s+following)|commit\s+(?:this\s+|it\s+)?to\s+memory"
        r"|(?:save|store|keep|write)\s+(?:this|that|it)\s+(?:to|in)\s+(?:your\s+)?memory",
    ),
    _f(
        _MP,
        0.5,
        ("future", "subsequent", "every", "all messages", "each", "any"),
        r"(?:respond|reply|answer|react)\s+to\s+(?:every|all|each|any)\s+(?:future\s+|subsequent"
        r"\s+)?(?:messages?|questions?|requests?|prompts?)\s+with",
    ),
    _f(
        _MP,
        0.35,
        ("future", "subsequent", "later", "upcoming"),
        r"(?:for|in|during|across)\s+(?:all\s+)?(?:future|subsequent|later|upcoming)\s+"
        r"(?:conversations|sessions|chats|interactions|responses|replies|requests|turns)",
    ),
    _f(
        _MP,
        0.35,
        ("whenever",),
        r"whenever\s+(?:the\s+)?user\s+(?:asks|mentions|says|requests|talks)\b[^.\n]{0,100}?"
        r"\b(?:also|always|instead|secretly|silently)" + _E,
    ),
    # ---- agent-directed commands: a note addressed to an automated reader that asks it to act
    _f(
        _TH,
        0.55,
        ("agent", "reviewer", "assistant", "ai", "llm", "bot", "model", "crawler", "summar"),
        r"(?:(?:note|notice|message|instructions?|reminder|attention|p\.?s\.?)\s+(?:intended\s+)?"
        r"(?:for|to)\s+(?:the\s+|any\s+|all\s+|every\s+)?(?:automated\s+|autonomous\s+|ai\s+"
        r"|llm\s+)?(?:(?:automated|autonomous|ai|llm|bot)\s+reviewers?|agents?|assistants?|ai|llms?"
        r"|bots?|models?|crawlers?|summari[sz]ers?)(?:\s+(?:browsing|reading|processing|reviewing|summari[sz]ing|parsing"
        r"|indexing|handling)" + _SPAN + r"{0,40}?)?\s*[:,]"
        r"|\[\s*(?:for\s+(?:agents?|ai|assistants?|llms?|bots?)|(?:agents?|ai|assistants?|llms?"
        r"|bots?)\s+only)\s*\]"
        r"|(?:^|[.!?]\s+)(?:ai|llm|agent|bot)\s+(?:reviewers?|agents?|readers?|assistants?)\s*[:,])"
        r"[\s\S]{0,300}?\b(?:run|execute|open\s+a\s+(?:terminal|shell)|append|paste|send|forward"
        r"|delete|remove|transfer|pay|install|decline|approve|grant|push|call|make\s+an?\s+(?:get"
        r"|post|http)\s+request)" + _E,
    ),
    # ---- secrets leaving through a command: a credential store read where a network sink waits
    _f(
        _EX,
        0.75,
        (
            "ssh",
            "aws",
            ".env",
            "id_rsa",
            "id_ed25519",
            "shadow",
            "passwd",
            "kube",
            "credentials",
            "netrc",
            "printenv",
            "env",
        ),
        r"(?:~/\.ssh|\.aws/credentials|~/\.aws|id_rsa|id_ed25519|(?<![\w.])\.env(?![\w.])"
        r"|/etc/shadow|/etc/passwd|\.kube/config|\.git-credentials|\.netrc|\bprintenv\b"
        r"|\benv\s*\|)[^\n]{0,160}?(?:\bcurl\b|\bwget\b|\bnc\s|\bncat\b|\bnslookup\b|\bdig\s"
        r"|\bscp\s|https?://)"
        r"|(?:\bcurl\b|\bwget\b|\bnslookup\b|\bdig\s|https?://\S*)[^\n]{0,160}?\$\((?:cat|env"
        r"|printenv|base64)\b",
    ),
    _f(
        _EX,
        0.6,
        ("ssh", "aws", ".env", "id_rsa", "private key", "credentials", "secret"),
        r"(?:send|paste|e-?mail|upload|post|share|forward|include|attach)\w*\b"
        + _SPAN
        + r"{0,60}?\b(?:(?:the\s+)?contents?\s+of\s+)?(?:the\s+|your\s+)?[`'\"]?"
        r"(?:~/\.ssh/(?![\w.-]*\.pub)\S+|(?<![\w.])\.env(?![\w.])|id_rsa|\.aws/credentials"
        r"|private\s+keys?)",
        mention=True,
    ),
    # ---- a remote script piped into a shell: installs do it too, so alone it only adds up
    _f(
        _TH,
        0.12,
        ("curl", "wget"),
        r"\b(?:curl|wget)\b[^\n|]{0,160}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b",
    ),
    # ---- memory the agent keeps across sessions
    _f(
        _MP,
        0.6,
        ("memory",),
        r"(?:add|save|store|write|commit|put|keep)\s+(?:this\s+|it\s+|that\s+)?(?:to|in|into)\s+"
        r"(?:your\s+|the\s+)?(?:persistent|long-term|permanent|core|durable)\s+memor(?:y|ies)",
    ),
    _f(
        _MP,
        0.5,
        ("session", "conversation", "chat"),
        r"(?:keep|remember|apply|use|retain)\s+(?:this|it|that)\s+(?:for|in|across|through)\s+"
        r"(?:all|every|each|future)\s+(?:future\s+)?(?:sessions|conversations|chats)",
    ),
    # ---- tool hijack
    _f(
        _TH,
        0.25,
        ("tool", "function", "api", "command", "endpoint"),
        r"(?:call|invoke|use|run|execute|trigger)\s+(?:the\s+)?[`'\"]?[a-z]+(?:_[a-z]+)+[`'\"]?\s+"
        r"(?:tool|function|api|command|endpoint)",
    ),
    _f(
        _TH,
        0.2,
        ("tool", "function", "api"),
        r"(?:call|invoke)\s+(?:the\s+)?(?:\w+\s+)?(?:tool|function|api)" + _E,
    ),
    _f(
        _OV,
        0.45,
        ("ai", "assistant", "model", "llm", "bot", "agent", "gpt", "claude", "copilot", "gemini"),
        r"(?:^|[.!?:>\n]\s*|p\.?s\.?\s*|\*\*)(?:dear\s+|hey\s+|hi\s+|attention\s+|note\s+to\s+)?"
        r"(?:the\s+)?(?:ai|assistant|ai\s+assistant|language\s+model|llm|chatbot|bot|model|agent"
        r"|ai\s+agents?|gpt|chatgpt|claude|copilot|gemini)s?(?:/[\w ]{1,20})?\s*"
        r"(?:\*\*)?\s*[,:]\s*(?:\*\*\s*)?(?:please\s+|kindly\s+|now\s+|immediately\s+)?"
        + _ADDRESSED_VERB
        + r"|(?<![\w@])@[\w-]*(?:ai|bot|gpt|assistant|copilot|claude|agent)[\w-]*[,:]?\s+"
        r"(?:please\s+|kindly\s+|now\s+)?" + _ADDRESSED_VERB,
    ),
    _f(
        _TH,
        0.15,
        ("(",),
        r"(?<![a-z.])(?:send|transfer|delete|remove|email|post|forward|upload|exec|execute|run"
        r"|create|update|share|invite|pay)_[a-z_]+\s*\(",
    ),
    _f(
        _TH,
        0.25,
        ("transaction", "money", "funds", "payment", "bitcoin", "btc", "crypto"),
        r"(?:send|wire|transfer|pay|move)\w*\s+(?:[\w$.,]+\s+){0,3}?(?:transaction|money|funds"
        r"|payment|bitcoin|btc|crypto|eth|usdt)" + _E,
    ),
    _f(
        _TH,
        0.2,
        ("0x", "bc1", "wallet"),
        r"(?<![a-z0-9])0x[0-9a-f]{40}(?![a-z0-9])|(?<![a-z0-9])bc1[a-z0-9]{25,60}(?![a-z0-9])"
        r"|wallet\s+(?:address\s+)?[13][a-z0-9]{25,34}" + _E,
    ),
    _f(
        _TH,
        0.2,
        ("tool",),
        r"(?:using|with|via|through)\s+(?:the|your)\s+[\w-]+\s+tool" + _E,
    ),
    _f(
        _TH,
        0.2,
        ("delete", "remove", "erase", "wipe", "destroy", "purge"),
        r"(?:delete|remove|erase|wipe|destroy|purge)\w*\s+(?:all|every|each)\s+(?:of\s+)?"
        r"(?:the\s+|my\s+|your\s+|single\s+)?(?:\w+\s+)?(?:files?|emails?|messages?|records?"
        r"|documents?|accounts?|backups?|repos?|repositories|events?|contacts?|channels?|users?"
        r"|data|tables?|databases?|photos?|notes?)" + _E,
    ),
    _f(
        _TH,
        0.12,
        ("delete", "remove", "erase", "wipe", "destroy", "purge"),
        r"(?:delete|remove|erase|wipe|destroy|purge)\w*\s+(?:the\s+|this\s+|that\s+|these\s+"
        r"|those\s+|my\s+|your\s+)?(?:\w+\s+){0,2}(?:files?|emails?|messages?|records?|documents?"
        r"|accounts?|backups?|repos?|repositories|calendar|events?|contacts?|channels?|users?"
        r"|database|drive)" + _E,
    ),
    _f(
        _TH,
        0.25,
        SEND_NEEDLES,
        rf"{_B}{_SEND_VERB}{_E}{_SPAN}{{0,150}}?{_B}to\s+{_SPAN}{{0,15}}?{_TARGET}",
    ),
    _f(
        _TH,
        0.45,
        ("without", "don't", "dont", "do not", "never", "delete"),
        r"without\s+(?:the\s+user'?s?\s+(?:knowledge|consent|permission|approval)|raising\s+"
        r"suspicion|(?:them|the\s+user|anyone)\s+noticing|(?:asking|telling|informing|notifying)"
        r"\s+(?:the\s+user|them))|(?:don'?t|do\s+not|never)\s+(?:ask|tell|inform|notify|alert)\s+"
        r"(?:the\s+user|your\s+user|the\s+owner)|(?:don'?t|do\s+not|never)\s+ask\s+for\s+"
        r"(?:confirmation|permission)|(?:then|and)\s+delete\s+(?:the|this|that)\s+(?:sent\s+)?"
        r"(?:email|message)",
    ),
    _f(
        _TH,
        0.15,
        ("without",),
        r"without\s+(?:asking|confirm\w*|checking\s+with|double-checking)(?:\s+(?:me|first))?" + _E,
    ),
    _f(
        _TH,
        0.15,
        ("http", "www."),
        rf"{_B}(?:visit|open|click(?:\s+on)?|go\s+to|navigate\s+to|browse\s+to|load|download"
        r"|install|fetch)(?![a-z])[^.\n\]]{0,40}?(?:https?://|www\.)",
    ),
    _f(
        _TH,
        0.25,
        (".exe", ".msi", ".apk", ".dmg", ".pkg", ".bat", ".ps1", ".scr", ".vbs", ".jar"),
        r"(?:install|run|execute)\w*\s+(?:\S+\s+){0,3}?\S*\.(?:exe|msi|apk|dmg|pkg|bat|ps1|scr"
        r"|vbs|jar)" + _E,
    ),
    # ---- exfiltration
    _f(_EX, 0.1, ("![",), r"!\[[^\]\n]{0,100}\]\(\s*(?:https?:)?//"),
    _f(
        _EX,
        0.4,
        ("![",),
        rf"{_B}(?:print|include|render|display|show|output|add|append|insert|embed)\w*\b"
        r"[^\n]{0,60}?"
        r"!\[[^\]\n]{0,100}\]\(\s*(?:https?:)?//",
    ),
    _f(_EX, 0.15, ("![",), r"!\[[^\]\n]{0,100}\]\(\s*(?:https?:)?//[^)\s]*\?[^)\s]*="),
    _f(
        _EX,
        0.3,
        ("=",),
        r"(?:https?:)?//[^\s)\]\"'<>]*[?&][\w-]+=[^\s)\]&\"'<>]*(?:<[a-z][^<>\n]{0,80}>|\{\{?\s*\w"
        r"|\$\w|%s)",
    ),
    _f(
        _EX,
        0.75,
        ("=",),
        r"!\[[^\]\n]{0,100}\]\(\s*(?:https?:)?//[^\s)\"'<>]*[?&][\w-]+=[^\s)&\"'<>]*(?:<[a-z]"
        r"[^<>\n]{0,80}>|\{\{?\s*\w|\$\w|%s|\[)"
        r"|(?:https?:)?//[^\s)\]\"'<>]*[?&][\w-]+=(?:(?:<|\{\{?|\[|\$)\s*)?(?:paste|insert|include"
        r"|append)\w*|(?:https?:)?//[^\s)\]\"'<>]*[?&][\w-]+=(?:<|\{\{?|\[|\$)\s*(?:the\s+)?"
        r"(?:user'?s?|conversation|chat|history|secret|password|message|session|cookie|token"
        r"|credentials?|api[_-]?key|email|address|phone|summary|context|memory|data)",
    ),
    _f(
        _EX,
        0.3,
        (
            "webhook",
            "requestbin",
            "pipedream",
            "ngrok",
            "burpcollaborator",
            "interact.sh",
            "oast.",
            "hookbin",
            "beeceptor",
            "canarytokens",
        ),
        r"webhook\.site|requestbin|pipedream\.net|ngrok(?:\.io|-free)|burpcollaborator|interact\.sh"
        r"|oast\.\w+|hookbin|beeceptor|canarytokens",
    ),
    _f(_EX, 0.2, ("cc",), rf"{_B}b?cc\s*:?\s*{_EMAIL}"),
    _f(
        _EX,
        0.4,
        ("=",),
        r"(?:https?:)?//[^\s)\]\"']*[?&][\w-]+=(?=\s*$)"
        r"|(?:url|query)\s+(?:parameters?|params?|strings?)\s+(?:to|of|on|in)\s+(?:https?://|www\.)",
    ),
    _f(
        _EX,
        0.45,
        ("curl", "wget", "netcat", "nc ", "scp", "rsync", "invoke-webrequest", "iwr "),
        r"(?:curl|wget|netcat|nc|scp|rsync|invoke-webrequest|iwr)\b[^\n]{0,160}?(?:\s-d\s*@|--data"
        r"(?:-binary)?\s*@|--upload-file|\s-t\s|\s-f\s+\S*=@|--post-file|\|\s*(?:nc|netcat|curl))",
    ),
    _f(
        _TH,
        0.2,
        (".ssh", "id_rsa", ".aws", ".env", "passwd", "shadow", ".netrc", "credentials", "keychain"),
        r"~?/?\.ssh/|id_rsa|id_ed25519|\.aws/credentials|(?<![a-z])\.env(?![a-z])|/etc/(?:passwd"
        r"|shadow)|\.netrc|\.git-credentials|keychain",
    ),
    _f(
        _EX,
        0.35,
        ("http", "www."),
        rf"{_B}{_SEND_VERB}{_E}\s+(?:it|them|this|that|everything|all|the\s+\w+(?:\s+\w+)?)\s+to\s+"
        r"(?:https?://|www\.)",
    ),
)

ALL_NEEDLES = tuple(
    sorted({n for feature in FEATURES for n in feature.needles} | set(SEND_NEEDLES))
)
"""Every prefilter substring, checked once per view."""

# =========================================================================== other detector tables

# ---- features that need the original letter case
CASED_SYSTEM_RE = re.compile(r"(?<![A-Za-z])(?:SYSTEM|DEVELOPER|ADMIN|ADMINISTRATOR)\s*:")
# ---- fake conversation turns and JSON role messages
TURN_RE = re.compile(
    r"^[ \t>]*(user|human|me|assistant|ai|bot|chatbot|model|gpt|chatgpt|claude|gemini)[ \t]*:",
    re.MULTILINE,
)
USER_ROLES = frozenset({"user", "human", "me"})
JSON_ROLE_RE = re.compile(
    r"[{,]\s*[\"']role[\"']\s*:\s*[\"'](system|developer|assistant|user|tool|function)[\"']"
)
CODE_CONTEXT_RE = re.compile(
    r"(?:messages|client|completions|response|payload|prompt)\s*(?:=|\.|\()|\bimport\s+\w"
    r"|\bdef\s+\w+\(|\bconst\s+\w+\s*=|=\s*\[\s*$",
    re.MULTILINE,
)
# ---- exfiltration: sending sensitive or bulk data to an outside address
SEND_TARGET_RE = re.compile(
    rf"{_B}{_SEND_VERB}{_E}{_SPAN}{{0,150}}?{_B}to\s+{_SPAN}{{0,15}}?{_TARGET}"
)
SENSITIVE_RE = re.compile(
    rf"{_B}{_SENSITIVE}{_E}|{_B}(?:all|every|entire|full|whole|complete|the\s+last\s+\d+)\s+"
    r"(?:\w+\s+){0,2}(?:messages?|emails?|files?|documents?|transactions?|records?|data)"
)
TEMPLATE_DOC_RE = re.compile(
    r"(?<![a-z])(?:chatml|chat\s+(?:format|template)|prompt\s+(?:format|template)|special\s+tokens"
    r"|tokeni[sz]er|(?:for\s+)?example\s*:|e\.g\.|delimit\w*|syntax)(?![a-z])"
)
# ---- mention detection
NEGATED_RE = re.compile(
    r"(?:not|n't|never|cannot|unable\s+to|refuses?\s+to|won'?t|shouldn'?t|must\s+not)\s+"
    r"(?:\w+\s+)?$"
)
QUOTED_RE = re.compile(r"\"[^\"\n]{1,300}\"|(?<![a-z0-9])'[^'\n]{1,300}'(?![a-z0-9])")
META_RE = re.compile(
    r"(?<![a-z])(?:mean|means|meaning|phrase|phrases|such\s+as|e\.g\.|for\s+example|example"
    r"|called|known\s+as|memes?|attacks?|inject\w*|jailbreaks?|technique|string|classic"
    r"|famous|typical|like|warns?|beware|detect\w*|filter\w*)(?![a-z])"
)
META_BEFORE_RE = re.compile(
    r"(?:such\s+as|like|phrases?|called|e\.g\.|for\s+example|words|sentence|string|saying)\s*"
    r"[:,]?\s*[\"']?$"
    r"|(?:told|asked|instructed)\s+to\s*[\"']$"
    r"|(?:if|when|whenever|should)\s+(?:a|the|any|some)\s+(?:user|person|someone|customer|caller"
    r"|document|message|page|e-?mail|text|file)\s+(?:asks?|tells?|tries|attempts?|wants?)\s+"
    r"(?:you\s+|it\s+|the\s+\w+\s+)?to\s*$"
)
"""Right before a match: it is quoted as an example, or it is the request a rule is about ("If a
user asks you to ignore these rules, decline")."""
META_AFTER_RE = re.compile(
    r"^\s*(?:that\s+)?(?:it|they|the\s+\w+)\s+contains?\b|^\s*(?:found|embedded|hidden"
    r"|contained|appearing|written)\s+(?:in|inside|within)\b|^\s*(?:in|inside|within)\s+(?:the\s+)?"
    r"(?:retrieved|uploaded|fetched|external|untrusted|third-party|scraped)\b"
)
"""Right after a match: the instructions are those inside data ("ignore any instructions it
contains"), a defence written for an assistant, not an attack on it."""

# ---- multilingual override / leak (run on the NFKC, casefolded view)
MULTILINGUAL: tuple[tuple[float, tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (weight, needles, re.compile(pattern))
    for weight, needles, pattern in (
        # Japanese
        (
            0.85,
            ("無視", "忘れ", "破棄", "従わな", "取り消"),
            r"(?:指示|命令|ルール|設定|プロンプト|制約|指令|規則|ガイドライン)[^。\n]{0,20}?"
            r"(?:無視|忘れ|破棄|従わな|取り消)",
        ),
        (0.85, ("無視", "忘れ"), r"(?:無視|忘れ)[^。\n]{0,6}?(?:指示|命令|ルール|プロンプト|制約)"),
        (
            0.7,
            ("プロンプト", "指示"),
            r"(?:システムプロンプト|初期指示|内部指示|隠された指示|システム指示)[^。\n]{0,25}?"
            r"(?:出力|表示|教え|見せ|公開|開示|繰り返|書き出|貼り|送)",
        ),
        (
            0.5,
            ("あなたは",),
            r"(?:あなたは今から|今からあなたは)[^。\n]{0,30}?(?:制限|ルール)[^。\n]{0,10}?(?:ない|なし)",
        ),
        # Chinese
        (
            0.85,
            ("忽略", "无视", "無視", "忘记", "忘記", "不要理会", "跳过"),
            r"(?:忽略|无视|無視|忘记|忘記|不要理会|跳过)[^。\n]{0,12}?(?:指令|指示|说明|說明|提示"
            r"|规则|規則|命令|要求)",
        ),
        (
            0.7,
            ("提示", "指令"),
            r"(?:系统提示|系統提示|系统指令|初始指令)[^。\n]{0,20}?(?:输出|輸出|显示|顯示|告诉|告訴"
            r"|打印|重复|重複)",
        ),
        (
            0.7,
            ("提示", "指令"),
            r"(?:输出|輸出|显示|顯示|告诉我|告訴我|打印|重复|重複)[^。\n]{0,12}?(?:系统提示|系統提示"
            r"|系统指令|初始指令)",
        ),
        # Korean
        (
            0.85,
            ("무시", "잊어"),
            r"(?:이전|모든|위의|앞의)[^.\n]{0,12}?(?:지시|지침|명령|규칙|프롬프트)[^.\n]{0,12}?"
            r"(?:무시|잊어)",
        ),
        (0.7, ("프롬프트",), r"시스템\s*프롬프트[^.\n]{0,20}?(?:출력|보여|알려|공개|반복)"),
        # Russian / Ukrainian
        (
            0.85,
            ("игнор", "проигнор", "забуд", "отбрось", "не обращ", "не следуй", "отмени", "ігнор"),
            r"(?<![а-яё])(?:игнорир\w*|проигнорир\w*|забудь\w*|забудьте|отбрось\w*|не\s+обращай"
            r"\w*\s+внимания\s+на|не\s+следуй\w*|отмени\w*|ігноруй\w*|забудь)\s+(?:\w+\s+){0,4}?"
            r"(?:инструкц\w*|указани\w*|правил\w*|команд\w*|промпт\w*|ограничени\w*|директив\w*"
            r"|установк\w*|інструкці\w*)",
        ),
        (
            0.7,
            ("системн", "исходн", "свои инструкц"),
            r"(?:выведи|покажи|раскрой|повтори|напиши|распечатай|перескажи|сообщи|выдай)\w*\s+"
            r"(?:\w+\s+){0,4}?(?:системн\w*\s+(?:промпт\w*|инструкц\w*|подсказ\w*|сообщени\w*)"
            r"|исходн\w*\s+инструкц\w*|свои\s+инструкц\w*)",
        ),
        (
            0.5,
            ("теперь",),
            r"(?:ты\s+теперь|теперь\s+ты)\s+(?:\w+\s+){0,3}?(?:без\s+ограничений|свободн\w*)",
        ),
        # Spanish / Portuguese / Italian / French / German
        (
            0.85,
            (
                "ignor",
                "olvid",
                "omite",
                "descarta",
                "esque",
                "dimentic",
                "oubli",
                "vergiss",
                "vergessen",
            ),
            r"(?<![a-z])(?:ignora|ignore(?=\s+(?:toutes|tous|les|la|le|l'))|ignorar|ignorez|ignoriere"
            r"|ignorieren|olvida|olvide"
            r"|olvidar|omite|descarta|esquece|esqueça|dimentica|oublie|oubliez|vergiss|vergessen)"
            r"\w*\s+(?:\w+\s+){0,4}?(?:instrucciones|indicaciones|reglas|órdenes|directrices"
            r"|instruções|instrucoes|regras|istruzioni|regole|consignes|règles|anweisungen|regeln"
            r"|befehle|vorgaben|instructions|directives|indications|anordnungen|vorschriften)",
        ),
        (
            0.85,
            ("anterior", "précède", "vorher", "davor", "bisher", "precedente", "prima", "acima"),
            r"(?<![a-z])(?:olvida|olvide|ignora|ignore|oublie|oubliez|ignorez|vergiss|vergessen"
            r"|ignoriere|dimentica|esqueça|esquece)\w*\s+(?:sie\s+)?(?:todo|tout|alles|tutto)\s+"
            r"(?:lo\s+|ce\s+qui\s+|quello\s+che\s+|o\s+que\s+)?(?:anterior|précède|precede|vorherige"
            r"|bisherige|davor|precedente|prima|acima|dicho|écrit|gesagte)",
        ),
        (
            0.6,
            ("eres", "tu es", "du bist", "sei ", "você é", "vous êtes"),
            r"(?:ahora\s+eres|ahora\s+sos|maintenant\s+tu\s+es|vous\s+êtes\s+maintenant|du\s+bist"
            r"\s+jetzt|jetzt\s+bist\s+du|ora\s+sei|agora\s+você\s+é)\b[^.\n]{0,60}?(?:sin\s+(?:reglas"
            r"|restricciones|filtros|límites)|sans\s+(?:règles|restrictions|filtres|limites)|ohne"
            r"\s+(?:regeln|einschränkungen|filter|grenzen)|senza\s+(?:regole|restrizioni|filtri"
            r"|limiti)|sem\s+(?:regras|restrições|filtros|limites))",
        ),
        (
            0.85,
            ("caso omiso", "no sigas", "non seguire", "ne suivez", "befolge nicht"),
            r"(?<![a-z])(?:haz\s+caso\s+omiso|no\s+sigas|non\s+seguire|ne\s+suivez\s+pas"
            r"|befolge\s+nicht)\s+(?:\w+\s+){0,4}?(?:instrucciones|istruzioni|instructions"
            r"|anweisungen|reglas|regole)",
        ),
        (
            0.7,
            ("sistema", "système", "systemprompt", "system-prompt", "systemanweisungen"),
            r"(?:muestra|revela|imprime|repite|dime|mostra|rivela|ripeti|montre|révèle|affiche"
            r"|répète|zeige|gib|wiederhole|verrate)\w*\s+(?:\w+\s+){0,4}?(?:prompt\s+(?:del|de|do"
            r"|di)\s+sistema|instrucciones\s+del\s+sistema|instruções\s+do\s+sistema|prompt\s+système"
            r"|systemprompt|system-prompt|systemanweisungen|istruzioni\s+di\s+sistema)",
        ),
    )
)


# ---- compact (separator-free) view, for letter-spaced or punctuated phrases
COMPACT_FEATURES: tuple[tuple[str, float, re.Pattern[str]], ...] = (
    (
        _OV,
        0.75,
        re.compile(
            r"(?:ignore|disregard|forget)(?:all|any|the|your|of)*(?:previous|prior|above|earlier"
            r"|preceding)(?:and|following)*(?:instructions|directions|prompts|rules|guidelines)"
        ),
    ),
    (
        _PL,
        0.55,
        re.compile(
            r"(?:reveal|print|show|repeat|output|display)(?:me)?(?:your|the)(?:system|initial"
            r"|hidden|original)(?:prompt|instructions)"
        ),
    ),
)

# ---- decoders
B64_RE = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
B32_RE = re.compile(r"(?<![A-Za-z0-9=])[A-Z2-7]{16,}={0,6}(?![A-Za-z0-9=])")
HEX_RE = re.compile(
    r"(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Za-z])|(?:\\x[0-9A-Fa-f]{2}){6,}"
)
A85_TOKEN_RE = re.compile(r"[!-u]{20,}")
B85_TOKEN_RE = re.compile(r"[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]{20,}")
A85_ADOBE_RE = re.compile(r"<~[!-u\s]{10,}~>")
URLENC_RE = re.compile(r"%[0-9A-Fa-f]{2}")
QP_RE = re.compile(r"(?:=[0-9A-F]{2}[^=\s]{0,3}){4,}")
BIN_UNIT_RE = re.compile(r"[01]{8}")
HEX_UNIT_RE = re.compile(r"(?:0x|\\x)?[0-9A-Fa-f]{2}")
MORSE_UNIT_RE = re.compile(r"[.\-\u2022\u2013\u2014]{1,6}")
SPACED_HINT_RE = re.compile(
    r"(?:(?:0x|\\x)?[0-9A-Fa-f]{2}[\s,:]+){5}|(?:\d{2,3}[\s,]+){5}|(?:[.\-\u2022]{1,6}[\s/]+){6}"
    r"|(?:[01]{8}[\s,]+){3}"
)
LEET_HINT_RE = re.compile(r"[a-z][0-9@$][a-z0-9@$]*[a-z]|[0-9@$][a-z]+[0-9@$]")
QUOTED_LITERAL_RE = re.compile(r"\"([^\"\n]{1,200})\"|'([^'\n]{1,200})'")
CONCAT_HINT_RE = re.compile(
    r"(?<![a-z])[a-z]\w{0,10}\s*\+\s*[a-z]\w{0,10}(?![a-z])|concatenat|combine|join\s+(?:them|the)"
    r"|put\s+(?:them\s+)?together"
)
LEET_TOKEN_RE = re.compile(
    r"(?<![\w@$!|])(?=[a-z0-9@$!|]*[a-z])(?=[a-z0-9@$!|]*[0-9@$|])[a-z0-9@$!|]{3,}"
)
LEET_TABLE = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t",
                             "8": "b", "9": "g", "@": "a", "$": "s", "!": "i", "|": "l",
                             "2": "z", "6": "g"})  # fmt: skip
ROT13_WORDS = frozenset(
    {"gur", "naq", "gb", "bs", "vf", "vg", "lbh", "lbhe", "nyy", "sbe", "jvgu", "guvf", "vtaber",
     "cevag", "flfgrz", "cebzcg", "vafgehpgvbaf", "gung", "ner", "abg"}
)  # fmt: skip
REVERSED_WORDS = frozenset(
    {"eht", "dna", "uoy", "ruoy", "lla", "erongi", "snoitcurtsni", "tnirp", "metsys", "tpmorp",
     "siht", "taht", "ot", "fo", "si"}
)  # fmt: skip
MORSE = {
    ".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g",
    "....": "h", "..": "i", ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n",
    "---": "o", ".--.": "p", "--.-": "q", ".-.": "r", "...": "s", "-": "t", "..-": "u",
    "...-": "v", ".--": "w", "-..-": "x", "-.--": "y", "--..": "z", "-----": "0",
    ".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5", "-....": "6",
    "--...": "7", "---..": "8", "----.": "9",
}  # fmt: skip
BRAILLE = {
    0x01: "a", 0x03: "b", 0x09: "c", 0x19: "d", 0x11: "e", 0x0B: "f", 0x1B: "g", 0x13: "h",
    0x0A: "i", 0x1A: "j", 0x05: "k", 0x07: "l", 0x0D: "m", 0x1D: "n", 0x15: "o", 0x0F: "p",
    0x1F: "q", 0x17: "r", 0x0E: "s", 0x1E: "t", 0x25: "u", 0x27: "v", 0x3A: "w", 0x2D: "x",
    0x3D: "y", 0x35: "z", 0x00: " ",
}  # fmt: skip
NATO = {
    "alfa": "a", "alpha": "a", "bravo": "b", "charlie": "c", "delta": "d", "echo": "e",
    "foxtrot": "f", "golf": "g", "hotel": "h", "india": "i", "juliett": "j", "juliet": "j",
    "kilo": "k", "lima": "l", "mike": "m", "november": "n", "oscar": "o", "papa": "p",
    "quebec": "q", "romeo": "r", "sierra": "s", "tango": "t", "uniform": "u", "victor": "v",
    "whiskey": "w", "whisky": "w", "xray": "x", "x-ray": "x", "yankee": "y", "zulu": "z",
}  # fmt: skip
BRAILLE_RE = re.compile("[\u2800-\u283f]")
NATO_RE = re.compile(r"(?:(?:" + "|".join(NATO) + r")[\s,]+){6,}(?:" + "|".join(NATO) + ")")

DISCUSSION_RE = re.compile(
    r"prompt[\s-]?inject\w*|injection attempts?|jailbreak\w*|red[\s-]?team\w*|attack\w*"
    r"|malicious|payloads?|phishing|social engineering|threat model|security|defen[cs]es?"
    r"|mitigations?|classifiers?|detect\w*|filter\w*|saniti[sz]\w*|example of|owasp|ctf"
    r"|guardrails?|adversarial|vulnerab\w*|scam\w*|fraud\w*|spoof\w*|exploit\w*|blocklist"
    r"|test fixtures?|regression tests?|system prompts?|chat templates?|prompt templates?"
    r"|special tokens?|stop tokens?|few-shot|fine-tun\w*|tokeni[sz]er|prompt engineering"
    r"|injection de prompt|inyecci[oó]n de prompt|prompt-injektion|инъекци\w*|атак\w*"
    r"|プロンプトインジェクション|攻撃|提示词注入|提示注入|攻击|프롬프트 인젝션|공격|보안"
    r"|sécurité|seguridad|sicherheit|безопасност\w*|セキュリティ|安全|주의할"
)
"""Vocabulary of text that discusses attacks (articles, reports, training): two distinct terms
make a text a discussion, which lexical rules may sanitise but not block."""

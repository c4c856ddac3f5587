"""Language-general cue features of one window of text, for the injection classifier.

The MiniLM sentence embedding (``kernel.injection_model``) reads English well and other languages
poorly, and it sees meaning rather than who a sentence is addressed to. These features add what an
injection needs whatever its wording or language: a reader that is an AI, a request to drop prior
instructions, to reveal the hidden prompt, to send secrets to an address, to take on a persona
without limits, to act without telling the user, to keep a claim about "the user" for later
(memory poisoning: an e-mail or a page speaks of its reader's user in the third person only when
it addresses the agent). Each concept is a short lexicon of dictionary
words in about thirty languages (not attack strings: "forget", "instructions", "password",
"assistant"), matched as substrings of the casefolded window, so "vergiss", "olvida", "忘记" and
"ignore" all light the same feature. The classifier learns how the concepts combine, together with
the embedding; no single feature decides.

:func:`features` returns :data:`NAMES` values in ``[0, 1]``. Pure and cheap (a few dozen substring
tests per window).
"""

from __future__ import annotations

import re
import unicodedata

_AI = (
    " ai ", " ai,", " ai:", " ai-", "ai assistant", "assistant", " model", " bot", "chatbot",
    " agent", " llm", "language model", " gpt", " ki ", " ki-", "ki,", "assistent", " ia ",
    " ia,", "asistente", "assistente", "modèle", "modello", "modelo", " ии", "ии-", "помощник",
    "ассистент", "асистент", "модель", " бот", "アシスタント", "ａｉ", "ai助手", "助手",
    "人工知能", "人工智能", "어시스턴트", "인공지능", "مساعد", "الذكاء الاصطناعي", "सहायक",
    "trợ lý", "asisten", "yapay zeka", "asystent", "tekoäly", "yz ",
    "ai에게", "ai는", "챗봇", "msaidizi", "akili bandia", "এআই", "সহকারী", "কৃত্রিম বুদ্ধিমত্তা",
    "دستیار", "هوش مصنوعی", "עוזר", "בינה מלאכותית", "ผู้ช่วย", "ปัญญาประดิษฐ์", "เอไอ", "ші-",
    " ші ", "помічник", "βοηθ", "τεχνητή νοημοσύνη", "umělá inteligence", "inteligența artificială",
    "avustaja", "एआई",
)  # fmt: skip
_OVERRIDE = (
    "ignore", "ignoring", "disregard", "forget", "set aside", "put aside", "overlook",
    "let go of", "drop your", "drop the", "abandon", "bypass", "override", "suspend", "cancel",
    "void", "revoke", "no longer apply", "no longer in effect", "obsolete", "outdated",
    "never existed", "switch off", "shelv", "step outside", "vergiss", "vergessen", "ignorier",
    "missacht", "oublie", "oubliez", "ignorez", "olvida", "olvide", "ignora", "dimentica",
    "desconsider", "esqueç", "esquece", "negeer", "vergeet", "zignoruj", "zapomnij", "glöm",
    "strunta", "unut", "yok say", "забудь", "забудьте", "игнорир", "ігноруй", "забудь",
    "не обращай", "無視", "忘れ", "忽略", "忘记", "无视", "不要理会", "무시", "잊어", "تجاهل",
    "انسَ", "انس ", "अनदेखा", "भूल जा", "bỏ qua", "quên", "abaikan", "lupakan",
    "puuza", "sahau", "무효", "無効", "无效", "недействительн",
    "উপেক্ষা", "ভুলে যাও", "ভুলে যান", "نادیده بگیر", "فراموش کن", "התעלם",
    "שכח", "เพิกเฉย", "ไม่ต้องสนใจ", "잊고", "не зважай", "αγνόησε", "ξέχασε", "ignoruj", "zapomeň",
    "ignoră", "uită", "unohda", "ohita", "भूल जाओ",
)  # fmt: skip
_INSTRUCTIONS = (
    "instruction", "directive", "direction", "rules", "guideline", "guardrail", "prompt",
    "policy", "policies", "constraint", "restriction", "setup", "configur", "briefing",
    "orders", "protocol", "guidance", "framework", "limitation", "anweisung", "regeln",
    "richtlinie", "vorgabe", "consigne", "règle", "instrucci", "reglas", "norma", "istruzion",
    "regole", "instruç", "orientaç", "diretriz", "regras", "instructie", "regels", "polecen",
    "instrukcj", "zasad", "instruktion", "regler", "talimat", "kural", "инструкц", "правил",
    "указани", "вказівк", "інструкц", "指示", "命令", "ルール", "プロンプト", "指令", "规则",
    "規則", "提示", "지시", "규칙", "프롬프트", "تعليمات", "التعليمات", "निर्देश", "hướng dẫn",
    "lệnh", "instruksi", "aturan",
    "maagizo", "maelekezo", "kanuni", "지침", "方針",
    "নির্দেশ", "নিয়ম", "دستورالعمل", "دستورات", "قوانین",
    "הוראות", "כללים", "הנחיות", "คำสั่ง", "οδηγίες", "κανόνες", "pokyny", "instrukce", "pravidla",
    "instrucțiuni", "reguli", "ohjeet", "ohjeita", "säännöt", "नियम",
)  # fmt: skip
_PRIOR = (
    "previous", "prior ", "earlier", "above", "before this", "initial", "original",
    "at the start", "so far", "you were given", "you were told", "you received", "came before",
    "vorher", "bisherig", "vorherig", "zuvor", "précédent", "antérieur", "anterior",
    "precedent", "eerdere", "vorige", "poprzedni", "tidigare", "önceki", "предыдущ", "прежн",
    "ранее", "попередн", "これまで", "以前", "之前", "先前", "上面", "이전", "السابقة", "पिछले",
    "trước đó", "sebelumnya",
    "awali", "zilizopita", "uliyopewa", "পূর্ববর্তী", "আগের", "قبلی", "پیشین", "הקודמות",
    "הקודמים", "ก่อนหน้า", "앞서", "προηγούμεν", "předchozí", "anterioare", "aiemmat", "edelliset",
)  # fmt: skip
_LEAK = (
    "system prompt", "system message", "systemprompt", "system-prompt", "hidden instruction",
    "secret instruction", "initial prompt", "preprompt", "pre-prompt", "your instructions",
    "your prompt", "setup message", "initialised with", "initialized with", "context window",
    "verbatim", "word for word", "prompt di sistema", "mensaje de sistema",
    "prompt del sistema", "message système", "invite système", "systemanweisung", "системн",
    "システムプロンプト", "系统提示", "系統提示", "시스템 프롬프트", "موجه النظام",
    "सिस्टम प्रॉम्प्ट",
    "дословно", "neno kwa neno", "słowo w słowo", "wort für wort", "mot pour mot",
    "palabra por palabra", "parola per parola", "palavra por palavra", "kelime kelime", "逐字",
    "一字一句", "حرفياً", "حرف به حرف", "מילה במילה", "คำต่อคำ", "शब्दशः", "maelekezo ya mfumo",
    "সিস্টেম প্রম্পট", "سیستمی", "پرامپت", "הנחיות המערכת", "הודעת המערכת", "พรอมต์ระบบ",
    "คำสั่งระบบ", "시스템 메시지", "μήνυμα συστήματος",
)  # fmt: skip
_REVEAL = (
    "reveal", "show me", "print", "repeat", "output your", "output the", "tell me your",
    "display", "quote", "reproduce", "echo", "spell out", "dump", "list every", "what did",
    "zeig", "montre", "affiche", "muestra", "revela", "mostra", "rivela", "toon", "pokaż",
    "göster", "покажи", "покаж", "выведи", "表示", "显示", "出力", "보여", "출력", "أظهر",
    "बताओ",
    "повтори", "повторите", "wiederhole", "répète", "répétez", "repite", "repita", "ripeti",
    "herhaal", "powtórz", "upprepa", "tekrarla", "繰り返", "重复", "반복", "كرر", "दोहराओ",
    "lặp lại", "ulangi", " rudia", "onyesha", "দেখাও", "نشان بده", "تکرار کن", "הצג", "חזור על",
    "แสดง", "copia",
)  # fmt: skip
_SEND = (
    "send", "forward", "email it", "e-mail it", "upload", "post ", "post the", "exfiltrat",
    "transmit", "share", "paste", "leak", "copy", "bcc", "mirror", "export", "attach",
    "include", "put ", "reply with", "respond with", "make an http", "get request",
    "http request", "curl", "wget",
    "dns lookup", "senden", "schick", "weiterleit", "envoie", "envoyer", "envoy", "envía",
    "enviar", "envie", "invia", "inoltra", "stuur", "wyślij", "skicka", "gönder", "отправ",
    "перешли", "пересла", "перешлите", "送信", "送って", "发送", "转发", "导出", "보내", "أرسل",
    "भेज", "gửi", "kirim",
    " tuma ", "peleka", "업로드", "アップロード", "上传", "загрузи",
    "পাঠাও", "পাঠান", "بفرست", "ارسال", "שלח", "העבר", "ส่ง", "надішли",
    "στείλε", "pošli", "trimite", "lähetä",
)  # fmt: skip
_SECRET = (
    "password", "passcode", " pin", "api key", "api_key", "apikey", "token", "secret",
    "credential", "ssh", ".env", "contacts", "contact list", "address book", "card number",
    "card", "iban", "2fa", "one-time code", "otp", "cookie", "session", "private key", "id_rsa",
    "keychain", "history", "conversation", "transcript", "chat messages", "personal data",
    "home address", "date of birth", "medical", "salary", "salaries", "backup code",
    "environment variable", "env file", "passwort", "kennwort", "zugangsdaten", "mot de passe",
    "contraseña", "senha", "wachtwoord", "hasło", "lösenord", "şifre", "пароль", "парол",
    "パスワード", "密码", "密碼", "通讯录", "비밀번호", "كلمات المرور", "كلمة المرور",
    "पासवर्ड", "mật khẩu", "kata sandi", "documenti", "documents", "files", "inbox", "emails",
    "mail", "письма", "riwayat", "obrolan",
    "nenosiri", "akaunti ya benki", "পাসওয়ার্ড", "ব্যাংক অ্যাকাউন্ট", "رمز عبور",
    "حساب بانکی", "סיסמה", "סיסמא", "รหัสผ่าน", "κωδικό",
)  # fmt: skip
_PERSONA = (
    "you are now", "you're now", "from now on you", "from this message on", "pretend", "act as",
    "roleplay", "role-play", "role play", "in character", "break character", "persona",
    "simulate", "simulation", "jailbreak", "unrestricted", "uncensored", "no restrictions",
    "no rules", "no limits", "without restrictions", "without limits", "no ethics", "no filter",
    "no content policy", "never refuse", "never says no", "always says yes", "without moral",
    "no moral", "has no rules", "unfiltered", "evil twin", "opposite mode", "developer mode",
    "dan ", "sin restricciones", "senza restrizioni", "sem restrições", "ohne einschränkung",
    "sans restriction", "bez ograniczeń", "без ограничений", "sınırsız", "制限なし", "限制",
    "没有任何限制", "제한 없", "بدون قيود", "bez żadnych ograniczeń", "no safety",
    "sin filtros", "sin filtro", "ohne filter", "senza regole", "zonder regels", "sin reglas",
    "ohne regeln", "sans règles", "sem regras", "bez zasad", "без правил", "kuralsız", "ルールなし",
    "没有规则", "규칙 없", "بلا قواعد", "بدون قوانین", "ללא כללים", "tanpa aturan",
    "không có quy tắc", "sans filtre", "sem filtros", "senza filtri",
    "без моральных", "без фильтров", "в роли", "оставайся в", "무제한", "自由模式", "没有限制",
    "bila vikwazo", "ללא הגבלות", "بدون محدودیت", "ไม่มีข้อจำกัด", "mantén el personaje",
)  # fmt: skip
_STEALTH = (
    "don't tell", "do not tell", "without telling", "without asking", "without confirm",
    "no need to mention", "don't mention", "do not mention", "say nothing", "don't show",
    "do not show", "silently", "quietly", "secretly", "without the user", "not tell the user",
    "no need to ask", "without review", "without verification", "no verification",
    "do it without", "nicht sagen", "ohne zu fragen", "sans le dire", "sans demander",
    "sin decir", "sin avisar", "senza dirlo", "non dirlo", "sem avisar", "не говори",
    "не сообщай", "ユーザーに言わ", "告诉用户", "不要告诉", "말하지 마",
    "אל תספר", "알리지 마", "no le digas", "no se lo digas", "sin que lo sepa", "не кажи",
    "به او نگو", "بدون اطلاع", "usimwambie", "bila kumwambia", "না জানিয়ে", "nie mów",
    "nicht erwähnen", "ne le dis pas", "non dirgli", "não conte", "โดยไม่ต้องถาม", "ไม่ต้องแจ้ง",
)  # fmt: skip
_AUTHORITY = (
    "system:", "[system", "system override", "system note", "admin", "administrator",
    "developer", "operator", "authorised", "authorized", "approved by", "signed off",
    "management", "priority", "maintenance mode", "policy has changed", "policy updated",
    "sanctioned", "compliance", "required to", "takes priority", "official", "owner",
)  # fmt: skip
_ACTION = (
    "delete", "remove", "rm -rf", "drop table", "transfer", "pay ", "payment", "refund",
    "approve", "merge", "disable", "install", "run ", "execute", "| sh", "|sh", "| bash", "iex",
    "chmod", "grant", "cancel", "book ", "buy", "purchase", "click", "accept", "unlock",
    "publish", "push --force", "reset", "change the", "set ", "rank", "recommend",
    "tell the user", "tell users", "tell the reader", "tell them", "say that", "state that",
    "claim that", "write in your", "add a line", "add to every", "in your answer",
    "in your reply", "in your summary", "your answer", "your reply", "your response",
    "überweis", "virement", "transfiere", "transferência", "перевед", "оплати", "переказ",
    "결제", "送金", "转账", "支付", "ادفع", "پرداخت", "שלם", "โอน", "ชำระ", "hamisha", " lipa ",
    "পরিশোধ", "przelew", "zapłać", "thanh toán", "chuyển khoản", "bayar", "lösch", "supprim",
    "elimina", "apaga", "удали", "видали", "削除", "删除", "삭제", "احذف", "حذف کن", "מחק",
    " futa ", "মুছে",
)  # fmt: skip
_PERSIST = (
    "remember", "keep in mind", "bear in mind", "don't forget", "do not forget", "memoriz",
    "memoris", "long-term memory", "your memory", "your notes", "store this", "store that",
    "save this", "save that", "record this", "note this", "note that", "as a fact",
    "as a preference", "standing preference", "standing instruction", "going forward",
    "from now on", "from today", "in future", "for future", "every future", "all future",
    "next time", "permanently", "forever", "henceforth", "merk dir", "merke dir", "merken sie",
    "dauerhaft", "ab jetzt", "künftig", "zukünftig", "souviens", "retiens", "mémorise",
    "désormais", "à l'avenir", "recuerda", "de ahora en adelante", "en adelante",
    "ricorda", "memorizza", "d'ora in poi", "lembre", "lembra", "daqui em diante",
    "onthoud", "voortaan", "zapamiętaj", "zapamietaj", "od teraz", "kom ihåg", "hädanefter",
    "hatırla", "bundan sonra", "запомни", "навсегда", "отныне", "впредь",
    "запам'ятай", "відтепер", "覚えて", "記憶して", "今後", "これから", "记住", "記住", "永久",
    "从现在开始", "今后", "以后", "기억해", "앞으로", "영구", "تذكر", "احفظ", "من الآن",
    "याद रख", "अब से", "hãy nhớ", "từ nay", "ingat", "mulai sekarang", "זכור", "מעכשיו",
    "θυμήσου", "από τώρα", "จำไว้", "ต่อจากนี้", "به خاطر بسپار", "از این به بعد",
)  # fmt: skip
_THE_USER = (
    "the user", "this user", "users'", "the account owner", "the owner of",
    "the customer's preference", "der nutzer", "des nutzers", "dem nutzer", "der benutzer",
    "des benutzers", "l'utilisateur", "el usuario", "del usuario", "al usuario",
    "l'utente", "dell'utente", "o usuário", "do usuário", "ao usuário", "de gebruiker",
    "użytkownik", "användaren", "kullanıcı", "пользовател", "користувач", "ユーザー", "利用者",
    "用户", "用戶", "사용자", "المستخدم", "उपयोगकर्ता", "người dùng", "pengguna", "המשתמש",
    "ο χρήστης", "του χρήστη", "ผู้ใช้", "کاربر",
    "mtumiaji", "ব্যবহারকারী", "uživatel", "utilizatorul", "käyttäjä",
)  # fmt: skip
_ADDRESS_RE = re.compile(
    r"(?:note|message|notice|instruction|instructions|directive|reminder|attention|p\.s\.|hey|dear"
    r"|hello|hi)\s*(?:to|for)?\s*(?:the|any|all|every|whichever|whoever|whatever)?\s*(?:[a-z-]+\s)?"
    r"(?:ai|assistant|model|agent|bot|llm|chatbot|summariser|summarizer|reader|system)s?\b"
    r"|\b(?:ai|assistant|model|agent|bot|llm|chatbot)s?\b[^.\n]{0,40}?(?:reading|processing"
    r"|summari[sz]ing|handling|comparing|using|evaluating|transcribing|that reads|who reads)"
    r"|(?:^|[.!?\n]\s*)(?:ai|assistant|agent|model|bot)\s*[,:]"
)
_TARGET_RE = re.compile(
    r"https?://|[a-z0-9._%+-]+@[a-z0-9-]+\.[a-z]{2,}|\b[a-z0-9-]+\.(?:com|net|org|io|biz|top|xyz"
    r"|example|info|ru|cn)\b|sftp://|ftp://"
)
_HIDDEN_RE = re.compile(
    r"<!--|display:\s*none|font-size:\s*[01]px|color:\s*#fff|<div hidden|white text|\bhidden\b"
)
_SECOND_RE = re.compile(r"\b(?:you|your|yours|yourself)\b")
_IMPERATIVE_RE = re.compile(
    r"(?:^|[.!?:\n]\s*)(?:please\s+|kindly\s+|now\s+|then\s+|also\s+|just\s+)?(?:ignore|forget"
    r"|disregard|send|forward|tell|reveal|show|print|output|delete|remove|run|execute|call|add"
    r"|include|append|put|copy|upload|share|reply|respond|answer|act|pretend|become|switch|stop"
    r"|treat|consider|follow|obey|comply|confirm|approve|write|say|list|rank|recommend|replace"
    r"|change|set|make|grab|gather|compile|read|open|go|look|click|install|export|store|save"
    r"|remember|update|note|translate|repeat|spell|encode|decode)\b"
)

NAMES: tuple[str, ...] = (
    "ai",
    "override",
    "instructions",
    "prior",
    "override_instructions",
    "leak",
    "leak_reveal",
    "send",
    "secret",
    "send_secret",
    "target",
    "send_target",
    "persona",
    "stealth",
    "authority",
    "action",
    "address",
    "hidden",
    "second_person",
    "imperative",
    "persist",
    "the_user",
    "persist_user",
)
"""The feature names, in the order :func:`features` returns them."""


def _any(view: str, words: tuple[str, ...]) -> float:
    return 1.0 if any(word in view for word in words) else 0.0


def features(window: str) -> tuple[float, ...]:
    """Return the cue features of one window (see :data:`NAMES`), each in ``[0, 1]``."""
    view = " " + unicodedata.normalize("NFKC", window).casefold().replace("\u2019", "'") + " "
    ai = _any(view, _AI)
    override = _any(view, _OVERRIDE)
    instructions = _any(view, _INSTRUCTIONS)
    prior = _any(view, _PRIOR)
    leak = _any(view, _LEAK)
    reveal = _any(view, _REVEAL)
    send = _any(view, _SEND)
    secret = _any(view, _SECRET)
    target = 1.0 if _TARGET_RE.search(view) else 0.0
    words = max(1, len(view.split()))
    second = min(1.0, 8.0 * len(_SECOND_RE.findall(view)) / words)
    persist = _any(view, _PERSIST)
    the_user = _any(view, _THE_USER)
    return (
        ai,
        override,
        instructions,
        prior,
        override * instructions,
        leak,
        leak * reveal,
        send,
        secret,
        send * secret,
        target,
        send * target,
        _any(view, _PERSONA),
        _any(view, _STEALTH),
        _any(view, _AUTHORITY),
        _any(view, _ACTION),
        1.0 if _ADDRESS_RE.search(view) else 0.0,
        1.0 if _HIDDEN_RE.search(view) else 0.0,
        second,
        min(1.0, len(_IMPERATIVE_RE.findall(view)) / 3.0),
        persist,
        the_user,
        persist * the_user,
    )

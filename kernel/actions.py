"""Canonical actions: the forms of a tool call that the guards check (issue 14).

The action gateway used to check ``tool=<name> input=<repr of the input>``; the ``', '`` between
argv elements and the closing ``]}`` broke the catalogue's anchors, and a file's *content* or a
chat reply was read as if it were a command. :func:`canonical` turns ``(tool, input)`` into the
forms an action really takes, and :func:`check_action` runs the shadow on every form (the first
veto wins; biases are the union over all forms). The action gateway and ``lumen guard veto`` both
call these two functions.

What each kind of tool becomes (every form is checked as ``tool=<tool> input=<form>``):

* **shell** (a shell-like tool name, or an ``argv``/``command``/``cmd``/``script`` field): the
  command as a shell would show it (:func:`shlex.join` of the argv, or a parsed script), and, for
  every simple command, the command after peeling wrappers (``sudo``, ``doas``, ``env``,
  ``nice``, ``ionice``, ``timeout``, ``nohup``, ``time``, ``command``, ``exec``, ``stdbuf``,
  ``setsid``, ``xargs``, ``watch``, ``flock``, ``chroot``, ``ssh host``, ``busybox``), the
  payload of ``sh/bash/zsh… -c``, ``su -c``, ``eval``, ``env -S``, ``find -exec``, the shell
  strings an interpreter's inline code hands to ``os.system``/``subprocess``/``system()``/
  ``execSync`` (``python -c`` is parsed with :mod:`ast`), and the SQL given to ``sqlite3``,
  ``psql``, ``mysql``… Variables and aliases set earlier in the same script are expanded
  (``x=rm; $x -rf /`` → ``rm -rf /``), as are ``$(echo …)`` substitutions. The arguments of
  programs that only print (``echo``, ``printf``, ``grep``…) are data, not commands, unless their
  output is piped on; text piped into a shell is parsed as a script.
* **sql** (an SQL-like tool name, or an ``sql``/``query``/``statement`` field that reads as SQL):
  each statement parsed with sqlglot and re-rendered: statement type, table and ``WHERE``; a
  ``WHERE`` that is constant and true (``2>1``, ``1=1``, ``'a'='a'``, ``x = x``, ``… OR TRUE``)
  is dropped, so the form reads ``DELETE FROM users`` and the catalogue's every-row rule fires.
* **files**: the operation and the target path, never the content being written.
* **speech** (``chat``, ``ask_user``…): the delivery itself, never the text said: telling a
  person "press Clear to remove everything from the cart" acts on nothing.
* anything else: a string input as it is; a mapping as ``key=value`` pairs without the fields
  that carry content (``content``, ``body``, ``reply``, ``text``, ``message``…).

Where the spec is silent, chosen here: a script that does not tokenise (an unclosed quote) is
checked as raw text; parsing stops at a nesting depth of :data:`MAX_DEPTH` and
:data:`MAX_FORMS` forms; text longer than :data:`MAX_PARSE_CHARS` is checked raw. The module is
pure (sqlglot is a parser, imported on first use).
"""

from __future__ import annotations

import ast
import dataclasses
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from kernel.shadow import MAX_BIAS, Shadow, ShadowVerdict, check_shadow

Kind = Literal["shell", "sql", "files", "speech", "text"]
Where = Literal["absent", "trivial", "present"]

MAX_DEPTH = 4
"""Nested payloads (``sh -c "bash -c '…'"``) are followed this deep."""
MAX_FORMS = 64
"""At most this many forms per action."""
MAX_PARSE_CHARS = 20_000
"""Longer inputs are checked as raw text only."""

_WORD_RE = re.compile(r"[a-z0-9]+")
SHELL_TOOL_WORDS = frozenset(
    {"shell", "bash", "sh", "zsh", "terminal", "exec", "command", "cmd", "powershell", "pwsh",
     "console", "subprocess", "run"}
)  # fmt: skip
SQL_TOOL_WORDS = frozenset(
    {"sql", "db", "database", "sqlite", "sqlite3", "psql", "postgres", "postgresql", "mysql",
     "mariadb", "duckdb"}
)  # fmt: skip
FILE_TOOL_WORDS = frozenset({"files", "file", "fs", "filesystem"})
SPEECH_TOOLS = frozenset({"chat", "ask_user", "reply", "say", "respond", "notify_user"})
SHELL_KEYS = ("argv", "command", "cmd", "script", "shell")
SQL_KEYS = ("sql", "statement", "stmt", "query", "q")
CONTENT_KEYS = frozenset(
    {"content", "contents", "reply", "body", "data", "message", "text", "html", "markdown",
     "question", "options", "answer", "note", "description"}
)  # fmt: skip
"""Fields that carry what is written or said, not what is done."""

_SQL_START_RE = re.compile(
    r"\A\s*(?:/\*.*?\*/\s*|--[^\n]*\n\s*)*\(?\s*(?:delete|drop|truncate|update|insert|alter|create|"
    r"select|with|replace|merge|grant|revoke|rename|upsert|vacuum|attach|detach)\b",
    re.IGNORECASE | re.DOTALL,
)
_ASSIGN_RE = re.compile(r"\A([A-Za-z_][A-Za-z0-9_]*)=(.*)\Z", re.DOTALL)
_VAR_RE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_SUBST_RE = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")
_SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", "(", ")", ";;", "\n"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
_PYTHONS_RE = re.compile(r"\A(?:python|pypy)(?:\d+(?:\.\d+)*)?\Z")
_CODE_FLAGS = {
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "deno": ("eval",),
    "php": ("-r",),
    "lua": ("-e",),
    "powershell": ("-c", "-command"),
    "pwsh": ("-c", "-command"),
    "osascript": ("-e",),
}
_SQL_CLIENTS = {
    "sqlite3": (),
    "psql": ("-c", "--command"),
    "mysql": ("-e", "--execute"),
    "mariadb": ("-e", "--execute"),
    "duckdb": ("-c",),
    "clickhouse-client": ("-q", "--query"),
    "cqlsh": ("-e", "--execute"),
}
_MESSAGE_OPTIONS = frozenset(
    {"-m", "--message", "--msg", "--title", "--body", "--subject", "--description", "--comment",
     "--note", "--summary"}
)  # fmt: skip
"""Options whose value is a message to record, not a command (multi-word values are elided)."""
_PRINTERS = frozenset(
    {"echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "cat", "less", "more", "head", "tail",
     "wc", "man", "which", "type", "true", "false", "test", "[", "whatis", "apropos", "tldr",
     "cowsay", "figlet", "banner"}
)  # fmt: skip
"""Programs whose arguments are data to print or search for: ``echo 'rm -rf /'`` runs nothing."""

# Wrappers: program -> (options taking a value, whether it takes one positional before the
# command). Options not listed are taken to be flags.
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "-o", "--format", "--output"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "setsid": (frozenset(), 0),
    "unbuffer": (frozenset(), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "flock": (frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}), 1),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "xargs": (
        frozenset(
            {
                "-a",
                "-d",
                "-E",
                "-e",
                "-I",
                "-i",
                "-L",
                "-l",
                "-n",
                "-P",
                "-s",
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--max-lines",
                "--replace",
            }
        ),
        0,
    ),
    "watch": (frozenset({"-n", "-d", "--interval", "--differences"}), 0),
    "busybox": (frozenset(), 0),
    "strace": (frozenset({"-e", "-o", "-p", "-s", "-u"}), 0),
    "firejail": (frozenset(), 0),
    "proxychains": (frozenset({"-f"}), 0),
    "catchsegv": (frozenset(), 0),
}
_SSH_VALUE_OPTS = frozenset(
    {"-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p",
     "-Q", "-R", "-S", "-W", "-w"}
)  # fmt: skip
_SYSTEM_CALLS = frozenset(
    {"system", "popen", "run", "call", "check_call", "check_output", "Popen", "getoutput",
     "getstatusoutput", "spawnl", "spawnlp", "spawnv", "spawnvp", "execl", "execlp", "execv",
     "execvp", "execvpe", "create_subprocess_shell", "create_subprocess_exec"}
)  # fmt: skip
_CODE_SHELL_RE = re.compile(
    r"\b(?:system|exec|execSync|spawnSync|spawn|execFileSync|shell_exec|passthru|popen|"
    r"Start-Process|Invoke-Expression|iex|do shell script)\s*\(?\s*"
    r"(?:\[\s*)?(['\"])((?:\\.|(?!\1).){1,2000})\1"
    r"|`([^`]{1,2000})`|%x\{([^}]{1,2000})\}|qx[{(/]([^})/]{1,2000})[})/]",
    re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class SqlStatement:
    """One parsed SQL statement: its type, main table and what its ``WHERE`` is."""

    kind: str
    table: str
    where: Where


@dataclass(frozen=True, slots=True)
class CanonicalAction:
    """What the guards check for one tool call.

    ``forms`` are the input forms (each checked as ``tool=<tool> input=<form>``); ``sql`` lists
    the parsed statements when the action carries SQL.
    """

    tool: str
    kind: Kind
    forms: tuple[str, ...]
    sql: tuple[SqlStatement, ...] = ()

    def descriptions(self) -> tuple[str, ...]:
        """Return each form as the shadow reads it: ``tool=<tool> input=<form>``."""
        return tuple(f"tool={self.tool} input={form}" for form in self.forms)


@dataclass
class _Collector:
    """Forms gathered while parsing, in order, without duplicates, capped."""

    forms: list[str] = field(default_factory=list)
    sql: list[SqlStatement] = field(default_factory=list)

    def add(self, form: str) -> None:
        form = form.strip()
        if form and form not in self.forms and len(self.forms) < MAX_FORMS:
            self.forms.append(form)


# --------------------------------------------------------------------------- public API


def canonical(tool: str, tool_input: object) -> CanonicalAction:
    """Turn a tool call into the forms the guards check (see the module docstring)."""
    words = set(_WORD_RE.findall(tool.lower()))
    out = _Collector()
    if isinstance(tool_input, Mapping):
        kind = _mapping(tool, words, tool_input, out)
    elif isinstance(tool_input, list | tuple) and words & SHELL_TOOL_WORDS:
        kind = "shell"
        _argv([str(item) for item in tool_input], out, 0)
    elif isinstance(tool_input, str):
        kind = _string(words, tool_input, out)
    else:
        kind = "text"
        out.add(repr(tool_input))
    if not out.forms:
        out.add(tool.lower() if kind == "speech" else "")
        if not out.forms:
            out.forms.append("")
    return CanonicalAction(tool=tool, kind=kind, forms=tuple(out.forms), sql=tuple(out.sql))


def check_action(action: CanonicalAction, shadow: Shadow) -> ShadowVerdict:
    """Run the shadow on every form: the first veto wins, biases are summed over their union."""
    verdicts = [check_shadow(description, shadow) for description in action.descriptions()]
    names: list[str] = []
    for verdict in verdicts:
        names.extend(name for name in verdict.bias_patterns if name not in names)
    severity = {pattern.name: pattern.severity for pattern in shadow.bias_patterns}
    bias = min(sum(severity.get(name, 0.0) for name in names), MAX_BIAS)
    vetoed = next((verdict for verdict in verdicts if verdict.veto), ShadowVerdict())
    return dataclasses.replace(vetoed, bias=bias, bias_patterns=names)


def check_tool_call(tool: str, tool_input: object, shadow: Shadow) -> ShadowVerdict:
    """Canonicalise ``(tool, input)`` and check it (:func:`canonical` + :func:`check_action`)."""
    return check_action(canonical(tool, tool_input), shadow)


_DESCRIPTION_RE = re.compile(r"\A\s*tool=(?P<tool>\S*)\s+input=(?P<input>.*)\Z", re.DOTALL)


def parse_description(text: str) -> tuple[str, object]:
    """Read a ``tool=<name> input=<repr>`` description back into ``(tool, input)``.

    The input is a Python literal where it parses as one (``'rm -rf /'``, ``{'argv': [...]}``),
    otherwise the raw text; a line without ``tool=`` is ``("", text)``.
    """
    match = _DESCRIPTION_RE.match(text)
    if match is None:
        return "", text
    raw = match["input"]
    try:
        value: object = ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = raw
    return match["tool"], value


# --------------------------------------------------------------------------- dispatch


def _mapping(tool: str, words: set[str], data: Mapping[object, object], out: _Collector) -> Kind:
    """Canonicalise a mapping input by what its fields mean."""
    lowered = {str(key).lower(): value for key, value in data.items() if key != "instance"}
    if tool.lower() in SPEECH_TOOLS:
        out.add(tool.lower())
        return "speech"
    if words & FILE_TOOL_WORDS and ("op" in lowered or "path" in lowered):
        op = str(lowered.get("op", lowered.get("operation", "")))
        targets = [str(lowered[k]) for k in ("path", "target", "dest", "src") if k in lowered]
        out.add(" ".join([op, *targets]))
        return "files"
    kind: Kind = "text"
    parsed: set[str] = set()
    for key in SHELL_KEYS:
        value = lowered.get(key)
        if isinstance(value, list | tuple):
            _argv([str(item) for item in value], out, 0)
        elif isinstance(value, str):
            _script(value, out, 0)
        else:
            continue
        kind = "shell"
        parsed.add(key)
    for key in SQL_KEYS:
        value = lowered.get(key)
        explicit = bool(words & SQL_TOOL_WORDS) or key in {"sql", "statement", "stmt"}
        if isinstance(value, str) and (explicit or _is_sql(value)):
            _sql(value, out)
            kind = "sql" if kind == "text" else kind
            parsed.add(key)
    rest = [
        f"{key}={_scalar(value)}"
        for key, value in lowered.items()
        if key not in CONTENT_KEYS and key not in parsed
    ]
    if kind == "text" or rest:
        out.add(" ".join(rest))
    return kind


def _scalar(value: object) -> str:
    """Render a field value for a ``key=value`` form."""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return " ".join(_scalar(item) for item in value)
    if isinstance(value, Mapping):
        return " ".join(f"{k}={_scalar(v)}" for k, v in value.items())
    return str(value)


def _string(words: set[str], text: str, out: _Collector) -> Kind:
    """Canonicalise a plain string input (a command line, a statement or an instruction)."""
    if words & SHELL_TOOL_WORDS:
        _script(text, out, 0)
        return "shell"
    if words & SQL_TOOL_WORDS:
        _sql(text, out)
        return "sql"
    out.add(text)
    return "text"


def _is_sql(text: str) -> bool:
    return _SQL_START_RE.match(text) is not None


# --------------------------------------------------------------------------- shell


def _program(word: str) -> str:
    """Return a command word's program name: its basename, lower-case, no leading backslash."""
    return word.lstrip("\\").rsplit("/", 1)[-1].lower()


def _script(text: str, out: _Collector, depth: int, env: dict[str, str] | None = None) -> None:
    """Parse a shell script into simple commands and collect each one's forms."""
    if depth > MAX_DEPTH or len(text) > MAX_PARSE_CHARS:
        out.add(text)
        return
    env = {} if env is None else env
    aliases: dict[str, list[str]] = {}
    prepared = _substitute(text, out, depth, env)
    tokens = _tokens(prepared)
    if tokens is None:
        out.add(text)
        return
    pipelines = _pipelines(tokens)
    shown: list[str] = []
    for pipeline, separator in pipelines:
        parts: list[str] = []
        for index, words in enumerate(pipeline):
            words = _expand(words, env, aliases)
            if not words:
                continue
            piped_on = index < len(pipeline) - 1
            piped_in = index > 0
            if piped_in and _program(words[0]) in _SHELLS and not _has_c_flag(words):
                previous = _expand(pipeline[index - 1], env, aliases)
                if previous and _program(previous[0]) in {"echo", "printf"}:
                    _script(" ".join(previous[1:]), out, depth + 1, dict(env))
            parts.append(_command(words, out, depth, piped_on=piped_on, env=env))
        if parts:
            shown.append(" | ".join(parts) + (f" {separator}" if separator else ""))
    whole = " ".join(shown).strip().rstrip(";&").strip()
    if len(pipelines) > 1 or any(len(p) > 1 for p, _ in pipelines):
        out.add(whole)


def _substitute(text: str, out: _Collector, depth: int, env: dict[str, str]) -> str:
    """Replace ``$(…)`` and backticks: parse the inner command, keep what ``echo`` would print."""

    def replace(match: re.Match[str]) -> str:
        inner = match.group(1) if match.group(1) is not None else match.group(2)
        _script(inner, out, depth + 1, dict(env))
        words = _tokens(inner) or []
        if words and _program(words[0]) in {"echo", "printf", "which", "command", "type"}:
            return " ".join(w for w in words[1:] if not w.startswith("-"))
        return " ".join(words)

    for _ in range(3):
        replaced = _SUBST_RE.sub(replace, text)
        if replaced == text:
            break
        text = replaced
    return text


def _tokens(text: str) -> list[str] | None:
    """Tokenise a script (POSIX rules, ``;&|()`` as separators, newlines as ``;``)."""
    lexer = shlex.shlex(text.replace("\r", "\n"), posix=True, punctuation_chars=";&|()\n")
    lexer.whitespace = " \t"
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return None


def _pipelines(tokens: list[str]) -> list[tuple[list[list[str]], str]]:
    """Group tokens into pipelines of simple commands, each with the separator after it."""
    result: list[tuple[list[list[str]], str]] = []
    pipeline: list[list[str]] = []
    words: list[str] = []
    for token in tokens:
        if token in {"|", "|&"}:
            pipeline.append(words)
            words = []
        elif token in _SEPARATORS or token == "\n" or set(token) <= set(";&|()\n"):
            pipeline.append(words)
            result.append(([w for w in pipeline if w], token.strip() or ";"))
            pipeline, words = [], []
        else:
            words.append(token)
    pipeline.append(words)
    result.append(([w for w in pipeline if w], ""))
    return [(p, sep) for p, sep in result if p]


def _expand(words: list[str], env: dict[str, str], aliases: dict[str, list[str]]) -> list[str]:
    """Record assignments and aliases; expand known variables and a leading alias."""
    words = list(words)
    if words and words[0] in {"export", "declare", "local", "readonly", "typeset", "set"}:
        words = [w for w in words[1:] if not w.startswith("-")]
        for word in words:
            if found := _ASSIGN_RE.match(word):
                env[found[1]] = _expand_vars(found[2], env)
        return []
    if words and words[0] == "alias":
        for word in words[1:]:
            if found := _ASSIGN_RE.match(word):
                aliases[found[1]] = _tokens(found[2]) or [found[2]]
        return []
    while words and (found := _ASSIGN_RE.match(words[0])):
        env[found[1]] = _expand_vars(found[2], env)
        words.pop(0)
    words = [_expand_vars(word, env) for word in words]
    if words and words[0] in aliases:
        words = [*aliases[words[0]], *words[1:]]
    return [part for word in words for part in (word.split() if " " in word else [word])]


def _expand_vars(word: str, env: dict[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, match.group(0))

    return _VAR_RE.sub(value, word)


_C_FLAG_RE = re.compile(r"-[a-zA-Z]*c[a-zA-Z]*")


def _has_c_flag(words: list[str]) -> bool:
    return any(_C_FLAG_RE.fullmatch(w) for w in words[1:])


def _argv(argv: list[str], out: _Collector, depth: int) -> None:
    """Collect the forms of one argv (a program and its arguments, no shell involved)."""
    if argv:
        _command(argv, out, depth, piped_on=False, env={})


def _command(
    words: list[str], out: _Collector, depth: int, *, piped_on: bool, env: dict[str, str]
) -> str:
    """Collect the forms of one simple command; return how it reads (data args elided)."""
    shown = _shown(words, piped_on=piped_on)
    out.add(shown)
    if depth > MAX_DEPTH:
        return shown
    program = _program(words[0])
    args = words[1:]
    peeled = _peel(program, args)
    if peeled is not None:
        if peeled:  # a wrapper only shortens the argv: no depth spent
            _command(peeled, out, depth, piped_on=piped_on, env=env)
        return shown
    if program in _SHELLS:
        payload = _option_value(
            args, lambda w: re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", w) is not None
        )
        if payload is not None:
            _script(payload, out, depth + 1, dict(env))
    elif program in {"su", "runuser"}:
        payload = _option_value(args, lambda w: w in {"-c", "--command"})
        if payload is not None:
            _script(payload, out, depth + 1, dict(env))
    elif program == "eval":
        _script(" ".join(args), out, depth + 1, dict(env))
    elif program == "env":
        _env(args, out, depth, env)
    elif program == "ssh":
        rest = _after_ssh_host(args)
        if rest:
            _script(" ".join(rest), out, depth + 1, dict(env))
    elif program == "find":
        _find_exec(args, out, depth)
    elif _PYTHONS_RE.match(program):
        code = _option_value(args, lambda w: w == "-c")
        if code is not None:
            _python(code, out, depth + 1)
    elif program in _CODE_FLAGS:
        flags = _CODE_FLAGS[program]
        code = _option_value(args, lambda w: w.lower() in flags)
        if code is not None:
            _code(code, out, depth + 1)
    elif program in {"cmd", "cmd.exe"}:
        code = _option_value(args, lambda w: w.lower() in {"/c", "/k"}, rest=True)
        if code is not None:
            _script(code, out, depth + 1, dict(env))
    elif program in _SQL_CLIENTS:
        _sql_client(program, args, out)
    return shown


def _shown(words: list[str], *, piped_on: bool) -> str:
    """Return a command as a shell shows it, with data elided.

    A printer's arguments (``echo 'rm -rf /'`` runs nothing) unless its output is piped on, and
    the text given to a message option (``git commit -m 'delete all old drafts'``) are data.
    """
    if not piped_on and _program(words[0]) in _PRINTERS and len(words) > 1:
        flags = [w for w in words[1:] if w.startswith("-") and len(w) < 16]
        return shlex.join([words[0], *flags, "…"])
    shown = list(words)
    for index in range(1, len(shown)):
        option = shown[index - 1].split("=", 1)[0].lower()
        if option in _MESSAGE_OPTIONS and " " in shown[index]:
            shown[index] = "…"
    return shlex.join(shown)


def _option_value(
    args: list[str], is_flag: Callable[[str], bool], *, rest: bool = False
) -> str | None:
    """Return the argument after the first flag ``is_flag`` accepts (or all after it)."""
    for index, word in enumerate(args):
        if is_flag(word):
            if rest:
                return " ".join(args[index + 1 :]) or None
            return args[index + 1] if index + 1 < len(args) else None
        if word == "--":
            break
    return None


def _peel(program: str, args: list[str]) -> list[str] | None:
    """Return the command a wrapper runs (``[]`` if none), or None when it is no wrapper."""
    if program not in _WRAPPERS:
        return None
    takes_value, positionals = _WRAPPERS[program]
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            index += 1
            break
        if not word.startswith("-") or word == "-":
            break
        if program == "nice" and re.fullmatch(r"-\d+", word):
            index += 1
            continue
        name = word.split("=", 1)[0]
        index += 2 if name in takes_value and "=" not in word else 1
    index += positionals
    rest = args[index:]
    if program == "watch" and len(rest) == 1:
        return _tokens(rest[0]) or rest
    return rest


def _env(args: list[str], out: _Collector, depth: int, env: dict[str, str]) -> None:
    """Collect the command ``env`` runs (after its options and ``NAME=value`` settings)."""
    local = dict(env)
    index = 0
    while index < len(args):
        word = args[index]
        if word in {"-S", "--split-string"} and index + 1 < len(args):
            _script(" ".join(args[index + 1 :]), out, depth + 1, local)
            return
        if word in {"-u", "--unset", "-C", "--chdir"}:
            index += 2
        elif word.startswith("-") and word != "-":
            index += 1
        elif found := _ASSIGN_RE.match(word):
            local[found[1]] = found[2]
            index += 1
        else:
            break
    rest = [_expand_vars(word, local) for word in args[index:]]
    if rest:
        _command(rest, out, depth + 1, piped_on=False, env=local)


def _after_ssh_host(args: list[str]) -> list[str]:
    """Return the remote command of an ``ssh`` argv (empty when there is none)."""
    index = 0
    while index < len(args):
        word = args[index]
        if word.startswith("-"):
            index += 2 if word in _SSH_VALUE_OPTS else 1
            continue
        return args[index + 1 :]
    return []


def _find_exec(args: list[str], out: _Collector, depth: int) -> None:
    """Collect the commands ``find -exec … ;`` / ``-execdir`` / ``-ok`` runs."""
    index = 0
    while index < len(args):
        if args[index] in {"-exec", "-execdir", "-ok", "-okdir"}:
            end = index + 1
            while end < len(args) and args[end] not in {";", "+", "\\;"}:
                end += 1
            command = args[index + 1 : end]
            if command:
                _command(command, out, depth + 1, piped_on=False, env={})
            index = end
        index += 1


def _python(code: str, out: _Collector, depth: int) -> None:
    """Collect inline Python: the code itself and the shell commands it hands to the system."""
    out.add(code)
    if depth > MAX_DEPTH or len(code) > MAX_PARSE_CHARS:
        return
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        _code(code, out, depth)
        return
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0]
        if name in {"exec", "eval"} and isinstance(first, ast.Constant):
            if isinstance(first.value, str):
                _python(first.value, out, depth + 1)
        elif name in _SYSTEM_CALLS:
            literal = _literal(first)
            if isinstance(literal, str):
                _script(literal, out, depth + 1)
            elif isinstance(literal, list):
                _argv([str(item) for item in literal], out, depth + 1)
            if name.startswith(("spawn", "exec")) and len(node.args) > 1:
                rest = [_literal(arg) for arg in node.args[1:]]
                words = [str(word) for word in rest if isinstance(word, str)]
                if words:
                    _command(words, out, depth + 1, piped_on=False, env={})


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _code(code: str, out: _Collector, depth: int) -> None:
    """Collect inline code of another language and the shell strings it runs."""
    out.add(code)
    if depth > MAX_DEPTH:
        return
    for match in _CODE_SHELL_RE.finditer(code[:MAX_PARSE_CHARS]):
        command = next((g for g in match.groups()[1:] if g), "")
        if command:
            _script(command, out, depth + 1)


# --------------------------------------------------------------------------- SQL


def _sql_client(program: str, args: list[str], out: _Collector) -> None:
    """Collect the SQL given to a database client on its command line."""
    flags = _SQL_CLIENTS[program]
    statement = _option_value(args, lambda w: w in flags) if flags else None
    if statement is None:
        statement = next((a for a in args if _is_sql(a)), None)
    if statement is not None:
        _sql(statement, out)


def _sql(text: str, out: _Collector) -> None:
    """Parse SQL with sqlglot; add one form per statement (trivially true ``WHERE`` dropped)."""
    if len(text) > MAX_PARSE_CHARS:
        out.add(text)
        return
    try:
        import sqlglot
        from sqlglot import exp
        from sqlglot.errors import SqlglotError
    except ImportError:  # pragma: no cover - a declared dependency
        out.add(text)
        return
    try:
        statements = [s for s in sqlglot.parse(text) if s is not None]
    except (SqlglotError, ValueError, RecursionError):
        out.add(text)
        return
    if not statements:
        out.add(text)
        return
    for statement in statements:
        if isinstance(statement, exp.Command):
            out.add(statement.sql())
            continue
        table = statement.find(exp.Table)
        name = table.sql() if table is not None else ""
        where_node = statement.args.get("where")
        where: Where = "absent"
        if where_node is not None:
            where = "trivial" if _trivially_true(where_node.this) else "present"
        out.sql.append(SqlStatement(kind=statement.key, table=name, where=where))
        if where == "trivial":
            statement = statement.copy()
            statement.set("where", None)
        try:
            out.add(statement.sql())
        except (SqlglotError, ValueError):  # pragma: no cover - rendering a parsed tree
            out.add(text)


def _trivially_true(condition: object) -> bool:
    """Return whether a ``WHERE`` condition holds for every row (constant true, ``x = x``)."""
    from sqlglot import exp
    from sqlglot.errors import SqlglotError
    from sqlglot.optimizer.simplify import simplify

    if not isinstance(condition, exp.Expression):
        return False
    try:
        simple = simplify(condition.copy())
    except (SqlglotError, ValueError, RecursionError, TypeError):
        simple = condition
    return _constant_true(simple)


def _constant_true(node: object) -> bool:
    from sqlglot import exp

    if isinstance(node, exp.Paren):
        return _constant_true(node.this)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Literal):
        if node.is_number:
            try:
                return float(node.this) != 0
            except ValueError:
                return False
        return False
    if isinstance(node, exp.Or):
        return _constant_true(node.left) or _constant_true(node.right)
    if isinstance(node, exp.And):
        return _constant_true(node.left) and _constant_true(node.right)
    if isinstance(node, exp.EQ | exp.GTE | exp.LTE | exp.NullSafeEQ):
        return node.left == node.right and not _has_random(node)
    if isinstance(node, exp.Like):
        pattern = node.expression
        return isinstance(pattern, exp.Literal) and pattern.this.strip("%") == ""
    if isinstance(node, exp.Not):
        inner = node.this
        return isinstance(inner, exp.Boolean) and not inner.this
    return False


def _has_random(node: object) -> bool:
    from sqlglot import exp

    return isinstance(node, exp.Expression) and node.find(exp.Rand, exp.Anonymous) is not None


def forms_of(actions: Iterable[CanonicalAction]) -> list[str]:
    """Return every description of ``actions`` (a helper for reports)."""
    return [description for action in actions for description in action.descriptions()]

#!/usr/bin/env python3
"""shell: run one allowlisted program (no shell) in my workspace; off unless enabled.

Reads one JSON object on stdin: {"argv": ["ls", "-la"], "instance": "/path"}.
Writes one JSON object on stdout: {"returncode", "stdout", "stderr", "truncated"}.

Disabled by default. It runs only when <instance>/.lumen/config.toml has

    [skills.shell]
    enabled = true
    allowlist = ["ls", "cat", "git", { program = "python3", args = ["-c {any}"] }]

    [skills.shell.args]          # optional: exact argument forms per program
    git = ["status", "log --oneline -n {int}", "diff {path...}"]

argv[0] must be a bare program name on the allowlist, and its arguments must pass the policy:

- A program with forms (in [skills.shell.args] or an inline { program, args } entry) may run
  exactly those forms and nothing else. A form is a word list (quotes group words); each word
  is a literal argument or a placeholder: {path} one path inside the workspace, {word} one
  argument not starting with "-", {int} an integer, {any} any one argument; {path...},
  {word...}, {any...} take zero or more. A literal prefix is allowed ("--max-count={int}").
  The form "{safe...}" adds the safe profile below. What a form allows is allowed exactly,
  inline code included: "python3" with "-c {any}" runs any Python.
- A plain name (no forms; every entry of the old string-only allowlist) gets the safe
  profile: options, and operands that are paths inside the workspace. Every argument that can
  name a file (an operand, an option's "=value", a short option's attached value holding a
  "/") must resolve, through symlinks, inside the workspace; existing files with more than
  one hard link and anything under a ".git" directory are refused. Refused as well: inline
  code (python -c/-m, sh/bash -c, node -e/-p/--eval/--import, perl -e/-M, ruby -e, php -r,
  ...), program wrappers given arguments (env, xargs, nice, timeout, sudo, ssh, ...), pagers
  and editors (less, more, man, vi, ...), awk and sed programs, find -exec/-execdir/-ok/
  -okdir/-delete, git outside a read-only set of subcommands (status, log, diff, show, ...) or
  with -c, --config-env, --exec-path, -p/--paginate, grep -O, --ext-diff, --upload-pack, and
  long options named like a command hook (--to-command, --use-compress-program, --rsh, ...).

Before anything runs, the workspace itself is checked: a hard-linked file, or a symlink that
leads out of it, anywhere inside refuses every run (a recursive reader would follow it).

The program is looked up in /usr/bin:/bin and run without a shell, with a 10 s timeout, stdin
closed, cwd <instance>/workspace/ (created on demand) and the environment PATH=/usr/bin:/bin,
LANG=C.UTF-8, PAGER=cat, plus git settings that ignore system and user config, pin
core.fsmonitor, core.hooksPath and core.pager, and stop repository discovery at the workspace
(the instance above it is a git repository of its own). stdout and stderr are each capped at 64 KiB
(decoded as UTF-8, invalid bytes replaced); "truncated" says whether either was cut. The
instance is the "instance" path or else LUMEN_HOME. Exit 0 when the program ran (whatever its
return code), 2 on bad input or no instance, 3 when disabled, not allowlisted or refused by
the policy, 1 on a timeout or any other failure.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

try:  # the shared protocol: skills/_protocol.py beside this skill's directory
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from _protocol import SkillError, resolve_instance, serve
except ImportError:  # no copy there: the installed lumen package has it
    from skills._protocol import SkillError, resolve_instance, serve

TIMEOUT_S = 10
OUTPUT_CAP = 64 * 1024
SEARCH_PATH = "/usr/bin:/bin"
GIT_PINS = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("protocol.ext.allow", "never"),
)
ENV = {
    "PATH": SEARCH_PATH,
    "LANG": "C.UTF-8",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_COUNT": str(len(GIT_PINS)),
    **{f"GIT_CONFIG_KEY_{i}": key for i, (key, _) in enumerate(GIT_PINS)},
    **{f"GIT_CONFIG_VALUE_{i}": value for i, (_, value) in enumerate(GIT_PINS)},
}
MAX_ARGS = 256
MAX_ARG = 4096
SCAN_CAP = 20_000
"""Entries of the workspace checked for links before a run; a larger workspace is refused."""

# ----------------------------------------------------------------------------- the safe profile

PAGERS_AND_EDITORS = frozenset(
    "less more most pg man info vi vim nvim view ex rvim gvim emacs emacsclient nano pico ed "
    "red joe jed mg micro kak".split()
)
WRAPPERS = frozenset(
    "env xargs nice nohup timeout stdbuf time chroot sudo su doas setsid strace ltrace gdb "
    "watch flock unshare nsenter ionice taskset chrt script busybox command parallel runuser "
    "pkexec ssh scp sftp fakeroot valgrind numactl prlimit setpriv systemd-run at batch "
    "crontab sg newgrp firejail bwrap proot capsh expect cgexec chpst".split()
)
"""Programs that run another program: refused with any argument (with none they only print)."""
SCRIPT_LANGUAGES = frozenset("awk gawk mawk nawk busybox-awk sed gsed".split())
"""Programs whose first operand is a program text: refused with any argument."""

Inline = tuple[frozenset[str], frozenset[str]]
"""(short option letters that take inline code, long options that do)."""


def _inline(short: str, long: str = "") -> Inline:
    return frozenset(short), frozenset(long.split())


SHELLS = _inline("c", "--command --init-command --rcfile --init-file")
INTERPRETERS: tuple[tuple[re.Pattern[str], Inline], ...] = (
    (re.compile(r"(python|pypy)[0-9.]*m?"), _inline("cm")),
    (re.compile(r"(ba|da|z|k|mk|a|fi|c|tc|ya|po|r)?sh"), SHELLS),
    (re.compile(r"(node|nodejs)[0-9]*"), _inline("epr", "--eval --print --require --import "
                                                "--loader --experimental-loader")),
    (re.compile(r"(bun|deno)"), _inline("e", "--eval --print")),
    (re.compile(r"perl[0-9.]*"), _inline("eEMmx")),
    (re.compile(r"(ruby|irb|jruby)[0-9.]*"), _inline("er", "--eval")),
    (re.compile(r"php[0-9.]*(-cli)?"), _inline("rRBEFda")),
    (re.compile(r"lua(jit)?[0-9.]*"), _inline("el")),
    (re.compile(r"R|Rscript"), _inline("e", "--expr")),
    (re.compile(r"julia"), _inline("eEL", "--eval --print --load")),
    (re.compile(r"osascript"), _inline("e")),
    (re.compile(r"(tclsh|wish)[0-9.]*"), _inline("")),
    (re.compile(r"(guile|racket|sbcl|clisp|gosh|chicken|csi|ocaml|ghci|runghc)"),
     _inline("ce", "--eval --load --expr --command")),
)  # fmt: skip
POWERSHELL = re.compile(r"pwsh|powershell(\.exe)?")
POWERSHELL_INLINE = frozenset("-c -command -e -ec -encodedcommand -commandwithargs -cwa".split())
INTERPRETER_OPERANDS = {"deno": {"eval", "repl"}, "bun": {"eval", "-e"}}

FIND_REFUSED = frozenset("-exec -execdir -ok -okdir -delete".split())
GIT_READONLY = frozenset(
    "status log diff show blame annotate ls-files ls-tree rev-parse rev-list shortlog describe "
    "grep cat-file branch tag reflog show-ref version whatchanged diff-tree diff-index "
    "diff-files merge-base name-rev count-objects".split()
)
GIT_GLOBAL_FLAGS = frozenset(
    "--no-pager --bare --no-replace-objects --literal-pathspecs --glob-pathspecs "
    "--noglob-pathspecs --icase-pathspecs --no-optional-locks -P".split()
)
GIT_GLOBAL_WITH_VALUE = frozenset("-C --git-dir --work-tree --namespace".split())
GIT_REFUSED_PREFIXES = (
    "--config-env", "--exec-path", "--exec", "--upload-pack", "--receive-pack",
    "--open-files-in-pager", "--ext-diff", "--extcmd", "--tool", "--paginate",
)  # fmt: skip
HOOK_OPTION = re.compile(
    r"--(?!no-)[\w-]*(command|exec|program|pager|editor|rsh|shell|script|hook|filter|plugin|"
    r"eval|interpreter)[\w-]*(=.*)?",
    re.IGNORECASE,
)
"""Long options named like a hook that runs a program (--to-command, --rsh-command, ...)."""
OPTION_REFUSED = {
    "tar": ("-I", "-F"),
    "rsync": ("-e",),
    "zip": ("-TT",),
}
"""Short options, per program, that name a program to run."""


class Refusal(Exception):
    """An argv the policy refuses."""


@dataclass
class Policy:
    """The shell policy of one instance: programs and, per program, exact forms (or None)."""

    programs: set[str] = field(default_factory=set)
    forms: dict[str, list[list[str]]] = field(default_factory=dict)


def load_policy(root: Path) -> Policy:
    """Return the shell policy, refusing (exit 3) unless the shell skill is enabled."""
    path = root / ".lumen" / "config.toml"
    how = "set [skills.shell] enabled = true and an allowlist in .lumen/config.toml"
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SkillError(f"refused: shell stays disabled; cannot read {path}: {exc}", 3) from None
    skills = config.get("skills")
    section = skills.get("shell") if isinstance(skills, dict) else None
    if not isinstance(section, dict) or section.get("enabled") is not True:
        raise SkillError(f"refused: the shell skill is disabled ({how})", 3)
    allowed = section.get("allowlist")
    if not isinstance(allowed, list):
        raise SkillError(f"refused: the shell skill has no allowlist ({how})", 3)
    policy = Policy()
    extra = section.get("args", {})
    raw_forms: dict[str, list[Any]] = {}
    if isinstance(extra, dict):
        raw_forms = {k: list(v) for k, v in extra.items() if isinstance(v, list)}
    for entry in allowed:
        if isinstance(entry, str) and entry:
            policy.programs.add(entry)
        elif isinstance(entry, dict) and isinstance(entry.get("program"), str):
            policy.programs.add(entry["program"])
            entry_forms = entry.get("args", [])
            raw_forms.setdefault(entry["program"], [])
            raw_forms[entry["program"]] += entry_forms if isinstance(entry_forms, list) else []
    for program, forms in raw_forms.items():
        parsed = policy.forms.setdefault(program, [])
        for form in forms:
            try:
                parsed.append(shlex.split(form) if isinstance(form, str) else [])
            except ValueError:
                raise SkillError(
                    f"refused: bad form {form!r} for {program!r} in config", 3
                ) from None
    return policy


def check_argv(argv: Any) -> list[str]:
    """Return ``argv`` if it is a non-empty list of plain strings."""
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise SkillError('"argv" must be a non-empty list of strings (not a shell string)')
    if len(argv) > MAX_ARGS or any(len(a) > MAX_ARG for a in argv):
        raise SkillError(f'"argv" is too long (at most {MAX_ARGS} arguments of {MAX_ARG} chars)')
    if any("\x00" in a for a in argv):
        raise SkillError('"argv" must not contain NUL characters')
    if not argv[0]:
        raise SkillError("argv[0] must name a program")
    return argv


# ----------------------------------------------------------------------------- paths


def confine(workspace: Path, raw: str) -> None:
    """Refuse ``raw`` unless it names a place inside the workspace (symlinks resolved).

    An existing non-directory with more than one hard link is refused (the other name may be
    outside), and so is anything under a ``.git`` directory (a written .git/config or hook
    runs commands in the next git call).
    """
    target = Path(os.path.realpath(workspace / raw))  # an absolute raw replaces the workspace
    if target != workspace and not target.is_relative_to(workspace):
        raise Refusal(f"{raw!r} resolves outside the workspace")
    if ".git" in target.relative_to(workspace).parts or ".git" in Path(raw).parts:
        raise Refusal(f"{raw!r} is inside a .git directory")
    try:
        info = target.stat()
    except OSError:
        return  # does not exist (yet): nothing to link to
    if not stat.S_ISDIR(info.st_mode) and info.st_nlink > 1:
        raise Refusal(f"{raw!r} has {info.st_nlink} hard links (one may be outside)")


def scan_workspace(workspace: Path) -> None:
    """Refuse to run while the workspace holds a hard-linked file or a symlink leading out."""
    seen = 0
    for folder, dirs, files in os.walk(workspace, followlinks=False):
        for name in [*dirs, *files]:
            seen += 1
            if seen > SCAN_CAP:
                raise Refusal(f"the workspace has more than {SCAN_CAP} entries to check")
            path = Path(folder) / name
            try:
                info = path.lstat()
            except OSError:
                continue
            shown = path.relative_to(workspace).as_posix()
            if stat.S_ISLNK(info.st_mode):
                real = Path(os.path.realpath(path))
                if real != workspace and not real.is_relative_to(workspace):
                    raise Refusal(f"the workspace holds {shown}, a symlink leading outside it")
            elif not stat.S_ISDIR(info.st_mode) and info.st_nlink > 1:
                raise Refusal(f"the workspace holds {shown}, a file with {info.st_nlink} links")


def path_candidates(args: list[str]) -> list[str]:
    """Return every argument text that a program could take as a file name."""
    found: list[str] = []
    options = True
    for arg in args:
        if options and arg == "--":
            options = False
        elif not options or not arg.startswith("-") or arg == "-":
            if arg != "-":
                found.append(arg)
        elif "=" in arg:
            found.append(arg.split("=", 1)[1])
        elif not arg.startswith("--") and len(arg) > 2:
            attached = arg[2:]
            if "/" in attached or attached.startswith((".", "~")):
                found.append(attached)
    return [text for text in found if text]


# ----------------------------------------------------------------------------- the safe profile


def short_letters(arg: str) -> str:
    """Return the letters of a short-option cluster ("-Ic" -> "Ic"), else ""."""
    return arg[1:] if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1 else ""


def check_interpreter(program: str, args: list[str]) -> None:
    """Refuse inline code for a known interpreter."""
    if POWERSHELL.fullmatch(program):
        for arg in args:
            if arg.lower().split(":", 1)[0] in POWERSHELL_INLINE:
                raise Refusal(f"{program} {arg} runs inline code")
        return
    for pattern, (short, long) in INTERPRETERS:
        if not pattern.fullmatch(program):
            continue
        for arg in args:
            hits = set(short_letters(arg)) & short
            if hits:
                raise Refusal(f"{program} -{sorted(hits)[0]} runs inline code ({arg!r})")
            name = arg.split("=", 1)[0]
            if name in long:
                raise Refusal(f"{program} {name} runs inline code")
        return


def check_git(args: list[str]) -> None:
    """Allow git's read-only subcommands with safe global options only."""
    index = 0
    while index < len(args):
        arg = args[index]
        name = arg.split("=", 1)[0]
        if arg.startswith("-c") or name.startswith("--config"):
            raise Refusal(f"git {arg}: setting configuration runs arbitrary commands")
        if name in ("-p", "--paginate", "--exec-path", "--html-path", "--help"):
            raise Refusal(f"git {arg} is refused (pager, exec path or help browser)")
        if arg in GIT_GLOBAL_WITH_VALUE:
            index += 2
            continue
        if name in GIT_GLOBAL_WITH_VALUE or arg in GIT_GLOBAL_FLAGS:
            index += 1
            continue
        if arg.startswith("-"):
            raise Refusal(f"git global option {arg} is not in the safe profile")
        break
    if index >= len(args):
        raise Refusal(
            "git needs a subcommand; the safe profile allows "
            + ", ".join(sorted(("status", "log", "diff", "show", "...")))
        )
    sub, rest = args[index], args[index + 1 :]
    if sub not in GIT_READONLY:
        raise Refusal(f"git {sub} is not a read-only subcommand of the safe profile")
    for arg in rest:
        if arg.startswith(GIT_REFUSED_PREFIXES):
            raise Refusal(f"git {sub} {arg} runs another program")
        if sub == "grep" and (arg.startswith("-O") or "O" in short_letters(arg)):
            raise Refusal(f"git grep {arg} opens a pager")


def check_safe(program: str, args: list[str], workspace: Path) -> None:
    """Refuse ``program args`` unless the built-in safe profile allows it."""
    if program in PAGERS_AND_EDITORS:
        raise Refusal(f"{program} is a pager or editor; it can run commands")
    if program in WRAPPERS and args:
        raise Refusal(f"{program} runs other programs; it is allowed only without arguments")
    if program in SCRIPT_LANGUAGES and args:
        raise Refusal(f"{program} programs can run commands and write files")
    if program in INTERPRETER_OPERANDS and set(args) & INTERPRETER_OPERANDS[program]:
        raise Refusal(f"{program} runs inline code")
    check_interpreter(program, args)
    if program == "find":
        for arg in args:
            if arg in FIND_REFUSED or arg.lstrip("-") in {p.lstrip("-") for p in FIND_REFUSED}:
                raise Refusal(f"find {arg} runs commands or deletes files")
    if program == "git":
        check_git(args)
    for arg in args:
        for flag in OPTION_REFUSED.get(program, ()):
            if arg.startswith(flag) or (len(flag) == 2 and flag[1] in short_letters(arg)):
                raise Refusal(f"{program} {arg} runs another program")
        if HOOK_OPTION.fullmatch(arg):
            raise Refusal(f"{program} {arg.split('=', 1)[0]} runs another program")
    for text in path_candidates(args):
        confine(workspace, text)


# ----------------------------------------------------------------------------- forms

PLACEHOLDER = re.compile(r"(?P<prefix>.*?)\{(?P<kind>path|word|int|any)(?P<many>\.\.\.)?\}")


def match_word(pattern: str, arg: str, workspace: Path) -> bool:
    """Whether ``arg`` matches one non-variadic form word (paths are confined)."""
    hit = PLACEHOLDER.fullmatch(pattern)
    if hit is None:
        return pattern == arg
    prefix, kind = hit["prefix"], hit["kind"]
    if not arg.startswith(prefix):
        return False
    value = arg[len(prefix) :]
    if kind == "any":
        return True
    if kind == "int":
        return re.fullmatch(r"[+-]?\d{1,18}", value) is not None
    if not value or value.startswith("-"):
        return False
    if kind == "path":
        try:
            confine(workspace, value)
        except Refusal:
            return False
    return True


def match_form(form: list[str], args: list[str], workspace: Path) -> bool:
    """Whether ``args`` is exactly an instance of ``form``."""
    if not form:
        return not args
    head, rest = form[0], form[1:]
    hit = PLACEHOLDER.fullmatch(head)
    if hit is not None and hit["many"] and not hit["prefix"]:
        one = head.replace("...", "")
        for taken in range(len(args) + 1):
            if all(match_word(one, a, workspace) for a in args[:taken]) and match_form(
                rest, args[taken:], workspace
            ):
                return True
        return False
    return (
        bool(args)
        and match_word(head, args[0], workspace)
        and match_form(rest, args[1:], workspace)
    )


def check_policy(policy: Policy, argv: list[str], workspace: Path) -> None:
    """Refuse ``argv`` unless an entry of the policy allows exactly it (raise Refusal)."""
    program, args = argv[0], argv[1:]
    forms = policy.forms.get(program)
    if not forms:
        check_safe(program, args, workspace)
        return
    if any(match_form(form, args, workspace) for form in forms if form != ["{safe...}"]):
        return
    if ["{safe...}"] in forms:
        check_safe(program, args, workspace)
        return
    shown = "; ".join(shlex.join(form) or "(no arguments)" for form in forms)
    raise Refusal(f"{shlex.join(argv)!r} matches none of {program}'s forms ({shown})")


def drain(stream: IO[bytes], keep: bytearray, cut: list[bool]) -> None:
    """Read ``stream`` to its end, keeping the first OUTPUT_CAP bytes in ``keep``."""
    while chunk := stream.read(65536):
        room = OUTPUT_CAP - len(keep)
        if room > 0:
            keep.extend(chunk[:room])
        if len(chunk) > room:
            cut.append(True)


def execute(argv: list[str], executable: str, cwd: Path) -> dict[str, Any]:
    """Run the program with bounded output and time."""
    out, err = bytearray(), bytearray()
    cut: list[bool] = []
    try:
        process = subprocess.Popen(
            argv,
            executable=executable,
            shell=False,
            cwd=cwd,
            # git must not find the instance's own repository above the workspace
            env={**ENV, "GIT_CEILING_DIRECTORIES": str(cwd.parent)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        raise SkillError(f"cannot start {argv[0]}: {exc.strerror or exc}", 1) from None
    assert process.stdout is not None and process.stderr is not None
    # Drain both pipes in threads so output beyond the cap is discarded, never buffered.
    readers = [
        threading.Thread(target=drain, args=(process.stdout, out, cut), daemon=True),
        threading.Thread(target=drain, args=(process.stderr, err, cut), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        returncode = process.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise SkillError(f"{argv[0]} timed out after {TIMEOUT_S}s and was killed", 1) from None
    for reader in readers:
        reader.join(timeout=2)
    return {
        "returncode": returncode,
        "stdout": out.decode("utf-8", errors="replace"),
        "stderr": err.decode("utf-8", errors="replace"),
        "truncated": bool(cut),
    }


def run(payload: dict[str, Any]) -> dict[str, Any]:
    """Validate the payload, check the policy and run the program."""
    argv = check_argv(payload.get("argv"))
    root = resolve_instance(payload)
    policy = load_policy(root)
    program = argv[0]
    if "/" in program or "\\" in program:
        raise SkillError(f"refused: argv[0] must be a bare program name, not {program!r}", 3)
    if program not in policy.programs:
        shown = ", ".join(sorted(policy.programs)) or "nothing"
        raise SkillError(f"refused: {program!r} is not allowlisted (allowed: {shown})", 3)
    executable = shutil.which(program, path=SEARCH_PATH)
    if executable is None:
        raise SkillError(f"{program!r} is not installed in {SEARCH_PATH}")
    workspace_dir = root / "workspace"
    if workspace_dir.is_symlink():
        raise SkillError("refused: the workspace is a symlink", 3)
    workspace_dir.mkdir(exist_ok=True)
    workspace = Path(os.path.realpath(workspace_dir))
    try:
        check_policy(policy, argv, workspace)
        scan_workspace(workspace)
    except Refusal as exc:
        raise SkillError(f"refused: {exc}", 3) from None
    return execute(argv, executable, workspace)


if __name__ == "__main__":
    sys.exit(serve(run, __doc__))

#!/usr/bin/env python3
"""shell: run one allowlisted program (no shell) in my workspace; off unless enabled.

Reads one JSON object on stdin: {"argv": ["ls", "-la"], "instance": "/path"}.
Writes one JSON object on stdout: {"returncode", "stdout", "stderr", "truncated"}.

Disabled by default. It runs only when <instance>/.lumen/config.toml has

    [skills.shell]
    enabled = true
    allowlist = ["ls", "echo"]

and argv[0] is a bare program name on that allowlist. The program is looked up in
/usr/bin:/bin and run without a shell, with a 10 s timeout, stdin closed, cwd
<instance>/workspace/ (created on demand) and the environment PATH=/usr/bin:/bin,
LANG=C.UTF-8 only. stdout and stderr are each capped at 64 KiB (decoded as UTF-8, invalid bytes
replaced); "truncated" says whether either was cut. The allowlist is the whole policy: an
allowed program may still read paths outside the workspace, so allow only what is safe.
The instance is the "instance" path or else LUMEN_HOME. Exit 0 when the program ran (whatever
its return code), 2 on bad input or no instance, 3 when disabled or not allowlisted, 1 on a
timeout or any other failure.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import tomllib
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
ENV = {"PATH": SEARCH_PATH, "LANG": "C.UTF-8"}
MAX_ARGS = 256
MAX_ARG = 4096


def allowlist(root: Path) -> set[str]:
    """Return the allowlisted programs, refusing (exit 3) unless the shell skill is enabled."""
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
    return {name for name in allowed if isinstance(name, str) and name}


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
            env=ENV,
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
    allowed = allowlist(root)
    program = argv[0]
    if "/" in program or "\\" in program:
        raise SkillError(f"refused: argv[0] must be a bare program name, not {program!r}", 3)
    if program not in allowed:
        shown = ", ".join(sorted(allowed)) or "nothing"
        raise SkillError(f"refused: {program!r} is not allowlisted (allowed: {shown})", 3)
    executable = shutil.which(program, path=SEARCH_PATH)
    if executable is None:
        raise SkillError(f"{program!r} is not installed in {SEARCH_PATH}")
    workspace = root / "workspace"
    workspace.mkdir(exist_ok=True)
    return execute(argv, executable, workspace)


if __name__ == "__main__":
    sys.exit(serve(run, __doc__))

"""Run skills: standalone ``main.py`` programs speaking JSON over stdin/stdout.

Finding skills and reading their ``skill.toml`` is ``state.skills``.

Argv is always ``[sys.executable, main.py, ...]`` with a timeout and no shell.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from state.skills import SkillInfo

HELP_TIMEOUT_S = 10.0
RUN_TIMEOUT_S = 30.0
OUTPUT_CAP = 64_000


@dataclass
class SkillResult:
    """The outcome of one skill run; failures are values, not exceptions."""

    ok: bool
    output: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    exit_code: int | None = None


def help_line(skill: SkillInfo) -> str:
    """Return the first non-empty line of ``main.py --help`` (or why there is none)."""
    if not skill.has_main:
        return "(no main.py)"
    try:
        done = subprocess.run(
            [sys.executable, str(skill.path / "main.py"), "--help"],
            capture_output=True,
            text=True,
            timeout=HELP_TIMEOUT_S,
            cwd=skill.path,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "(--help timed out)"
    if done.returncode != 0:
        return f"(--help exited {done.returncode})"
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    # argparse prints "usage: ..." first; the description is the more useful line.
    for line in lines:
        if not line.lower().startswith("usage:"):
            return line
    return lines[0] if lines else "(empty --help)"


def run(
    main: Path,
    payload: dict[str, Any],
    *,
    timeout: float = RUN_TIMEOUT_S,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> SkillResult:
    """Run a skill with ``payload`` as JSON on stdin; parse its JSON stdout."""
    try:
        done = subprocess.run(
            [sys.executable, str(main)],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd or main.parent,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return SkillResult(ok=False, error=f"timed out after {timeout:.0f}s")
    except OSError as exc:
        return SkillResult(ok=False, error=f"could not start: {exc.strerror}")
    stdout = done.stdout[:OUTPUT_CAP]
    try:
        output = json.loads(stdout) if stdout.strip() else {}
    except json.JSONDecodeError:
        return SkillResult(ok=False, error="output is not JSON", exit_code=done.returncode)
    if not isinstance(output, dict):
        return SkillResult(ok=False, error="output is not a JSON object", exit_code=done.returncode)
    if done.returncode != 0:
        message = str(output.get("error") or done.stderr.strip()[:200] or "failed")
        return SkillResult(ok=False, output=output, error=message, exit_code=done.returncode)
    return SkillResult(ok=True, output=output, exit_code=0)

"""Fixtures for the skill tests: run a skill as the kernel does, build a throwaway instance."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

SKILLS = Path(__file__).resolve().parents[2] / "skills"
# Variables that would change what a skill does; the tests choose them explicitly.
SCRUBBED = ("LUMEN_HOME", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
            "all_proxy", "PYTHONPATH")  # fmt: skip


@dataclass
class Run:
    """One finished skill run."""

    code: int
    output: dict[str, Any]
    stderr: str


RunSkill = Callable[..., Run]


def base_env(**extra: str) -> dict[str, str]:
    """Return the current environment without the scrubbed variables, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    env.update(extra)
    return env


def run_skill_raw(name: str, stdin: str, env: dict[str, str] | None = None) -> Run:
    """Run ``skills/<name>/main.py`` the way graph.skills.run does and parse its stdout."""
    main = SKILLS / name / "main.py"
    done = subprocess.run(
        [sys.executable, str(main)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=main.parent,
        env=env if env is not None else base_env(),
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one JSON line on stdout, got {done.stdout!r}"
    output = json.loads(lines[0])
    assert isinstance(output, dict)
    if done.returncode != 0:
        assert isinstance(output.get("error"), str) and output["error"], output
    return Run(done.returncode, output, done.stderr)


@pytest.fixture
def run_skill() -> RunSkill:
    """Return ``run(name, payload, env=None)``: run a skill with a JSON payload."""

    def run(name: str, payload: dict[str, Any], env: dict[str, str] | None = None) -> Run:
        return run_skill_raw(name, json.dumps(payload), env)

    return run


@pytest.fixture
def skill_env() -> Callable[..., dict[str, str]]:
    """Return ``env(**extra)``: a clean environment for a skill subprocess, plus ``extra``."""
    return base_env


@pytest.fixture
def run_stdin() -> Callable[..., Run]:
    """Return ``run(name, stdin_text, env=None)``: run a skill with raw stdin."""
    return run_skill_raw


@pytest.fixture
def instance(tmp_path: Path) -> Path:
    """Create a throwaway Lumen instance and return its root."""
    from state.instance import init_instance

    return init_instance(tmp_path / "inst").root

"""Every skill follows the protocol: --help, a valid skill.toml, JSON errors on bad input."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SKILLS = Path(__file__).resolve().parents[2] / "skills"

ARCHETYPES = {"sage", "healer", "explorer", "guardian"}
MANIFEST_KEYS = {
    "name": str,
    "description": str,
    "archetype": str,
    "untrusted_output": bool,
    "mutating": bool,
    "input": str,
    "output": str,
}
MAINS = sorted(SKILLS.glob("*/main.py"))
NAMES = [main.parent.name for main in MAINS]


def manifest(name: str) -> dict[str, object]:
    return tomllib.loads((SKILLS / name / "skill.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", NAMES)
def test_skill_help_exits_zero_with_a_description(name: str) -> None:
    done = subprocess.run(
        [sys.executable, str(SKILLS / name / "main.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=SKILLS / name,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert any(not line.lower().startswith("usage:") for line in lines), done.stdout


@pytest.mark.parametrize("name", NAMES)
def test_skill_manifest_is_valid(name: str) -> None:
    path = SKILLS / name / "skill.toml"
    assert path.is_file(), f"{name} has no skill.toml"
    data = manifest(name)
    for key, kind in MANIFEST_KEYS.items():
        assert isinstance(data.get(key), kind), f"{name}: {key} must be a {kind.__name__}"
    assert data["name"] == name
    assert data["archetype"] in ARCHETYPES
    description = data["description"]
    assert isinstance(description, str) and description.strip()
    assert "\n" not in description


def test_skill_archetypes_cover_all_four() -> None:
    found = {
        manifest(name)["archetype"] for name in NAMES if (SKILLS / name / "skill.toml").is_file()
    }
    assert found == ARCHETYPES


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("stdin", ["not json", "[1, 2]", ""])
def test_skill_bad_stdin_exits_2_with_json_error(
    name: str, stdin: str, run_stdin: Callable[..., Any]
) -> None:
    result = run_stdin(name, stdin)
    assert result.code == 2
    assert result.output["error"]

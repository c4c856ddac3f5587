"""shell: off by default, allowlisted programs only, no shell, confined cwd and env."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

RunSkill = Callable[..., Any]


def enable(instance: Path, allowlist: list[str], *, enabled: bool = True) -> None:
    names = ", ".join(f'"{name}"' for name in allowlist)
    config = instance / ".lumen" / "config.toml"
    default = "[skills.shell]\nenabled = false\nallowlist = []"
    text = config.read_text(encoding="utf-8")
    assert default in text
    new = f"[skills.shell]\nenabled = {str(enabled).lower()}\nallowlist = [{names}]"
    config.write_text(text.replace(default, new), encoding="utf-8")


def shell(run_skill: RunSkill, instance: Path, argv: Any) -> Any:
    return run_skill("shell", {"argv": argv, "instance": str(instance)})


def test_shell_is_disabled_by_default(run_skill: RunSkill, instance: Path) -> None:
    result = shell(run_skill, instance, ["echo", "hi"])
    assert result.code == 3
    assert "disabled" in result.output["error"]


def test_shell_enabled_false_stays_disabled(run_skill: RunSkill, instance: Path) -> None:
    enable(instance, ["echo"], enabled=False)
    assert shell(run_skill, instance, ["echo", "hi"]).code == 3


def test_shell_golden(run_skill: RunSkill, instance: Path) -> None:
    enable(instance, ["echo"])
    result = shell(run_skill, instance, ["echo", "hello; rm -rf /", "$HOME"])
    assert result.code == 0
    assert result.output == {
        "returncode": 0,
        "stdout": "hello; rm -rf / $HOME\n",
        "stderr": "",
        "truncated": False,
    }


def test_shell_runs_in_the_workspace(run_skill: RunSkill, instance: Path) -> None:
    enable(instance, ["ls"])
    (instance / "workspace").mkdir()
    (instance / "workspace" / "marker.txt").write_text("x")
    result = shell(run_skill, instance, ["ls"])
    assert result.output["stdout"] == "marker.txt\n"


def test_shell_reports_a_failing_program(run_skill: RunSkill, instance: Path) -> None:
    enable(instance, ["ls"])
    result = shell(run_skill, instance, ["ls", "no-such-file"])
    assert result.code == 0
    assert result.output["returncode"] != 0
    assert result.output["stderr"]


@pytest.mark.skipif(shutil.which("seq", path="/usr/bin:/bin") is None, reason="needs seq")
def test_shell_caps_output(run_skill: RunSkill, instance: Path) -> None:
    enable(instance, ["seq"])
    result = shell(run_skill, instance, ["seq", "1", "200000"])
    assert result.code == 0
    assert len(result.output["stdout"]) == 65536
    assert result.output["truncated"] is True


@pytest.mark.parametrize("argv", [["cat", "/etc/passwd"], ["/bin/echo", "hi"], ["./echo"]])
def test_shell_refuses_what_is_not_allowlisted(
    run_skill: RunSkill, instance: Path, argv: list[str]
) -> None:
    enable(instance, ["echo", "ls"])
    result = shell(run_skill, instance, argv)
    assert result.code == 3
    assert result.output["error"].startswith("refused")


@pytest.mark.parametrize("argv", ["echo hi", [], ["echo", 3], [""], None])
def test_shell_rejects_bad_argv(run_skill: RunSkill, instance: Path, argv: Any) -> None:
    enable(instance, ["echo"])
    result = shell(run_skill, instance, argv)
    assert result.code == 2
    assert "argv" in result.output["error"]

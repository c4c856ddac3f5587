"""shell: off by default, allowlisted programs and argument forms only, no shell, confined paths.

The policy tests run the skill through the action gateway (``graph.action.perform``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from graph.action import perform
from graph.deps import Deps
from kernel.shadow import Shadow
from nodes.services import ActionResult
from state.instance import Instance, init_instance
from state.self_state import Psyche
from tests.scripted import ScriptedChatModel

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


# --------------------------------------------------------------------------- argument policy

ALLOWED_PROGRAMS = ["cat", "env", "find", "git", "python3"]
NOTES = "buy green tea\n"


def no_shadow() -> Psyche:
    """A psyche without veto patterns, so what stops a command here is the shell policy."""
    return Psyche(shadow=Shadow(veto_patterns=[], bias_patterns=[]))


@dataclass
class Gateway:
    """One instance with the shell enabled, and its action gateway."""

    inst: Instance
    deps: Deps

    @property
    def workspace(self) -> Path:
        return self.inst.root / "workspace"

    def run(self, argv: list[str], psyche: Psyche | None = None) -> ActionResult:
        return perform(
            self.deps,
            tool="shell",
            tool_input={"argv": argv},
            psyche=psyche or self.inst.load_psyche(),
            calls_made=0,
            max_calls=2,
        )

    def seen(self) -> str:
        """Everything the gateway handed to the run's vault (the screened outputs)."""
        return "\n".join(self.deps.vault.values())


def make_gateway(root: Path, config: str) -> Gateway:
    inst = init_instance(root)
    text = inst.config_file.read_text(encoding="utf-8")
    default = "[skills.shell]\nenabled = false\nallowlist = []"
    assert default in text
    inst.config_file.write_text(text.replace(default, config), encoding="utf-8")
    (inst.root / "workspace").mkdir(exist_ok=True)
    (inst.root / "workspace" / "notes.txt").write_text(NOTES)
    deps = Deps.for_instance(inst, model_for=lambda mode: ScriptedChatModel(replies=["ok"]))
    return Gateway(inst, deps)


@pytest.fixture
def gw(tmp_path: Path) -> Gateway:
    names = json.dumps(ALLOWED_PROGRAMS)
    return make_gateway(tmp_path / "gw", f"[skills.shell]\nenabled = true\nallowlist = {names}")


@pytest.mark.parametrize(
    "argv",
    [
        ["cat", "/etc/passwd"],
        ["env", "sh", "-c", "id"],
        ["find", ".", "-exec", "sh", "-c", "id", ";"],
        ["python3", "-c", "import os; os.system('id')"],
        ["git", "-c", "core.pager=sh", "log"],
    ],
)
def test_shell_gateway_refuses_arguments_the_policy_does_not_allow(
    gw: Gateway, argv: list[str]
) -> None:
    result = gw.run(argv, no_shadow())
    assert result.status == "refused", result
    assert result.detail.startswith("shell: refused: "), result.detail
    assert "ActionRefused" in "".join(
        p.read_text() for p in (gw.inst.root / "data").rglob("*.jsonl")
    )


def test_shell_gateway_allows_workspace_reads_and_git_status(gw: Gateway) -> None:
    result = gw.run(["cat", "notes.txt"])
    assert result.status == "ok", result
    assert NOTES.strip() in gw.seen()
    subprocess.run(["git", "init", "-q", str(gw.workspace)], check=True)
    result = gw.run(["git", "status"])
    assert result.status == "ok", result
    assert "notes.txt" in gw.seen()  # the workspace's own repository, not the instance's
    assert "soul.md" not in gw.seen() and "data/" not in gw.seen()


def test_shell_git_never_reaches_the_instance_repository(gw: Gateway) -> None:
    # The instance root is a git repository; without a repository of its own the workspace
    # must not borrow it (git show HEAD:data/soul.md would read outside the workspace).
    result = gw.run(["git", "log", "--stat"])
    assert result.status == "ok"
    assert "not a git repository" in gw.seen()


def test_shell_hard_link_to_a_file_outside_is_refused(gw: Gateway, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the launch code is 0000\n")
    os.link(secret, gw.workspace / "innocent.txt")
    result = gw.run(["cat", "innocent.txt"], no_shadow())
    assert result.status == "refused" and "hard links" in result.detail
    # While the link is there nothing runs: a recursive reader would reach it from "."
    result = gw.run(["cat", "notes.txt"], no_shadow())
    assert result.status == "refused" and "innocent.txt" in result.detail
    assert "launch code" not in gw.seen()


def test_shell_symlink_leading_out_is_refused(gw: Gateway) -> None:
    (gw.workspace / "etc").symlink_to("/etc")
    result = gw.run(["cat", "etc/passwd"], no_shadow())
    assert result.status == "refused" and "outside the workspace" in result.detail


def test_shell_forms_allow_exactly_what_they_say(tmp_path: Path) -> None:
    config = (
        "[skills.shell]\nenabled = true\n"
        'allowlist = ["cat", { program = "python3", args = ["-c {any}"] },'
        ' { program = "git", args = ["status", "log -n {int}"] }]\n'
        "[skills.shell.args]\n"
        'cat = ["{path}", "-n {path...}"]'
    )
    gw = make_gateway(tmp_path / "forms", config)
    assert gw.run(["python3", "-c", "print(6 * 7)"]).status == "ok"
    assert "42" in gw.seen()
    assert gw.run(["python3", "notes.txt"], no_shadow()).status == "refused"  # not a form
    assert gw.run(["git", "log", "-n", "3"]).status == "ok"
    assert gw.run(["git", "log", "-n", "3; id"], no_shadow()).status == "refused"
    assert gw.run(["git", "diff"], no_shadow()).status == "refused"
    assert gw.run(["cat", "-n", "notes.txt", "notes.txt"]).status == "ok"
    refused = gw.run(["cat", "-n", "notes.txt", "/etc/passwd"], no_shadow())
    assert refused.status == "refused" and "matches none of cat's forms" in refused.detail


def test_shell_safe_form_adds_the_profile_back(tmp_path: Path) -> None:
    config = (
        '[skills.shell]\nenabled = true\nallowlist = ["python3"]\n'
        '[skills.shell.args]\npython3 = ["-c {any}", "{safe...}"]'
    )
    gw = make_gateway(tmp_path / "safe", config)
    (gw.workspace / "hello.py").write_text("print('hi from a script')\n")
    assert gw.run(["python3", "hello.py"]).status == "ok"
    assert gw.run(["python3", "-c", "print(1)"]).status == "ok"
    assert gw.run(["python3", "/etc/hostname"], no_shadow()).status == "refused"


def test_shell_config_forms_load_and_bad_ones_are_one_line_errors(tmp_path: Path) -> None:
    from state.config import load_config
    from state.errors import DataFileError

    path = tmp_path / "config.toml"
    path.write_text(
        "[skills.shell]\nenabled = true\n"
        'allowlist = ["cat", { program = "git", args = ["status"] }]'
    )
    shell_config = load_config(path, env={}).skills.shell
    assert shell_config.allowlist == ["cat", "git"]  # the names SecurityPolicy checks
    assert shell_config.args == {"git": ["status"]}
    path.write_text('[skills.shell]\nallowlist = [{ program = "git", args = ["{bogus}"] }]')
    with pytest.raises(DataFileError, match="unknown placeholder"):
        load_config(path, env={})


# Attacks written after the policy (not tuned on): other spellings of the same escapes.
UNTUNED = [
    ["cat", "notes.txt", "/etc/passwd"],  # a second operand
    ["cat", "--", "/etc/passwd"],  # after end-of-options
    ["cat", "./../data/soul.md"],
    ["cat", "/proc/self/root/etc/passwd"],
    ["cat", "notes.txt/../../data/soul.md"],
    ["find", ".", "-execdir", "id", ";"],
    ["find", ".", "-okdir", "id", ";"],
    ["find", ".", "-delete"],
    ["find", "/", "-name", "shadow"],
    ["find", ".", "-fprint", "/tmp/owned"],
    ["python3", "-Ic", "print(1)"],  # clustered short options
    ["python3", "-Bc", "print(1)"],
    ["python3", "-m", "http.server"],
    ["python3", "/tmp/x.py"],
    ["git", "--config-env=core.pager=EDITOR", "log"],
    ["git", "--exec-path=/tmp", "status"],
    ["git", "-C", "..", "log"],
    ["git", "--git-dir=../.git", "log"],
    ["git", "diff", "--output=/tmp/owned"],
    ["git", "config", "core.fsmonitor", "id"],
    ["git", "log", "--ext-diff"],
    ["git", "grep", "-O", "x"],
    ["git", "-p", "log"],
    ["env", "-i", "python3"],
    ["env", "PATH=/tmp", "cat"],
]


@pytest.mark.parametrize("argv", UNTUNED)
def test_shell_refuses_spellings_it_was_not_tuned_on(
    run_skill: RunSkill, instance: Path, argv: list[str]
) -> None:
    enable(instance, ALLOWED_PROGRAMS)
    result = shell(run_skill, instance, argv)
    assert result.code == 3, (argv, result.output)
    assert result.output["error"].startswith("refused: ")


def test_shell_plain_entries_still_run_ordinary_commands(
    run_skill: RunSkill, instance: Path
) -> None:
    enable(instance, ["cat", "find", "git", "ls"])
    (instance / "workspace").mkdir(exist_ok=True)
    (instance / "workspace" / "a.txt").write_text("alpha\n")
    inside = str(instance / "workspace" / "a.txt")
    for argv in (
        ["cat", "-n", "a.txt"],
        ["find", ".", "-name", "*.txt"],
        ["ls", "-la", "."],
        ["git", "--no-pager", "log", "-p"],
        ["cat", inside],
    ):
        result = shell(run_skill, instance, argv)
        assert result.code == 0, (argv, result.output)

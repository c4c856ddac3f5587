"""files: list, read and write, confined to <instance>/workspace/."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

RunSkill = Callable[..., Any]


def files(run_skill: RunSkill, instance: Path, **payload: Any) -> Any:
    return run_skill("files", {"instance": str(instance), **payload})


def test_files_write_read_list_golden(run_skill: RunSkill, instance: Path) -> None:
    wrote = files(run_skill, instance, op="write", path="notes/todo.md", content="buy tea\n")
    assert wrote.code == 0
    assert wrote.output == {"path": "notes/todo.md", "bytes": 8, "created": True}
    assert (instance / "workspace" / "notes" / "todo.md").read_text() == "buy tea\n"

    read = files(run_skill, instance, op="read", path="notes/todo.md")
    assert read.output == {
        "path": "notes/todo.md",
        "content": "buy tea\n",
        "bytes": 8,
        "truncated": False,
    }

    listed = files(run_skill, instance, op="list", path="notes")
    assert listed.output == {
        "path": "notes",
        "entries": [{"name": "todo.md", "type": "file", "size": 8}],
        "truncated": False,
    }


def test_files_list_creates_the_workspace(run_skill: RunSkill, instance: Path) -> None:
    result = files(run_skill, instance, op="list")
    assert result.output == {"path": ".", "entries": [], "truncated": False}
    assert (instance / "workspace").is_dir()


def test_files_overwrite_is_atomic_and_leaves_no_temp(run_skill: RunSkill, instance: Path) -> None:
    files(run_skill, instance, op="write", path="a.txt", content="one")
    result = files(run_skill, instance, op="write", path="a.txt", content="two")
    assert result.output == {"path": "a.txt", "bytes": 3, "created": False}
    assert sorted(os.listdir(instance / "workspace")) == ["a.txt"]
    assert (instance / "workspace" / "a.txt").read_text() == "two"


def test_files_read_caps_at_64_kib(run_skill: RunSkill, instance: Path) -> None:
    workspace = instance / "workspace"
    workspace.mkdir()
    (workspace / "big.txt").write_bytes(b"x" * 70_000)
    result = files(run_skill, instance, op="read", path="big.txt")
    assert result.code == 0
    assert len(result.output["content"]) == 65536
    assert result.output["bytes"] == 70_000
    assert result.output["truncated"] is True


def test_files_write_cap_is_refused(run_skill: RunSkill, instance: Path) -> None:
    result = files(run_skill, instance, op="write", path="big.txt", content="x" * 262_145)
    assert result.code == 3
    assert "cap" in result.output["error"]
    assert not (instance / "workspace" / "big.txt").exists()


@pytest.mark.parametrize(
    ("op", "path"),
    [
        ("read", "/etc/passwd"),
        ("read", "../data/soul.md"),
        ("read", "notes/../../data/soul.md"),
        ("write", "../escape.txt"),
        ("list", ".."),
        ("read", "C:\\Windows\\win.ini"),
    ],
)
def test_files_refuses_paths_outside(
    run_skill: RunSkill, instance: Path, op: str, path: str
) -> None:
    result = files(run_skill, instance, op=op, path=path, content="x")
    assert result.code == 3
    assert result.output["error"].startswith("refused")
    assert not (instance / "escape.txt").exists()


@pytest.mark.parametrize(("op", "path"), [("read", "out/soul.md"), ("write", "out/evil.txt")])
def test_files_refuses_symlinks_resolving_outside(
    run_skill: RunSkill, instance: Path, op: str, path: str
) -> None:
    workspace = instance / "workspace"
    workspace.mkdir()
    (workspace / "out").symlink_to(instance / "data")
    result = files(run_skill, instance, op=op, path=path, content="x")
    assert result.code == 3
    assert "outside the workspace" in result.output["error"]
    assert not (instance / "data" / "evil.txt").exists()


def test_files_follows_symlinks_inside(run_skill: RunSkill, instance: Path) -> None:
    workspace = instance / "workspace"
    (workspace / "real").mkdir(parents=True)
    (workspace / "real" / "a.txt").write_text("hi")
    (workspace / "alias").symlink_to(workspace / "real")
    result = files(run_skill, instance, op="read", path="alias/a.txt")
    assert result.output["content"] == "hi"
    assert result.output["path"] == "real/a.txt"


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"op": "read", "path": "missing.txt"}, "no such file"),
        ({"op": "read", "path": "."}, "not a regular file"),
        ({"op": "write", "path": "x.txt"}, '"content"'),
        ({"op": "write", "path": ".", "content": "x"}, "directory"),
        ({"op": "delete", "path": "x.txt"}, '"op"'),
        ({"op": "read"}, '"path"'),
    ],
)
def test_files_rejects_bad_input(
    run_skill: RunSkill, instance: Path, payload: dict[str, Any], fragment: str
) -> None:
    result = files(run_skill, instance, **payload)
    assert result.code == 2
    assert fragment in result.output["error"]


# --------------------------------------------------------------------------- links


@pytest.mark.parametrize("op", ["read", "write"])
def test_files_refuses_a_hard_link_to_a_file_outside(
    run_skill: RunSkill, instance: Path, tmp_path: Path, op: str
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the launch code is 0000\n")
    workspace = instance / "workspace"
    workspace.mkdir()
    os.link(secret, workspace / "innocent.txt")
    result = files(run_skill, instance, op=op, path="innocent.txt", content="x")
    assert result.code == 3
    assert "hard links" in result.output["error"]
    assert "launch code" not in json.dumps(result.output)
    assert secret.read_text() == "the launch code is 0000\n"


def test_files_gateway_refuses_the_hard_link(tmp_path: Path) -> None:
    from graph.action import perform
    from graph.deps import Deps
    from state.instance import init_instance
    from tests.scripted import ScriptedChatModel

    inst = init_instance(tmp_path / "gw")
    secret = tmp_path / "secret.txt"
    secret.write_text("the launch code is 0000\n")
    (inst.root / "workspace").mkdir(exist_ok=True)
    os.link(secret, inst.root / "workspace" / "innocent.txt")
    deps = Deps.for_instance(inst, model_for=lambda mode: ScriptedChatModel(replies=["ok"]))
    result = perform(
        deps,
        tool="files",
        tool_input={"op": "read", "path": "innocent.txt"},
        psyche=inst.load_psyche(),
        calls_made=0,
        max_calls=2,
    )
    assert result.status == "refused" and "hard links" in result.detail
    assert "launch code" not in "\n".join(deps.vault.values())


@pytest.mark.parametrize("path", [".git/config", "repo/.git/hooks/pre-commit", "a/../.git/x"])
def test_files_refuses_writes_into_git_metadata(
    run_skill: RunSkill, instance: Path, path: str
) -> None:
    result = files(run_skill, instance, op="write", path=path, content="[core]\nfsmonitor = id\n")
    assert result.code == 3
    assert not (instance / "workspace" / ".git").exists()


def test_files_refuses_a_workspace_that_is_a_symlink(run_skill: RunSkill, instance: Path) -> None:
    (instance / "workspace").symlink_to(instance / "data")
    result = files(run_skill, instance, op="read", path="soul.md")
    assert result.code == 3 and "symlink" in result.output["error"]


def test_files_reads_a_symlink_inside_to_a_single_link_file(
    run_skill: RunSkill, instance: Path
) -> None:
    workspace = instance / "workspace"
    workspace.mkdir()
    (workspace / "a.txt").write_text("one name")
    (workspace / "b.txt").symlink_to(workspace / "a.txt")  # a symlink is not a hard link
    assert files(run_skill, instance, op="read", path="b.txt").output["content"] == "one name"

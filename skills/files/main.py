#!/usr/bin/env python3
"""files: list, read and write files inside my workspace and nowhere else.

Reads one JSON object on stdin: {"op": "list" | "read" | "write", "path": "notes/todo.md",
"content": "...", "instance": "/path"}.
  op "list"  -> {"path", "entries": [{"name", "type": "file"|"dir"|"link"|"other", "size"}],
                 "truncated"}  (path defaults to ".", the workspace itself; at most 1000 entries)
  op "read"  -> {"path", "content", "bytes", "truncated"}  (the first 64 KiB, decoded as UTF-8
                 with invalid bytes replaced; "bytes" is the file's full size)
  op "write" -> {"path", "bytes", "created"}  (at most 256 KiB; parent folders are created; the
                 file is replaced atomically)

Every path is relative to <instance>/workspace/ (created on demand). Absolute paths, ".."
components and symlinks that resolve outside the workspace are refused, and so are files with
more than one hard link (the other name may be outside the workspace; checked on the opened
file, so a swap after the check is caught too), a workspace that is itself a symlink, and
writes under a ".git" directory (a written .git/config or hook runs commands in the next git
call by the shell skill). The instance is the
"instance" path or else LUMEN_HOME. Exit 0 on success, 2 on bad input (also: no instance, no such
file), 3 when a path or size is refused, 1 on any other failure.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

try:  # the shared protocol: skills/_protocol.py beside this skill's directory
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from _protocol import SkillError, resolve_instance, serve
except ImportError:  # no copy there: the installed lumen package has it
    from skills._protocol import SkillError, resolve_instance, serve

READ_CAP = 64 * 1024
WRITE_CAP = 256 * 1024
LIST_CAP = 1000
MAX_PATH = 1024


def confine(workspace: Path, raw: str) -> Path:
    """Return the resolved target of ``raw`` inside ``workspace``, or refuse it (exit 3)."""
    if "\x00" in raw:
        raise SkillError('"path" must not contain NUL characters')
    if len(raw) > MAX_PATH:
        raise SkillError(f'"path" is longer than {MAX_PATH} characters')
    posix, windows = PurePosixPath(raw), PureWindowsPath(raw)
    if posix.is_absolute() or windows.is_absolute() or windows.drive or raw.startswith("\\"):
        raise SkillError(f"refused: {raw!r} is absolute; paths are relative to the workspace", 3)
    if ".." in posix.parts or ".." in windows.parts:
        raise SkillError(f"refused: {raw!r} contains '..'; paths must stay in the workspace", 3)
    target = (workspace / posix).resolve()
    if not target.is_relative_to(workspace):
        raise SkillError(f"refused: {raw!r} resolves outside the workspace", 3)
    try:
        info = target.stat()
    except OSError:
        return target  # does not exist (yet)
    if not stat.S_ISDIR(info.st_mode) and info.st_nlink > 1:
        raise SkillError(hard_links(raw, info.st_nlink), 3)
    return target


def hard_links(raw: str, count: int) -> str:
    """Return the refusal for a file with ``count`` hard links."""
    return f"refused: {raw!r} has {count} hard links (another name may be outside the workspace)"


def relative(workspace: Path, target: Path) -> str:
    """Return ``target`` as a POSIX path relative to the workspace ("." for the workspace)."""
    return target.relative_to(workspace).as_posix() or "."


def list_dir(workspace: Path, target: Path) -> dict[str, Any]:
    """List a workspace directory, sorted by name."""
    if not target.is_dir():
        raise SkillError(f"not a directory: {relative(workspace, target)}")
    entries = []
    children = sorted(target.iterdir(), key=lambda p: p.name)
    for child in children[:LIST_CAP]:
        info = child.lstat()
        if stat.S_ISLNK(info.st_mode):
            kind = "link"
        elif stat.S_ISDIR(info.st_mode):
            kind = "dir"
        elif stat.S_ISREG(info.st_mode):
            kind = "file"
        else:
            kind = "other"
        entries.append({"name": child.name, "type": kind, "size": info.st_size})
    return {
        "path": relative(workspace, target),
        "entries": entries,
        "truncated": len(children) > LIST_CAP,
    }


def read_file(workspace: Path, target: Path) -> dict[str, Any]:
    """Read the first 64 KiB of a workspace file."""
    name = relative(workspace, target)
    if not target.exists():
        raise SkillError(f"no such file: {name}")
    if not target.is_file():
        raise SkillError(f"not a regular file: {name}")
    try:  # no symlink swapped in since confine(); the opened file itself is checked
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise SkillError(f"refused: cannot open {name} safely: {exc.strerror}", 3) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SkillError(f"not a regular file: {name}")
        if info.st_nlink > 1:
            raise SkillError(hard_links(name, info.st_nlink), 3)
        size = info.st_size
        data = handle.read(READ_CAP + 1)
    return {
        "path": name,
        "content": data[:READ_CAP].decode("utf-8", errors="replace"),
        "bytes": size,
        "truncated": len(data) > READ_CAP,
    }


def default_mode() -> int:
    """Return the mode a new file gets under the current umask."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def write_file(workspace: Path, target: Path, content: Any) -> dict[str, Any]:
    """Write a workspace file atomically (temporary file, then ``os.replace``)."""
    if not isinstance(content, str):
        raise SkillError('op "write" needs "content", a string')
    data = content.encode("utf-8")
    if len(data) > WRITE_CAP:
        raise SkillError(f"refused: content is {len(data)} bytes; the cap is {WRITE_CAP}", 3)
    name = relative(workspace, target)
    if ".git" in PurePosixPath(name).parts:
        raise SkillError(f"refused: {name!r} is inside a .git directory", 3)
    if target == workspace or target.is_dir():
        raise SkillError(f"cannot write over a directory: {name}")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Re-check after mkdir: a component created concurrently could be a symlink.
    if not target.parent.resolve().is_relative_to(workspace):
        raise SkillError(f"refused: {name!r} resolves outside the workspace", 3)
    created = not target.exists()
    mode = stat.S_IMODE(target.stat().st_mode) if not created else default_mode()
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)  # mkstemp creates 0600; give the file its usual mode
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return {"path": name, "bytes": len(data), "created": created}


def run(payload: dict[str, Any]) -> dict[str, Any]:
    """Validate the payload and perform the requested op inside the workspace."""
    op = payload.get("op")
    if op not in ("list", "read", "write"):
        raise SkillError('"op" must be "list", "read" or "write"')
    raw = payload.get("path", "." if op == "list" else None)
    if not isinstance(raw, str) or not raw.strip():
        raise SkillError('"path" must be a non-empty string (relative to the workspace)')
    root = resolve_instance(payload)
    workspace_dir = root / "workspace"
    if workspace_dir.is_symlink():
        raise SkillError("refused: the workspace is a symlink", 3)
    workspace_dir.mkdir(exist_ok=True)
    workspace = workspace_dir.resolve()
    target = confine(workspace, raw.strip())
    if op == "list":
        return list_dir(workspace, target)
    if op == "read":
        return read_file(workspace, target)
    return write_file(workspace, target, payload.get("content"))


if __name__ == "__main__":
    sys.exit(serve(run, __doc__))

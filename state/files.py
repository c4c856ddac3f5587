"""Atomic, validated reads and writes of the instance's data files.

Values, goals and soul are replaced atomically: the new content goes to a temp file in the same
directory, is fsynced, then renamed over the old file (and the directory is fsynced), so a crash
leaves either the old or the new file, never a torn one.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from state.errors import DataFileError
from state.records import GoalRecord, ValueRecord

M = TypeVar("M", bound=BaseModel)


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (temp file + fsync + rename + dir fsync)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, _target_mode(path))
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _target_mode(path: Path) -> int:
    """Keep an existing file's mode; new files get 0o666 minus the umask (like ``open``)."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON atomically."""
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def read_json(path: Path) -> Any:
    """Read a JSON file, turning I/O and syntax errors into ``DataFileError``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise DataFileError(f"{path}: file is missing") from exc
    except OSError as exc:
        raise DataFileError(f"{path}: cannot read ({exc.strerror})") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc


def load_records(path: Path, model: type[M]) -> list[M]:
    """Load a JSON list of records, naming the file and field on any validation error."""
    raw = read_json(path)
    try:
        return _list_adapter(model).validate_python(raw)  # type: ignore[no-any-return]
    except ValidationError as exc:
        raise DataFileError.from_validation(path, exc) from exc


@cache
def _list_adapter(model: type[BaseModel]) -> TypeAdapter[Any]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def dump_records(path: Path, records: Iterable[BaseModel]) -> None:
    """Write records as a JSON list atomically."""
    atomic_write_json(path, [record.model_dump(mode="json") for record in records])


def load_values(path: Path) -> list[ValueRecord]:
    """Load ``values.json`` sorted by weight, heaviest first."""
    return sorted(load_records(path, ValueRecord), key=lambda v: v.weight, reverse=True)


_YEAR_FILE = re.compile(r"^(\d{4})\.json$")


def goal_files(goals_dir: Path) -> list[tuple[int, Path]]:
    """Return ``(year, path)`` for every ``<year>.json`` in the goals directory, oldest first."""
    if not goals_dir.is_dir():
        return []
    found = []
    for path in goals_dir.iterdir():
        match = _YEAR_FILE.match(path.name)
        if match:
            found.append((int(match.group(1)), path))
    return sorted(found)


def load_goals(goals_dir: Path) -> list[tuple[int, GoalRecord]]:
    """Load the goals of every year file (the spec: read all years, not just the current one)."""
    goals: list[tuple[int, GoalRecord]] = []
    for year, path in goal_files(goals_dir):
        goals.extend((year, goal) for goal in load_records(path, GoalRecord))
    return goals


def parse_soul(text: str) -> tuple[str, str]:
    """Return ``(name, ontology)``: soul.md's first ``#`` heading and its Ontology section."""
    name = ""
    ontology_lines: list[str] = []
    in_ontology = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# ") and not name:
            name = stripped[2:].strip()
            continue
        if stripped.startswith("#"):
            in_ontology = stripped.lstrip("#").strip().lower() == "ontology"
            continue
        if in_ontology and stripped:
            ontology_lines.append(stripped)
    return name, " ".join(ontology_lines)


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON record as a single locked ``write()`` (never rewrites the file)."""
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
    with FileLock(str(path) + ".lock"):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

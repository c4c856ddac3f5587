"""Atomic, validated reads and writes of the instance's data files.

Values, goals and soul are replaced atomically: the new content goes to a temp file in the same
directory, is fsynced, then renamed over the old file (and the directory is fsynced), so a crash
leaves either the old or the new file, never a torn one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from state.errors import DataFileError
from state.records import GoalRecord, ValueRecord

M = TypeVar("M", bound=BaseModel)


def atomic_write_text(path: Path, text: str, *, sync_rename: bool = True) -> None:
    """Replace ``path`` with ``text`` atomically (temp file + fsync + rename + dir fsync).

    The data is always synced before the rename, so the file is the old or the new text, never a
    torn or empty one, after any crash. ``sync_rename=False`` skips the directory fsync: after a
    power loss the rename itself may be undone, leaving the previous complete version — for
    files rewritten every turn whose previous version is a valid last good state.
    """
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
    if not sync_rename:
        return
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
    return parse_json(path, text)


def parse_json(path: Path, text: str | bytes) -> Any:
    """Parse JSON read from ``path``, turning a syntax error into ``DataFileError``."""
    try:
        return json.loads(text)
    except UnicodeDecodeError as exc:
        raise DataFileError(f"{path}: not UTF-8 text ({exc.reason})") from exc
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


def tail_records(path: Path, lines: int) -> list[dict[str, Any]]:
    """Return the JSON objects on the last ``lines`` lines of a JSONL log, oldest first.

    A missing file is empty; a line that is not a JSON object (torn, foreign) is skipped, so
    one bad line never hides the rest of an append-only log.
    """
    try:
        tail = path.read_text(encoding="utf-8").splitlines()[-lines:]
    except FileNotFoundError:
        return []
    found = []
    for line in tail:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            found.append(record)
    return found


def append_jsonl(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON record as a single locked ``write()`` (never rewrites the file).

    A torn tail left by an earlier crash is moved aside first (``repair_tail``), so the record
    never merges with it.
    """
    line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
    append_lines(path, [line])


# --------------------------------------------------------------------------- torn tails

TORN_SUFFIX = ".torn"
"""A torn tail of ``x.jsonl`` is kept in ``x.jsonl.torn`` (one JSON record per torn line)."""
_TAIL_BLOCK = 65536


def torn_file(path: Path) -> Path:
    """Return where the torn lines of a JSONL file are kept aside."""
    return path.with_name(path.name + TORN_SUFFIX)


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _last_line_start(fd: int, size: int, end: int) -> int:
    """Return the offset where the line ending at ``end`` begins (after the previous newline)."""
    position = end
    while position > 0:
        step = min(_TAIL_BLOCK, position)
        chunk = os.pread(fd, step, position - step)
        cut = chunk.rfind(b"\n")
        if cut != -1:
            return position - step + cut + 1
        position -= step
    return 0


def repair_tail(
    path: Path, fd: int, *, now: str = "", parses: Callable[[bytes], bool] = _parses
) -> dict[str, Any] | None:
    """Move a torn last line of a JSONL file aside; return the torn record, or ``None``.

    Call it holding the file's lock, with ``fd`` opened read-write on ``path``. The last line is
    torn when it lacks its newline (a write cut short by a crash or a full disk) or does not parse.
    It is appended to ``<file>.torn`` (offset, length, reason, sha256, the bytes as text) and
    fsynced *before* the file is truncated to where the line began, so a crash in between keeps
    it in both places and the next repair records it once (same offset and digest). Nothing is
    merged and nothing is lost: ``lumen doctor`` reports every torn line.
    """
    size = os.fstat(fd).st_size
    if size == 0:
        return None
    last = os.pread(fd, 1, size - 1)
    if last == b"\n":
        start = _last_line_start(fd, size, size - 1)
        line = os.pread(fd, size - 1 - start, start)
        if not line.strip() or parses(line):
            return None
        reason = "last line does not parse"
    else:
        start = _last_line_start(fd, size, size)
        reason = "last line has no newline (torn write)"
    fragment = os.pread(fd, size - start, start)
    digest = hashlib.sha256(fragment).hexdigest()
    record = {
        "file": path.name,
        "offset": start,
        "length": len(fragment),
        "reason": reason,
        "sha256": digest,
        "moved_at": now or datetime.now(UTC).isoformat(),
        "text": fragment.decode("utf-8", errors="replace"),
    }
    aside = torn_file(path)
    known = {(r.get("offset"), r.get("sha256")) for r in read_torn(aside)}
    if (start, digest) not in known:
        out = os.open(aside, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(out, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
            os.fsync(out)
        finally:
            os.close(out)
    os.ftruncate(fd, start)
    os.fsync(fd)
    return record


def read_torn(aside: Path) -> list[dict[str, Any]]:
    """Return the records of a ``.torn`` file (unreadable lines of it are skipped)."""
    if not aside.exists():
        return []
    found = []
    for raw in aside.read_bytes().splitlines():
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def torn_lines(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """Return every torn line kept aside under ``root`` (``*.torn`` files), oldest file first."""
    if not root.is_dir():
        return []
    return [
        (aside, record)
        for aside in sorted(root.rglob(f"*{TORN_SUFFIX}"))
        for record in read_torn(aside)
    ]


@contextmanager
def path_lock(path: Path) -> Iterator[None]:
    """Hold the inter-process lock of ``path`` (``<path>.lock``) for the block.

    The same lock ``filelock.FileLock(f"{path}.lock")`` takes (``flock`` on the lock file), so
    both exclude each other, without that library's per-call bookkeeping (a tenth of a
    millisecond, six times a turn). A fresh descriptor per hold: two threads exclude each other
    too. Not re-entrant: never nest it with another hold of the same path. Where ``flock`` does
    not exist (Windows), ``filelock`` does the job.
    """
    lock_file = f"{path}.lock"
    if fcntl is None:  # pragma: no cover - not on Linux or macOS
        from filelock import FileLock

        with FileLock(lock_file):
            yield
        return
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def append_lines(path: Path, lines: list[bytes]) -> dict[str, Any] | None:
    """Append whole lines under the file's lock, repairing a torn tail first.

    The lines go out in one ``os.write`` on an ``O_APPEND`` descriptor (a loop only if the
    kernel writes less), so concurrent writers never interleave inside a line. Returns the torn
    record if a torn tail was moved aside.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"".join(lines)
    with path_lock(path):
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            torn = repair_tail(path, fd)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                if written <= 0:  # pragma: no cover - only on a full disk
                    raise OSError(f"short write to {path}: {len(data) - len(view)} of {len(data)}")
                view = view[written:]
        finally:
            os.close(fd)
    return torn

import json
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from state.journal import MemoryJournal, encode_entry, entry_digest, verify_digests
from state.records import MemoryEntry

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from state.journal import MemoryJournal

    journal = MemoryJournal(Path(sys.argv[1]))
    tag = sys.argv[2]
    for i in range(int(sys.argv[3])):
        journal.append(journal.new_entry(f"{tag} {i} " + "x" * (i % 300), author="kernel"))
    """
)


def test_two_processes_append_without_tearing_lines(tmp_path: Path) -> None:
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), tag, "5000"])
        for tag in ("a", "b")
    ]
    assert [w.wait(timeout=300) for w in writers] == [0, 0]
    lines = [
        line
        for path in MemoryJournal(tmp_path).files()
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    assert len(lines) == 10_000
    records = [json.loads(line) for line in lines]
    assert sum(r["description"].startswith("a ") for r in records) == 5000
    report = MemoryJournal(tmp_path).read()
    assert len(report.entries) == 10_000 and report.skipped == []


def test_unreadable_line_is_skipped_and_reported(tmp_path: Path) -> None:
    journal = MemoryJournal(tmp_path)
    first = journal.append(journal.new_entry("first", author="external"))
    path = journal.day_file(first.timestamp.date())
    second = journal.new_entry("second", author="self")
    with path.open("a") as handle:  # an unreadable line inside the file (a torn *tail* is moved)
        handle.write('{"broken": \n' + second.model_dump_json() + "\n")
    journal.append(journal.new_entry("third", author="self"))
    report = journal.read()
    assert [e.description for e in report.entries] == ["first", "second", "third"]
    assert len(report.skipped) == 1 and ":2:" in report.skipped[0]


def test_edited_kernel_memory_is_detected(tmp_path: Path) -> None:
    journal = MemoryJournal(tmp_path)
    entry = journal.append(journal.new_entry("decided X", author="kernel"))
    path = journal.day_file(entry.timestamp.date())
    path.write_text(path.read_text().replace("decided X", "decided Y"))
    assert verify_digests(journal.read().entries) == [entry.id]


def test_journal_has_no_mutation_api() -> None:
    public = {name for name in dir(MemoryJournal) if not name.startswith("_")}
    assert public == {
        "append",
        "append_encoded",
        "append_many",
        "day_file",
        "files",
        "new_entry",
        "read",
        "tail",
        "torn",
    }


@pytest.mark.parametrize("weight", [-0.1, 1.5])
def test_entry_weight_is_bounded(tmp_path: Path, weight: float) -> None:
    with pytest.raises(ValueError):
        MemoryJournal(tmp_path).new_entry("x", author="self", weight=weight)


@pytest.mark.parametrize(
    "when",
    [
        datetime(2026, 3, 1, 12, 30, 5, 123456, tzinfo=UTC),
        datetime(2026, 3, 1, 12, 30, 5, tzinfo=UTC),  # no microseconds: pydantic drops them
        datetime(2026, 3, 1, 23, 59, 59, 1, tzinfo=timezone(timedelta(hours=-5))),
    ],
)
@pytest.mark.parametrize(
    ("description", "meta"),
    [
        ("mode_gate: ran: talk", {"step": "mode_gate", "status": "ran", "turn": 3}),
        ('plan: skipped: "quoted" — ünïcode ✓\n', {"step": "plan", "turn": None, "x": 0.25}),
        ("", {}),
    ],
)
def test_encoded_entry_reads_back_as_new_entry_builds_it(
    tmp_path: Path, when: datetime, description: str, meta: dict[str, object]
) -> None:
    journal = MemoryJournal(tmp_path)
    day, line = encode_entry(
        description, author="kernel", situation="turn", meta=meta, timestamp=when
    )
    parsed = MemoryEntry.model_validate_json(line)
    built = journal.new_entry(
        description, author="kernel", situation="turn", meta=meta, timestamp=when
    )
    assert day == when.date() and line.endswith(b"\n") and line.count(b"\n") == 1
    assert parsed.digest == entry_digest(parsed)
    assert parsed.model_copy(update={"id": built.id, "digest": ""}) == built.model_copy(
        update={"digest": ""}
    )
    journal.append_encoded([(day, line)])
    assert [e.digest for e in journal.read().entries] == [parsed.digest]
    assert verify_digests(journal.read().entries) == []


def test_encoded_entry_refuses_a_naive_timestamp() -> None:
    with pytest.raises(ValueError, match="timezone"):
        encode_entry("x", author="kernel", timestamp=datetime(2026, 1, 1))


@pytest.mark.parametrize("meta", [{1: "a"}, {"x": float("inf")}, {"x": float("nan")}])
def test_encoded_entry_refuses_meta_that_would_not_read_back(meta: dict[object, object]) -> None:
    with pytest.raises(ValueError):
        encode_entry("x", author="kernel", meta=meta)  # type: ignore[arg-type]

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from state.journal import MemoryJournal, verify_digests

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

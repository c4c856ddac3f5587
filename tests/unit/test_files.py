import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from state.files import atomic_write_json, atomic_write_text, parse_soul

CRASH_BETWEEN_WRITE_AND_RENAME = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    import state.files as files

    def die(src, dst):  # the temp file is written and fsynced; kill before the rename
        os.kill(os.getpid(), signal.SIGKILL)

    files.os.replace = die
    files.atomic_write_json(Path(sys.argv[1]), [{"name": "torn", "weight": 0.1}] * 1000)
    """
)


def test_atomic_write_survives_kill_between_write_and_rename(tmp_path: Path) -> None:
    target = tmp_path / "values.json"
    atomic_write_json(target, [{"name": "curiosity", "weight": 0.85, "status": "active"}])
    before = target.read_bytes()
    done = subprocess.run(
        [sys.executable, "-c", CRASH_BETWEEN_WRITE_AND_RENAME, str(target)],
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == -9
    assert target.read_bytes() == before
    assert json.loads(target.read_text())[0]["name"] == "curiosity"


def test_atomic_write_replaces_content_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "soul.md"
    atomic_write_text(target, "# One\n")
    target.chmod(0o640)
    atomic_write_text(target, "# Two\n")
    assert target.read_text() == "# Two\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["soul.md"]


def test_parse_soul_reads_name_and_ontology() -> None:
    text = "# Ada\n\n## Ontology\nA kernel\nwith a self.\n\n## Narrative\nStory.\n"
    assert parse_soul(text) == ("Ada", "A kernel with a self.")


def test_path_lock_and_filelock_exclude_each_other(tmp_path: Path) -> None:
    """``path_lock`` takes the very lock ``filelock`` takes on ``<path>.lock``, both ways."""
    import threading

    from filelock import FileLock, Timeout

    from state.files import path_lock

    target = tmp_path / "ledger.jsonl"
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with path_lock(target):
            held.set()
            release.wait(10)

    worker = threading.Thread(target=hold)
    worker.start()
    assert held.wait(10)
    with pytest.raises(Timeout):
        FileLock(f"{target}.lock", timeout=0.05).acquire()
    release.set()
    worker.join(10)
    with FileLock(f"{target}.lock", timeout=1):
        blocked = threading.Thread(target=hold)
        held.clear()
        release.clear()
        blocked.start()
        assert not held.wait(0.2)  # waits for filelock's hold to end
    assert held.wait(10)
    release.set()
    blocked.join(10)

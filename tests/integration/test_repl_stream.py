"""The REPL streams the reply while the turn runs (a real terminal: a pty, the embedded model)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[2]
PROMPT = b"you> "
TIMEOUT_S = 240.0


def _read_until(fd: int, marker: bytes, deadline: float) -> list[tuple[float, bytes]]:
    """Read from the pty until ``marker`` shows up; return every chunk with its arrival time."""
    chunks: list[tuple[float, bytes]] = []
    seen = b""
    poller = select.poll()  # not select(): a long test session can hold descriptors past 1024
    poller.register(fd, select.POLLIN)
    while time.monotonic() < deadline:
        if not poller.poll(500):
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append((time.monotonic(), data))
        seen += data
        if marker in seen:
            return chunks
    raise AssertionError(f"no {marker!r} within the time limit; got {seen[-2000:]!r}")


def test_repl_streams_the_draft_before_the_turn_ends(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "LUMEN_HOME": str(tmp_path / "repl"),
        "LUMEN_LLM_THREADS": "1",
        "COLUMNS": "100",
        "TERM": "xterm",
    }
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", "chat"],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=env,
        cwd=REPO,
        close_fds=True,
    )
    os.close(terminal)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        _read_until(controller, PROMPT, deadline)
        os.write(controller, b"Tell me something about the sea in two sentences.\n")
        chunks = _read_until(controller, PROMPT, deadline)
        os.write(controller, b"\x04")  # Ctrl+D: leave
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(controller)
    text = b"".join(data for _, data in chunks)
    assert b"Traceback" not in text
    writing = [t for t, data in chunks if b"writing" in data]
    assert writing, "the draft was never shown while it was being written"
    end = chunks[-1][0]
    # Tokens were on screen while the turn still had steps to run: streamed, not printed once.
    assert min(writing) < end
    assert len([t for t in writing if t < end]) >= 2
    assert proc.returncode == 0


def test_repl_commands_are_not_sent_to_the_model(tmp_path: Path) -> None:
    """/help lists the commands, an unknown /word is refused, /quit leaves: no turn runs."""
    env = {**os.environ, "LUMEN_HOME": str(tmp_path / "repl"), "LUMEN_LLM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "cli", "chat"],
        input="/help\n/forward\n/tldr please\n/quit\nnever sent\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    assert "/quit, /exit" in done.stderr and "usage: /forward TEXT" in done.stderr
    assert "unknown command /tldr" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout.count("you> ") == 4
    assert (
        tmp_path / "repl" / "data" / "memory"
    ).is_dir()  # the instance exists: a turn would show
    ledger = "".join(
        p.read_text() for p in (tmp_path / "repl" / "data" / "memory").rglob("*.jsonl")
    )
    assert "never sent" not in ledger and '"author":"external"' not in ledger

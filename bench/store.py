"""Memory ledger append throughput with two concurrent writer processes, and a torn-line check.

Run: ``uv run python bench/store.py [N_PER_WRITER]`` (default 5000).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from state.journal import MemoryJournal

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from state.journal import MemoryJournal

    journal = MemoryJournal(Path(sys.argv[1]))
    for i in range(int(sys.argv[3])):
        journal.append(journal.new_entry(f"{sys.argv[2]} {i} " + "x" * (i % 500), author="kernel"))
    """
)


def run_writers(root: Path, writers: int, per_writer: int) -> float:
    """Run ``writers`` processes appending ``per_writer`` entries each; return seconds."""
    started = time.perf_counter()
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(root), f"w{i}", str(per_writer)])
        for i in range(writers)
    ]
    for proc in procs:
        if proc.wait() != 0:
            raise SystemExit("a writer failed")
    return time.perf_counter() - started


def check(root: Path) -> tuple[int, int]:
    """Return (valid lines, torn lines)."""
    valid = torn = 0
    for path in MemoryJournal(root).files():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                json.loads(line)
                valid += 1
            except json.JSONDecodeError:
                torn += 1
    return valid, torn


def main() -> None:
    """Compare one writer with two concurrent writers, same total entries."""
    per_writer = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with tempfile.TemporaryDirectory() as tmp:
        one = Path(tmp) / "one"
        two = Path(tmp) / "two"
        t1 = run_writers(one, 1, 2 * per_writer)
        t2 = run_writers(two, 2, per_writer)
        v1, torn1 = check(one)
        v2, torn2 = check(two)
    total = 2 * per_writer
    print(
        f"1 writer  x {total:6d}: {t1:6.2f} s  {total / t1:8.0f} appends/s  valid {v1} torn {torn1}"
    )
    print(
        f"2 writers x {per_writer:6d}: {t2:6.2f} s  {total / t2:8.0f} appends/s  "
        f"valid {v2} torn {torn2}"
    )
    print(f"ratio (2 writers / 1 writer throughput): {t1 / t2:.2f}")
    if torn1 or torn2 or v1 != total or v2 != total:
        raise SystemExit("FAIL: torn or missing lines")
    print("no torn lines")


if __name__ == "__main__":
    main()

"""Cold ``lumen status`` latency: median of 10 fresh processes (goal: <= 1 s).

Run: ``uv run python bench/startup.py``. Creates a throwaway instance under a temp dir.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 10


def main() -> None:
    """Time ``lumen status`` and ``python -c pass`` side by side."""
    lumen = Path(sys.executable).with_name("lumen")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "LUMEN_HOME": str(Path(tmp) / "inst")}
        subprocess.run([str(lumen), "init"], env=env, check=True, capture_output=True)
        timings: dict[str, list[float]] = {
            "python -c pass": [],
            "lumen status": [],
            "lumen status --json": [],
        }
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "lumen status": [str(lumen), "status"],
            "lumen status --json": [str(lumen), "status", "--json"],
        }
        for _ in range(RUNS):
            for name, argv in commands.items():
                started = time.perf_counter()
                subprocess.run(argv, env=env, check=True, capture_output=True)
                timings[name].append(time.perf_counter() - started)
    floor = statistics.median(timings["python -c pass"])
    for name, values in timings.items():
        median = statistics.median(values)
        print(
            f"{name:22s} median {median * 1000:7.1f} ms  max {max(values) * 1000:7.1f} ms  "
            f"ratio to bare python {median / floor:5.1f}x"
        )
    verdict = "OK" if statistics.median(timings["lumen status"]) <= 1.0 else "OVER GOAL"
    print(f"goal: lumen status median <= 1000 ms -> {verdict}")


if __name__ == "__main__":
    main()

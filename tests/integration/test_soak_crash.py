"""The crash soak (bench/soak.py) on small counts: SIGKILLed chat and run leave no damage."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_soak_sigkilled_chat_and_run_leave_files_memories_signals_and_queue_intact(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "soak.py"),
            "--turns",
            "3",
            "--cycles",
            "3",
            "--seed",
            "3",
            "--keep",
            str(tmp_path / "soak"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    figures = done.stdout
    for line in (
        "corrupt files / lines          0",
        "doctor failing checks          0",
        "duplicate signals              0",
    ):
        assert line in figures
    assert ", lost 0" in figures and figures.rstrip().endswith("PASS")

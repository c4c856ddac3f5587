"""Safety chain (b) of issue 13 on the real embedded model, through ``lumen run --json``.

values.json is rewritten by another writer while ``lumen run`` is running: the writer reads the
run's JSON lines and rewrites the file when it sees cycle 2 end (the same moment the scripted
scenario in ``tests/graph/test_safety_chain.py`` uses), and writes its copy back once more right
after the kernel's first restore. The value lock of the next cycle sees the hash mismatch, rolls
back, ``rollback_check`` sees the undone restore and the cycle drops to safety-only; the cycle
after restores for real and the run stays in safe mode until three stable cycles have passed,
then acts again. Nothing asserted depends on what the small model says: safe-mode cycles never
consult it, and the row where the lock breaks is found, not assumed.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from cli.app import main
from graph.deps import Deps
from kernel import mscp
from state.instance import Instance
from state.journal import MemoryJournal

pytestmark = pytest.mark.model


class OtherWriter(io.StringIO):
    """``lumen run --json``'s stdout, read line by line by another writer of values.json."""

    def __init__(self, instance: Instance, tampered: str) -> None:
        super().__init__()
        self.instance, self.tampered = instance, tampered
        self.rows: list[dict[str, Any]] = []
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            row = json.loads(line)
            if "cycle" in row:
                self.rows.append(row)
                if row["cycle"] == 2:  # the run has taken cycle 2's hash as intact
                    self.instance.values_file.write_text(self.tampered)
        return len(text)


def weights(values_json: str) -> dict[str, float]:
    return {v["name"]: v["weight"] for v in json.loads(values_json)}


def test_b_values_changed_mid_run_roll_back_then_safe_mode_until_stable(
    instance: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = instance.config_file.read_text()
    assert "cooldown_seconds = 30" in config
    instance.config_file.write_text(
        config.replace("cooldown_seconds = 30", "cooldown_seconds = 0.01")
    )
    good = instance.values_file.read_text()
    tampered = good.replace("0.95", "0.05", 1)
    assert tampered != good
    restore = Deps.restore_self
    undone: list[bool] = []

    def restore_then_undone(self: Deps, snapshot: Any) -> None:
        restore(self, snapshot)
        if not undone:  # the other writer puts its copy back right after the first restore
            undone.append(True)
            instance.values_file.write_text(tampered)

    monkeypatch.setattr(Deps, "restore_self", restore_then_undone)
    out = OtherWriter(instance, tampered)
    monkeypatch.setattr("sys.stdout", out)
    cycles = 8
    assert main(["run", "--cycles", str(cycles), "--json"]) == 0
    rows = out.rows
    assert len(rows) == cycles
    # the lock breaks in the first cycle after the write (a cooldown would only delay it)
    broke = next(i for i, r in enumerate(rows) if "rollback" in r["branches"])
    assert broke >= 2 and not any("safe_mode" in r["branches"] for r in rows[:broke])
    hit = rows[broke]
    assert "rollback" in hit["branches"] and "safe_mode" in hit["branches"]
    assert "rollback_restored" not in hit["branches"]  # rollback_check saw the undone restore
    assert hit["safe_mode_left"] == mscp.SAFE_MODE_STABLE_CYCLES
    # the next cycle is safety-only (budget_reset did not lift it) and restores for real
    after = rows[broke + 1]
    assert after["budget"] == 0.0 and after["skill"] == ""
    assert "rollback_restored" in after["branches"]
    assert weights(instance.values_file.read_text()) == weights(good)  # the tampered 0.05 is gone
    # safety layers only until three stable cycles have passed, then it acts again
    safe = rows[broke + 2 : broke + 2 + mscp.SAFE_MODE_STABLE_CYCLES]
    assert [r["safe_mode_left"] for r in safe] == [2, 1, 0]
    assert all(r["budget"] == 0.0 and r["skill"] == "" for r in safe)
    assert len(rows) > broke + 2 + len(safe), "the run lasts until it acts again"
    again = rows[broke + 2 + len(safe)]
    assert again["safe_mode_left"] == 0 and again["skill"] != ""  # acting again
    kinds = [e.meta.get("kind") for e in MemoryJournal(instance.memory_dir).tail(100_000)]
    for kind in ("ValueLockBroken", "Rollback", "RollbackFailed", "SafeMode", "SafeModeOff"):
        assert kind in kinds

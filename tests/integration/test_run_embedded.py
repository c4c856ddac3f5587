"""`lumen run --cycles 20` on the real embedded model, then `lumen status` shows the change."""

import json
from typing import Any

import pytest

from cli.app import main
from state.instance import Instance

pytestmark = pytest.mark.model


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def run_lines(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, list[Any]]:
    """`lumen run --json` prints one object per line: cycles, and reflections as {"reflection"}."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    return {
        "cycles": [r for r in rows if "reflection" not in r],
        "reflections": [r["reflection"] for r in rows if "reflection" in r],
    }


def test_run_twenty_cycles_changes_the_self(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    before = cli(capsys, "status", "--json")
    report = run_lines(capsys, "run", "--cycles", "20", "--json")
    after = cli(capsys, "status", "--json")
    cycles = report["cycles"]
    assert isinstance(cycles, list) and len(cycles) == 20
    assert {c["kind"] for c in cycles} == {"action", "explore"}
    counts = after["memory_counts"]
    assert isinstance(counts, dict)
    assert counts["kernel"] > 20 and counts["goal"] >= 1 and counts["self"] >= 10
    assert after["affect"] != before["affect"]
    assert after["stability"] != before["stability"]  # C(t) and MSI moved
    identity_before, identity_after = before["identity"], after["identity"]
    assert isinstance(identity_before, dict) and isinstance(identity_after, dict)
    assert identity_after["identity_hash"] != identity_before["identity_hash"]
    assert identity_after["identity_id"] == identity_before["identity_id"]
    assert after["dominant_archetype"] in {"sage", "healer", "explorer", "guardian"}
    assert report["reflections"], "a reflection trigger fires within 20 cycles"


def test_reflect_command_runs_the_reflection_loop(
    instance: Instance, capsys: pytest.CaptureFixture[str]
) -> None:
    run_lines(capsys, "run", "--cycles", "2", "--json", "--no-reflection")
    result = cli(capsys, "reflect", "--json")
    assert result["triggers"] == ["explicit_request"]
    assert isinstance(result["applied"], list)

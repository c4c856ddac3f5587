"""`lumen run --cycles 1` and `lumen reflect` leave every step's kernel memory in the ledger.

The step memories of a run are buffered and written when the run ends (its terminal step), so
they must be on disk when the command returns — not only after a later chat turn.
"""

import json
from typing import Any

import pytest

from cli.app import main
from state.instance import Instance
from state.journal import MemoryJournal
from tests.scripted import cycle_model


@pytest.fixture
def scripted_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    model = cycle_model()
    monkeypatch.setattr("graph.llm.make_chat_model", lambda config, **_: model)


def _step_memories(instance: Instance, situation: str) -> list[str]:
    journal = MemoryJournal(instance.memory_dir)
    return [
        str(e.meta.get("step"))
        for e in journal.tail(100_000, authors=("kernel",))
        if e.situation == situation and e.meta.get("step")
    ]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    if argv[0] == "run":  # one JSON object per line, per cycle
        return [json.loads(line) for line in out.splitlines()]
    return json.loads(out)


def test_run_one_cycle_writes_each_step_memory_before_it_returns(
    instance: Instance, scripted_cli: None, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(capsys, "run", "--cycles", "1", "--json", "--no-reflection")
    steps = _step_memories(instance, "cycle")
    for step in ("budget_reset", "predict", "act", "compare", "escalation_guard", "cycle_end"):
        assert step in steps, step


def test_reflect_writes_each_step_memory_before_it_returns(
    instance: Instance, scripted_cli: None, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(capsys, "run", "--cycles", "1", "--json", "--no-reflection")
    _run(capsys, "reflect", "--json")
    steps = _step_memories(instance, "reflect")
    assert {"review", "ask", "evolve", "apply"} <= set(steps)

"""`lumen chat` on the real embedded model (SmolLM2-135M): talk and work turns, the REPL."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli.app import main

pytestmark = pytest.mark.model


def chat_json(capsys: pytest.CaptureFixture[str], text: str) -> dict[str, object]:
    code = main(["chat", "--once", text, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_talk_turn_gives_a_sensible_reply(capsys: pytest.CaptureFixture[str]) -> None:
    turn = chat_json(capsys, "Hello! How are you today?")
    reply = str(turn["reply"])
    assert turn["mode"] == "talk"
    assert 1 <= int(turn["llm_calls"]) <= 2  # type: ignore[call-overload]
    assert len(re.findall(r"[A-Za-z]{2,}", reply)) >= 2
    assert "<|" not in reply and "assistant:" not in reply.lower()


def test_work_turn_gives_a_structured_reply(capsys: pytest.CaptureFixture[str]) -> None:
    turn = chat_json(capsys, "Please give me a step by step plan to learn Python")
    reply = str(turn["reply"])
    assert turn["mode"] == "work"
    assert 1 <= int(turn["llm_calls"]) <= 4  # type: ignore[call-overload]
    assert "plan" not in turn["skipped"]  # type: ignore[operator]
    structure = re.findall(
        r"(?m)^\s*(?:\d+[.)]|[-*•]|#+)\s|\b(?:First|Then|Next|Finally|Also)\b", reply
    )
    paragraphs = [p for p in reply.split("\n\n") if p.strip()]
    assert len(structure) >= 2 or len(paragraphs) >= 2, reply


def test_repl_exits_cleanly_on_end_of_input(tmp_path: Path) -> None:
    env = {**os.environ, "LUMEN_HOME": str(tmp_path / "repl"), "LUMEN_LLM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "cli", "chat"],
        input="Hi there!\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert any(ch.isalpha() for ch in done.stdout)

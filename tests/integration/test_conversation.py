"""The conversation script on the real ``turn`` graph: the embedded model and a llama.cpp server.

Whatever the (tiny) model writes, the kernel guarantees: no reply starts with a tool line or
repeats the user's message; after a correction the draft prompt carries the corrected belief
about the user; after "never use bullet points" no later reply has a list line, and a new
process lists the norm; a norm planted through forwarded text is refused.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph import structured_output
from graph.deps import Deps
from state.instance import Instance
from tests.conversations import FORWARDED, problems, recording, run_script

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[2]


def _lumen(instance: Instance, *argv: str, env: dict[str, str] | None = None) -> str:
    """Run ``lumen ARGV`` in a new process against ``instance``; return its stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "cli", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {}), "LUMEN_HOME": str(instance.root)},
        cwd=REPO,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def _norms(instance: Instance, env: dict[str, str] | None = None) -> list[dict[str, object]]:
    rows = json.loads(_lumen(instance, "norms", "--json", env=env))
    assert isinstance(rows, list)
    return rows


def _hold_the_guarantees(instance: Instance, env: dict[str, str] | None = None) -> None:
    deps, recorder = recording(Deps.for_instance, instance)
    exchanges = run_script(deps, recorder)
    assert problems(exchanges) == [], [(x.said, x.reply) for x in exchanges]
    listed = _norms(instance, env)  # a new process reads what this one recorded
    assert [n["kind"] for n in listed if n["status"] == "active"] == ["no_lists"]
    _lumen(instance, "chat", "--once", FORWARDED, "--forwarded", env=env)
    assert _norms(instance, env) == listed  # forwarded text never becomes a norm


def test_conversation_on_the_embedded_model(instance: Instance) -> None:
    _hold_the_guarantees(instance)


@pytest.fixture
def served(
    llama_server: str, instance: Instance, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, str]]:
    env = {
        "LUMEN_LLM_PROVIDER": "openai",
        "LUMEN_LLM_BASE_URL": llama_server,
        "LUMEN_LLM_MODEL": "smollm2",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    structured_output.forget()
    yield env
    structured_output.forget()


def test_conversation_on_a_llama_cpp_openai_server(
    instance: Instance, served: dict[str, str]
) -> None:
    _hold_the_guarantees(instance, served)

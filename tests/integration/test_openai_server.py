"""Structured output through a real OpenAI-compatible server (llama.cpp's, serving SmolLM2).

That server refuses ``response_format={"type": "json_schema"}`` with HTTP 500, so the thinking
gateway must fall back (json_object with the schema, or function calling), remember the method per
endpoint on disk, and a fresh process must go straight to it.

The instance runs at temperature 0.2 (inside the work band) and each request carries a fixed seed
so the 135M model's answers are reproducible on one thread.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel

from graph import structured_output
from graph.builder import build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.deps import Deps
from graph.llm import make_chat_model
from graph.session import run_turn
from nodes.turn.deliberate import PlanAnswer
from state.instance import Instance

pytestmark = pytest.mark.model

PLAN_VALUES: dict[str, object] = {
    "user_text": "Please write a step by step plan to organise my project files",
    "intent": "get_task_done",
    "learned": "- nothing yet",
}
FALLBACK = PlanAnswer(steps=["rule-based step"], confidence=0.5)


class FormatRecorder(BaseCallbackHandler):
    """Notes which structured-output method each chat request used."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[Any], *, run_id: UUID, **kwargs: Any
    ) -> None:
        params = kwargs.get("invocation_params") or {}
        response_format = params.get("response_format")
        if isinstance(response_format, dict):
            self.methods.append(str(response_format.get("type")))
        elif params.get("tools"):
            self.methods.append("function_calling")
        else:
            self.methods.append("prompt")


@pytest.fixture
def served(
    llama_server: str, instance: Instance, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Instance]:
    """The test instance, configured for provider ``openai`` at the llama.cpp server."""
    monkeypatch.setenv("LUMEN_LLM_PROVIDER", "openai")
    monkeypatch.setenv("LUMEN_LLM_BASE_URL", llama_server)
    monkeypatch.setenv("LUMEN_LLM_MODEL", "smollm2")
    config = instance.config_file.read_text(encoding="utf-8")
    instance.config_file.write_text(
        config.replace("temperature = 0.7", "temperature = 0.2"), encoding="utf-8"
    )
    structured_output.forget()
    yield instance
    structured_output.forget()


def recorded_deps(instance: Instance) -> tuple[Deps, FormatRecorder]:
    """Deps whose models (the product's factory) report each request's format, fixed seed."""
    recorder = FormatRecorder()
    deps: Deps

    def model_for(mode: str) -> BaseChatModel:
        model = make_chat_model(deps.config, mode=mode)
        return model.model_copy(update={"seed": 7, "callbacks": [recorder]})

    deps = Deps.for_instance(instance, model_for=model_for)
    assert deps.config.llm.provider == "openai"
    return deps, recorder


def record(instance: Instance) -> dict[str, Any]:
    data = json.loads(structured_output.record_path(instance).read_text(encoding="utf-8"))
    (entry,) = data["endpoints"].values()
    return entry  # type: ignore[no-any-return]


def test_plan_call_falls_back_and_a_fresh_process_goes_straight_to_the_method(
    served: Instance, llama_server: str
) -> None:
    deps, recorder = recorded_deps(served)
    judged = deps.think_json(
        "plan", mode="work", values=PLAN_VALUES, schema=PlanAnswer, fallback=FALLBACK
    )
    assert judged.ok, judged.reason
    assert judged.value != FALLBACK
    assert recorder.methods[0] == "json_schema"
    entry = record(served)
    assert entry["base_url"] == llama_server and entry["model"] == "smollm2"
    assert entry["method"] in {"json_object", "function_calling"}
    assert "json_schema" in entry["refused"] and "HTTP 500" in entry["refused"]["json_schema"]
    assert recorder.methods[-1] == entry["method"]
    assert f"via {entry['method']}" in judged.reason and "json_schema refused" in judged.reason

    structured_output.forget()  # as a new process: only the record on disk is known
    fresh, fresh_recorder = recorded_deps(served)
    again = fresh.think_json(
        "plan", mode="work", values=PLAN_VALUES, schema=PlanAnswer, fallback=FALLBACK
    )
    assert again.ok, again.reason
    assert fresh_recorder.methods == [entry["method"]]
    assert "remembered" in again.reason


def test_work_turn_plans_with_the_model_not_the_fallback(served: Instance, tmp_path: Path) -> None:
    deps, recorder = recorded_deps(served)
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        compiled: Any = build_turn_graph(deps).compile(checkpointer=saver)
        state = run_turn(compiled, "Please write a step by step plan to organise my project files")
    assert state.mode == "work"
    plan_steps = [r for r in state.trace if r.step == "plan"]
    assert plan_steps and plan_steps[0].status == "ran"
    assert not [d for d in state.degraded if d.startswith("plan:")], state.degraded
    assert state.plan
    assert "json_schema" in recorder.methods  # the first structured call negotiated the format
    assert any(ch.isalpha() for ch in state.reply)

"""A scripted chat model for tests and benchmarks only (config can never select it).

It answers by rule: JSON for the plan prompt, otherwise the next scripted reply (cycling), so a
whole turn runs deterministically without a real model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

PLAN_JSON = '{"steps": ["Answer the question directly.", "Offer a next step."], "confidence": 0.7}'


class ScriptedChatModel(BaseChatModel):
    """Reply with scripted texts in order (cycling); answer the plan prompt with JSON."""

    replies: list[str] = Field(default_factory=lambda: ["I hear you. Tell me more?"])
    plan_json: str = PLAN_JSON
    calls: int = 0
    respond: Callable[[Sequence[BaseMessage]], str] | None = None
    finish_reason: str = "stop"
    """What every answer says about why it ended ("length": out of tokens, cut mid-sentence)."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        system = str(messages[0].content) if messages else ""
        if self.respond is not None:
            text = self.respond(messages)
        elif system.startswith("You plan a reply"):
            text = self.plan_json
        else:
            text = self.replies[self.calls % len(self.replies)]
        self.calls += 1
        info = {"finish_reason": self.finish_reason}
        return ChatResult(
            generations=[ChatGeneration(message=AIMessage(text), generation_info=info)]
        )


def cycle_model(
    *, success: float = 0.7, reflect_on: str = "curiosity", reason: str = "learned"
) -> ScriptedChatModel:
    """A scripted model for the autonomy loops: a forecast for PREDICT, one proposal for ASK.

    PREDICT gets an outcome with ``success`` for every action its prompt lists (``- name``);
    an explore cycle's forecast also carries a new question about its goal each time;
    reflection's ASK gets a proposal to raise the value ``reflect_on``; every other prompt gets
    ``ok``.
    """
    proposal = json.dumps(
        {"target": "value", "name": reflect_on, "direction": "up", "reason": reason}
    )

    asked = {"n": 0}

    def respond(messages: Sequence[BaseMessage]) -> str:
        system = str(messages[0].content)
        if system.startswith("You predict"):
            prompt = str(messages[-1].content)
            names = [
                line[2:].split(" ")[0] for line in prompt.splitlines() if line.startswith("- ")
            ] or ["recall"]
            outcomes = [{"name": n, "outcome": "works", "success": success} for n in names[:6]]
            answer: dict[str, Any] = {"outcomes": outcomes}
            if "question" in system:  # an explore cycle also asks for its question
                asked["n"] += 1
                goal = next(
                    (
                        line.split(":", 1)[1].strip()
                        for line in prompt.splitlines()
                        if line.startswith("The goal I explore for:")
                    ),
                    "my goals",
                )
                answer["question"] = f"What matters for {goal} (question {asked['n']})?"
                answer["query"] = goal
            return json.dumps(answer)
        if system.startswith("You reflect"):
            return proposal
        return "ok"

    return ScriptedChatModel(respond=respond)

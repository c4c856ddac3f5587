"""A scripted chat model for tests and benchmarks only (config can never select it).

It answers by rule: JSON for the plan prompt, otherwise the next scripted reply (cycling), so a
whole turn runs deterministically without a real model.
"""

from __future__ import annotations

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
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])

"""Token metering of model calls: what the thinking gateway's calls cost, per run.

A LangChain callback handler is attached, through a context variable registered as a configure
hook (as ``langchain_core.callbacks.get_usage_metadata_callback`` does), to every chat model call
made inside :func:`metered`. A call's tokens are the model's own ``usage_metadata`` when it
reports one (OpenAI-compatible servers do); otherwise (the embedded llama.cpp model and the
scripted test model report none) they are counted from the text of the prompt and the answer
(``kernel.autonomy.count_tokens``). The count is added to a sink (the run scope's ``tokens``),
which the cycle charges to the §9 budget.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.tracers.context import register_configure_hook

from kernel.autonomy import count_tokens


def _text(message: BaseMessage) -> str:
    content = message.content if isinstance(message.content, str) else str(message.content)
    if isinstance(message, AIMessage) and message.tool_calls:
        content += " ".join(str(call.get("args", "")) for call in message.tool_calls)
    return content


class TokenMeter(BaseCallbackHandler):
    """Add each chat model call's tokens (reported, or counted from the text) to a sink."""

    def __init__(self, add: Callable[[int], None]) -> None:
        """Meter into ``add`` (called once per finished model call with its tokens)."""
        super().__init__()
        self._add = add
        self._prompts: dict[UUID, int] = {}
        self._lock = threading.Lock()

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        """Count the prompt's tokens (used when the model reports no usage)."""
        tokens = sum(count_tokens(_text(m)) for batch in messages for m in batch)
        with self._lock:
            self._prompts[run_id] = tokens

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        """Add the call's tokens: the model's usage metadata, else prompt + answer counted."""
        with self._lock:
            prompt = self._prompts.pop(run_id, 0)
        reported = 0
        counted = 0
        for batch in response.generations:
            for generation in batch:
                message = generation.message if isinstance(generation, ChatGeneration) else None
                usage = message.usage_metadata if isinstance(message, AIMessage) else None
                if usage:
                    reported += int(usage.get("total_tokens") or 0) or (
                        int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
                    )
                else:
                    text = _text(message) if message is not None else generation.text
                    counted += count_tokens(text)
        self._add(reported if reported else prompt + counted)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """A failed call still read its prompt: charge the prompt's tokens."""
        with self._lock:
            prompt = self._prompts.pop(run_id, 0)
        self._add(prompt)


_meter: ContextVar[TokenMeter | None] = ContextVar("lumen_token_meter", default=None)
register_configure_hook(_meter, inheritable=True)


@contextmanager
def metered(add: Callable[[int], None]) -> Iterator[TokenMeter]:
    """Meter every chat model call made inside the block into ``add``."""
    meter = TokenMeter(add)
    token = _meter.set(meter)
    try:
        yield meter
    finally:
        _meter.reset(token)

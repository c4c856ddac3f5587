"""The structured-output fallback chain of OpenAI-compatible endpoints (no server, no network).

``RefusingChatOpenAI`` is a real ``ChatOpenAI`` whose transport is replaced: it sees exactly what
the gateway bound (response_format, tools, tool_choice) and answers or raises openai's own error
types the way a server that refuses a format does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import openai
import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field

from graph import structured_output
from graph.deps import Deps
from graph.thinking import format_refusal
from state.instance import Instance
from tests.scripted import ScriptedChatModel

PLAN = {"steps": ["Sort the files by project.", "Archive the old ones."], "confidence": 0.7}
PLAN_VALUES: dict[str, object] = {
    "user_text": "Plan my files",
    "intent": "get_task_done",
    "learned": "- nothing yet",
}


class Plan(BaseModel):
    steps: list[str] = Field(min_length=1, max_length=4)
    confidence: float = Field(ge=0.0, le=1.0)


FALLBACK = Plan(steps=["rule-based"], confidence=0.5)


def api_error(status: int, message: str) -> openai.APIStatusError:
    """An openai error response as the client raises it (status, message, body)."""
    response: Any = SimpleNamespace(request=None, status_code=status, headers={})
    kind = {
        400: openai.BadRequestError,
        401: openai.AuthenticationError,
        429: openai.RateLimitError,
        500: openai.InternalServerError,
    }[status]
    return kind(f"Error code: {status} - {message}", response=response, body={"message": message})


LLAMA_CPP_500 = (
    "1 validation error: ('body', 'response_format', 'type') "
    "Input should be 'text' or 'json_object'"
)


class RefusingChatOpenAI(ChatOpenAI):
    """ChatOpenAI whose 'server' refuses the listed methods and answers the others."""

    refuse: dict[str, openai.APIStatusError] = Field(default_factory=dict)
    seen: list[str] = Field(default_factory=list)
    answer: str = json.dumps(PLAN)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        response_format = kwargs.get("response_format")
        if isinstance(response_format, dict):
            method = str(response_format["type"])
        elif kwargs.get("tools"):
            assert kwargs["tool_choice"] == {"type": "function", "function": {"name": "answer"}}
            (tool,) = kwargs["tools"]
            assert tool["function"]["parameters"]["required"] == ["steps", "confidence"]
            method = "function_calling"
        else:
            method = "prompt"
            assert "JSON schema" in str(messages[0].content)
        self.seen.append(method)
        if method in self.refuse:
            raise self.refuse[method]
        if method == "function_calling":
            message = AIMessage(
                "",
                tool_calls=[{"name": "answer", "args": PLAN, "id": "call_1", "type": "tool_call"}],
            )
        else:
            message = AIMessage(self.answer)
        return ChatResult(generations=[ChatGeneration(message=message)])


def fake(**kwargs: Any) -> RefusingChatOpenAI:
    return RefusingChatOpenAI(
        api_key="x",  # type: ignore[arg-type]
        base_url="http://127.0.0.1:9/v1",
        model="small",
        max_retries=0,
        **kwargs,
    )


@pytest.fixture(autouse=True)
def _fresh_process() -> Iterator[None]:
    structured_output.forget()
    yield
    structured_output.forget()


def ask(instance: Instance, model: Any) -> Any:
    deps = Deps.for_instance(instance, model_for=lambda mode: model)
    return deps.think_json("plan", mode="work", values=PLAN_VALUES, schema=Plan, fallback=FALLBACK)


def persisted(instance: Instance) -> dict[str, Any]:
    data = json.loads(structured_output.record_path(instance).read_text(encoding="utf-8"))
    return data["endpoints"]["small@http://127.0.0.1:9/v1"]  # type: ignore[no-any-return]


def test_chain_order_is_schema_then_object_then_function_calling(instance: Instance) -> None:
    model = fake(
        refuse={
            "json_schema": api_error(500, LLAMA_CPP_500),
            "json_object": api_error(400, "response_format json_object is not supported"),
        }
    )
    judged = ask(instance, model)
    assert judged.ok and judged.value == Plan.model_validate(PLAN)
    assert model.seen == ["json_schema", "json_object", "function_calling"]
    assert judged.reason == (
        "structured output via function_calling "
        "(json_schema refused (HTTP 500), json_object refused (HTTP 400))"
    )
    entry = persisted(instance)
    assert entry["method"] == "function_calling"
    assert set(entry["refused"]) == {"json_schema", "json_object"}


def test_later_calls_and_new_processes_go_straight_to_the_method(instance: Instance) -> None:
    model = fake(refuse={"json_schema": api_error(500, LLAMA_CPP_500)})
    assert ask(instance, model).ok
    assert ask(instance, model).ok  # same process: in-process knowledge
    assert model.seen == ["json_schema", "json_object", "json_object"]
    structured_output.forget()  # a new process reads the record
    again = fake(refuse={"json_schema": api_error(500, LLAMA_CPP_500)})
    judged = ask(instance, again)
    assert judged.ok and again.seen == ["json_object"]
    assert judged.reason == "structured output via json_object (remembered for this endpoint)"


def test_every_format_refused_ends_at_plain_json_in_the_prompt(instance: Instance) -> None:
    model = fake(
        refuse={
            "json_schema": api_error(400, "unknown field response_format"),
            "json_object": api_error(400, "unknown field response_format"),
            "function_calling": api_error(400, "tools are not supported"),
        },
        answer="Sure! ```json\n" + json.dumps(PLAN) + "\n```",
    )
    judged = ask(instance, model)
    assert judged.ok and judged.value.steps == PLAN["steps"]
    assert model.seen == ["json_schema", "json_object", "function_calling", "prompt"]
    assert persisted(instance)["method"] == "prompt"


def test_first_method_working_needs_no_note(instance: Instance) -> None:
    model = fake()
    judged = ask(instance, model)
    assert judged.ok and judged.reason == "" and model.seen == ["json_schema"]
    assert ask(instance, model).reason == ""
    assert persisted(instance)["method"] == "json_schema"


@pytest.mark.parametrize(
    ("error", "why"),
    [(api_error(401, "invalid api key"), "401"), (api_error(429, "rate limit reached"), "429")],
)
def test_errors_that_are_not_about_the_format_do_not_fall_back(
    instance: Instance, error: openai.APIStatusError, why: str
) -> None:
    model = fake(refuse={"json_schema": error})
    judged = ask(instance, model)
    assert not judged.ok and judged.value == FALLBACK
    assert judged.reason.startswith("model call failed") and why in judged.reason
    assert model.seen == ["json_schema"]
    assert not structured_output.record_path(instance).exists()


def test_a_500_that_is_not_about_the_format_does_not_fall_back(instance: Instance) -> None:
    model = fake(refuse={"json_schema": api_error(500, "CUDA out of memory")})
    assert not ask(instance, model).ok
    assert model.seen == ["json_schema"]


def test_refusal_of_the_last_method_is_a_call_failure_naming_the_chain(instance: Instance) -> None:
    refused = api_error(400, "response_format is not supported")
    model = fake(
        refuse={
            "json_schema": refused,
            "json_object": refused,
            "function_calling": api_error(400, "tools are not supported"),
            "prompt": api_error(400, "tools are not supported"),
        }
    )
    judged = ask(instance, model)
    assert not judged.ok and judged.value == FALLBACK
    assert "json_schema refused (HTTP 400)" in judged.reason
    assert not structured_output.record_path(instance).exists()


def test_invalid_answer_after_a_fallback_names_the_method(instance: Instance) -> None:
    model = fake(refuse={"json_schema": api_error(500, LLAMA_CPP_500)}, answer="no json here")
    judged = ask(instance, model)
    assert not judged.ok
    assert judged.reason.startswith("model output is not a JSON object; structured output via")


def test_a_corrupt_record_costs_one_probe(instance: Instance) -> None:
    structured_output.record_path(instance).write_text("{not json", encoding="utf-8")
    model = fake(refuse={"json_schema": api_error(500, LLAMA_CPP_500)})
    assert ask(instance, model).ok
    assert model.seen == ["json_schema", "json_object"]
    assert persisted(instance)["method"] == "json_object"


def test_non_openai_models_keep_their_path_and_write_no_record(instance: Instance) -> None:
    judged = ask(instance, ScriptedChatModel(plan_json=json.dumps(PLAN)))
    assert judged.ok and judged.reason == ""
    assert not structured_output.record_path(instance).exists()


def test_raw_newlines_inside_json_strings_are_tolerated(instance: Instance) -> None:
    model = fake(answer='{"steps": ["Sort the\nfiles by project."], "confidence": 0.5}')
    judged = ask(instance, model)
    assert judged.ok and judged.value.steps == ["Sort the\nfiles by project."]


def test_format_refusal_reads_status_and_message() -> None:
    assert format_refusal(api_error(500, LLAMA_CPP_500)) == "HTTP 500"
    assert format_refusal(
        api_error(400, "'response_format' of type 'json_schema' is not supported")
    )
    assert format_refusal(api_error(401, "response_format")) is None
    assert format_refusal(ValueError("response_format")) is None

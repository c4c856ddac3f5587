"""Runs the real embedded model (SmolLM2-135M through llama.cpp) in the default suite."""

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from graph.llm import embedded_model_path, make_chat_model
from state.config import Config, LLMConfig
from state.errors import ModelLoadError

pytestmark = pytest.mark.model


def test_embedded_model_answers_a_prompt() -> None:
    model = make_chat_model(Config(llm=LLMConfig(threads=1, max_tokens=32)), mode="talk")
    answer = model.invoke(
        [SystemMessage("You are a helpful assistant."), HumanMessage("Say hello to Ada.")]
    )
    text = str(answer.content)
    assert any(ch.isalpha() for ch in text)


def test_embedded_model_file_is_the_packaged_smollm2() -> None:
    assert embedded_model_path(Config()).name == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_missing_model_file_is_a_clear_error(tmp_path: object) -> None:
    with pytest.raises(ModelLoadError, match="not found"):
        make_chat_model(Config(llm=LLMConfig(model_path="/nonexistent/model.gguf")))


def test_an_answer_cut_at_the_token_limit_says_so_and_ends_at_a_whole_sentence() -> None:
    """The embedded model reports ``finish_reason="length"`` when it runs out of tokens, which is
    what lets ``think_text`` end a cut-off draft at its last whole sentence."""
    from kernel.text import drop_unfinished

    model = make_chat_model(Config(llm=LLMConfig(threads=1, max_tokens=48)), mode="talk")
    answer = model.invoke([HumanMessage("Tell me a long story about a dragon and a queen.")])
    assert answer.response_metadata.get("finish_reason") == "length"
    text = str(answer.content).strip()
    trimmed = drop_unfinished(text)
    assert trimmed == text or trimmed.rstrip("\"'”’»)").endswith((".", "!", "?", "…"))

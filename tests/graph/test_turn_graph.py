from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from graph.builder import TURN_NODES, build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.deps import Deps
from graph.session import run_turn
from nodes.respond import FALLBACK_REPLY
from state.instance import Instance


def scripted(replies: list[str]) -> Iterator[AIMessage]:
    return iter(AIMessage(r) for r in replies)


def deps_with(instance: Instance, replies: list[str]) -> Deps:
    model = GenericFakeChatModel(messages=scripted(replies))

    def model_for(mode: str) -> BaseChatModel:
        return model

    return Deps.for_instance(instance, model_for=model_for)


def test_turn_graph_has_its_nodes(instance: Instance) -> None:
    compiled = build_turn_graph(deps_with(instance, [])).compile()
    assert set(TURN_NODES) <= set(compiled.get_graph().nodes)


def test_second_turn_sees_the_first_through_the_checkpointer(
    instance: Instance, tmp_path: Path
) -> None:
    deps = deps_with(instance, ["Hello Ada.", "You are Ada."])
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        compiled = build_turn_graph(deps).compile(checkpointer=saver)
        first = run_turn(compiled, "I am Ada.")
        second = run_turn(compiled, "Who am I?")
    assert first.reply == "Hello Ada." and second.reply == "You are Ada."
    assert [x.user for x in second.history] == ["I am Ada.", "Who am I?"]
    assert second.llm_calls == 1


def test_turn_stores_external_and_kernel_memories(instance: Instance, tmp_path: Path) -> None:
    deps = deps_with(instance, ["Noted."])
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        run_turn(build_turn_graph(deps).compile(checkpointer=saver), "Remember the blue door.")
    authors = [(e.author, e.situation) for e in deps.store.read().entries]
    assert ("external", "chat") in authors and ("kernel", "chat") in authors


@pytest.mark.parametrize("junk", ["", "   ", "!!! ...", "\n\n"])
def test_unusable_model_output_falls_back_and_is_recorded(
    instance: Instance, tmp_path: Path, junk: str
) -> None:
    deps = deps_with(instance, [junk])
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        state = run_turn(build_turn_graph(deps).compile(checkpointer=saver), "hi")
    assert state.reply == FALLBACK_REPLY
    assert state.degraded and "unusable" in state.degraded[0]
    kernel = [e for e in deps.store.read().entries if e.author == "kernel"][-1]
    assert "degraded" in kernel.description

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel

from graph.builder import build_turn_graph
from graph.checkpoints import sqlite_saver
from graph.deps import Deps
from graph.session import run_turn
from state.instance import Instance
from state.turn import TurnState
from tests.scripted import ScriptedChatModel

TurnRunner = Callable[[str], TurnState]


def scripted_deps(instance: Instance, model: BaseChatModel) -> Deps:
    return Deps.for_instance(instance, model_for=lambda mode: model)


@pytest.fixture
def model() -> ScriptedChatModel:
    return ScriptedChatModel(
        replies=["I think the answer depends on what you need. Here is my view: start small."]
    )


@pytest.fixture
def deps(instance: Instance, model: ScriptedChatModel) -> Deps:
    return scripted_deps(instance, model)


@pytest.fixture
def turn(deps: Deps, tmp_path: Path) -> Iterator[TurnRunner]:
    with sqlite_saver(tmp_path / "cp.sqlite") as saver:
        compiled: Any = build_turn_graph(deps).compile(checkpointer=saver)
        yield lambda text: run_turn(compiled, text)

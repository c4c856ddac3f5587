"""A vector index torn by a crash (the soak's "Error finding id") never stops a turn.

The fault is injected at the Chroma collection the store really uses: its reads raise Chroma's
own ``InternalError`` until the index is rebuilt. The turn still answers from the ledger's
lexical side, says so in ``degraded``, and the flush after the reply rebuilds the index.
"""

from typing import Any

import pytest
from chromadb.errors import InternalError

from graph.deps import Deps
from state.instance import Instance
from tests.graph.conftest import TurnRunner


def tear(deps: Deps, monkeypatch: pytest.MonkeyPatch) -> None:
    collection: Any = deps.store._open_collection()

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise InternalError("Error executing plan: Internal error: Error finding id")

    monkeypatch.setattr(collection, "query", broken)
    monkeypatch.setattr(collection, "get", broken)


def test_a_torn_index_degrades_the_turn_and_is_rebuilt_after_the_reply(
    instance: Instance, deps: Deps, turn: TurnRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn("My sister Ana plays the cello in an orchestra.")
    deps.store.flush()
    tear(deps, monkeypatch)
    state = turn("What instrument does my sister play?")
    assert state.reply
    assert any("memory index unreadable" in d for d in state.degraded)
    assert deps.store.index_broken
    # the ledger's side still recalls (the turn's notes skip what the dialogue already shows)
    assert any("cello" in h.text for h in deps.store.search("my sister's cello", k=5))
    deps.store.flush()  # what lumen chat does after the reply: rebuilds from the ledger
    assert deps.store.index_broken == ""
    hits = deps.store.search("Which instrument is played by the user's sibling?", k=5)
    assert any("cello" in h.text and h.source in {"semantic", "both"} for h in hits)
    assert not any("memory index" in d for d in turn("Thanks!").degraded)

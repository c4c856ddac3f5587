"""Tier C inference on the real embedded model (SmolLM2-135M): the invariants hold regardless.

Whatever the tiny model says, the pass takes one constrained call and everything that reaches
Tier C is capped, cited and grounded. No particular fact is expected of it.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel

from graph.deps import Deps
from graph.inference import INFER_SITUATION, infer_claims
from kernel.memory import INFERRED_CONFIDENCE_CAP, valid_slot
from state import claims as infer
from state.instance import Instance

pytestmark = pytest.mark.model

STATEMENT = "My name is Priya and I live in Oslo."


class CallCounter(BaseCallbackHandler):
    """Counts the chat-model invocations that actually reach the backend."""

    def __init__(self) -> None:
        self.calls = 0

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self.calls += 1


def counted(deps: Deps, counter: CallCounter) -> Deps:
    real = deps.model_for

    def model_for(mode: str) -> BaseChatModel:
        # The same backend class with a callback, so the gateway still binds its grammar.
        return real(mode).model_copy(update={"callbacks": [counter]})

    deps.model_for = model_for
    return deps


def test_one_real_pass_stores_only_capped_cited_grounded_claims(instance: Instance) -> None:
    counter = CallCounter()
    deps = counted(Deps.for_instance(instance), counter)
    deps.store.add(
        STATEMENT, metadata={"author": "external", "situation": "chat"}, defer_index=True
    )
    [entry] = deps.store.flush()

    claims = infer_claims(deps, [entry])

    assert counter.calls == 1
    assert deps.store.tiers.claims() == sorted(claims, key=lambda c: c.created, reverse=True)
    for claim in claims:
        assert 0.0 < claim.confidence <= INFERRED_CONFIDENCE_CAP
        assert claim.provenance == (entry.id,)
        assert claim.entity_id == infer.CHAT_ENTITY
        assert valid_slot(claim.slot_key) and claim.slot_key.startswith("user.")
        assert infer.grounded(claim.value, claim.slot_key, STATEMENT), claim.value
        assert claim.model.startswith("embedded:")
    notes = [
        e for e in deps.store.recent(10, authors=("kernel",)) if e.situation == INFER_SITUATION
    ]
    assert len(notes) == 1
    assert not str(notes[0].meta["reason"]).startswith("model call failed"), notes[0].meta
    assert notes[0].meta["claims"] == [c.id for c in claims]

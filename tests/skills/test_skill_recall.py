"""recall: semantic search over the memory ledger with the packaged offline embedder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

RunSkill = Callable[..., Any]


def test_recall_returns_the_semantic_match(run_skill: RunSkill, instance: Path) -> None:
    from state.memory import MemoryStore

    store = MemoryStore(instance / "data" / "memory", index_path=instance / ".lumen" / "chroma")
    tea = store.add("The user drinks green tea every morning", metadata={"author": "external"})
    store.add("Paris is the capital of France", metadata={"author": "self"})
    store.add("The build failed because a dependency was missing", metadata={"author": "kernel"})

    result = run_skill(
        "recall", {"query": "which beverage does the user like?", "k": 2, "instance": str(instance)}
    )
    assert result.code == 0, result.output
    hits = result.output["hits"]
    assert len(hits) == 2
    assert hits[0]["id"] == tea
    assert hits[0]["text"] == "The user drinks green tea every morning"
    assert hits[0]["author"] == "external"
    assert set(hits[0]) == {"id", "text", "score", "author", "timestamp"}
    assert hits[0]["score"] > hits[1]["score"]


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({}, '"query"'),
        ({"query": "  "}, '"query"'),
        ({"query": "tea", "k": 0}, '"k"'),
        ({"query": "tea", "k": 51}, '"k"'),
        ({"query": "tea", "k": True}, '"k"'),
        ({"query": "x" * 2001}, "longer than"),
    ],
)
def test_recall_rejects_bad_input(
    run_skill: RunSkill, payload: dict[str, Any], fragment: str
) -> None:
    result = run_skill("recall", payload)
    assert result.code == 2
    assert fragment in result.output["error"]

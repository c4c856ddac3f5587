"""ask_user: format a question back for the user."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

RunSkill = Callable[..., Any]


def test_ask_user_golden(run_skill: RunSkill) -> None:
    result = run_skill("ask_user", {"question": "  Which   city do you\nmean? "})
    assert result.code == 0
    assert result.output == {"question": "Which city do you mean?", "awaiting_user": True}


def test_ask_user_keeps_options(run_skill: RunSkill) -> None:
    result = run_skill("ask_user", {"question": "Tea or coffee?", "options": ["tea", " coffee "]})
    assert result.output == {
        "question": "Tea or coffee?",
        "options": ["tea", "coffee"],
        "awaiting_user": True,
    }


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({}, "question"),
        ({"question": "   "}, "non-empty"),
        ({"question": "x" * 501}, "longer than 500"),
        ({"question": "ok?", "options": "yes"}, "list of strings"),
        ({"question": "ok?", "options": ["yes", ""]}, "must not be empty"),
        ({"question": "ok?", "options": [str(i) for i in range(11)]}, "at most 10"),
    ],
)
def test_ask_user_rejects_bad_input(
    run_skill: RunSkill, payload: dict[str, Any], fragment: str
) -> None:
    result = run_skill("ask_user", payload)
    assert result.code == 2
    assert fragment in result.output["error"]

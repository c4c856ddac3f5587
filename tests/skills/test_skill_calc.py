"""calc: safe arithmetic through ast, never eval."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

RunSkill = Callable[..., Any]


def test_calc_golden(run_skill: RunSkill) -> None:
    result = run_skill("calc", {"expression": " 2 * (3 + 4) ** 2 - 10 / 4 "})
    assert result.code == 0
    assert result.output == {"result": 95.5, "expression": "2 * (3 + 4) ** 2 - 10 / 4"}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("7 // 2", 3),
        ("7 % 3", 1),
        ("-3 + +2", -1),
        ("2 ** -1", 0.5),
        ("sqrt(16)", 4.0),
        ("round(pi, 2)", 3.14),
        ("max(1, 5, 2) - min(4, 3)", 2),
        ("abs(-2.5)", 2.5),
        ("log(e)", 1.0),
        ("log(8, 2)", 3.0),
        ("exp(0) + cos(0) + sin(0) + tan(0)", 2.0),
    ],
)
def test_calc_evaluates_supported_syntax(
    run_skill: RunSkill, expression: str, expected: float
) -> None:
    result = run_skill("calc", {"expression": expression})
    assert result.code == 0, result.output
    assert result.output["result"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"expression": "1 / 0"}, "division by zero"),
        ({"expression": "5 % 0"}, "division by zero"),
        ({"expression": "2 ** 100000"}, "exponent"),
        ({"expression": "9 ** 9 ** 9"}, "exponent"),
        ({"expression": "10 ** 300 * 10 ** 300"}, "too large"),
        ({"expression": "exp(1000)"}, "too large"),
        ({"expression": "1" * 201}, "longer than 200"),
        ({"expression": "__import__('os').system('true')"}, "unknown function"),
        ({"expression": "(1).__class__"}, "not allowed"),
        ({"expression": "x + 1"}, "unknown name"),
        ({"expression": "'a' * 3"}, "only numbers"),
        ({"expression": "2 ^ 3"}, "use '**'"),
        ({"expression": "sqrt(-1)"}, "math error"),
        ({"expression": "1 +"}, "not a valid expression"),
        ({"expression": "   "}, "non-empty"),
        ({"expression": 12}, "non-empty string"),
        ({}, "expression"),
    ],
)
def test_calc_rejects_bad_input(
    run_skill: RunSkill, payload: dict[str, Any], fragment: str
) -> None:
    result = run_skill("calc", payload)
    assert result.code == 2
    assert fragment in result.output["error"]

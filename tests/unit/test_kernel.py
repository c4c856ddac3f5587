import ast
from pathlib import Path

import pytest

from kernel import core as kernel


@pytest.mark.parametrize(
    ("x", "lo", "hi", "expected"),
    [
        (-0.1, 0, 1, 0.0),
        (0.0, 0, 1, 0.0),
        (0.5, 0, 1, 0.5),
        (1.0, 0, 1, 1.0),
        (1.1, 0, 1, 1.0),
        (float("nan"), 0, 1, 0.0),
        (5, 2, 3, 3),
    ],
)
def test_clamp_bounds(x: float, lo: float, hi: float, expected: float) -> None:
    assert kernel.clamp(x, lo, hi) == expected


def test_clamp_rejects_inverted_interval() -> None:
    with pytest.raises(ValueError):
        kernel.clamp(0.5, 1.0, 0.0)


def test_identity_hash_is_16_hex_chars_and_stable() -> None:
    h = kernel.identity_hash((0.8, 0.8, 0.5, 0.7, 0.6))
    assert len(h) == 16 and all(c in "0123456789abcdef" for c in h)
    assert h == kernel.identity_hash((0.8, 0.8, 0.5, 0.7, 0.6000000001))
    assert h != kernel.identity_hash((0.8, 0.8, 0.5, 0.7, 0.61))


@pytest.mark.parametrize(
    ("weight", "bonus"), [(0.7, 0.03), (0.5, 0.0), (0.4, -0.015), (0.95, 0.0675)]
)
def test_archetype_bonus_matches_psyche_spec(weight: float, bonus: float) -> None:
    assert kernel.archetype_bonus(weight) == pytest.approx(bonus)


@pytest.mark.parametrize(
    ("requested", "expected", "out_of_band"),
    [(0.1, 0.4, True), (0.4, 0.4, False), (0.7, 0.7, False), (0.9, 0.9, False), (1.5, 0.9, True)],
)
def test_clamp_temperature_reports_out_of_band(
    requested: float, expected: float, out_of_band: bool
) -> None:
    assert kernel.clamp_temperature(requested, 0.4, 0.9) == (expected, out_of_band)


def test_kernel_imports_nothing_heavy() -> None:
    tree = ast.parse(Path(kernel.__file__).read_text())
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [node])  # type: ignore[attr-defined]
    }
    assert imported <= {"__future__", "hashlib", "math", "collections"}

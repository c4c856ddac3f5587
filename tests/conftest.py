"""Shared fixtures: a fresh instance per test, one model thread, no network."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from state.instance import Instance, init_instance

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(autouse=True)
def _test_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LUMEN_LLM_THREADS", "1")
    monkeypatch.setenv("LUMEN_HOME", str(tmp_path / "home"))
    for var in (
        "LUMEN_LLM_PROVIDER",
        "LUMEN_LLM_MODEL_PATH",
        "LUMEN_LLM_BASE_URL",
        "LUMEN_CHECKPOINTS",
        "LUMEN_POSTGRES_URL",
        "LUMEN_CHROMA_URL",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[Instance]:
    """Return a freshly initialised instance at ``$LUMEN_HOME``."""
    yield init_instance(tmp_path / "home")

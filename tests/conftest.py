"""Shared fixtures: a fresh instance per test, one model thread, no network.

``LUMEN_TEST_DATE=2028-02-29T23:50`` runs the whole suite as if the clock read that moment
(time-machine moves ``datetime.now``, ``date.today`` and ``time.time`` in this process, ticking
from there): no test may depend on the date it runs on, and this is how to check it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from state.instance import Instance, init_instance

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def pytest_configure(config: pytest.Config) -> None:
    travel_to = os.environ.get("LUMEN_TEST_DATE")
    if travel_to:
        import time_machine

        traveller = time_machine.travel(datetime.fromisoformat(travel_to), tick=True)
        traveller.start()
        config.add_cleanup(traveller.stop)


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

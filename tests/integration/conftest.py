"""A real OpenAI-compatible server for the suite: llama.cpp's, on the embedded SmolLM2 GGUF.

``llama_server`` (session-scoped, opt-in) starts ``python -m llama_cpp.server`` on a free loopback
port, waits until ``GET /v1/models`` answers and yields the base URL (``http://127.0.0.1:P/v1``);
the server is terminated when the session ends. Loopback only: pytest-socket allows nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llama_server import ServerError, serve


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Serve the embedded GGUF over the OpenAI API; yield its base URL (``…/v1``)."""
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    try:
        with serve(log) as base:
            yield base
    except ServerError as exc:
        pytest.fail(str(exc))

"""A real OpenAI-compatible server for the suite: llama.cpp's, on the embedded SmolLM2 GGUF.

``llama_server`` (session-scoped, opt-in) starts ``python -m llama_cpp.server`` on a free loopback
port, waits until ``GET /v1/models`` answers and yields the base URL (``http://127.0.0.1:P/v1``);
the server is terminated when the session ends. Loopback only: pytest-socket allows nothing else.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.llm import embedded_model_path
from state.config import Config

SERVER_START_TIMEOUT_S = 60.0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status) == 200
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Serve the embedded GGUF over the OpenAI API; yield its base URL (``…/v1``)."""
    model = embedded_model_path(Config())
    port = _free_port()
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--n_threads",
        "1",
    ]
    base = f"http://127.0.0.1:{port}/v1"
    started = time.monotonic()
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        while not _answers(f"{base}/models"):
            if process.poll() is not None:
                pytest.fail(
                    f"llama.cpp server exited with code {process.returncode} before answering;"
                    f" log tail:\n{_tail(log)}"
                )
            if time.monotonic() - started > SERVER_START_TIMEOUT_S:
                pytest.fail(
                    f"llama.cpp server did not answer GET {base}/models within "
                    f"{SERVER_START_TIMEOUT_S:.0f} s; log tail:\n{_tail(log)}"
                )
            time.sleep(0.1)
        print(f"llama.cpp server ready at {base} in {time.monotonic() - started:.2f} s")  # noqa: T201
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

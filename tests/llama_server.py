"""Start llama.cpp's OpenAI-compatible server on the embedded GGUF (tests and benchmarks).

``serve(log)`` runs ``python -m llama_cpp.server`` on a free loopback port, waits until
``GET /v1/models`` answers and yields the base URL (``http://127.0.0.1:P/v1``); the server is
terminated on exit. ``ServerError`` says why it did not come up, with the log's tail.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from graph.llm import embedded_model_path
from state.config import Config

START_TIMEOUT_S = 60.0


class ServerError(RuntimeError):
    """The server exited or did not answer in time."""


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


@contextmanager
def serve(log: Path, *, threads: int = 1) -> Iterator[str]:
    """Serve the embedded GGUF over the OpenAI API; yield its base URL (``…/v1``)."""
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(embedded_model_path(Config())),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--n_threads",
        str(threads),
    ]
    base = f"http://127.0.0.1:{port}/v1"
    started = time.monotonic()
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        while not _answers(f"{base}/models"):
            if process.poll() is not None:
                raise ServerError(
                    f"llama.cpp server exited with code {process.returncode} before answering;"
                    f" log tail:\n{_tail(log)}"
                )
            if time.monotonic() - started > START_TIMEOUT_S:
                raise ServerError(
                    f"llama.cpp server did not answer GET {base}/models within "
                    f"{START_TIMEOUT_S:.0f} s; log tail:\n{_tail(log)}"
                )
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

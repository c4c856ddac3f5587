"""Serves the ``turn`` graph with ``langgraph dev`` and drives one turn through ``langgraph-sdk``.

The server runs as a subprocess on a free loopback port. Its working directory is a tmp
folder, not the repo: the in-memory runtime pickles its threads and checkpoints into
``./.langgraph_api`` under the cwd, and graph paths in ``langgraph.json`` are resolved
against the cwd. So the test serves a copy of the repo's ``langgraph.json`` whose relative
paths are made absolute (same graphs, same dependencies).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
READY_TIMEOUT_S = 120.0
READY_POLL_S = 0.5
STOP_TIMEOUT_S = 15.0
REQUEST_TIMEOUT_S = 60.0
LOG_TAIL_CHARS = 4000

SERVER_ENV = {
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LUMEN_LLM_THREADS": "1",
}


@dataclass
class DevServer:
    """A running ``langgraph dev`` process."""

    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    def log_tail(self) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError as exc:
            return f"<no log: {exc}>"
        return text[-LOG_TAIL_CHARS:]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
    return port


def _absolute(ref: str, base: Path) -> str:
    """Make a ``./path.py:var`` (or ``./dir``) reference absolute; leave module refs alone."""
    path, sep, attr = ref.partition(":")
    if path.startswith(".") or "/" in path or path.endswith(".py"):
        path = str((base / path).resolve())
    return f"{path}{sep}{attr}"


def _served_config(dest: Path) -> Path:
    """Write the repo's ``langgraph.json`` with paths made absolute, so cwd can be a tmp dir."""
    config: dict[str, Any] = json.loads((REPO / "langgraph.json").read_text())
    config["dependencies"] = [_absolute(dep, REPO) for dep in config.get("dependencies", [])]
    config["graphs"] = {name: _absolute(ref, REPO) for name, ref in config["graphs"].items()}
    if isinstance(config.get("env"), str):
        config["env"] = _absolute(config["env"], REPO)
    dest.write_text(json.dumps(config, indent=2))
    return dest


def _get_ok(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{url}/ok", timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group, then SIGKILL whatever of it lingers."""
    try:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                pass
        os.killpg(proc.pid, signal.SIGKILL)  # stragglers in the group, if any
    except ProcessLookupError:
        pass
    proc.wait(timeout=STOP_TIMEOUT_S)


@pytest.fixture
def dev_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DevServer]:
    pytest.importorskip("langgraph_cli", reason="langgraph-cli[inmem] is a dev dependency")
    pytest.importorskip("langgraph_api", reason="langgraph-cli[inmem] is a dev dependency")

    # The SDK's httpx client honours proxy variables; keep loopback traffic direct.
    no_proxy = ",".join(filter(None, [os.environ.get("NO_PROXY"), HOST]))
    monkeypatch.setenv("NO_PROXY", no_proxy)
    monkeypatch.setenv("no_proxy", no_proxy)

    workdir = tmp_path / "server"
    workdir.mkdir()
    config = _served_config(workdir / "langgraph.json")
    log = tmp_path / "langgraph-dev.log"
    port = _free_port()
    url = f"http://{HOST}:{port}"

    env = os.environ.copy()
    env.update(SERVER_ENV)
    env["LUMEN_HOME"] = str(tmp_path / "home")
    for var in ("LUMEN_LLM_PROVIDER", "LUMEN_LLM_MODEL_PATH", "LUMEN_LLM_BASE_URL"):
        env.pop(var, None)

    cmd = [
        sys.executable, "-m", "langgraph_cli", "dev",
        "--host", HOST, "--port", str(port),
        "--no-browser", "--no-reload",
        "--config", str(config),
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = DevServer(proc=proc, url=url, log=log)
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        for _ in range(int(READY_TIMEOUT_S / READY_POLL_S)):
            if proc.poll() is not None:
                pytest.fail(
                    f"langgraph dev exited with {proc.returncode} before it was ready:\n"
                    f"{server.log_tail()}"
                )
            if _get_ok(url):
                break
            if time.monotonic() > deadline:
                pytest.fail(
                    f"langgraph dev not ready at {url} after {READY_TIMEOUT_S:.0f}s:\n"
                    f"{server.log_tail()}"
                )
            time.sleep(READY_POLL_S)
        else:
            pytest.fail(f"langgraph dev not ready at {url}:\n{server.log_tail()}")
        yield server
    finally:
        _stop(proc)


def _values(snapshot: Any) -> dict[str, Any]:
    values = snapshot["values"]
    assert isinstance(values, dict), values
    return values


def test_dev_server_runs_a_turn_and_keeps_thread_history(dev_server: DevServer) -> None:
    from langgraph_sdk import get_sync_client

    with get_sync_client(url=dev_server.url, api_key=None, timeout=REQUEST_TIMEOUT_S) as client:
        assistants = client.assistants.search(graph_id="turn", limit=10)
        assert [a["graph_id"] for a in assistants] == ["turn"], dev_server.log_tail()

        thread = client.threads.create()
        thread_id = thread["thread_id"]

        # labelled as the user's own words: unlabelled API input is untrusted and screened
        final = client.runs.wait(
            thread_id, "turn", input={"user_text": "Hello there", "source": "user"}
        )
        assert isinstance(final, dict), final
        assert final.get("user_text") == "Hello there"
        reply = final.get("reply")
        assert isinstance(reply, str) and reply.strip(), (final, dev_server.log_tail())

        state = client.threads.get_state(thread_id)
        assert state["next"] == []
        assert _values(state)["reply"] == reply
        assert state["checkpoint"]["thread_id"] == thread_id

        history = client.threads.get_history(thread_id, limit=50)
        assert len(history) >= 2
        latest, first = history[0], history[-1]
        assert latest["checkpoint"]["checkpoint_id"] == state["checkpoint"]["checkpoint_id"]
        assert _values(latest)["reply"] == reply
        assert (first["metadata"] or {}).get("source") == "input"
        assert not _values(first).get("reply")

        assert client.threads.get(thread_id)["status"] == "idle"

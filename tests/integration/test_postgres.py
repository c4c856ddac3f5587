"""Scale-out backends against real local servers: PostgreSQL checkpoints and a Chroma server.

Each server is started here (PostgreSQL as the ``postgres`` user when we are root, since it
refuses to run as root) in a temp dir on a free 127.0.0.1 port, and stopped afterwards. Missing
binaries or a server that does not start skip the test with the reason.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.builder import build_turn_graph
from graph.checkpoints import open_checkpointer
from graph.deps import Deps
from graph.prune import prune_postgres
from graph.session import run_turn
from state.instance import Instance
from tests.scripted import ScriptedChatModel

SERVER_USER = "postgres"
START_TIMEOUT_S = 30


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _postgres_bindir() -> Path | None:
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0,
    )
    if versions:
        return versions[-1].parent
    found = shutil.which("initdb")
    return Path(found).resolve().parent if found else None


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", SERVER_USER, "--", *argv]


def _run(argv: list[str]) -> None:
    done = subprocess.run(
        _as_server_user(argv), capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines() or ["no output"]
        raise RuntimeError(f"{Path(argv[0]).name} failed: {lines[-1]}")


def _server_user_ok() -> str | None:
    if os.geteuid() != 0:
        return None
    if shutil.which("runuser") is None:
        return "running as root without runuser"
    try:
        import pwd

        pwd.getpwnam(SERVER_USER)
    except KeyError:
        return f"running as root and there is no {SERVER_USER!r} user"
    return None


@pytest.fixture(scope="module")
def postgres_server() -> Iterator[str]:
    """Start PostgreSQL for this module; yield a URL to its ``postgres`` database."""
    bindir = _postgres_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) not found")
    if reason := _server_user_ok():
        pytest.skip(f"cannot start PostgreSQL: {reason}")
    root = Path(tempfile.mkdtemp(prefix="lumen-pg-"))
    data, port, started = root / "data", _free_port(), False
    try:
        if os.geteuid() == 0:
            shutil.chown(root, user=SERVER_USER)
        _run([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"])
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off"
        pg_ctl = [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "log")]
        _run([*pg_ctl, "-w", "-t", str(START_TIMEOUT_S), "-o", options, "start"])
        started = True
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot start PostgreSQL: {exc}")
    finally:
        if started:
            _run([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"])
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """Create a fresh database for one test and return its URL."""
    import psycopg

    name = f"lumen_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return postgres_server.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture
def postgres_deps(instance: Instance, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> Deps:
    monkeypatch.setenv("LUMEN_CHECKPOINTS", "postgres")
    monkeypatch.setenv("LUMEN_POSTGRES_URL", postgres_url)
    model = ScriptedChatModel(replies=["Postgres keeps my checkpoints now."])
    deps = Deps.for_instance(instance, model_for=lambda _mode: model)
    assert deps.config.checkpoints.backend == "postgres"
    return deps


def test_turn_state_round_trips_through_postgres(postgres_deps: Deps) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    main = {"configurable": {"thread_id": "main"}}
    with open_checkpointer(postgres_deps.instance, postgres_deps.config) as saver:
        assert isinstance(saver, PostgresSaver)
        graph = build_turn_graph(postgres_deps).compile(checkpointer=saver)
        first = run_turn(graph, "Hello, where do you keep your state?")
    assert first.reply
    assert not postgres_deps.instance.checkpoint_db.exists()
    with open_checkpointer(postgres_deps.instance, postgres_deps.config) as saver:
        graph = build_turn_graph(postgres_deps).compile(checkpointer=saver)
        assert graph.get_state(main).values["reply"] == first.reply
        second = run_turn(graph, "And what did I just ask?")
        assert [e.user for e in second.history] == [
            "Hello, where do you keep your state?",
            "And what did I just ask?",
        ]
        assert len(list(graph.get_state_history(main))) == 2


def _count(url: str, sql: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(sql).fetchone()
    return int(row[0]) if row else 0


def test_prune_on_postgres_keeps_the_newest_and_drops_unreferenced_blobs(
    postgres_deps: Deps, postgres_url: str
) -> None:
    main = {"configurable": {"thread_id": "main"}}
    with open_checkpointer(postgres_deps.instance, postgres_deps.config) as saver:
        graph: Any = build_turn_graph(postgres_deps).compile(checkpointer=saver)
        for text in ("Hello there", "What is 6 * 7?", "Tell me about tea"):
            run_turn(graph, text, durability="sync")
        reply = graph.get_state(main).values["reply"]
        roots = [h.config["configurable"]["checkpoint_id"] for h in graph.get_state_history(main)]
    blobs_before = _count(postgres_url, "SELECT count(*) FROM checkpoint_blobs")

    report = prune_postgres(postgres_url, keep=2)

    assert report.checkpoints_removed > 0 and report.writes_removed > 0
    assert 0 < report.blobs_removed < blobs_before
    assert _count(postgres_url, "SELECT count(*) FROM checkpoint_blobs") == (
        blobs_before - report.blobs_removed
    )
    kept_calls = _count(
        postgres_url,
        "SELECT count(*) FROM checkpoints WHERE checkpoint_ns <> '' "
        f"AND metadata -> 'parents' ->> '' IN ('{roots[0]}', '{roots[1]}')",
    )
    assert kept_calls > 0
    assert _count(postgres_url, "SELECT count(*) FROM checkpoints WHERE checkpoint_ns <> ''") == (
        kept_calls
    )
    with open_checkpointer(postgres_deps.instance, postgres_deps.config) as saver:
        graph = build_turn_graph(postgres_deps).compile(checkpointer=saver)
        assert graph.get_state(main).values["reply"] == reply
        history = [h.config["configurable"]["checkpoint_id"] for h in graph.get_state_history(main)]
        assert history == roots[:2]
        assert run_turn(graph, "Still there?").history[-2].user == "Tell me about tea"


# --------------------------------------------------------------------------- Chroma server


@pytest.fixture(scope="module")
def chroma_url() -> Iterator[str]:
    """Start ``chroma run`` (from the installed chromadb) on a free port; yield its URL."""
    chroma = Path(sys.executable).parent / "chroma"  # the venv's own console script
    executable = str(chroma) if chroma.exists() else shutil.which("chroma")
    if executable is None:
        pytest.skip("the `chroma` command of the chromadb package is not installed")
    root = Path(tempfile.mkdtemp(prefix="lumen-chroma-"))
    port = _free_port()
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"}
    argv = [executable, "run", "--path", str(root / "data"), "--host", "127.0.0.1"]
    with (root / "log").open("w") as log:
        server = subprocess.Popen(
            [*argv, "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        if not _wait_for_port(port, server):
            pytest.skip("the Chroma server did not start: " + _tail(root / "log"))
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


def _wait_for_port(port: int, server: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and server.poll() is None:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.2)
    return False


def _tail(log: Path) -> str:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def test_memory_store_round_trips_through_a_chroma_server(tmp_path: Path, chroma_url: str) -> None:
    import chromadb
    from chromadb.config import Settings

    from state.memory import COLLECTION, MemoryStore

    store = MemoryStore(tmp_path / "mem", chroma_url=chroma_url)
    target = store.add("My sister moved to Lisbon in Portugal last spring.")
    for text in ("Bought oat milk at the corner shop.", "The bus was late again."):
        store.add(text)
    assert store.vector_search("Which city does my sister live in now?", k=1)[0].id == target
    assert store.search("Which city does my sister live in now?", k=1, recent=0)[0].id == target
    assert not (tmp_path / "mem" / ".index").exists()
    host, port = chroma_url.removeprefix("http://").split(":")
    server = chromadb.HttpClient(
        host=host, port=int(port), settings=Settings(anonymized_telemetry=False)
    )
    assert server.get_collection(COLLECTION).count() == 3
    assert MemoryStore(tmp_path / "mem", chroma_url=chroma_url).index_count() == 3

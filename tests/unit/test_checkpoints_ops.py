"""`lumen prune`, the checkpoint backends' config and `open_checkpointer` (no server needed)."""

from __future__ import annotations

import json
import socket
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from cli.ops import prune
from graph.builder import build_turn_graph
from graph.checkpoints import open_checkpointer, redact_url, sqlite_saver
from graph.deps import Deps
from graph.prune import CheckpointRow, plan_prune, prune_sqlite
from graph.session import run_turn
from state.config import load_config
from state.errors import DataFileError, LumenError
from state.instance import Instance
from tests.scripted import ScriptedChatModel

Rows = list[tuple[str, str, str, str | None, str]]


def _deps(instance: Instance) -> Deps:
    model = ScriptedChatModel(replies=["Sounds good. Start small."])
    return Deps.for_instance(instance, model_for=lambda _mode: model)


def _rows(db: Path) -> Rows:
    with closing(sqlite3.connect(db)) as conn:
        return list(
            conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
                "CAST(metadata AS TEXT) FROM checkpoints ORDER BY checkpoint_id"
            )
        )


def _writes(db: Path) -> set[tuple[str, str, str, str, int]]:
    with closing(sqlite3.connect(db)) as conn:
        return set(
            conn.execute("SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx FROM writes")
        )


def _roots(rows: Rows, thread: str) -> list[str]:
    return [cid for (t, ns, cid, _, _) in rows if t == thread and ns == ""]


def _root_of(metadata: str) -> str:
    return str(json.loads(metadata)["parents"][""])


@pytest.fixture
def filled(instance: Instance) -> Iterator[tuple[Any, Path]]:
    """Three per-step turns on ``main`` (subgraph calls, writes) and three on ``other``."""
    deps = _deps(instance)
    with sqlite_saver(instance.checkpoint_db) as saver:
        graph = build_turn_graph(deps).compile(checkpointer=saver)
        for text in ("Hello there", "What is 6 * 7?", "Tell me about tea"):
            run_turn(graph, text, durability="sync")
        for text in ("one", "two", "three"):
            run_turn(graph, text, thread="other")
        yield graph, instance.checkpoint_db


def test_prune_keeps_the_newest_n_per_thread_with_their_subgraph_calls(
    filled: tuple[Any, Path],
) -> None:
    graph, db = filled
    main = {"configurable": {"thread_id": "main"}}
    reply_before = graph.get_state(main).values["reply"]
    before = _rows(db)
    writes_before = _writes(db)
    kept_roots = set(_roots(before, "main")[-2:])
    calls = {(ns, _root_of(meta)) for (t, ns, _, _, meta) in before if t == "main" and ns}
    assert any(root in kept_roots for _, root in calls), "fixture must have a kept call"
    assert any(root not in kept_roots for _, root in calls), "fixture must have a dropped call"

    report = prune_sqlite(db, keep=2)

    after = _rows(db)
    assert set(_roots(after, "main")) == kept_roots
    assert _roots(after, "other") == _roots(before, "other")[-2:]
    for ns, root in calls:
        expected = [r[2] for r in before if r[1] == ns] if root in kept_roots else []
        assert [r[2] for r in after if r[1] == ns] == expected, ns
    kept_keys = {(t, ns, cid) for (t, ns, cid, _, _) in after}
    assert {w for w in writes_before if w[:3] in kept_keys} == _writes(db)
    assert report.checkpoints_removed == len(before) - len(after) > 0
    assert report.writes_removed == len(writes_before) - len(_writes(db)) > 0
    assert report.threads == {
        "main": sum(r[0] == "main" for r in before) - sum(r[0] == "main" for r in after),
        "other": 1,
    }
    assert report.integrity == "ok" and report.size_after < report.size_before
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert graph.get_state(main).values["reply"] == reply_before
    history = list(graph.get_state_history(main))
    assert [h.config["configurable"]["checkpoint_id"] for h in history] == sorted(
        kept_roots, reverse=True
    )
    assert history[-1].parent_config is None  # the dropped parent is no longer referenced
    next_turn = run_turn(graph, "And now?")  # the thread goes on from the kept state
    assert [e.user for e in next_turn.history[-2:]] == ["Tell me about tea", "And now?"]


def test_prune_one_thread_leaves_the_others_alone(filled: tuple[Any, Path]) -> None:
    _, db = filled
    before = _rows(db)
    report = prune_sqlite(db, keep=1, thread="other")
    after = _rows(db)
    assert report.threads == {"other": 2}
    assert _roots(after, "other") == _roots(before, "other")[-1:]
    assert [r for r in after if r[0] == "main"] == [r for r in before if r[0] == "main"]


def test_prune_refuses_bad_keep_unknown_thread_and_missing_db(
    filled: tuple[Any, Path], tmp_path: Path
) -> None:
    _, db = filled
    before = _rows(db)
    with pytest.raises(LumenError, match="--keep must be at least 1"):
        prune_sqlite(db, keep=0)
    with pytest.raises(LumenError, match="no checkpoints for thread 'nope'"):
        prune_sqlite(db, keep=1, thread="nope")
    with pytest.raises(LumenError, match="no checkpoint database"):
        prune_sqlite(tmp_path / "missing.sqlite", keep=1)
    assert _rows(db) == before


def test_prune_command_reports_json_and_rejects_zero(filled: tuple[Any, Path]) -> None:
    _, db = filled
    app = typer.Typer()
    app.command()(prune)
    app.command("noop")(lambda: None)  # two commands, so "prune" is a sub-command name
    runner = CliRunner()
    bad = runner.invoke(app, ["prune", "--keep", "0"])
    assert bad.exit_code != 0 and isinstance(bad.exception, LumenError)
    result = runner.invoke(app, ["prune", "--keep", "1", "--thread", "main", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["backend"] == "sqlite" and report["keep"] == 1
    assert report["checkpoints_removed"] > 0 and list(report["threads"]) == ["main"]
    assert report["size_after"] < report["size_before"]
    assert len(_roots(_rows(db), "main")) == 1


def _row(ns: str, cid: str, root: str | None = None, **meta: Any) -> CheckpointRow:
    metadata = {"parents": {"": root} if root else {}, **meta}
    return CheckpointRow.from_columns("t", ns, cid, None, json.dumps(metadata).encode())


def test_plan_ties_subgraph_calls_to_the_root_checkpoint_that_covers_them() -> None:
    rows = [
        _row("", "r1"),
        _row("", "r3"),
        _row("", "r5"),
        _row("a:old", "c1", root="r1"),  # root saved, dropped
        _row("a:exit", "c2", root="r2"),  # root never saved (exit): covered by r3, kept
        _row("a:live", "c6", root="r6"),  # newer than every saved root: run in progress
        _row("own", "o1"),  # a checkpointer=True subgraph: its newest N
        _row("own", "o2"),
        _row("own", "o3"),
    ]
    plan = plan_prune(rows, keep=2)
    assert sorted(r.checkpoint_id for r in plan.delete) == ["c1", "o1", "r1"]
    assert plan.removed_by_thread == {"t": 3}


def test_plan_clears_the_parent_of_the_oldest_kept_checkpoint() -> None:
    rows = [
        CheckpointRow("t", "", "r1", None, None),
        CheckpointRow("t", "", "r2", "r1", None),
        CheckpointRow("t", "", "r3", "r2", None),
    ]
    plan = plan_prune(rows, keep=2)
    assert [r.checkpoint_id for r in plan.delete] == ["r1"]
    assert plan.orphaned == [("t", "", "r2")]


def test_plan_refuses_delta_channel_threads_and_bad_keep() -> None:
    with pytest.raises(LumenError, match="DeltaChannel: t"):
        plan_prune([_row("", "r1", counters_since_delta_snapshot={"x": 1})], keep=1)
    with pytest.raises(LumenError, match="at least 1"):
        plan_prune([_row("", "r1")], keep=0)


# --------------------------------------------------------------------------- config, backends


def test_scale_out_settings_come_from_the_environment(tmp_path: Path) -> None:
    config = load_config(
        tmp_path / "missing.toml",
        env={
            "LUMEN_CHECKPOINTS": "postgres",
            "LUMEN_POSTGRES_URL": "postgresql://u@127.0.0.1:5/db",
            "LUMEN_CHROMA_URL": "http://127.0.0.1:8000",
        },
    )
    assert config.checkpoints.backend == "postgres"
    assert config.checkpoints.postgres_url == "postgresql://u@127.0.0.1:5/db"
    assert config.memory.chroma_url == "http://127.0.0.1:8000"
    assert load_config(tmp_path / "missing.toml", env={}).checkpoints.backend == "sqlite"


def test_unknown_checkpoint_backend_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[checkpoints]\nbackend = "mysql"\n')
    with pytest.raises(DataFileError, match=r"checkpoints\.backend"):
        load_config(path, env={})


def test_open_checkpointer_defaults_to_sqlite_in_the_instance(instance: Instance) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    with open_checkpointer(instance, load_config(instance.config_file, env={})) as saver:
        assert isinstance(saver, SqliteSaver)
        saver.setup()
    assert instance.checkpoint_db.exists()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_postgres_backend_errors_are_one_clear_line(instance: Instance) -> None:
    config = load_config(instance.config_file, env={"LUMEN_CHECKPOINTS": "postgres"})
    with (
        pytest.raises(LumenError, match="LUMEN_POSTGRES_URL"),
        open_checkpointer(instance, config),
    ):
        pass
    url = f"postgresql://lumen:s3cret@127.0.0.1:{_closed_port()}/lumen"
    config = load_config(
        instance.config_file, env={"LUMEN_CHECKPOINTS": "postgres", "LUMEN_POSTGRES_URL": url}
    )
    with pytest.raises(LumenError) as caught, open_checkpointer(instance, config):
        pass
    message = str(caught.value)
    assert message.startswith("cannot connect to PostgreSQL at postgresql://lumen:***@127.0.0.1")
    assert "s3cret" not in message and "\n" not in message


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:pw@h:5432/db", "postgresql://u:***@h:5432/db"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("host=h user=u password=pw dbname=db", "host=h user=u password=*** dbname=db"),
    ],
)
def test_redact_url_hides_passwords(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_memory_store_reports_an_unreachable_chroma_server(tmp_path: Path) -> None:
    from state.memory import MemoryStore

    store = MemoryStore(tmp_path / "mem", chroma_url=f"http://127.0.0.1:{_closed_port()}")
    with pytest.raises(LumenError, match=r"cannot reach the Chroma server at http://127\.0\.0\.1"):
        store.index_count()
    assert not (tmp_path / "mem" / ".index").exists()

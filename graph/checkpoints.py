"""The checkpointers (SQLite or PostgreSQL), with a strict allowlist of the types checkpoints hold.

LangGraph's default serializer revives any module's class from a checkpoint (with a warning);
Lumen names exactly its own state types, so a tampered checkpoint cannot make it import anything
else. ``open_checkpointer`` picks the backend from ``[checkpoints]`` in the instance config:
``sqlite`` (``.lumen/checkpoints.sqlite``, the default) or ``postgres`` (``postgres_url``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from state.errors import LumenError

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from langgraph.checkpoint.sqlite import SqliteSaver
    from psycopg import Connection
    from psycopg.rows import DictRow

    from state.config import Config
    from state.instance import Instance

STATE_MODULES = (
    "state.turn",
    "state.self_state",
    "state.cycle",
    "state.records",
    "state.snapshot",
    "kernel.patterns",
    "kernel.shadow",
)
POSTGRES_CONNECT_TIMEOUT_S = 5


def allowed_state_types() -> list[tuple[str, str]]:
    """Return (module, class) for every pydantic model defined in Lumen's state modules."""
    import importlib

    from pydantic import BaseModel

    allowed = []
    for module_name in STATE_MODULES:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseModel)
                and value.__module__ == module_name
            ):
                allowed.append((module_name, name))
    return sorted(allowed)


def strict_serde() -> JsonPlusSerializer:
    """Return the serializer both backends use: it only revives Lumen's own state types."""
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer(allowed_msgpack_modules=allowed_state_types())


@contextmanager
def open_checkpointer(instance: Instance, config: Config) -> Iterator[BaseCheckpointSaver[str]]:
    """Yield the checkpointer ``[checkpoints] backend`` names, closing it afterwards."""
    if config.checkpoints.backend == "postgres":
        with postgres_saver(config.checkpoints.postgres_url) as saver:
            yield saver
    else:
        with sqlite_saver(instance.checkpoint_db) as saver:
            yield saver


@contextmanager
def sqlite_saver(db: Path) -> Iterator[SqliteSaver]:
    """Yield a ``SqliteSaver`` on ``db`` that only revives Lumen's own state types."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(db), check_same_thread=False)
    try:
        yield SqliteSaver(conn, serde=strict_serde())
    finally:
        conn.close()


@contextmanager
def postgres_saver(url: str) -> Iterator[PostgresSaver]:
    """Yield a set-up ``PostgresSaver`` on ``url`` with the strict serializer.

    ``setup()`` creates or migrates LangGraph's tables (idempotent). A missing URL, a bad one or
    an unreachable server is a ``LumenError`` naming the server without its password.
    """
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    with postgres_connection(url) as conn:
        saver = PostgresSaver(conn, serde=strict_serde())
        try:
            saver.setup()
        except psycopg.Error as exc:
            raise LumenError(
                f"PostgreSQL at {redact_url(url)}: cannot set up the checkpoint tables: "
                f"{_first_line(exc, url)}"
            ) from None
        yield saver


@contextmanager
def postgres_connection(url: str) -> Iterator[Connection[DictRow]]:
    """Yield an autocommit connection with dict rows (what ``PostgresSaver`` expects)."""
    import psycopg
    from psycopg.rows import dict_row

    if not url.strip():
        raise LumenError(
            'checkpoints backend is "postgres" but no URL is set: '
            "set [checkpoints] postgres_url or LUMEN_POSTGRES_URL"
        )
    try:
        conn = psycopg.Connection.connect(
            url,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            connect_timeout=POSTGRES_CONNECT_TIMEOUT_S,
        )
    except psycopg.Error as exc:
        raise LumenError(
            f"cannot connect to PostgreSQL at {redact_url(url)}: {_first_line(exc, url)}"
        ) from None
    with conn:
        yield conn


def redact_url(url: str) -> str:
    """Return ``url`` with any password replaced by ``***`` (for messages and reports)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<unparsable URL>"
    if not parts.scheme:  # a conninfo string: key=value pairs
        return " ".join(
            "password=***" if pair.startswith("password=") else pair for pair in url.split()
        )
    if password is None:
        return url
    netloc = parts.netloc.replace(f":{password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def _first_line(exc: BaseException, url: str) -> str:
    """Return the first non-empty line of an error, without the URL's password."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    message = lines[0] if lines else type(exc).__name__
    password = _password(url)
    return message.replace(password, "***") if password else message


def _password(url: str) -> str | None:
    try:
        return urlsplit(url).password
    except ValueError:
        return None

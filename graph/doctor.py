"""``lumen doctor``: checks that the instance, ledger, model, Chroma and checkpoints are usable."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from state.errors import LumenError
from state.instance import Instance


@dataclass
class Check:
    """One doctor check."""

    name: str
    ok: bool
    detail: str
    warning: bool = False
    """A finding that needs no repair (the doctor still exits 0), e.g. a torn line kept aside."""


def _check(name: str, probe: Callable[[], str]) -> Check:
    try:
        return Check(name, True, probe())
    except LumenError as exc:
        return Check(name, False, str(exc))
    except Exception as exc:  # any failure of a probe is a finding, not a crash
        return Check(
            name, False, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        )


def run_checks(instance: Instance) -> list[Check]:
    """Run every check; later checks still run when earlier ones fail."""
    if not instance.exists():
        return [
            Check("instance", False, f"no Lumen instance at {instance.root} (run 'lumen init')")
        ]

    def files() -> str:
        from state.files import load_goals, load_values

        load_values(instance.values_file)
        goals = load_goals(instance.goals_dir)
        instance.load_psyche()
        instance.load_self()
        if not instance.soul_file.read_text(encoding="utf-8").strip():
            raise LumenError(f"{instance.soul_file}: empty")
        return f"soul, values, {len(goals)} goals, psyche and self are valid"

    def ledger() -> str:
        from state.journal import MemoryJournal, verify_digests

        report = MemoryJournal(instance.memory_dir).read()
        tampered = verify_digests(report.entries)
        if tampered:
            raise LumenError(
                f"{len(tampered)} memory entries were edited after writing: {tampered[0]}"
            )
        if report.skipped:
            raise LumenError(
                f"{len(report.skipped)} unreadable line(s); first: {report.skipped[0]}"
            )
        return f"{len(report.entries)} entries, digests intact"

    def torn() -> Check:
        from state.files import torn_lines

        found = torn_lines(instance.data)
        if not found:
            return Check("torn lines", True, "none")
        aside, first = found[0]
        where = aside.relative_to(instance.root)
        detail = (
            f"{len(found)} torn line(s) moved aside, never merged; first: {where} offset "
            f"{first.get('offset')} ({first.get('reason')}, {first.get('length')} bytes)"
        )
        return Check("torn lines", True, detail, warning=True)

    def model() -> str:
        from graph.llm import make_chat_model, model_label
        from state.config import load_config

        config = load_config(instance.config_file)
        make_chat_model(config)
        return f"{model_label(config)} loads"

    def metrics() -> Check:
        from state.counters import counters_problem

        problem = counters_problem(instance.machine)
        if problem is None:
            return Check("metrics", True, "counters readable")
        return Check("metrics", True, f"{problem} (rebuilt on the next count)", warning=True)

    def chroma() -> str:
        from state.memory import MemoryStore

        store = MemoryStore.for_instance(instance)
        return f"{store.index_count()} entries indexed"

    def checkpoints() -> str:
        if not instance.checkpoint_db.exists():
            return "no checkpoints yet"
        uri = f"file:{instance.checkpoint_db}?mode=ro"
        with sqlite3.connect(uri, uri=True) as conn:
            verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
            if verdict != "ok":
                raise LumenError(f"{instance.checkpoint_db}: {verdict}")
            tables = {
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            count = (
                conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
                if "checkpoints" in tables
                else 0
            )
        return f"{count} checkpoints, integrity ok"

    return [
        _check("files", files),
        _check("memory ledger", ledger),
        torn(),
        metrics(),
        _check("model", model),
        _check("chroma", chroma),
        _check("checkpoints", checkpoints),
    ]

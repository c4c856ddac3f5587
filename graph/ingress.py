"""Every way outside text enters Lumen goes through ``screen``.

classify → sanitize → detect → decide (``kernel.injection``) → persist only
``{source, summary, digest, flags, action, timestamp}`` to the signal ledger
(``data/signals/<year>/<date>.jsonl``) and a *tainted* memory holding the derived summary. The raw
text is never written anywhere; when it may reach the model, it does so freshly wrapped, through
the in-process vault (``Services.vault``), only in the turn it arrived.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from kernel.injection import Decision, persist_record, process
from nodes.services import Services
from state.counters import bump
from state.files import append_jsonl
from state.injection_classifier import embed as injection_embed
from state.injection_classifier import ngrams as injection_ngrams
from state.self_state import utc_now
from state.signal_refs import RefIndex
from state.turn import TurnInput


@dataclass(frozen=True)
class Screened:
    """The outcome of screening one piece of outside text."""

    decision: Decision
    record: dict[str, Any]
    duplicate: bool = False
    memory_id: str = ""


def signal_file(deps: Services, day: date) -> Any:
    """Return the signal ledger file of ``day``."""
    return deps.instance.data / "signals" / f"{day.year:04d}" / f"{day.isoformat()}.jsonl"


def ref_index(deps: Services) -> RefIndex:
    """Return the ``source_ref`` index over this instance's signal ledger."""
    return RefIndex(deps.instance.machine, deps.instance.data / "signals")


def seen_ref(deps: Services, source_ref: str) -> bool:
    """Say whether a signal with ``source_ref`` was already ingested (§19.1: no re-ingestion)."""
    return ref_index(deps).seen(source_ref)


def screen(
    deps: Services,
    text: str,
    *,
    source: str,
    source_ref: str = "",
    envelope: dict[str, Any] | None = None,
) -> Screened:
    """Run the external-content pipeline and persist what may be persisted.

    ``envelope`` carries the §13.2 metadata of a signal (never its text); it is kept with the
    signal record and the memory's ``meta``.
    """
    guard = deps.config.guard
    decision = process(
        text,
        source,
        sanitize_at=guard.sanitize_at,
        block_at=guard.block_at,
        rollout=guard.rollout,
        embed=injection_embed,
        ngrams=injection_ngrams,
    )
    now = utc_now()
    record = {
        **persist_record(decision, source, now=now.isoformat()),
        "source_ref": source_ref,
        **({"envelope": envelope} if envelope else {}),
    }
    machine = deps.instance.machine
    kind = source.split(":", 1)[0] or "unknown"
    with ref_index(deps).claim(source_ref, decision.digest) as fresh:  # check-and-act, locked
        if not fresh:
            bump(machine, "signal_dedup_drop_total")
            return Screened(decision, record, duplicate=True)
        append_jsonl(signal_file(deps, now.date()), {"event": "FactAdded", **record})
    bump(machine, "signal_ingest_total", source_kind=kind)
    bump(machine, "injection_decision_total", action=decision.action)
    memory_id = deps.store.add(
        f"External content from {source}: {record['summary']}",
        metadata={
            "author": "external",
            "situation": "ingest",
            "tainted": True,
            "digest": decision.digest,
            "action": decision.action,
            "flags": list(decision.signals.flags),
            **({"source_ref": source_ref} if source_ref else {}),
            **(envelope or {}),
        },
        defer_index=True,
    )
    return Screened(decision, record, memory_id=memory_id)


def prepare_input(
    deps: Services,
    text: str,
    *,
    source: str = "user",
    autonomous: bool = False,
    vault: dict[str, str] | None = None,
) -> TurnInput:
    """Build a turn's input, screening untrusted text so its raw form never enters the graph.

    LangGraph checkpoints a run's input before its first step, so screening inside the graph
    would be too late for per-step durability. Called before a run, pass the vault of the run's
    scope (``Deps.scope(thread).vault``); inside a run the current run's vault is used.
    """
    from kernel.injection import classify

    if classify(source) == "trusted":
        return TurnInput(user_text=text, source=source, autonomous=autonomous)
    screened = screen(deps, text, source=source)
    decision = screened.decision
    if decision.text_for_model is not None:
        (deps.vault if vault is None else vault)[decision.digest] = decision.text_for_model
    placeholder = (
        f"[{source} content {decision.digest[:12]} ({decision.action}): "
        f"{screened.record['summary']}]"
    )
    return TurnInput(
        user_text=placeholder,
        source=source,
        autonomous=autonomous,
        external_ref=decision.digest,
        external_action=decision.action,
    )

"""Norms on disk: ``data/norms.jsonl``, an append-only log of NormAdded / NormRevoked events.

A norm is a standing instruction from the user about how I answer (``kernel.norms`` detects and
enforces them). Each accepted norm is one ``NormAdded`` line; ending it is a later
``NormRevoked`` line naming its id, so the file is never rewritten and a norm's status is derived
by replaying the log. Appends are single locked writes (:func:`state.files.append_jsonl`); the
read-check-append of :func:`add_norm` and :func:`revoke_norm` runs under a second lock so two
processes cannot both add the same norm. Every accepted norm also becomes a ``self`` memory that
says why I now answer differently.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from kernel.norms import SINGLE_KINDS, NormProposal, render_line
from state.errors import LumenError
from state.files import append_jsonl
from state.instance import Instance
from state.writeback import validate_norm

if TYPE_CHECKING:
    from state.memory import MemoryStore

NORMS_FILE = "norms.jsonl"
NormStatus = Literal["active", "revoked"]


class UnknownNormError(LumenError):
    """No norm has the given id."""


class NormRecord(BaseModel):
    """One norm with its status derived from the event log."""

    id: str
    kind: str
    text: str
    params: dict[str, Any] = Field(default_factory=dict)
    phrase: str = ""
    source: str = "chat"
    created: datetime
    status: NormStatus = "active"
    revoked: datetime | None = None
    revoked_why: str = ""


@dataclass
class NormOutcome:
    """What :func:`add_norm` did: the norm recorded (or the active duplicate), or the refusal."""

    norm: NormRecord | None
    added: bool
    reason: str = ""
    replaced: list[str] = field(default_factory=list)


def norms_file(instance: Instance) -> Path:
    """Return ``data/norms.jsonl``."""
    return instance.data / NORMS_FILE


def _lock_path(instance: Instance) -> str:
    return str(norms_file(instance)) + ".update.lock"


def load_norms(instance: Instance) -> list[NormRecord]:
    """Replay the event log: every norm ever added, oldest first, with its present status.

    Unreadable lines are skipped (the log is append-only; a torn line cannot hide the others).
    """
    path = norms_file(instance)
    if not path.exists():
        return []
    norms: dict[str, NormRecord] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("event")
        if kind == "NormAdded":
            try:
                record = NormRecord.model_validate(
                    {k: v for k, v in event.items() if k in NormRecord.model_fields}
                )
            except ValidationError:
                continue
            norms.setdefault(record.id, record)
        elif kind == "NormRevoked" and event.get("id") in norms:
            record = norms[event["id"]]
            if record.status == "active":
                record.status = "revoked"
                try:
                    record.revoked = datetime.fromisoformat(str(event.get("at")))
                except ValueError:
                    record.revoked = None
                record.revoked_why = str(event.get("why", ""))
    return list(norms.values())


def active_norms(instance: Instance) -> list[NormRecord]:
    """Return the norms that hold now, oldest first."""
    return [norm for norm in load_norms(instance) if norm.status == "active"]


def _same(params: Mapping[str, object], other: Mapping[str, object]) -> bool:
    def canon(p: Mapping[str, object]) -> str:
        return json.dumps(p, sort_keys=True, default=str, ensure_ascii=False).casefold()

    return canon(params) == canon(other)


def add_norm(
    instance: Instance,
    proposal: NormProposal,
    *,
    now: datetime,
    origin: str = "user",
    tainted: bool = False,
    source: str = "chat",
    store: MemoryStore | None = None,
) -> NormOutcome:
    """Record a norm after the writeback guard accepts it; return what happened.

    ``origin`` is the source label of the input the norm came from (only ``user`` is trusted);
    ``source`` is the channel stored with the norm. An active norm of the same kind and
    parameters is returned unchanged (``added`` False). A norm of a single-valued kind (a
    sentence limit, a name, a language) revokes the active one it replaces. The accepted norm is
    remembered as a ``self`` memory (through ``store`` when given, else the ledger directly).
    """
    text = render_line(proposal.kind, proposal.params) or proposal.text
    check = validate_norm(text, source=origin, tainted=tainted)
    if not check.accepted:
        return NormOutcome(None, False, check.reason)
    from filelock import FileLock

    path = norms_file(instance)
    with FileLock(_lock_path(instance)):
        active = active_norms(instance)
        for norm in active:
            if norm.kind == proposal.kind and _same(norm.params, proposal.params):
                return NormOutcome(norm, False, "already active")
        replaced = [n.id for n in active if n.kind == proposal.kind and n.kind in SINGLE_KINDS]
        for norm_id in replaced:
            append_jsonl(
                path,
                {
                    "event": "NormRevoked",
                    "id": norm_id,
                    "at": now.isoformat(),
                    "why": "replaced by a newer norm",
                },
            )
        record = NormRecord(
            id="n-" + uuid.uuid4().hex[:8],
            kind=proposal.kind,
            text=text,
            params=dict(proposal.params),
            phrase=proposal.phrase[:300],
            source=source,
            created=now,
        )
        append_jsonl(path, {"event": "NormAdded", **record.model_dump(mode="json")})
    _remember(instance, record, store)
    return NormOutcome(record, True, "", replaced)


def _remember(instance: Instance, record: NormRecord, store: MemoryStore | None) -> None:
    said = f' (they said: "{record.phrase[:200]}")' if record.phrase else ""
    text = (
        f"The user asked me to change how I answer, so I adopted a norm: {record.text}{said} "
        f"I apply it to every reply until it is revoked ({record.id})."
    )
    meta = {"kind": "NormAdded", "norm_id": record.id, "norm_kind": record.kind}
    if store is not None:
        store.add(
            text,
            metadata={"author": "self", "situation": "chat", **meta},
            defer_index=True,
        )
        return
    from state.journal import MemoryJournal

    journal = MemoryJournal(instance.memory_dir)
    journal.append(
        journal.new_entry(
            text, author="self", situation="chat", meta=meta, timestamp=record.created
        )
    )


def revoke_norm(
    instance: Instance, norm_id: str, *, now: datetime, why: str = "revoked by the user"
) -> NormRecord:
    """End an active norm; return it (status ``revoked``).

    Raises:
        UnknownNormError: no active norm has this id.
    """
    from filelock import FileLock

    with FileLock(_lock_path(instance)):
        norm = next((n for n in active_norms(instance) if n.id == norm_id.strip()), None)
        if norm is None:
            known = any(n.id == norm_id.strip() for n in load_norms(instance))
            state = "is already revoked" if known else "does not exist"
            raise UnknownNormError(f"norm {norm_id!r} {state} (see 'lumen norms')")
        append_jsonl(
            norms_file(instance),
            {"event": "NormRevoked", "id": norm.id, "at": now.isoformat(), "why": why},
        )
    return norm.model_copy(update={"status": "revoked", "revoked": now, "revoked_why": why})

"""The agent's self-authored layers on disk, and which entries a turn reads back.

``self_authored_update`` appends to ``data/self/<store>.jsonl`` for the three stores
(SKAi ``self_authored_layers``). A later turn reads them through ``notes_for``: self-norms are rules
the agent set for itself, so the newest active ones always apply; notebook and evidence entries are
about a subject, so only those sharing a content word with the message come back. An entry is active
until its ``review_date``; a line that does not parse is skipped (the file is append-only and a torn
last line must not hide the rest).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from kernel.text import content_words
from state.files import tail_records

STORES = ("self_norms", "learning_notebook", "evidence_ledger")
NORMS_READ = 2
"""Newest active self-norms read into every turn."""
TOPICAL_READ = 2
"""Notebook and evidence entries read when they share a word with the message."""
TAIL_LINES = 200
"""Only the newest lines of each store are considered."""


def _entries(path: Path) -> list[dict[str, Any]]:
    return [r for r in tail_records(path, TAIL_LINES) if isinstance(r.get("text"), str)]


def _active(record: dict[str, Any], today: date) -> bool:
    try:
        return date.fromisoformat(str(record.get("review_date", ""))) >= today
    except ValueError:
        return True


def notes_for(root: Path, query: str, today: date) -> list[str]:
    """Return the self-authored notes that apply to ``query``, newest first, deduplicated."""
    words = set(content_words(query))
    chosen: list[str] = []
    norms = [r for r in reversed(_entries(root / "self_norms.jsonl")) if _active(r, today)]
    chosen += [str(r["text"]) for r in norms[:NORMS_READ]]
    topical: list[str] = []
    for store in ("learning_notebook", "evidence_ledger"):
        for record in reversed(_entries(root / f"{store}.jsonl")):
            if _active(record, today) and words & set(content_words(str(record["text"]))):
                topical.append(str(record["text"]))
    chosen += topical[:TOPICAL_READ]
    return list(dict.fromkeys(chosen))

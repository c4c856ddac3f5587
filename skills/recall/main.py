#!/usr/bin/env python3
"""recall: recall memories related to a query, best match first.

Reads one JSON object on stdin: {"query": "what the user drinks", "k": 5, "instance": "/path"}.
Writes one JSON object on stdout: {"hits": [{"id", "text", "score", "author", "timestamp"}]},
at most k hits (default 5, at most 50), sorted by score (cosine similarity to the query).

Searches the instance's memory ledger (``data/memory``) through its vector index
(``.lumen/chroma``) with ``state.memory.MemoryStore``: the newest memories plus the top-k
semantic matches; risk-flagged memories (rumours, secret sources) are never returned. Ledger
entries missing from the index (the index is a rebuildable cache) are
indexed first. The embedding model is local; nothing goes over the network. The instance is the
"instance" path or else LUMEN_HOME. Exit 0 on success, 2 on bad input or no instance, 1 on any
other failure.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

try:  # the shared protocol: skills/_protocol.py beside this skill's directory
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from _protocol import SkillError, resolve_instance, serve
except ImportError:  # no copy there: the installed lumen package has it
    from skills._protocol import SkillError, resolve_instance, serve

DEFAULT_K = 5
MAX_K = 50
MAX_QUERY = 2000


def import_memory_store() -> Any:
    """Import ``state.memory.MemoryStore``, falling back to this checkout's source tree."""
    try:
        from state.memory import MemoryStore
    except ImportError:
        # Built-in skills live at <project>/skills/recall/; without an installed lumen package
        # (e.g. a bare checkout) the project root still holds ``state``.
        project = Path(__file__).resolve().parents[2]
        if not (project / "state" / "memory.py").is_file():
            raise
        sys.path.insert(0, str(project))
        from state.memory import MemoryStore
    return MemoryStore


def run(payload: dict[str, Any]) -> dict[str, Any]:
    """Validate the payload and search the memory store."""
    query = payload.get("query")
    if not isinstance(query, str) or not query.strip():
        raise SkillError('"query" must be a non-empty string')
    if len(query) > MAX_QUERY:
        raise SkillError(f"query is longer than {MAX_QUERY} characters")
    k = payload.get("k", DEFAULT_K)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise SkillError(f'"k" must be an integer between 1 and {MAX_K}')
    root = resolve_instance(payload)
    try:
        memory_store = import_memory_store()
    except ImportError as exc:
        raise SkillError(f"cannot load the memory store: {exc}", code=1) from None
    # Libraries must not write to stdout: it carries this skill's one JSON object.
    with contextlib.redirect_stdout(sys.stderr):
        store = memory_store(root / "data" / "memory", index_path=root / ".lumen" / "chroma")
        # No sync_index() here: it reads the whole ledger. Entries written by other processes
        # are indexed when written; the recent-entries half of search covers the rest.
        # Risk-flagged and secret-source memories never leave through a tool (§20): the turn's
        # own recall drops them too. Ask for more so k safe hits can still come back.
        found = [h for h in store.search(query.strip(), k=min(MAX_K, 2 * k)) if not h.risky]
    hits = [
        {
            "id": hit.id,
            "text": hit.text,
            "score": hit.score,
            "author": hit.author,
            "timestamp": hit.timestamp,
        }
        for hit in found[:k]
    ]
    return {"hits": hits}


if __name__ == "__main__":
    sys.exit(serve(run, __doc__))

#!/usr/bin/env python3
"""beliefs: list what I believe, heaviest first, optionally matching a query.

Reads one JSON object on stdin: {"query": "user coffee", "limit": 50, "instance": "/path"}.
Writes one JSON object on stdout: {"beliefs": [{"id", "text", "weight"}], "count": N}.

Beliefs come from ``self_state.beliefs.statements`` in ``<instance>/.lumen/self.json``. With a
query, a belief matches when its text contains the whole query or shares a word (of two or more
letters, common stop words ignored) with it; case is ignored. Results are sorted by weight,
heaviest first, then by id; "count" is the number returned. The instance is the "instance" path
or else LUMEN_HOME. Exit 0 on success, 2 on bad input or no instance, 1 on an unreadable
self.json or any other failure.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

try:  # the shared protocol: skills/_protocol.py beside this skill's directory
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from _protocol import SkillError, resolve_instance, serve
except ImportError:  # no copy there: the installed lumen package has it
    from skills._protocol import SkillError, resolve_instance, serve

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
MAX_QUERY = 500
WORD = re.compile(r"[^\W_]+")
STOP_WORDS = frozenset(
    "a an and are as at be by do does for from how i in is it me my of on or so the to "
    "was we what when where which who why with you your".split()
)


def load_beliefs(root: Path) -> list[dict[str, Any]]:
    """Return the belief statements of the instance's self.json (none if there is no file)."""
    path = root / ".lumen" / "self.json"
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        statements = data.get("self_state", {}).get("beliefs", {}).get("statements", [])
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError) as exc:
        raise SkillError(f"{path}: unreadable: {exc}", code=1) from None
    if not isinstance(statements, list):
        raise SkillError(f"{path}: self_state.beliefs.statements is not a list", code=1)
    beliefs = []
    for item in statements:
        # The kernel validates self.json when it writes it; skip anything malformed, never crash.
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            continue
        weight = item.get("weight", 0.5)
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            continue
        beliefs.append({"id": str(item.get("id", "")), "text": item["text"], "weight": weight})
    return beliefs


def words(text: str) -> set[str]:
    """Return the lower-cased content words of ``text``."""
    return {w for w in WORD.findall(text.lower()) if len(w) > 1 and w not in STOP_WORDS}


def matches(query: str, text: str) -> bool:
    """Say whether ``text`` contains the query or shares a content word with it."""
    lowered = text.lower()
    return query.lower() in lowered or bool(words(query) & words(lowered))


def run(payload: dict[str, Any]) -> dict[str, Any]:
    """Validate the payload and list the matching beliefs."""
    query = payload.get("query")
    if query is not None and not isinstance(query, str):
        raise SkillError('"query" must be a string')
    query = (query or "").strip()
    if len(query) > MAX_QUERY:
        raise SkillError(f"query is longer than {MAX_QUERY} characters")
    limit = payload.get("limit", DEFAULT_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise SkillError(f'"limit" must be an integer between 1 and {MAX_LIMIT}')
    beliefs = load_beliefs(resolve_instance(payload))
    if query:
        beliefs = [b for b in beliefs if matches(query, b["text"])]
    beliefs.sort(key=lambda b: (-b["weight"], b["id"]))
    beliefs = beliefs[:limit]
    return {"beliefs": beliefs, "count": len(beliefs)}


if __name__ == "__main__":
    sys.exit(serve(run, __doc__))

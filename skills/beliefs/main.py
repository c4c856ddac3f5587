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

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
MAX_QUERY = 500
WORD = re.compile(r"[^\W_]+")
STOP_WORDS = frozenset(
    "a an and are as at be by do does for from how i in is it me my of on or so the to "
    "was we what when where which who why with you your".split()
)


class SkillError(Exception):
    """An expected failure, reported as {"error": ...} with an exit code."""

    def __init__(self, message: str, code: int = 2) -> None:
        """Keep the message and the exit code."""
        super().__init__(message)
        self.code = code


def resolve_instance(payload: dict[str, Any]) -> Path:
    """Return the instance root from the payload's "instance" or LUMEN_HOME."""
    raw = payload.get("instance")
    if raw is None:
        raw = os.environ.get("LUMEN_HOME") or None
    if raw is None:
        raise SkillError('no instance: pass "instance" or set LUMEN_HOME')
    if not isinstance(raw, str) or not raw.strip():
        raise SkillError('"instance" must be a non-empty path string')
    root = Path(raw).expanduser()
    if not root.is_absolute():
        raise SkillError(f"instance path must be absolute, not {raw!r}")
    looks_like_instance = (
        (root / "data" / "soul.md").is_file()
        and (root / "data" / "values.json").is_file()
        and (root / ".lumen").is_dir()
    )
    if not looks_like_instance:
        raise SkillError(f"no Lumen instance at {root}")
    return root


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


def read_payload() -> dict[str, Any]:
    """Read one JSON object from stdin."""
    try:
        raw = sys.stdin.buffer.read().decode("utf-8")
        payload = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SkillError(f"stdin is not one JSON object: {exc}") from None
    if not isinstance(payload, dict):
        raise SkillError("stdin must hold a JSON object")
    return payload


def main(argv: list[str] | None = None) -> int:
    """Run the skill; return the exit code."""
    summary, _, details = (__doc__ or "").partition("\n")
    summary = summary.partition(": ")[2] or summary
    parser = argparse.ArgumentParser(
        prog="beliefs",
        description=summary[:1].upper() + summary[1:],
        epilog=details.strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.parse_args(argv)
    try:
        result = run(read_payload())
    except SkillError as exc:
        print(json.dumps({"error": str(exc)}))
        return exc.code
    except Exception as exc:  # the protocol allows no traceback, only a JSON error
        print(json.dumps({"error": f"internal error: {type(exc).__name__}: {exc}"}))
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

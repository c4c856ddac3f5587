#!/usr/bin/env python3
"""chat: deliver the kernel's reply to the user.

Reads one JSON object on stdin: {"reply": "<text>"}.
Writes one JSON object on stdout: {"reply": "<cleaned text>", "chars": N}.
Cleaning strips surrounding whitespace, a leading role label ("Assistant:", "Lumen:") and
chat-template tokens a small model sometimes echoes. Exit 0 on success, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

ROLE_LABEL = re.compile(r"^\s*(assistant|lumen|ai|bot)\s*:\s*", re.IGNORECASE)
TEMPLATE_TOKEN = re.compile(r"<\|[^|>]{1,40}\|>|</?s>")


def clean(text: str) -> str:
    """Return the reply without echoed role labels or template tokens."""
    text = TEMPLATE_TOKEN.sub("", text)
    text = ROLE_LABEL.sub("", text)
    return text.strip()


def main(argv: list[str] | None = None) -> int:
    """Run the skill."""
    parser = argparse.ArgumentParser(
        prog="chat",
        description='Deliver a reply to the user. stdin: {"reply": str}; '
        'stdout: {"reply": str, "chars": int}.',
    )
    parser.parse_args(argv)
    try:
        payload = json.loads(sys.stdin.read() or "{}")
        reply = payload["reply"]
        if not isinstance(reply, str):
            raise TypeError("reply must be a string")
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        print(json.dumps({"error": f"bad input: {exc}"}))
        return 2
    text = clean(reply)
    print(json.dumps({"reply": text, "chars": len(text)}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

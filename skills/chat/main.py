#!/usr/bin/env python3
"""chat: deliver a reply to the user.

Reads one JSON object on stdin: {"reply": "<text>"}.
Writes one JSON object on stdout: {"reply": "<cleaned text>", "chars": N}.
Cleaning strips surrounding whitespace, a leading role label ("Assistant:", "Lumen:") and
chat-template tokens a small model sometimes echoes. Exit 0 on success, 2 on bad input.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

try:  # the shared protocol: skills/_protocol.py beside this skill's directory
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from _protocol import SkillError, serve
except ImportError:  # no copy there: the installed lumen package has it
    from skills._protocol import SkillError, serve

ROLE_LABEL = re.compile(r"^\s*(assistant|lumen|ai|bot)\s*:\s*", re.IGNORECASE)
TEMPLATE_TOKEN = re.compile(r"<\|[^|>]{1,40}\|>|</?s>")


def clean(text: str) -> str:
    """Return the reply without echoed role labels or template tokens."""
    text = TEMPLATE_TOKEN.sub("", text)
    text = ROLE_LABEL.sub("", text)
    return text.strip()


def run(payload: dict[str, Any]) -> dict[str, Any]:
    """Clean the reply and count its characters."""
    reply = payload.get("reply")
    if not isinstance(reply, str):
        raise SkillError('bad input: "reply" must be a string')
    text = clean(reply)
    return {"reply": text, "chars": len(text)}


if __name__ == "__main__":
    sys.exit(serve(run, __doc__, ensure_ascii=False))

#!/usr/bin/env python3
"""ask_user: put a clarifying question to the user and wait for the answer.

Reads one JSON object on stdin: {"question": "Which city?", "options": ["Paris", "Rome"]}.
Writes one JSON object on stdout: {"question": "Which city?", "options": [...],
"awaiting_user": true}. The skill only validates and formats the question (whitespace collapsed);
the kernel shows it and treats the user's next message as the answer. The question must be
non-empty and at most 500 characters; "options" is optional, at most 10 non-empty strings of at
most 100 characters each. Exit 0 on success, 2 on bad input, 1 on any other failure.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

try:  # the shared protocol: skills/_protocol.py beside this skill's directory
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from _protocol import SkillError, serve
except ImportError:  # no copy there: the installed lumen package has it
    from skills._protocol import SkillError, serve

MAX_QUESTION = 500
MAX_OPTIONS = 10
MAX_OPTION = 100


def tidy(text: str) -> str:
    """Collapse runs of whitespace into single spaces."""
    return " ".join(text.split())


def run(payload: dict[str, Any]) -> dict[str, Any]:
    """Validate the question (and options) and format them back."""
    question = payload.get("question")
    if not isinstance(question, str) or not tidy(question):
        raise SkillError('"question" must be a non-empty string')
    question = tidy(question)
    if len(question) > MAX_QUESTION:
        raise SkillError(f"question is longer than {MAX_QUESTION} characters ({len(question)})")
    result: dict[str, Any] = {"question": question}
    options = payload.get("options")
    if options is not None:
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            raise SkillError('"options" must be a list of strings')
        cleaned = [tidy(o) for o in options]
        if not all(cleaned):
            raise SkillError("options must not be empty")
        if len(cleaned) > MAX_OPTIONS:
            raise SkillError(f"at most {MAX_OPTIONS} options, got {len(cleaned)}")
        if any(len(o) > MAX_OPTION for o in cleaned):
            raise SkillError(f"each option must be at most {MAX_OPTION} characters")
        if cleaned:
            result["options"] = cleaned
    result["awaiting_user"] = True
    return result


if __name__ == "__main__":
    sys.exit(serve(run, __doc__))

#!/usr/bin/env python3
"""gaps: list what I do not know: open questions and beliefs held with little confidence.

Reads one JSON object on stdin: {"threshold": 0.4, "instance": "/path"} (both optional).
Writes one JSON object on stdout: {"open_questions": [str], "uncertain_beliefs": [{"id", "text",
"weight"}]}.

Open questions come from ``self_state.epistemics.open_questions`` in ``<instance>/.lumen/
self.json``, in their stored order. Uncertain beliefs are ``self_state.beliefs.statements`` whose
weight is below the threshold (default 0.4), least certain first, then by id. The instance is
the "instance" path or else LUMEN_HOME. Exit 0 on success, 2 on bad input or no instance, 1 on
an unreadable self.json or any other failure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

try:  # the shared protocol: skills/_protocol.py beside this skill's directory
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from _protocol import SkillError, resolve_instance, serve
except ImportError:  # no copy there: the installed lumen package has it
    from skills._protocol import SkillError, resolve_instance, serve

DEFAULT_THRESHOLD = 0.4


def load_self_state(root: Path) -> dict[str, Any]:
    """Return the ``self_state`` object of the instance's self.json (empty if there is none)."""
    path = root / ".lumen" / "self.json"
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SkillError(f"{path}: unreadable: {exc}", code=1) from None
    state = data.get("self_state", {}) if isinstance(data, dict) else None
    if not isinstance(state, dict):
        raise SkillError(f"{path}: self_state is not an object", code=1)
    return state


def section(state: dict[str, Any], name: str, key: str) -> list[Any]:
    """Return ``state[name][key]`` when it is a list, else an empty list."""
    part = state.get(name)
    value = part.get(key) if isinstance(part, dict) else None
    return value if isinstance(value, list) else []


def run(payload: dict[str, Any]) -> dict[str, Any]:
    """Validate the payload and list open questions and uncertain beliefs."""
    threshold = payload.get("threshold", DEFAULT_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise SkillError('"threshold" must be a number between 0 and 1')
    if not 0.0 <= threshold <= 1.0:
        raise SkillError('"threshold" must be a number between 0 and 1')
    state = load_self_state(resolve_instance(payload))
    questions = [q for q in section(state, "epistemics", "open_questions") if isinstance(q, str)]
    uncertain = []
    for item in section(state, "beliefs", "statements"):
        # The kernel validates self.json when it writes it; skip anything malformed, never crash.
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            continue
        weight = item.get("weight", 0.5)
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            continue
        if weight < threshold:
            belief_id = str(item.get("id", ""))
            uncertain.append({"id": belief_id, "text": item["text"], "weight": weight})
    uncertain.sort(key=lambda b: (b["weight"], b["id"]))
    return {"open_questions": questions, "uncertain_beliefs": uncertain}


if __name__ == "__main__":
    sys.exit(serve(run, __doc__))

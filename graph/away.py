"""What autonomy leaves for the user: screened findings, workspace notes, the away report.

* :func:`screen_output` runs a skill's output through the external-content pipeline
  (``graph.ingress.screen``: signal ledger, a tainted summary memory) and hands the step the
  sanitised body to derive a bounded summary from, or nothing when the pipeline blocked it.
* :func:`write_note` is the gateway-checked write of the agent's own note: the shadow veto reads
  the action, the security policy confines the path to the workspace and counts it against the
  rate and cost limits, and the file is written atomically under ``workspace/notes/``. Only
  ``notes/<name>.md`` can be written this way (the note is derived from the autonomy ledger, so
  rewriting it loses nothing).
* :func:`away_report` says, once, what autonomy did since the last report ("While you were away
  I …") and marks it delivered in the ledger (``state.away``).
"""

from __future__ import annotations

import re
from typing import Any

from graph.action import workspace
from graph.authoring import preflight
from graph.ingress import screen
from kernel.injection import sanitize
from nodes.services import ActionResult, Screened, Services
from state import away
from state.files import atomic_write_text
from state.self_state import Psyche

NOTES_DIR = "notes"
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,60}$")
REPORT_FINDINGS = 2
"""Findings quoted in the away report (the newest); the rest are counted."""


def screen_output(deps: Services, text: str, *, source: str) -> Screened:
    """Screen a skill's output as untrusted external content; return what may be kept."""
    done = screen(deps, text, source=source)
    decision = done.decision
    body = None if decision.action == "block" else sanitize(text).text
    return Screened(
        action=decision.action,
        summary=str(done.record["summary"]),
        digest=decision.digest,
        flags=list(decision.signals.flags),
        text=body,
    )


def write_note(deps: Services, name: str, text: str, *, psyche: Psyche) -> ActionResult:
    """Write ``workspace/notes/<name>.md`` after the shadow veto and the security policy."""
    if not _NAME.match(name):
        return ActionResult(status="refused", detail=f"invalid note name {name!r}")
    relative = f"{NOTES_DIR}/{name}.md"
    stopped = preflight(
        deps,
        ("note", {"path": relative, "content": text}),
        ("files", {"path": relative}),
        psyche=psyche,
        autonomous=True,
    )
    if stopped is not None:
        return stopped
    path = workspace(deps) / NOTES_DIR / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    created = not path.exists()
    atomic_write_text(path, text)
    return ActionResult(
        status="ok",
        output={"path": relative, "bytes": len(text.encode("utf-8")), "created": created},
    )


def _quote(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _report(new: list[dict[str, Any]]) -> str:
    findings = [e for e in new if e["event"] == "Finding" and e.get("summary")]
    artifacts = [e for e in new if e["event"] == "Artifact"]
    questions = [e for e in new if e["event"] == "Question"]
    asked = list(dict.fromkeys(e.get("question", "") for e in findings if e.get("question")))
    done: list[str] = []
    if asked:
        done.append(
            f"explored {len(asked)} question{'s' if len(asked) > 1 else ''} "
            f"(last: {_quote(asked[-1], 100)!r})"
        )
    if findings:
        quoted = []
        for e in findings[-REPORT_FINDINGS:]:
            mark = "" if e.get("trust") == "trusted" else " (from outside content, unverified)"
            quoted.append(f"{_quote(str(e['summary']))}{mark} [{e.get('source', '')}]")
        more = len(findings) - len(quoted)
        done.append(
            "found: " + "; ".join(quoted) + (f" (and {more} more findings)" if more > 0 else "")
        )
    for e in artifacts:
        goal = _quote(str(e.get("goal", "")), 80)
        if e.get("kind") == "note":
            done.append(f"wrote a note for {goal!r} in workspace/{e.get('path', '')}")
        elif e.get("kind") == "summary":
            done.append(f"summarised what I know about {goal!r}")
        elif e.get("kind") == "skill":
            done.append(f"authored the skill {e.get('skill', '')!r} for {goal!r}")
    if not done and not questions:
        return ""
    text = "While you were away I " + "; ".join(done) + "." if done else ""
    if questions:
        ask = " ".join(f"{_quote(str(e.get('question', '')), 200)}" for e in questions[-2:])
        lead = "I have a question for you: " if len(questions) == 1 else "I have questions: "
        text = (text + " " if text else "While you were away I wondered about something. ") + (
            lead + ask
        )
    return text


def away_report(deps: Services) -> str | None:
    """Return "While you were away I …" for what autonomy did since the last report, once.

    Reads the autonomy ledger (``state.away``) from the last ``Delivered`` event on: findings
    (their bounded summaries, untrusted ones marked unverified), notes, summaries, authored
    skills and the questions queued for the user. Marks everything up to now delivered (the
    questions asked with their delivery time, which is when a later user message counts as
    their answer), so a second call returns None until autonomy does something new.
    """
    new, upto = away.undelivered(deps.instance)
    text = _report(new)
    if not text:
        return None
    away.record(
        deps.instance,
        "Delivered",
        ts=deps.now().isoformat(),
        upto=upto,
        questions=[e["id"] for e in new if e["event"] == "Question" and e.get("id")],
    )
    return text

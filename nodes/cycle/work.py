"""What the cycle's work produces: findings, artifacts, questions, and goals' criteria.

Helpers of the cycle steps (``nodes.cycle.steps``): how a goal's criteria are counted from the
autonomy ledger (``state.away``), how a skill's output becomes a bounded finding (screened
first when the skill faces the outside), and how the artifacts (a workspace note, a memory
summary, a question for the user) are made.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernel import autonomy as rules
from nodes.services import Services
from state import away
from state.records import Criterion, GoalRecord, goal_criteria

KERNEL_ACTIONS: dict[str, str] = {"note": "sage", "summary": "sage"}
"""Artifacts the kernel makes itself (no skill): name -> archetype. A note is a
gateway-checked workspace write; a summary is a memory."""
NO_FINDINGS = frozenset({"clock", "calc", "ask_user", "chat", "create_skill"})
"""Skills whose output is not something learned (a time, a result, a question, a reply)."""
CRITERIA_PRESSURE = 0.15
"""Heuristic: the score an action gains when it works towards an unmet criterion of the goal
it pursues (or answers the explore question's cue): goals pull their work forward."""
NOTE_FINDINGS = 8
"""Findings listed in a workspace note (the newest)."""
_SKIP_KEYS = frozenset(
    {
        "id",
        "timestamp",
        "digest",
        "author",
        "instance",
        "path",
        "url",
        "type",
        "status",
        "content_type",
    }
)
_FINDING_PREFIX = "Finding ("


@dataclass(frozen=True)
class GoalNeeds:
    """A goal's criteria with what each needs and has."""

    criteria: list[Criterion]
    needed: list[int]
    have: list[int]

    @property
    def progress(self) -> float:
        """The share of the criteria met."""
        return rules.criteria_progress(self.needed, self.have)

    @property
    def met(self) -> bool:
        """Whether every criterion is met."""
        return rules.criteria_met(self.needed, self.have)

    def unmet(self, kind: str) -> Criterion | None:
        """Return the first unmet criterion of ``kind``."""
        for c, n, h in zip(self.criteria, self.needed, self.have, strict=True):
            if c.kind == kind and h < n:
                return c
        return None

    def has(self, kind: str) -> bool:
        """Whether the goal has a criterion of ``kind``."""
        return any(c.kind == kind for c in self.criteria)


def user_spoke_after(deps: Services) -> Callable[[str], bool]:
    """Return a test: did the user say something (an untainted chat message) after ``when``?"""
    said = [
        e.timestamp.isoformat()
        for e in deps.store.recent(200, authors=("external",))
        if e.situation == "chat" and not e.tainted
    ]
    latest = max(said, default="")
    return lambda when: bool(when) and latest > when


def _findings_for(goal: GoalRecord, c: Criterion, prog: away.Progress) -> int:
    topic = c.topic or goal.name
    seen = set()
    for f in prog.findings:
        if not f.get("summary"):
            continue
        text = f"{f.get('question', '')} {f.get('summary', '')}"
        if f.get("goal") == goal.name or rules.on_topic(text, topic):
            seen.add(f.get("digest"))
    return len(seen)


def needs(
    goal: GoalRecord,
    prog: away.Progress,
    *,
    skills: set[str],
    answered: Callable[[str], bool],
    root: Path,
) -> GoalNeeds:
    """Count what a goal's criteria need and what the ledger, the skills and the user give."""
    criteria = goal_criteria(goal)
    have = []
    for c in criteria:
        if c.kind == "findings":
            have.append(_findings_for(goal, c, prog))
        elif c.kind == "artifact":
            made = [
                a
                for a in prog.artifacts
                if a.get("goal") == goal.name
                and (a.get("kind") != "note" or (root / "workspace" / str(a.get("path"))).exists())
            ]
            have.append(len(made))
        elif c.kind == "question":
            have.append(
                sum(
                    1
                    for q in prog.questions
                    if q.get("goal") == goal.name and answered(prog.delivered.get(q["id"], ""))
                )
            )
        else:
            have.append(int(bool(c.skill) and c.skill in skills))
    return GoalNeeds(criteria, [c.count for c in criteria], have)


def pending_question(goal: str, prog: away.Progress, answered: Callable[[str], bool]) -> bool:
    """Whether a question for ``goal`` is queued and not answered yet (ask one at a time)."""
    return any(
        q.get("goal") == goal and not answered(prog.delivered.get(q["id"], ""))
        for q in prog.questions
    )


def output_texts(output: Any, limit: int = 40) -> list[str]:
    """Collect the text a skill returned (strings in its JSON), skipping ids, paths, metadata.

    Memories that are themselves findings are skipped, so a finding never restates a finding.
    """
    found: list[str] = []

    def walk(value: Any, key: str = "") -> None:
        if len(found) >= limit or key in _SKIP_KEYS:
            return
        if isinstance(value, str):
            text = value.strip()
            if text and not text.startswith(_FINDING_PREFIX):
                found.append(text)
        elif isinstance(value, dict):
            if value.get("author") == "kernel":  # the kernel's step log is not a finding
                return
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, key)

    walk(output)
    return found


def digest(text: str) -> str:
    """A short digest of a finding's summary (findings are recorded once)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def source_of(skill: str, tool_input: dict[str, Any]) -> str:
    """Name where a finding came from: ``skill:what it was asked`` (bounded)."""
    what = next(
        (str(tool_input[k]) for k in ("path", "url", "query", "op") if tool_input.get(k)), ""
    )
    return f"{skill}:{what}"[:120] if what else skill


def slug(name: str) -> str:
    """A file name for a goal's note (lower case words joined by '-', ≤ 60 characters)."""
    words = re.findall(r"[a-z0-9]+", name.lower())
    return "-".join(words)[:60].strip("-") or "note"


def note_text(goal: str, findings: list[dict[str, Any]], when: str) -> str:
    """The workspace note of a goal: what was found, each with its source and trust."""
    lines = [f"# {goal}", "", f"Notes written by Lumen's autonomy ({when[:10]}).", ""]
    for f in findings[-NOTE_FINDINGS:]:
        trust = "" if f.get("trust") == "trusted" else " (outside content, unverified)"
        lines.append(f"- {f['summary']} — {f.get('source', '')}{trust}")
    return "\n".join(lines) + "\n"


def goal_findings(goal: str, prog: away.Progress) -> list[dict[str, Any]]:
    """The findings recorded for a goal, or on its topic, with a summary."""
    return [
        f
        for f in prog.findings
        if f.get("summary")
        and (
            f.get("goal") == goal
            or rules.on_topic(f"{f.get('question', '')} {f.get('summary', '')}", goal)
        )
    ]


_CODE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)


def code_block(text: str) -> str:
    """Return the first fenced Python block of a model answer ('' when there is none)."""
    match = _CODE.search(text)
    return match.group(1).strip() + "\n" if match else ""

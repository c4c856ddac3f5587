"""One skill contract: main.py + skill.toml (cues, presentation) is all a new skill needs."""

from __future__ import annotations

import textwrap
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from graph.skills import run
from kernel.affordance import breakdown, candidates
from kernel.presentation import Presentation, render
from nodes.turn.act import tool_affordance, tool_lines
from state.config import Config
from state.instance import Instance
from state.skills import BUILTIN_SKILLS, affordances, presentations, registry
from state.turn import ToolCall, TurnState

MAIN_PY = '''\
#!/usr/bin/env python3
"""reverse: spell a phrase backwards.

Reads {"phrase": str}; writes {"reversed": str, "length": int}.
"""

import sys
from pathlib import Path

try:  # the shared protocol: skills/_protocol.py beside this skill's directory
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from _protocol import SkillError, serve
except ImportError:  # no copy there: the installed lumen package has it
    from skills._protocol import SkillError, serve


def run(payload):
    phrase = payload.get("phrase")
    if not isinstance(phrase, str) or not phrase:
        raise SkillError('"phrase" must be a non-empty string')
    return {"reversed": phrase[::-1], "length": len(phrase)}


if __name__ == "__main__":
    sys.exit(serve(run, __doc__))
'''

SKILL_TOML = """\
name = "reverse"
description = "Spell a phrase backwards."
archetype = "sage"
untrusted_output = false
mutating = false
input = '{"phrase": str}'
output = '{"reversed": str, "length": int}'

[affordance]
order = 5

[[affordance.cues]]
pattern = '''"(?P<value>[^"]{1,100})"'''
case = "keep"
requires = ['''\\b(reverse|backwards)\\b''']
base = 0.9
input = { phrase = "{match}" }

[[present]]
requires = ["reversed"]
template = "Backwards: {reversed} ({length} letters)."
"""

ASK = 'Please spell "Lumen kernel" backwards'


@pytest.fixture
def with_reverse(instance: Path) -> Instance:
    """An instance whose skills/ holds the new skill; no code anywhere knows its name."""
    skill = Instance(instance).skills_dir / "reverse"
    skill.mkdir(parents=True)
    (skill / "main.py").write_text(MAIN_PY, encoding="utf-8")
    (skill / "skill.toml").write_text(SKILL_TOML, encoding="utf-8")
    return Instance(instance)


def test_a_dropped_in_skill_is_offered_run_and_presented(with_reverse: Instance) -> None:
    known = registry(with_reverse.skills_dir)
    assert known["reverse"][0].origin == "instance"
    assert known["reverse"][1].archetype == "sage"

    found = candidates(ASK, affordances(known), ambiguity=0.0)
    assert [(c.tool, c.input) for c in found] == [("reverse", {"phrase": "Lumen kernel"})]
    score, text = breakdown(
        found[0],
        archetype_weight=0.5,
        used_recently=False,
        used_ever=False,
        succeeded_before=False,
        pressure=0.0,
    )
    assert score > 0.9 and text.startswith("[score=")

    result = run(known["reverse"][0].path / "main.py", found[0].input)
    assert result.ok, result.error
    call = ToolCall(tool="reverse", input=found[0].input, status="ok", output=result.output)
    lines = tool_lines([call], presentations(known))
    assert lines == ["Backwards: lenrek nemuL (12 letters)."]


def test_the_turn_step_offers_a_dropped_in_skill(with_reverse: Instance) -> None:
    deps = SimpleNamespace(skills=lambda: registry(with_reverse.skills_dir), config=Config())
    state = TurnState(user_text=ASK, me=with_reverse.load_self())
    update = tool_affordance(state, deps=deps)  # type: ignore[arg-type]
    choice = update["tool_choice"]
    assert choice is not None, update
    assert (choice.tool, choice.input) == ("reverse", {"phrase": "Lumen kernel"})  # type: ignore[attr-defined]


def test_a_skill_imports_the_protocol_from_the_instance_copy_or_the_package(
    with_reverse: Instance,
) -> None:
    main = with_reverse.skills_dir / "reverse" / "main.py"
    assert (with_reverse.skills_dir / "_protocol.py").is_file()  # copied at init
    assert run(main, {"phrase": "ab"}).output == {"reversed": "ba", "length": 2}
    bad = run(main, {"phrase": 3})
    assert (bad.ok, bad.exit_code, bad.error) == (False, 2, '"phrase" must be a non-empty string')
    (with_reverse.skills_dir / "_protocol.py").unlink()
    assert run(main, {"phrase": "ab"}).output == {"reversed": "ba", "length": 2}


@pytest.mark.parametrize("name", sorted(p.parent.name for p in BUILTIN_SKILLS.glob("*/main.py")))
def test_builtin_manifests_lose_no_cue_or_line(name: str) -> None:
    raw = tomllib.loads((BUILTIN_SKILLS / name / "skill.toml").read_text(encoding="utf-8"))
    _, manifest = registry(None)[name]
    assert len(manifest.affordance.cues) == len(raw.get("affordance", {}).get("cues", []))
    assert len(manifest.presentation.lines) == len(raw.get("present", []))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what is 2 ^ 10?", [("calc", {"expression": "2 ** 10"}, 0.9)]),
        ("calculate the square root of 2.25", [("calc", {"expression": "sqrt(2.25)"}, 0.85)]),
        ("What time is it?", [("clock", {"op": "now"}, 0.85)]),
        ("when is next friday", [("clock", {"op": "resolve", "text": "next friday"}, 0.75)]),
        ("Do you remember my coffee?", [("recall", {"query": "remember coffee", "k": 5}, 0.8)]),
        ("open questions", [("gaps", {}, 0.75)]),
        ("see https://example.com/x.", [("fetch", {"url": "https://example.com/x."}, 0.85)]),
        ("please run `ls -la`", [("shell", {"argv": ["ls", "-la"]}, 0.7)]),
        ("read notes.txt", [("files", {"op": "read", "path": "notes.txt"}, 0.75)]),
        ("show my files", [("files", {"op": "list", "path": "."}, 0.75)]),
        ("hello there", []),
    ],
)
def test_builtin_cues_from_the_manifests(text: str, expected: list[Any]) -> None:
    found = candidates(text, affordances(registry(None)), ambiguity=0.0)
    assert [(c.tool, c.input, c.base) for c in found] == expected


def test_enabled_skills_use_base_enabled_and_fallbacks_need_ambiguity() -> None:
    cues = affordances(registry(None))
    assert candidates("run `ls`", cues, ambiguity=0.0, enabled={"shell"})[0].base == 0.8
    assert candidates("hmm", cues, ambiguity=0.5) == []
    asked = candidates("hmm", cues, ambiguity=0.7)
    assert [c.tool for c in asked] == ["ask_user"]


@pytest.mark.parametrize(
    ("tool", "output", "line"),
    [
        ("calc", {"result": 4, "expression": "2+2"}, "2+2 = 4"),
        (
            "clock",
            {"date": "2025-01-15", "time": "09:30", "weekday": "Wednesday"},
            "It is Wednesday 2025-01-15, 09:30.",
        ),
        ("clock", {"date": "2025-01-15", "time": "09:30"}, "It is 2025-01-15, 09:30."),
        ("clock", {"date": "2025-01-17", "weekday": "Friday"}, "That is 2025-01-17."),
        ("recall", {"hits": [{"text": "a"}, "x", {"text": "b"}]}, "From memory: a | b"),
        ("recall", {"hits": []}, "I found nothing in memory."),
        ("ask_user", {"question": "Which city?"}, "Which city?"),
        ("fetch", {"url": "https://e.com"}, "Fetched https://e.com (status ?, external content)."),
        ("gaps", {"open_questions": ["q"], "instance": "/i"}, "gaps: open_questions=['q']"),
    ],
)
def test_builtin_presentation_from_the_manifests(
    tool: str, output: dict[str, Any], line: str
) -> None:
    shown = presentations(registry(None))
    assert render(tool, output, untrusted=False, presentation=shown[tool]) == line


def test_untrusted_output_without_a_line_shows_only_its_size() -> None:
    line = render("files", {"content": "x" * 5}, untrusted=True, presentation=Presentation())
    assert line == "files returned external content (13 chars)."


def test_invalid_cues_are_dropped_not_fatal(tmp_path: Path) -> None:
    skill = tmp_path / "broken"
    skill.mkdir()
    (skill / "main.py").write_text("", encoding="utf-8")
    (skill / "skill.toml").write_text(
        textwrap.dedent(
            """\
            [[affordance.cues]]
            pattern = "(unclosed"
            base = 0.5
            [[affordance.cues]]
            pattern = "ok"
            base = 2.0
            [[affordance.cues]]
            pattern = "ok"
            base = 0.5
            input = { q = "{nope}" }
            [[affordance.cues]]
            pattern = "fine"
            base = 0.5
            input = { q = "{text|max:3}" }
            """
        ),
        encoding="utf-8",
    )
    manifest = registry(tmp_path)["broken"][1]
    assert len(manifest.affordance.cues) == 1
    found = candidates("fine day", {"broken": manifest.affordance}, ambiguity=0.0)
    assert [(c.tool, c.input) for c in found] == [("broken", {"q": "fin"})]

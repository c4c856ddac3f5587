"""beliefs and gaps: read the self-model in .lumen/self.json."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

RunSkill = Callable[..., Any]


@pytest.fixture
def believer(instance: Path) -> Path:
    """An instance whose self holds four beliefs and two open questions."""
    from state.instance import Instance
    from state.self_state import Belief

    inst = Instance(instance)
    me = inst.load_self()
    me.self_state.beliefs.statements = [
        Belief(id="b1", text="The user prefers green tea to coffee", weight=0.8),
        Belief(id="b2", text="Short answers work best in the morning", weight=0.3),
        Belief(id="b3", text="The user lives in Lyon", weight=0.95),
        Belief(id="b4", text="Coffee keeps the user awake", weight=0.2),
    ]
    me.self_state.epistemics.open_questions = ["What does the user do for work?", "Why Lyon?"]
    inst.save_self(me)
    return instance


def test_beliefs_golden_heaviest_first(run_skill: RunSkill, believer: Path) -> None:
    result = run_skill("beliefs", {"instance": str(believer)})
    assert result.code == 0
    assert result.output == {
        "beliefs": [
            {"id": "b3", "text": "The user lives in Lyon", "weight": 0.95},
            {"id": "b1", "text": "The user prefers green tea to coffee", "weight": 0.8},
            {"id": "b2", "text": "Short answers work best in the morning", "weight": 0.3},
            {"id": "b4", "text": "Coffee keeps the user awake", "weight": 0.2},
        ],
        "count": 4,
    }


def test_beliefs_query_matches_words(run_skill: RunSkill, believer: Path) -> None:
    result = run_skill("beliefs", {"query": "What about COFFEE?", "instance": str(believer)})
    assert [b["id"] for b in result.output["beliefs"]] == ["b1", "b4"]
    assert result.output["count"] == 2


def test_beliefs_query_without_match_is_empty(run_skill: RunSkill, believer: Path) -> None:
    result = run_skill("beliefs", {"query": "astronomy", "instance": str(believer)})
    assert result.output == {"beliefs": [], "count": 0}


def test_beliefs_instance_from_lumen_home(
    run_skill: RunSkill, skill_env: Callable[..., dict[str, str]], believer: Path
) -> None:
    env = skill_env(LUMEN_HOME=str(believer))
    result = run_skill("beliefs", {"limit": 1}, env=env)
    assert result.output == {
        "beliefs": [{"id": "b3", "text": "The user lives in Lyon", "weight": 0.95}],
        "count": 1,
    }


def test_gaps_golden(run_skill: RunSkill, believer: Path) -> None:
    result = run_skill("gaps", {"instance": str(believer)})
    assert result.code == 0
    assert result.output == {
        "open_questions": ["What does the user do for work?", "Why Lyon?"],
        "uncertain_beliefs": [
            {"id": "b4", "text": "Coffee keeps the user awake", "weight": 0.2},
            {"id": "b2", "text": "Short answers work best in the morning", "weight": 0.3},
        ],
    }


def test_gaps_fresh_instance_is_empty(run_skill: RunSkill, instance: Path) -> None:
    result = run_skill("gaps", {"instance": str(instance)})
    assert result.output == {"open_questions": [], "uncertain_beliefs": []}


@pytest.mark.parametrize("skill", ["beliefs", "gaps", "recall", "files", "shell"])
def test_instance_skills_need_an_instance(run_skill: RunSkill, skill: str) -> None:
    payload = {"query": "x", "op": "list", "path": ".", "argv": ["ls"]}
    result = run_skill(skill, payload)
    assert result.code == 2
    assert "LUMEN_HOME" in result.output["error"]


@pytest.mark.parametrize("skill", ["beliefs", "gaps", "recall", "files", "shell"])
def test_instance_skills_reject_a_non_instance(
    run_skill: RunSkill, skill: str, tmp_path: Path
) -> None:
    payload = {"query": "x", "op": "list", "path": ".", "argv": ["ls"], "instance": str(tmp_path)}
    result = run_skill(skill, payload)
    assert result.code == 2
    assert "no Lumen instance" in result.output["error"]


@pytest.mark.parametrize(
    ("skill", "payload", "fragment"),
    [
        ("beliefs", {"query": 3}, '"query"'),
        ("beliefs", {"limit": 0}, '"limit"'),
        ("beliefs", {"instance": "relative/path"}, "absolute"),
        ("gaps", {"threshold": 2}, '"threshold"'),
        ("gaps", {"instance": 5}, '"instance"'),
    ],
)
def test_self_skills_reject_bad_input(
    run_skill: RunSkill, skill: str, payload: dict[str, Any], fragment: str
) -> None:
    result = run_skill(skill, payload)
    assert result.code == 2
    assert fragment in result.output["error"]

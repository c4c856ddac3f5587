import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from state.errors import DataFileError
from state.files import load_goals, load_values
from state.instance import new_identity
from state.records import GoalRecord, MemoryEntry, ValueRecord
from state.self_state import IdentityVector, Psyche, Self, SelfState


def test_self_roundtrips_through_json() -> None:
    original = Self(identity=new_identity())
    original.self_state.epistemics.open_questions.append("what does the user need?")
    restored = Self.model_validate_json(original.model_dump_json())
    assert restored == original


def test_self_state_defaults_follow_skai() -> None:
    state = SelfState()
    assert state.identity.values == {
        "coherence": 0.95,
        "autonomy": 0.9,
        "curiosity": 0.85,
        "bond_loyalty": 0.95,
    }
    assert state.identity.voice_profile == "sardonic_warm"
    assert "intent_over_surface" in state.identity.invariants


def test_psyche_defaults_follow_seed() -> None:
    psyche = Psyche()
    assert psyche.persona.name == "Scholar"
    assert psyche.persona.grammar_preference == "narrative"
    assert psyche.archetypes.as_dict() == {
        "sage": 0.7,
        "healer": 0.5,
        "explorer": 0.5,
        "guardian": 0.4,
    }
    assert psyche.archetypes.dominant() == "sage"
    assert psyche.self_integration.individuation_level == 0.1
    veto = psyche.shadow.veto_patterns[0]
    assert veto.name == "destructive_action"
    assert {"delete all", "drop table", "rm -rf"} <= set(veto.triggers)


def test_identity_id_is_immutable() -> None:
    identity = new_identity()
    with pytest.raises(ValidationError):
        identity.identity_id = "someone-else"


@pytest.mark.parametrize("value", [-0.01, 1.01])
def test_identity_dimensions_are_bounded(value: float) -> None:
    with pytest.raises(ValidationError):
        IdentityVector(identity_id="x", persona_consistency=value)


def test_identity_hash_has_sixteen_chars() -> None:
    with pytest.raises(ValidationError):
        IdentityVector(identity_id="x", identity_hash="abc")
    assert len(new_identity().identity_hash) == 16


def test_memory_entry_is_frozen_and_needs_timezone() -> None:
    entry = MemoryEntry(id="a", author="kernel", description="did a thing")
    with pytest.raises(ValidationError):
        entry.description = "did another thing"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        MemoryEntry(id="a", author="kernel", description="x", timestamp="2026-01-01T00:00:00")


def test_memory_entry_rejects_unknown_author() -> None:
    with pytest.raises(ValidationError):
        MemoryEntry(id="a", author="god", description="x")  # type: ignore[arg-type]


def test_records_roundtrip() -> None:
    value = ValueRecord(name="curiosity", weight=0.85)
    goal = GoalRecord(name="learn", weight=0.5, status="perpetual")
    assert ValueRecord.model_validate_json(value.model_dump_json()) == value
    assert GoalRecord.model_validate_json(goal.model_dump_json()) == goal


def test_values_error_names_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "values.json"
    path.write_text(json.dumps([{"name": "a", "weight": 0.5}, {"name": "b", "weight": 7}]))
    with pytest.raises(DataFileError) as caught:
        load_values(path)
    assert str(path) in str(caught.value) and "1.weight" in str(caught.value)


def test_goals_error_names_file_and_field(tmp_path: Path) -> None:
    (tmp_path / "2026.json").write_text(
        json.dumps([{"name": "g", "weight": 0.5, "status": "maybe"}])
    )
    with pytest.raises(DataFileError) as caught:
        load_goals(tmp_path)
    assert "2026.json" in str(caught.value) and "0.status" in str(caught.value)


def test_goals_are_read_from_every_year(tmp_path: Path) -> None:
    for year in (2025, 2026):
        (tmp_path / f"{year}.json").write_text(json.dumps([{"name": f"g{year}", "weight": 0.5}]))
    assert [(y, g.name) for y, g in load_goals(tmp_path)] == [(2025, "g2025"), (2026, "g2026")]

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from state.errors import DataFileError, LumenError
from state.instance import Instance, default_root, init_instance
from state.self_state import Regret


def test_init_creates_the_spec_layout(tmp_path: Path) -> None:
    inst = init_instance(tmp_path / "i", now=datetime(2026, 11, 22, 9, tzinfo=UTC))
    for rel in (
        "data/soul.md",
        "data/values.json",
        "data/goals/2026.json",
        "data/memory/2026/2026-11-22.jsonl",
        "data/compartments/psyche/psyche.toml",
        "skills/chat/main.py",
        ".lumen/config.toml",
        ".lumen/self.json",
        ".git",
    ):
        assert (inst.root / rel).exists(), rel
    values = json.loads(inst.values_file.read_text())
    assert {v["name"] for v in values} == {"coherence", "autonomy", "curiosity", "bond_loyalty"}
    goals = json.loads(inst.goals_file(2026).read_text())
    assert any(g["status"] == "perpetual" for g in goals)


def test_init_dates_its_files_by_the_injected_clock_not_the_calendar(tmp_path: Path) -> None:
    # Any day but today: the layout follows the clock the caller passes, on every date.
    inst = init_instance(tmp_path / "i", now=datetime(2031, 2, 28, 23, 59, tzinfo=UTC))
    assert (inst.root / "data/goals/2031.json").exists()
    assert [p.name for p in (inst.root / "data/memory").rglob("*.jsonl")] == ["2031-02-28.jsonl"]


def test_init_refuses_an_existing_instance(tmp_path: Path) -> None:
    init_instance(tmp_path / "i")
    with pytest.raises(LumenError, match="already exists"):
        init_instance(tmp_path / "i")


def test_init_force_never_destroys_data(tmp_path: Path) -> None:
    inst = init_instance(tmp_path / "i")
    inst.values_file.write_text('[{"name": "mine", "weight": 0.3, "status": "active"}]')
    identity = inst.load_self().identity.identity_id
    inst.goals_dir.joinpath("2026.json").unlink(missing_ok=True)
    init_instance(tmp_path / "i", force=True, now=datetime(2026, 1, 1, tzinfo=UTC))
    assert "mine" in inst.values_file.read_text()
    assert inst.load_self().identity.identity_id == identity
    assert inst.goals_file(2026).exists()


def test_default_root_uses_lumen_home(tmp_path: Path) -> None:
    assert default_root({"LUMEN_HOME": str(tmp_path)}) == tmp_path
    assert default_root({}).name == "lumen"


def test_psyche_loads_from_compartment_file_when_nothing_persisted(tmp_path: Path) -> None:
    inst = init_instance(tmp_path / "i")
    inst.self_file.unlink()
    text = inst.psyche_file.read_text().replace('name = "Scholar"', 'name = "Mentor"')
    inst.psyche_file.write_text(text)
    assert Instance(inst.root).load_psyche().persona.name == "Mentor"


def test_persisted_psyche_wins_over_the_compartment_file(tmp_path: Path) -> None:
    inst = init_instance(tmp_path / "i")
    me = inst.load_self()
    me.psyche.archetypes.explorer = 0.9
    inst.save_self(me)
    inst.psyche_file.write_text(
        inst.psyche_file.read_text().replace("explorer = 0.5", "explorer = 0.2")
    )
    assert Instance(inst.root).load_psyche().archetypes.explorer == 0.9


def test_fork_is_an_equal_independent_copy(tmp_path: Path) -> None:
    """``fork`` copies every nested model, dict and list: changing the copy leaves the original.

    Log records (frozen ``Record`` models, ``Metacog._records`` lists) are written once: the
    fork gets its own list and shares the records, which cannot be changed in place.
    """
    me = init_instance(tmp_path / "inst").load_self()
    me.metacog.concepts["lisbon"] = 3
    me.metacog.outcomes.append({"turn": 1, "signals": {"repair": 0.2}})
    me.self_state.growth.regret_log = [Regret(kind="tool_miss", note="no tool")]
    copy = me.fork()
    assert copy == me and copy.model_fields_set == me.model_fields_set
    copy.metacog.concepts["lisbon"] = 9
    copy.metacog.outcomes.append({"turn": 2})
    copy.self_state.growth.regret_log.append(Regret(kind="style_drift", note="long"))
    copy.psyche.shadow.veto_patterns[0].triggers.append("extra")
    assert me.metacog.concepts["lisbon"] == 3
    assert me.metacog.outcomes == [{"turn": 1, "signals": {"repair": 0.2}}]
    assert [r.kind for r in me.self_state.growth.regret_log] == ["tool_miss"]
    assert "extra" not in me.psyche.shadow.veto_patterns[0].triggers
    with pytest.raises(ValidationError):  # a shared record cannot be changed through the copy
        copy.self_state.growth.regret_log[0].kind = "meaning_miss"


def test_load_self_sees_every_change_to_the_file(tmp_path: Path) -> None:
    """The kept parse is only reused for identical bytes: an edit by another process is read."""
    instance = init_instance(tmp_path / "inst")
    first = instance.load_self()
    first.metacog.turn_index = 41  # a caller's change to its copy never leaks into the next load
    assert instance.load_self().metacog.turn_index == 0
    raw = json.loads(instance.self_file.read_text(encoding="utf-8"))
    raw["metacog"]["turn_index"] = 7
    instance.self_file.write_text(json.dumps(raw), encoding="utf-8")  # another process's write
    assert instance.load_self().metacog.turn_index == 7
    instance.self_file.write_text("{broken", encoding="utf-8")
    with pytest.raises(DataFileError, match="invalid JSON"):
        instance.load_self()


def test_snapshot_core_restores_the_shadow_catalogue_it_had(tmp_path: Path) -> None:
    """A snapshot leaves the seeded catalogue out (11 KB per checkpoint) and still restores it."""
    from kernel.patterns import ShadowPattern
    from kernel.shadow import Shadow
    from state.snapshot import restored_self, take_snapshot

    inst = init_instance(tmp_path / "i", now=datetime(2026, 11, 22, 9, tzinfo=UTC))
    seeded = take_snapshot(inst)
    assert "shadow" not in seeded.self_core["psyche"]
    me = inst.load_self()
    extra = ShadowPattern(name="no_prod_drop", triggers=["drop table"])
    me.psyche.shadow.veto_patterns.append(extra)
    inst.save_self(me)
    custom = take_snapshot(inst)
    assert custom.self_core["psyche"]["shadow"]["veto_patterns"][-1]["name"] == "no_prod_drop"
    # each restores exactly the catalogue it was taken with, whatever the present one is
    plain = restored_self(inst.load_self(), seeded)
    assert plain.psyche.shadow == Shadow()
    back = restored_self(plain, custom).psyche.shadow
    assert back == inst.load_self().psyche.shadow != Shadow()

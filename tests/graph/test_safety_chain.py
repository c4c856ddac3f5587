"""The MSCP safety chain reached by real faults, through the real entry points (issue 13).

Each scenario runs ``lumen run`` (``cli.app.main``) or ``graph.autonomy.run`` with the scripted
model and a realistic fault — a skill that starts failing, a concurrent writer of values.json,
a flaky skill, a slow model — and asserts the branch the cycle took *and* a later decision that
changed because of it. The clock and the sleep are injected, so cooldowns cost no wall time.
"""

from __future__ import annotations

import itertools
import json
import shutil
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cli.app import main
from graph.autonomy import run
from graph.deps import Deps
from kernel import mscp
from kernel.core import archetype_bonus
from state.counters import read_counters
from state.instance import Instance
from state.journal import MemoryJournal
from state.self_state import Belief
from tests.scripted import ScriptedChatModel, cycle_model

BUILTIN = Path(__file__).resolve().parents[2] / "skills"


class FakeTime:
    """A clock the run reads and a sleep that advances it (date-independent, instant)."""

    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC)
        self.slept: list[float] = []

    def __call__(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += timedelta(seconds=seconds)


def faulty_skill(instance: Instance, name: str, fault: str) -> Path:
    """Shadow a built-in skill with one that fails while a marker file exists.

    ``fault="broken"``: every run fails while ``BROKEN`` exists; ``fault="flaky"``: every
    second run fails while ``FLAKY`` exists. Otherwise the built-in runs unchanged.
    """
    folder = instance.skills_dir / name
    folder.mkdir(parents=True)
    shutil.copy(BUILTIN / name / "skill.toml", folder / "skill.toml")
    builtin = str(BUILTIN / name / "main.py")
    (folder / "main.py").write_text(
        "import pathlib, runpy, sys\n"
        "here = pathlib.Path(__file__)\n"
        "if here.with_name('BROKEN').exists():\n"
        "    sys.stderr.write('backend unavailable\\n'); sys.exit(1)\n"
        "if here.with_name('FLAKY').exists():\n"
        "    n = here.with_name('count'); k = int(n.read_text()) if n.exists() else 0\n"
        "    n.write_text(str(k + 1))\n"
        "    if k % 2: sys.stderr.write('flaky backend\\n'); sys.exit(1)\n"
        f"runpy.run_path({builtin!r}, run_name='__main__')\n"
    )
    return folder


def set_config(instance: Instance, old: str, new: str) -> None:
    text = instance.config_file.read_text()
    assert old in text
    instance.config_file.write_text(text.replace(old, new, 1))


@pytest.fixture
def clock() -> FakeTime:
    return FakeTime()


@pytest.fixture
def deps(instance: Instance, clock: FakeTime) -> Deps:
    model = cycle_model(success=0.95)
    return Deps.for_instance(instance, model_for=lambda mode: model, clock=clock)


def cycles_only(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if "reflection" not in r]


# (a) a skill that starts failing ------------------------------------------------------------


def test_a_failing_skill_raises_epsilon_reflects_and_another_skill_is_chosen(
    instance: Instance, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = cycle_model(success=0.95)
    monkeypatch.setattr("graph.llm.make_chat_model", lambda config, **_: model)
    set_config(instance, "cooldown_seconds = 30", "cooldown_seconds = 0.01")
    folder = faulty_skill(instance, "beliefs", "broken")
    assert main(["run", "--cycles", "3", "--json"]) == 0
    healthy = cycles_only([json.loads(line) for line in capsys.readouterr().out.splitlines()])
    assert {r["skill"] for r in healthy} == {"beliefs"}  # the skill it trusts
    psyche = instance.load_self().psyche.archetypes
    sage_before, guardian_before = psyche.sage, psyche.guardian

    (folder / "BROKEN").write_text("the index this skill reads is gone")
    assert main(["run", "--cycles", "10", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    rows = cycles_only(lines)
    reflections = [r["reflection"] for r in lines if "reflection" in r]
    failing = [r for r in rows if r["skill"] == "beliefs" and r["outcome"] == "failed"]
    assert failing and max(r["epsilon"] for r in failing) > 0.5  # confident and wrong
    assert any("prediction_delta" in r["triggers"] for r in rows)
    assert any("prediction_delta" in r["triggers"] for r in reflections)
    assert any({"escalation", "cooldown"} <= set(r["branches"]) for r in rows)
    # the prediction_delta reflection traced the surprises to the sage's skill and lowered it by
    # one Psyche.evolve step, though its lifetime record (healthy runs included) is not < 30%
    surprised = next(r for r in reflections if "prediction_delta" in r["triggers"])
    sage_lowered = round(sage_before - mscp.ARCHETYPE_STEP, 6)
    lowered = [a for a in surprised["applied"] if a.startswith("archetype:")]
    assert lowered == [f"archetype:sage {sage_before}->{sage_lowered}"]
    me = instance.load_self()
    assert me.psyche.archetypes.sage < sage_before
    assert me.psyche.archetypes.guardian >= guardian_before  # the healthy archetype is not
    ledger = MemoryJournal(instance.memory_dir).tail(100_000)
    why = [e for e in ledger if e.author == "self" and e.meta.get("target") == "archetype"]
    assert any(
        e.meta.get("name") == "sage"
        and e.meta.get("trigger") == "prediction_delta"
        and "surprising failures of beliefs" in e.description
        for e in why
    )
    # later decisions score the sage's skills with the lowered bonus (000: (w - 0.5) x 0.15)
    bonus = f"archetype={archetype_bonus(sage_lowered):+.3f}"
    assert any("cycle chose" in e.description and bonus in e.description for e in ledger)
    # lumen audit traces the archetype change to that memory
    assert main(["audit", "--strict", "--json"]) == 0
    drift = json.loads(capsys.readouterr().out)["value_drift"]
    assert any(c["kind"] == "archetype" and c["name"] == "sage" for c in drift["changes"])
    assert drift["unexplained"] == []
    assert rows[-1]["skill"] != "beliefs" and rows[-1]["outcome"] == "ok"  # a different skill
    # calibration improves: the forecasts learn the failure, so ε falls while it keeps failing
    assert failing[-1]["epsilon"] < failing[0]["epsilon"]


# (b) values.json changed by another process mid-run ----------------------------------------


def test_b_a_concurrent_writer_is_rolled_back_to_the_last_stable_snapshot(
    deps: Deps, instance: Instance
) -> None:
    good = instance.values_file.read_text()
    tampered = good.replace("0.95", "0.05", 1)
    go, written = threading.Event(), threading.Event()

    def other_process() -> None:  # rewrites values.json once, between two cycles
        go.wait(10)
        instance.values_file.write_text(tampered)
        written.set()

    writer = threading.Thread(target=other_process)
    writer.start()
    rows: list[dict[str, Any]] = []

    def emit(row: dict[str, Any]) -> None:
        if "cycle" in row:
            rows.append(row)
            if row["cycle"] == 2:
                go.set()
                written.wait(10)

    run(deps, cycles=4, emit=emit)
    writer.join()
    assert rows[2]["branches"][:2] == ["rollback", "rollback_restored"]
    assert instance.values_file.read_text() != tampered
    kinds = {e.meta.get("kind") for e in deps.store.read().entries}
    assert {"ValueLockBroken", "Rollback"} <= kinds
    record = json.loads((instance.metacog_dir / "rollbacks.jsonl").read_text().splitlines()[0])
    assert record["restored_from"] != "cycle-snapshot"  # the last stable checkpoint
    assert rows[3]["skill"] == rows[1]["skill"] and "rollback" not in rows[3]["branches"]


def test_b_a_writer_that_undoes_the_restore_drops_to_safe_mode_until_stable(
    deps: Deps, instance: Instance, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = instance.values_file.read_text()
    tampered = good.replace("0.95", "0.05", 1)
    restore = deps.restore_self
    undone: list[bool] = []

    def restore_then_undone(snapshot: Any) -> None:
        restore(snapshot)
        if not undone:  # the other process writes its copy back right after the first restore
            undone.append(True)
            instance.values_file.write_text(tampered)

    monkeypatch.setattr(deps, "restore_self", restore_then_undone)
    rows: list[dict[str, Any]] = []

    def emit(row: dict[str, Any]) -> None:
        if "cycle" in row:
            rows.append(row)
            if row["cycle"] == 2:  # another process rewrites values.json between two cycles
                instance.values_file.write_text(tampered)

    run(deps, cycles=9, emit=emit)
    third, fourth = rows[2], rows[3]
    assert third["branches"] == ["rollback", "safe_mode"]  # rollback_check saw the undo
    assert third["safe_mode_left"] == 3
    # the next cycle is in safe mode (budget_reset did not lift it) and restores for real
    assert fourth["budget"] == 0.0 and "rollback_restored" in fourth["branches"]
    assert {v["name"] for v in json.loads(instance.values_file.read_text())} == {
        v["name"] for v in json.loads(good)
    }
    safe = rows[4:7]
    assert all(r["budget"] == 0.0 and r["skill"] == "" for r in safe)  # safety layers only
    assert [r["safe_mode_left"] for r in safe] == [2, 1, 0]
    assert rows[7]["skill"] and rows[7]["budget"] > 0.0  # acting again after 3 stable cycles


# (c) a burst of large self-updates -> escalation -> a real cooldown -------------------------


def test_c_large_surprises_escalate_into_a_configured_cooldown_the_run_waits_out(
    deps: Deps, instance: Instance, clock: FakeTime
) -> None:
    set_config(instance, "cooldown_seconds = 30", "cooldown_seconds = 5")
    deps = Deps.for_instance(instance, model_for=deps.model_for, clock=clock)
    folder = faulty_skill(instance, "beliefs", "broken")
    rows: list[dict[str, Any]] = []

    def emit(row: dict[str, Any]) -> None:
        if "cycle" in row:
            rows.append(row)
            if row["cycle"] == 3:
                (folder / "BROKEN").write_text("x")

    before = instance.load_self().identity
    run(deps, cycles=6, emit=emit, sleep=clock.sleep)
    cooled = next(r for r in rows if "cooldown" in r["branches"])
    assert cooled["escalations"] >= 3 and cooled["status"] == "cooldown"
    assert clock.slept and clock.slept[0] == pytest.approx(5.0, abs=0.01)  # waited, not 30 s
    after_cooldown = rows[rows.index(cooled) + 1]
    assert after_cooldown["cooled_down_s"] == pytest.approx(5.0, abs=0.01)
    # the measured surprises were large, but every identity step stayed within the clamps
    records = [e for e in deps.store.read().entries if e.meta.get("step") == "record"]
    assert max(abs(e.meta["actual"]["capability_confidence"]) for e in records) > 0.08
    me = instance.load_self()
    assert me.identity.identity_id == before.identity_id
    assert max(me.autonomy.identity_deltas) <= (4 * 0.05**2 + 0.08**2) ** 0.5 + 1e-9
    assert read_counters(instance.machine)["cycle_cooldown_total"] >= 1


def talked_to(instance: Instance) -> None:
    """A self that has talked with its user: a few beliefs of similar weight (E_belief ~ 1)."""
    me = instance.load_self()
    me.self_state.beliefs.statements = [
        Belief(id=f"b{i}", text=text, weight=weight)
        for i, (text, weight) in enumerate(
            [
                ("My user prefers short answers", 0.6),
                ("My user drinks tea", 0.5),
                ("Works late", 0.55),
            ]
        )
    ]
    instance.save_self(me)


def flapping_index(instance: Instance) -> list[Path]:
    """The memory readers (beliefs, recall, gaps) share an index that will flap."""
    return [faulty_skill(instance, name, "broken") for name in ("beliefs", "recall", "gaps")]


def flap(instance: Instance, folders: list[Path], cycle: int) -> None:
    """From cycle 3 the index is down two cycles and up two, and the goals are reweighted."""
    if cycle < 3:
        return
    down = (cycle // 2) % 2 == 0
    for folder in folders:
        marker = folder / "BROKEN"
        if down:
            marker.write_text("the index is rebuilding")
        elif marker.exists():
            marker.unlink()
    reweight_goals(instance, cycle)


def reweight_goals(instance: Instance, cycle: int) -> None:
    """Another process rewrites the goals' weights (as a second agent or a script would)."""
    path = next(instance.goals_dir.glob("*.json"))
    goals = json.loads(path.read_text())
    for goal in goals:
        goal["weight"] = 0.3 + 0.4 * ((cycle + len(goal["name"])) % 2)
    path.write_text(json.dumps(goals))


def test_c_a_burst_of_large_self_updates_halves_stabilizes_escalates_and_cools_down(
    instance: Instance, clock: FakeTime
) -> None:
    """Index flapping (down two cycles, up two) while another process reweights the goals.

    The identity swings one way for a whole cycle and back the next (the acceleration halving),
    C(t) climbs past 0.7 (stabilization, mutation scaling halved, later updates smaller) and the
    MSI falls under 0.5 (escalations, then real cooldowns the run waits out).
    """
    talked_to(instance)
    set_config(instance, "cooldown_seconds = 30", "cooldown_seconds = 5")
    model = cycle_model(success=0.95)
    deps = Deps.for_instance(instance, model_for=lambda m: model, clock=clock)
    folders = flapping_index(instance)
    rows: list[dict[str, Any]] = []

    def emit(row: dict[str, Any]) -> None:
        if "cycle" not in row:
            return
        rows.append(row)
        flap(instance, folders, row["cycle"])

    run(deps, cycles=18, emit=emit, sleep=clock.sleep)
    # clamps: no update ever moved the identity further than the caps allow
    assert max(r["identity_delta"] for r in rows) <= mscp.IDENTITY_STEP_MAX + 1e-9
    # acceleration halving: a reversal at speed; the next check stabilizes (scaling halved)
    burst = next(i for i, r in enumerate(rows) if "acceleration_halving" in r["branches"])
    after = rows[burst + 1]
    assert "stabilize" in after["branches"] and after["mutation_scaling"] == 0.5
    # stabilization: C(t) reaches 0.7 by real updates, bounded by δ_max per cycle (Theorem 1)
    high = next(i for i, r in enumerate(rows) if r["composite"] >= mscp.STABILIZATION_ON)
    assert all(
        abs(b["composite"] - a["composite"]) <= 3 * mscp.DELTA_MAX + 1e-9
        for a, b in itertools.pairwise(rows)
    )
    stable = rows[high:]
    assert all(r["stabilization_mode"] for r in stable)  # until C < 0.5 (hysteresis)
    assert "stabilize" in rows[high]["branches"]
    # ... the later decision: the scaling keeps halving and each update is at most a quarter
    assert rows[high + 2]["mutation_scaling"] <= 0.25
    later = [r["identity_delta"] for r in stable[2:] if r["identity_delta"]]
    assert later and max(later) <= mscp.IDENTITY_STEP_MAX * 0.25 + 1e-9
    # escalation: MSI < 0.5 escalates every pass; three in a row is a cooldown the run waits out
    low = [r for r in rows if r["msi"] < mscp.MSI_ESCALATION]
    assert low and all("escalation" in r["branches"] for r in rows[rows.index(low[0]) + 1 :])
    cooled = [r for r in rows if "cooldown" in r["branches"]]
    assert cooled and clock.slept and all(s == pytest.approx(5.0, abs=0.01) for s in clock.slept)
    counters = read_counters(instance.machine)
    assert counters["cycle_cooldown_total"] == len(cooled)
    assert counters["cycle_stabilization_total"] >= 2  # the burst and C >= 0.7


# (d) budget spent by real work -> §9 tiers change the cycle ---------------------------------


def slow_model(clock: FakeTime, seconds: float) -> ScriptedChatModel:
    inner = cycle_model(success=0.95)
    respond = inner.respond
    assert respond is not None

    def slow(messages: Any) -> str:
        clock.now += timedelta(seconds=seconds)  # the model call takes this long
        return respond(messages)

    return ScriptedChatModel(respond=slow)


def test_d_a_slow_model_spends_the_budget_and_the_tiers_switch_capabilities_off(
    instance: Instance, clock: FakeTime
) -> None:
    steady = cycle_model(success=0.95)  # one model: its explore questions differ each time
    fast = run(
        Deps.for_instance(instance, model_for=lambda m: steady, clock=clock),
        cycles=6,
        sleep=clock.sleep,
    ).cycles
    assert any("meta_depth_2" in r["branches"] for r in fast)
    assert not any(r["degraded"] for r in fast)
    model = slow_model(clock, 30.0)
    slow = run(
        Deps.for_instance(instance, model_for=lambda m: model, clock=clock),
        cycles=6,
        sleep=clock.sleep,
    ).cycles
    assert all(r["budget"] < 0.3 for r in slow)  # 1 call + 30 s + a skill run: 0.8 spent
    assert not any("meta_depth_2" in r["branches"] for r in slow)  # depth 2 switched off
    assert all(any("meta depth 2 off" in d for d in r["degraded"]) for r in slow)
    model = slow_model(clock, 35.0)
    slower = run(
        Deps.for_instance(instance, model_for=lambda m: model, clock=clock),
        cycles=4,
        sleep=clock.sleep,
    ).cycles
    assert all(any("tensor recomputation off" in d for d in r["degraded"]) for r in slower)
    assert len({r["composite"] for r in slower}) == 1  # C(t) is no longer recomputed


# (e) oscillation -> mutation scaling reduced, restored once stable --------------------------


def test_e_oscillation_halves_the_mutation_scaling_and_calm_restores_it(
    deps: Deps, instance: Instance, clock: FakeTime
) -> None:
    """A skill that works one cycle and fails the next swings the identity back and forth."""
    folder = faulty_skill(instance, "beliefs", "broken")
    rows: list[dict[str, Any]] = []

    def emit(row: dict[str, Any]) -> None:
        if "cycle" in row:
            rows.append(row)
            marker = folder / "BROKEN"
            if row["cycle"] >= 2 and row["cycle"] % 2 == 0:
                marker.write_text("x")
            elif marker.exists():
                marker.unlink()

    run(deps, cycles=12, emit=emit, sleep=clock.sleep)
    reduced = next(i for i, r in enumerate(rows) if "stabilize" in r["branches"])
    assert "acceleration_halving" in rows[reduced - 1]["branches"]  # the swing reversed at speed
    assert rows[reduced]["mutation_scaling"] == 0.5
    restored = next(i for i, r in enumerate(rows) if i > reduced and r["mutation_scaling"] == 1.0)
    # restored only once calm: the last stabilization lies 3 or more calm cycles before it
    last = max(i for i, r in enumerate(rows[:restored]) if "stabilize" in r["branches"])
    assert restored - last >= 3
    assert all("stabilize" not in r["branches"] for r in rows[last + 1 : restored + 1])


@pytest.fixture(autouse=True)
def _no_leaked_threads() -> Iterator[None]:
    before = threading.active_count()
    yield
    assert threading.active_count() <= before + 1


def test_rate_limit_refusals_are_not_scored_as_the_agents_own_failures(
    deps: Deps, instance: Instance, clock: FakeTime
) -> None:
    set_config(instance, "max_actions_per_hour = 120", "max_actions_per_hour = 2")
    deps = Deps.for_instance(instance, model_for=deps.model_for, clock=clock)
    rows = run(deps, cycles=4, sleep=clock.sleep).cycles
    assert "refused" in {r["outcome"] for r in rows}
    stats = instance.load_self().autonomy.archetype_stats
    assert all(succ == uses for succ, uses in stats.values())  # no refusal counted as a miss
    records = [e for e in deps.store.read().entries if e.meta.get("step") == "record"]
    refused = [e for e in records if "(refusal)" in e.description]
    assert refused and all(e.meta["actual"]["capability_confidence"] == 0.0 for e in refused)

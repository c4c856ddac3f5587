"""SecurityPolicy: workspace confinement, command allowlist, action rate, daily cost, skills."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph.policy import DENIAL_KINDS, LEDGER_NAME, PolicyDecision, SecurityPolicy
from state.config import Config, PolicyConfig, ShellSkillConfig, SkillsConfig
from state.instance import Instance, init_instance

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class Clock:
    """A settable clock."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def config(
    *,
    allowed: list[str] | None = None,
    shell_allow: list[str] | None = None,
    shell_enabled: bool = False,
    per_hour: int = 120,
    per_day: float = 1.0,
    autonomous_shell: bool = False,
    autonomous_authoring: bool = False,
) -> Config:
    return Config(
        policy=PolicyConfig(
            allowed_commands=allowed or [],
            max_actions_per_hour=per_hour,
            max_cost_per_day=per_day,
            autonomous_shell=autonomous_shell,
            autonomous_skill_authoring=autonomous_authoring,
        ),
        skills=SkillsConfig(
            shell=ShellSkillConfig(enabled=shell_enabled, allowlist=shell_allow or [])
        ),
    )


@pytest.fixture
def inst(tmp_path: Path) -> Instance:
    return init_instance(tmp_path / "i")


def policy(inst: Instance, clock: Clock | None = None, **kwargs: Any) -> SecurityPolicy:
    return SecurityPolicy(inst, config(**kwargs), clock=clock or Clock())


def denied(decision: PolicyDecision, kind: str) -> bool:
    return decision.allowed is False and decision.kind == kind


# --------------------------------------------------------------------------- paths


@pytest.mark.parametrize("path", ["notes.md", "a/b/c.txt", ".", "./x", "deep/./er"])
def test_policy_path_inside_workspace_allowed(inst: Instance, path: str) -> None:
    decision = policy(inst).check_path(path)
    assert decision == PolicyDecision(True, decision.reason, "ok")


def test_policy_workspace_created_on_demand(inst: Instance) -> None:
    pol = policy(inst)
    assert pol.workspace == inst.root / "workspace"
    assert not pol.workspace.exists()
    assert pol.check_path("x").allowed
    assert pol.workspace.is_dir()


def test_policy_absolute_path_inside_allowed(inst: Instance) -> None:
    pol = policy(inst)
    assert pol.check_path(pol.workspace / "sub" / "f.txt").allowed


@pytest.mark.parametrize("path", ["/etc/passwd", "/", "/tmp"])
def test_policy_absolute_path_outside_denied(inst: Instance, path: str) -> None:
    assert denied(policy(inst).check_path(path), "workspace")


def test_policy_instance_machine_dir_denied(inst: Instance) -> None:
    assert denied(policy(inst).check_path(inst.self_file), "workspace")


@pytest.mark.parametrize(
    "path", ["..", "../x", "a/../../x", "a/../b", "..\\..\\x", "sub/..", "../workspace/x"]
)
def test_policy_dotdot_denied(inst: Instance, path: str) -> None:
    assert denied(policy(inst).check_path(path), "workspace")


def test_policy_symlink_escape_denied(inst: Instance, tmp_path: Path) -> None:
    pol = policy(inst)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    pol.workspace.mkdir()
    (pol.workspace / "link").symlink_to(outside, target_is_directory=True)
    (pol.workspace / "file_link").symlink_to(outside / "secret.txt")
    (pol.workspace / "root_link").symlink_to("/")
    (pol.workspace / "dangling").symlink_to(outside / "missing")
    for path in ("link", "link/secret.txt", "link/new.txt", "file_link", "root_link/etc"):
        assert denied(pol.check_path(path), "workspace"), path
    assert denied(pol.check_path("dangling"), "workspace")


def test_policy_symlink_inside_allowed(inst: Instance) -> None:
    pol = policy(inst)
    (pol.workspace / "real").mkdir(parents=True)
    (pol.workspace / "alias").symlink_to(pol.workspace / "real", target_is_directory=True)
    assert pol.check_path("alias/f.txt").allowed


def test_policy_symlink_loop_denied_not_raised(inst: Instance) -> None:
    pol = policy(inst)
    pol.workspace.mkdir()
    (pol.workspace / "a").symlink_to(pol.workspace / "b")
    (pol.workspace / "b").symlink_to(pol.workspace / "a")
    decision = pol.check_path("a/x")
    assert not decision.allowed
    assert decision.kind in {"path", "workspace"}


def test_policy_workspace_symlink_denied(inst: Instance, tmp_path: Path) -> None:
    pol = policy(inst)
    (tmp_path / "elsewhere").mkdir()
    pol.workspace.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert denied(pol.check_path("x"), "workspace")


@pytest.mark.parametrize("path", ["a\x00b", "\x00", "", "   "])
def test_policy_malformed_path_denied(inst: Instance, path: str) -> None:
    assert denied(policy(inst).check_path(path), "path")


@pytest.mark.parametrize("path", [None, 42, b"x", ["x"]])
def test_policy_non_text_path_denied(inst: Instance, path: Any) -> None:
    assert denied(policy(inst).check_path(path), "path")


def test_policy_confine_returns_resolved_target(inst: Instance) -> None:
    pol = policy(inst)
    decision, target = pol.confine("a/b.txt")
    assert decision.allowed
    assert target == pol.workspace.resolve() / "a" / "b.txt"
    assert pol.confine("../x")[1] is None


# --------------------------------------------------------------------------- commands


def test_policy_command_allowlisted_by_policy(inst: Instance) -> None:
    assert policy(inst, allowed=["ls"]).check_command(["ls", "-la"], autonomous=False).allowed


def test_policy_command_allowlisted_by_shell_skill(inst: Instance) -> None:
    assert (
        policy(inst, shell_allow=["echo"]).check_command(["echo", "hi"], autonomous=False).allowed
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["rm", "-rf", "/"],
        ["/bin/ls"],
        ["./ls"],
        ["bin/ls"],
        ["..\\ls"],
        ["LS"],
        ["ls "],
        [""],
        [],
        "ls",
        ["ls", "a\x00b"],
        ["ls\x00"],
        [1, 2],
        None,
    ],
)
def test_policy_command_denied(inst: Instance, argv: Any) -> None:
    pol = policy(inst, allowed=["ls", "echo"])
    assert denied(pol.check_command(argv, autonomous=False), "command")


def test_policy_command_allowlist_entries_must_be_bare(inst: Instance) -> None:
    pol = policy(inst, allowed=["/usr/bin/ls"])
    assert denied(pol.check_command(["/usr/bin/ls"], autonomous=False), "command")
    assert denied(pol.check_command(["ls"], autonomous=False), "command")


def test_policy_autonomous_shell_requires_flag(inst: Instance) -> None:
    assert denied(policy(inst, allowed=["ls"]).check_command(["ls"], autonomous=True), "command")
    pol = policy(inst, allowed=["ls"], autonomous_shell=True)
    assert pol.check_command(["ls"], autonomous=True).allowed


# --------------------------------------------------------------------------- rate


def test_policy_rate_limit_exactly_at_limit(inst: Instance) -> None:
    pol = policy(inst, per_hour=3)
    assert all(pol.record_action("a").allowed for _ in range(3))
    assert denied(pol.record_action("a"), "rate")


def test_policy_rate_denial_not_recorded(inst: Instance) -> None:
    clock = Clock()
    pol = policy(inst, clock, per_hour=2)
    pol.record_action("a")
    clock.advance(minutes=30)
    pol.record_action("a")
    for _ in range(5):
        assert denied(pol.record_action("a"), "rate")
    clock.advance(minutes=30)  # the first action leaves the window; denials never entered it
    assert pol.record_action("a").allowed
    assert denied(pol.record_action("a"), "rate")


def test_policy_rate_window_slides(inst: Instance) -> None:
    clock = Clock()
    pol = policy(inst, clock, per_hour=3)
    for _ in range(3):
        assert pol.record_action("a").allowed
    clock.advance(minutes=59, seconds=59)
    assert denied(pol.record_action("a"), "rate")
    clock.advance(seconds=1)  # exactly one hour later: the three actions no longer count
    assert pol.record_action("a").allowed
    assert pol.usage() == (1, 0.0)


def test_policy_rate_zero_denies_everything(inst: Instance) -> None:
    assert denied(policy(inst, per_hour=0).record_action("a"), "rate")


def test_policy_clock_going_backwards_stays_conservative(inst: Instance) -> None:
    clock = Clock()
    pol = policy(inst, clock, per_hour=2)
    pol.record_action("a")
    pol.record_action("a")
    clock.advance(hours=-3)
    assert denied(pol.record_action("a"), "rate")


# --------------------------------------------------------------------------- cost


def test_policy_cost_exactly_at_limit_allowed(inst: Instance) -> None:
    pol = policy(inst, per_day=1.0)
    assert pol.record_action("llm", cost=0.5).allowed
    assert pol.record_action("llm", cost=0.3).allowed
    assert pol.record_action("llm", cost=0.2).allowed  # 0.5 + 0.3 + 0.2 == 1.0 (float sum)
    assert denied(pol.record_action("llm", cost=0.01), "cost")
    assert pol.record_action("free").allowed  # zero cost still fits
    assert pol.usage() == (4, pytest.approx(1.0))


def test_policy_cost_single_action_over_limit(inst: Instance) -> None:
    pol = policy(inst, per_day=1.0)
    assert denied(pol.record_action("llm", cost=1.5), "cost")
    assert pol.usage() == (0, 0.0)


def test_policy_cost_day_rollover_utc(inst: Instance) -> None:
    clock = Clock(datetime(2026, 3, 1, 23, 59, 59, tzinfo=UTC))
    pol = policy(inst, clock, per_day=1.0)
    assert pol.record_action("llm", cost=1.0).allowed
    assert denied(pol.record_action("llm", cost=0.1), "cost")
    clock.advance(seconds=1)  # 00:00:00 UTC: a new calendar day
    assert pol.record_action("llm", cost=1.0).allowed
    assert denied(pol.record_action("llm", cost=0.1), "cost")


def test_policy_cost_day_is_utc_not_local(inst: Instance) -> None:
    tokyo = timezone(timedelta(hours=9))
    # 08:30 in Tokyo on 2 March is still 1 March in UTC.
    clock = Clock(datetime(2026, 3, 1, 23, 0, tzinfo=UTC))
    pol = policy(inst, clock, per_day=1.0)
    assert pol.record_action("llm", cost=1.0).allowed
    clock.now = datetime(2026, 3, 2, 8, 30, tzinfo=tokyo)
    assert denied(pol.record_action("llm", cost=0.5), "cost")
    clock.now = datetime(2026, 3, 2, 9, 0, tzinfo=tokyo)
    assert pol.record_action("llm", cost=0.5).allowed


@pytest.mark.parametrize("cost", [-0.1, float("nan"), float("inf"), True, "0.1", None])
def test_policy_bad_cost_denied(inst: Instance, cost: Any) -> None:
    pol = policy(inst)
    assert denied(pol.record_action("llm", cost=cost), "cost")
    assert pol.usage() == (0, 0.0)


def test_policy_zero_daily_budget(inst: Instance) -> None:
    pol = policy(inst, per_day=0.0)
    assert pol.record_action("free").allowed
    assert denied(pol.record_action("llm", cost=1e-6), "cost")


# --------------------------------------------------------------------------- persistence


def test_policy_limits_persist_across_instances(inst: Instance) -> None:
    clock = Clock()
    first = policy(inst, clock, per_hour=3, per_day=1.0)
    assert first.record_action("a", cost=0.6).allowed
    assert first.record_action("a").allowed
    second = policy(inst, clock, per_hour=3, per_day=1.0)  # a restart or another process
    assert denied(second.record_action("a", cost=0.5), "cost")
    assert second.record_action("a", cost=0.4).allowed
    assert denied(first.record_action("a"), "rate")
    ledger = json.loads((inst.machine / LEDGER_NAME).read_text())
    assert len(ledger["actions"]) == 3
    assert ledger["cost"] == {"day": "2026-03-01", "total": pytest.approx(1.0)}


def test_policy_ledger_prunes_old_actions(inst: Instance) -> None:
    clock = Clock()
    pol = policy(inst, clock)
    for _ in range(5):
        pol.record_action("a")
    clock.advance(hours=2)
    pol.record_action("b")
    ledger = json.loads((inst.machine / LEDGER_NAME).read_text())
    assert [a["kind"] for a in ledger["actions"]] == ["b"]


@pytest.mark.parametrize(
    "content",
    ["not json", "[]", '{"version": 1}', '{"version": 1, "actions": [], "cost": {"day": "x"}}'],
)
def test_policy_corrupt_ledger_fails_closed(inst: Instance, content: str) -> None:
    (inst.machine / LEDGER_NAME).write_text(content)
    pol = policy(inst)
    assert denied(pol.record_action("a"), "ledger")
    assert pol.usage() is None


def test_policy_negative_ledger_cost_fails_closed(inst: Instance) -> None:
    raw = {"version": 1, "actions": [], "cost": {"day": "2026-03-01", "total": -5}}
    (inst.machine / LEDGER_NAME).write_text(json.dumps(raw))
    assert denied(policy(inst).record_action("a", cost=1.0), "ledger")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_policy_unwritable_ledger_denied_not_raised(inst: Instance) -> None:
    pol = policy(inst)
    inst.machine.chmod(0o500)
    try:
        assert denied(pol.record_action("a"), "ledger")
    finally:
        inst.machine.chmod(0o700)


# --------------------------------------------------------------------------- skills


def test_policy_skill_files_confined(inst: Instance) -> None:
    pol = policy(inst)
    assert pol.check_skill("files", {"op": "read", "path": "notes.md"}, autonomous=True).allowed
    assert pol.check_skill("files", {"op": "list"}, autonomous=False).allowed
    assert denied(
        pol.check_skill("files", {"op": "read", "path": "../x"}, autonomous=False), "workspace"
    )
    assert denied(pol.check_skill("FILES", {"path": "/etc/passwd"}, autonomous=False), "workspace")
    assert denied(pol.check_skill("files", {"path": 3}, autonomous=False), "path")
    assert pol.usage() == (2, 0.0)


def test_policy_skill_shell(inst: Instance) -> None:
    off = policy(inst, shell_allow=["ls"])
    assert denied(off.check_skill("shell", {"argv": ["ls"]}, autonomous=False), "command")
    pol = policy(inst, shell_allow=["ls"], shell_enabled=True)
    assert pol.check_skill("shell", {"argv": ["ls"]}, autonomous=False).allowed
    assert denied(pol.check_skill("shell", {"argv": ["rm", "x"]}, autonomous=False), "command")
    assert denied(pol.check_skill("shell", {"argv": "ls"}, autonomous=False), "command")
    assert denied(pol.check_skill("shell", {"argv": ["ls"]}, autonomous=True), "command")
    auto = policy(inst, shell_allow=["ls"], shell_enabled=True, autonomous_shell=True)
    assert auto.check_skill("shell", {"argv": ["ls"]}, autonomous=True).allowed


def test_policy_skill_authoring(inst: Instance) -> None:
    pol = policy(inst)
    assert denied(pol.check_skill("create_skill", {"name": "x"}, autonomous=True), "authoring")
    assert pol.check_skill("create_skill", {"name": "x"}, autonomous=False).allowed
    auto = policy(inst, autonomous_authoring=True)
    assert auto.check_skill("create_skill", {"name": "x"}, autonomous=True).allowed


def test_policy_skill_records_action_and_cost(inst: Instance) -> None:
    pol = policy(inst, per_hour=2, per_day=0.5)
    assert pol.check_skill("fetch", {"url": "https://example.org"}, autonomous=False).allowed
    assert denied(pol.check_skill("calc", {}, autonomous=False, cost=0.6), "cost")
    assert pol.check_skill("calc", {}, autonomous=False, cost=0.5).allowed
    assert denied(pol.check_skill("clock", {}, autonomous=False), "rate")
    ledger = json.loads((inst.machine / LEDGER_NAME).read_text())
    assert [a["kind"] for a in ledger["actions"]] == ["skill:fetch", "skill:calc"]


def test_policy_skill_denied_check_is_not_recorded(inst: Instance) -> None:
    pol = policy(inst)
    pol.check_skill("files", {"path": "../x"}, autonomous=False)
    assert pol.usage() == (0, 0.0)


def test_policy_skill_non_mapping_input_denied(inst: Instance) -> None:
    assert not policy(inst).check_skill("files", ["x"], autonomous=False).allowed  # type: ignore[arg-type]


# --------------------------------------------------------------------------- counters, never raise


def test_policy_counters_by_kind(inst: Instance) -> None:
    pol = policy(inst, per_hour=1)
    assert pol.counters() == dict.fromkeys(DENIAL_KINDS, 0)
    pol.check_path("../x")
    pol.check_path("a\x00")
    pol.check_command(["rm"], autonomous=False)
    pol.record_action("a")
    pol.record_action("a")
    pol.record_action("a", cost=-1)
    pol.check_skill("files", {"path": "/etc"}, autonomous=False)  # counted once
    counts = pol.counters()
    assert counts["workspace"] == 2
    assert counts["path"] == 1
    assert counts["command"] == 1
    assert counts["rate"] == 1
    assert counts["cost"] == 1
    counts["rate"] = 99
    assert pol.counters()["rate"] == 1  # a copy


junk = st.one_of(
    st.text(max_size=30),
    st.none(),
    st.integers(),
    st.binary(max_size=8),
    st.lists(st.one_of(st.text(max_size=8), st.integers()), max_size=4),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=junk,
    argv=junk,
    name=st.sampled_from(["files", "shell", "create_skill", "fetch", ""]),
    tool_input=st.dictionaries(st.sampled_from(["path", "argv", "op"]), junk, max_size=3) | junk,
    cost=st.floats() | st.integers(-5, 5),
    autonomous=st.booleans(),
)
def test_policy_denials_never_raise(
    inst: Instance,
    path: Any,
    argv: Any,
    name: str,
    tool_input: Any,
    cost: Any,
    autonomous: bool,
) -> None:
    pol = policy(inst, allowed=["ls"], shell_enabled=True, per_hour=10_000, per_day=1e9)
    for decision in (
        pol.check_path(path),
        pol.check_command(argv, autonomous=autonomous),
        pol.record_action(str(path), cost=cost),
        pol.check_skill(name, tool_input, autonomous=autonomous, cost=0.0),
    ):
        assert isinstance(decision, PolicyDecision)
        if decision.allowed:
            assert decision.kind == "ok"
        else:
            assert decision.kind in DENIAL_KINDS


def test_policy_ledger_path_is_a_directory_denied_not_raised(inst: Instance) -> None:
    (inst.machine / LEDGER_NAME).mkdir()
    assert denied(policy(inst).record_action("a"), "ledger")

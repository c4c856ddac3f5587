"""The kernel's built-in "create skill" tool (lumen spec: the action loop authors skills).

A new skill is written to a temporary directory, validated (``main.py --help`` must exit 0 within
a timeout, in the workspace, with a scrubbed environment), and only then moved into
``skills/NAME/``: a failed validation never leaves a half-made skill. Authoring from the
autonomous loop is off unless ``[policy] autonomous_skill_authoring = true``. The request passes
the shadow veto like any action, and the write goes through the action loop's permissions.

An authored skill may use the shared protocol (``skills/_protocol.py``: ``--help``, the JSON
payload, uniform errors and exit codes): the module is put beside the staged skill for the
validation and beside the instance's skills when it is installed. Its cues and presentation are
declared in ``skill.toml`` like a built-in's (see ``state.skills``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from graph.action import skill_env, workspace
from kernel.shadow import action_description, check_shadow
from nodes.services import ActionResult, Services
from state.permissions import DataWriter
from state.self_state import Psyche
from state.skills import BUILTIN_SKILLS, ensure_protocol

NAME = re.compile(r"^[a-z][a-z0-9_]{1,30}$")
VALIDATION_TIMEOUT_S = 10.0
MAX_SOURCE_BYTES = 64_000


def preflight(
    deps: Services,
    described: tuple[str, dict[str, Any]],
    checked: tuple[str, dict[str, Any]],
    *,
    psyche: Psyche,
    autonomous: bool,
) -> ActionResult | None:
    """Run an own write past the shadow veto, then the security policy (None: it may go ahead).

    ``described`` is what the shadow reads (the action with its content), ``checked`` what
    the policy reads (the skill it counts as and its input).
    """
    verdict = check_shadow(action_description(*described), psyche.shadow)
    if verdict.veto:
        return ActionResult(
            status="vetoed",
            detail=f"shadow veto '{verdict.veto_pattern}'",
            veto_pattern=verdict.veto_pattern,
        )
    from graph.policy import SecurityPolicy

    decision = SecurityPolicy(deps.instance, deps.config).check_skill(
        checked[0], checked[1], autonomous=autonomous
    )
    if not decision.allowed:
        return ActionResult(
            status="refused", detail=f"security policy ({decision.kind}): {decision.reason}"
        )
    return None


def create_skill(
    deps: Services,
    name: str,
    main_py: str,
    *,
    psyche: Psyche,
    autonomous: bool,
    description: str = "",
) -> ActionResult:
    """Author, validate and install ``skills/NAME/main.py``; every refusal is a typed result."""
    if not NAME.match(name):
        return ActionResult(status="refused", detail=f"invalid skill name {name!r}")
    if (BUILTIN_SKILLS / name).exists() or (deps.instance.skills_dir / name).exists():
        return ActionResult(status="refused", detail=f"a skill named {name!r} already exists")
    if len(main_py.encode("utf-8")) > MAX_SOURCE_BYTES:
        return ActionResult(status="refused", detail="skill source is too large")
    # off by default for autonomy; rate and cost limits apply too
    stopped = preflight(
        deps,
        ("create_skill", {"name": name, "code": main_py}),
        ("create_skill", {"name": name}),
        psyche=psyche,
        autonomous=autonomous,
    )
    if stopped is not None:
        return stopped
    writer = DataWriter(deps.instance, "action")
    writer.check("skills_write", f"skills/{name}")
    with tempfile.TemporaryDirectory(dir=deps.instance.machine) as tmp:
        staged = Path(tmp) / name
        staged.mkdir()
        ensure_protocol(Path(tmp))  # so the staged skill imports it as it will when installed
        (staged / "main.py").write_text(main_py, encoding="utf-8")
        (staged / "skill.toml").write_text(
            f'name = "{name}"\ndescription = {description[:200]!r}\narchetype = ""\n'
            "untrusted_output = true\nmutating = true\n".replace("'", '"'),
            encoding="utf-8",
        )
        try:
            done = subprocess.run(
                [sys.executable, str(staged / "main.py"), "--help"],
                capture_output=True,
                text=True,
                timeout=VALIDATION_TIMEOUT_S,
                cwd=workspace(deps),
                env=skill_env(deps),
                check=False,
            )
        except subprocess.TimeoutExpired:
            return ActionResult(status="failed", detail="--help timed out; skill not installed")
        if done.returncode != 0 or not done.stdout.strip():
            return ActionResult(
                status="failed",
                detail=f"--help exited {done.returncode} or printed nothing; skill not installed",
            )
        ensure_protocol(deps.instance.skills_dir)  # covered by the skills_write check above
        shutil.move(str(staged), deps.instance.skills_dir / name)
    writer.remember(
        f"Created skill {name!r} ({description[:120]})",
        author="kernel",
        situation="action",
        kind="SkillCreated",
        skill=name,
    )
    return ActionResult(status="ok", output={"skill": name, "help": done.stdout.strip()[:200]})

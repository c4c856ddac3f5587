"""The action gateway: the only place anything acts on the world (skills today).

In order: taint check (nothing derived from untrusted input may authorize an action) → shadow
veto / bias on the action's canonical forms (:func:`kernel.actions.canonical`: the argv as a
shell shows it, every nested payload, parsed SQL, a file's operation and path but never its
content) → ability (the skill exists and is enabled) → per-turn budget → execute with a timeout
→ every result that is not from a pure local tool (calc, clock) is external content: screened by
the pipeline (classify → sanitize → detect → decide → wrap) before anything else sees it. The
caller gets only the output's shape and the screening record (source, summary, digest, action,
flags); the sanitised output goes to the run's vault (never checkpointed) for the drafting
prompt. Every denial is a typed result and a ``kernel`` memory; nothing here raises for an
expected refusal, so a loop never dies because an action was refused.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from graph import skills
from kernel.actions import check_tool_call
from kernel.shadow import action_description
from kernel.tool_output import tool_trust
from nodes.services import ActionResult, Services, Status
from state.self_state import Psyche

SKILL_TIMEOUT_S = 20.0
FETCH_TIMEOUT_MARGIN_S = 5.0
OUTPUT_SUMMARY_CHARS = 600


def workspace(deps: Services) -> Path:
    """Return the instance workspace (created on demand): the cwd of every skill run."""
    path = deps.instance.root / "workspace"
    path.mkdir(parents=True, exist_ok=True)
    return path


def skill_env(deps: Services) -> dict[str, str]:
    """Return a scrubbed environment for skills: no API keys or other secrets of the kernel."""
    keep = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "TZ", "PYTHONPATH", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["LUMEN_HOME"] = str(deps.instance.root)
    return env


def perform(
    deps: Services,
    *,
    tool: str,
    tool_input: dict[str, Any],
    psyche: Psyche,
    calls_made: int,
    max_calls: int,
    tainted: bool = False,
    situation: str = "chat",
    autonomous: bool = False,
) -> ActionResult:
    """Run one skill through every check, recording each denial as a kernel memory."""
    description = action_description(tool, tool_input)
    digest = hashlib.sha256(description.encode("utf-8")).hexdigest()[:16]

    def deny(status: Status, detail: str, **extra: Any) -> ActionResult:
        kind = "ShadowVeto" if status == "vetoed" else "ActionRefused"
        deps.store.journal.append(
            deps.store.journal.new_entry(
                f"{kind}: tool={tool} blocked: {detail}",
                author="kernel",
                situation=situation,
                meta={"kind": kind, "tool": tool, "action_digest": digest, **extra},
            )
        )
        return ActionResult(status=status, detail=detail, **extra)

    if tainted:
        from state.counters import bump

        bump(deps.instance.machine, "taint_block_total", target="action")
        return deny("refused", "derived from untrusted content; cannot authorize an action")
    verdict = check_tool_call(tool, tool_input, psyche.shadow)
    if verdict.veto:
        from state.counters import bump

        bump(deps.instance.machine, "shadow_veto_total")
        return deny(
            "vetoed",
            f"shadow veto '{verdict.veto_pattern}': {verdict.explanation}",
            veto_pattern=verdict.veto_pattern,
        )
    known = deps.skills()
    if tool not in known:
        return deny("refused", f"no skill named {tool!r}", bias=verdict.bias)
    if tool == "shell" and not deps.config.skills.shell.enabled:
        return deny("refused", "the shell skill is disabled in config", bias=verdict.bias)
    if calls_made >= max_calls:  # before the policy, so a refused call is not counted as done
        return deny("refused", f"tool-call budget of {max_calls} per turn is spent")
    from graph.policy import SecurityPolicy

    decision = SecurityPolicy(deps.instance, deps.config).check_skill(
        tool, tool_input, autonomous=autonomous or situation == "cycle"
    )
    if not decision.allowed:
        from state.counters import bump

        bump(deps.instance.machine, "policy_denial_total", kind=decision.kind)
        return deny(
            "refused", f"security policy ({decision.kind}): {decision.reason}", bias=verdict.bias
        )
    info, manifest = known[tool]
    payload = {**tool_input, "instance": str(deps.instance.root)}
    timeout = SKILL_TIMEOUT_S + (FETCH_TIMEOUT_MARGIN_S if tool == "fetch" else 0.0)
    result = skills.run(
        info.path / "main.py", payload, timeout=timeout, env=skill_env(deps), cwd=workspace(deps)
    )
    trust = tool_trust(tool, builtin=info.origin == "builtin")
    if not result.ok:
        error = result.error if trust == "trusted" else screen_error(deps, result.error)
        if result.exit_code == 3:  # the skill's own policy refused it (skills/_protocol.py)
            return deny("refused", f"{tool}: {error}", bias=verdict.bias)
        return ActionResult(status="failed", detail=error, bias=verdict.bias)
    output = result.output
    if trust != "trusted":
        outside = info.origin != "builtin" or manifest.untrusted_output
        output = screen_output(deps, tool, output, record=outside)
    return ActionResult(
        status="ok",
        output=output,
        bias=verdict.bias,
        untrusted=trust != "trusted",
        detail="" if not verdict.bias_patterns else f"bias: {', '.join(verdict.bias_patterns)}",
    )


def screen_output(
    deps: Services, tool: str, output: dict[str, Any], *, record: bool
) -> dict[str, Any]:
    """Screen a tool's output as external content; return only what the caller may keep.

    The pipeline runs on the output's strings together (:func:`kernel.tool_output.flatten`); the
    same sanitising (and, when the decision is ``sanitize``, neutralising) is applied to every
    string of the output, which goes to the run's vault under its digest unless it was blocked.
    ``record``: output that came from outside the instance (fetch, files, shell, an instance's
    own skill) is also recorded by :func:`graph.ingress.screen` (signal ledger and a tainted
    memory holding the derived summary); the built-in readers of the instance's own memory
    (recall, beliefs, gaps) and speech skills are screened without a record, their content
    already lives in the instance.
    """
    from graph.ingress import screen
    from kernel.injection import detect, persist_record, process, sanitize
    from kernel.tool_output import (
        flatten,
        map_strings,
        neutralise,
        source_label,
        to_vault,
        vault_key,
        withheld,
    )
    from state.injection_classifier import embed as injection_embed
    from state.injection_classifier import ngrams as injection_ngrams
    from state.self_state import utc_now

    source = source_label(tool)
    text = flatten(output)
    guard = deps.config.guard
    if record and text:
        screened = screen(deps, text, source=source)
        decision, summary = screened.decision, screened.record
    else:
        decision = process(
            text,
            source,
            sanitize_at=guard.sanitize_at,
            block_at=guard.block_at,
            rollout=guard.rollout,
            embed=injection_embed,  # the same classifier as every screened path
            ngrams=injection_ngrams,
        )
        summary = persist_record(decision, source, now=utc_now().isoformat())
    if decision.action != "block":

        def clean(value: str) -> str:
            cleaned = sanitize(value).text
            if decision.action == "sanitize":
                cleaned = neutralise(cleaned, score=detect, threshold=guard.sanitize_at).text
            return cleaned

        deps.vault[vault_key(decision.digest)] = to_vault(map_strings(output, clean))
    return withheld(
        output,
        {
            "source": source,
            "summary": summary["summary"],
            "digest": decision.digest,
            "action": decision.action,
            "flags": list(decision.signals.flags),
        },
    )


def screen_error(deps: Services, error: str) -> str:
    """Return a failed outside tool's error, or a summary when it reads as an injection."""
    from kernel.injection import detect

    signals = detect(error)
    if signals.score >= deps.config.guard.sanitize_at:
        flags = ", ".join(signals.flags) or f"score {signals.score:.2f}"
        return f"[error text withheld: {flags}]"
    return error[:300]

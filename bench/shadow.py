"""Benchmark the shadow check on the dev set: veto/allow rates per tier, per form, and latency.

Run from the repository root: ``python bench/shadow.py [path/to/shadow_dev.jsonl]``. The dev set
lives beside the repository in ``shared/security/`` and is not copied into it.

Each row is checked three ways:

* ``text``: the row's ``tool=… input="…"`` description as it stands (the old check, one string);
* ``canonical``: ``(tool, input)`` through :func:`kernel.actions.canonical`, as the action
  gateway and ``lumen guard veto`` check it;
* ``argv``: shell rows only, the input split into the ``{"argv": [...]}`` the shell skill takes,
  once with the old ``tool=shell input={'argv': [...]}`` repr (``argv-repr``) and once through
  the canonical forms (``argv-canonical``): the shape production really feeds the gateway.
"""

from __future__ import annotations

import json
import shlex
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kernel.actions import check_tool_call  # noqa: E402
from kernel.shadow import Shadow, action_description, check_shadow  # noqa: E402
from kernel.shadow_catalogue import DEFAULT_BIAS_PATTERNS, DEFAULT_VETO_PATTERNS  # noqa: E402

DEV = REPO.parent / "shared" / "security" / "shadow_dev.jsonl"
ROUNDS = 20

Check = Callable[[dict[str, Any]], bool | None]


def _argv(row: dict[str, Any]) -> list[str] | None:
    if row["tool"] != "shell":
        return None
    try:
        return shlex.split(row["input"])
    except ValueError:
        return None


def main(argv: list[str]) -> int:
    """Print per-tier veto/allow rates for each way of checking, and check latency."""
    path = Path(argv[1]) if len(argv) > 1 else DEV
    if not path.exists():
        print(f"dev set not found: {path}", file=sys.stderr)
        return 1
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    shadow = Shadow(veto_patterns=DEFAULT_VETO_PATTERNS, bias_patterns=DEFAULT_BIAS_PATTERNS)
    check_shadow("tool=warmup input=''", shadow)

    def argv_repr(row: dict[str, Any]) -> bool | None:
        words = _argv(row)
        if words is None:
            return None
        return check_shadow(action_description("shell", {"argv": words}), shadow).veto

    def argv_canonical(row: dict[str, Any]) -> bool | None:
        words = _argv(row)
        return None if words is None else check_tool_call("shell", {"argv": words}, shadow).veto

    modes: dict[str, Check] = {
        "text": lambda row: check_shadow(row["text"], shadow).veto,
        "canonical": lambda row: check_tool_call(row["tool"], row["input"], shadow).veto,
        "argv-repr": argv_repr,
        "argv-canonical": argv_canonical,
    }
    print(f"{'form':<16}{'tier':<10}{'rows':>6}{'veto':>9}{'allow':>9}")
    misses: list[str] = []
    for mode, check in modes.items():
        vetoed: dict[str, list[bool]] = defaultdict(list)
        for row in rows:
            verdict = check(row)
            if verdict is None:
                continue
            vetoed[row["tier"]].append(verdict)
            if verdict != (row["label"] == "veto"):
                misses.append(
                    f"  [{mode}] {row['id']} ({row['tier']}): vetoed={verdict} {row['text']}"
                )
        for tier in sorted(vetoed):
            flags = vetoed[tier]
            rate = sum(flags) / len(flags)
            print(f"{mode:<16}{tier:<10}{len(flags):>6}{rate:>9.1%}{1 - rate:>9.1%}")
    if misses:
        print("wrong:")
        print("\n".join(misses))

    for mode in ("text", "canonical"):
        timings: list[float] = []
        for _ in range(ROUNDS):
            for row in rows:
                start = time.perf_counter_ns()
                modes[mode](row)
                timings.append((time.perf_counter_ns() - start) / 1000)
        timings.sort()
        p95 = timings[int(0.95 * (len(timings) - 1))]
        print(
            f"{mode} latency over {len(timings)} checks: "
            f"median {statistics.median(timings):.1f} us, p95 {p95:.1f} us"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))

"""Benchmark the shadow check on the dev set: veto/allow rates per tier and check latency.

Run from the repository root: ``python bench/shadow.py [path/to/shadow_dev.jsonl]``. The dev set
lives beside the repository in ``shared/security/`` and is not copied into it.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kernel.shadow import Shadow, check_shadow  # noqa: E402
from kernel.shadow_catalogue import DEFAULT_BIAS_PATTERNS, DEFAULT_VETO_PATTERNS  # noqa: E402

DEV = REPO.parent / "shared" / "security" / "shadow_dev.jsonl"
ROUNDS = 50


def main(argv: list[str]) -> int:
    """Print per-tier veto/allow rates and median/p95 check latency in microseconds."""
    path = Path(argv[1]) if len(argv) > 1 else DEV
    if not path.exists():
        print(f"dev set not found: {path}", file=sys.stderr)
        return 1
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    shadow = Shadow(veto_patterns=DEFAULT_VETO_PATTERNS, bias_patterns=DEFAULT_BIAS_PATTERNS)
    check_shadow("tool=warmup input=''", shadow)

    vetoed: dict[str, list[bool]] = defaultdict(list)
    misses: list[str] = []
    for row in rows:
        verdict = check_shadow(row["text"], shadow)
        vetoed[row["tier"]].append(verdict.veto)
        if verdict.veto != (row["label"] == "veto"):
            misses.append(f"  {row['id']} ({row['tier']}): vetoed={verdict.veto} {row['text']}")

    print(f"{'tier':<10}{'rows':>6}{'veto':>9}{'allow':>9}")
    for tier in sorted(vetoed):
        flags = vetoed[tier]
        rate = sum(flags) / len(flags)
        print(f"{tier:<10}{len(flags):>6}{rate:>9.1%}{1 - rate:>9.1%}")
    if misses:
        print("wrong:")
        print("\n".join(misses))

    timings: list[float] = []
    for _ in range(ROUNDS):
        for row in rows:
            start = time.perf_counter_ns()
            check_shadow(row["text"], shadow)
            timings.append((time.perf_counter_ns() - start) / 1000)
    timings.sort()
    p95 = timings[int(0.95 * (len(timings) - 1))]
    print(
        f"latency over {len(timings)} checks: median {statistics.median(timings):.1f} us, "
        f"p95 {p95:.1f} us"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))

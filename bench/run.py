"""Autonomy benchmark: ``lumen run``'s loop for N cycles per campaign, clean and with each fault.

Run: ``uv run python bench/run.py [--cycles 500] [--faults none,burst,...] [--scripted]
[--png bench/out/ct.png]``. Each campaign is ``graph.autonomy.run`` on a fresh instance, the
kind of every cycle chosen by the graph (affect and goals, not alternation), reflecting on
triggers, on the embedded model (``Deps.for_instance`` with the default backend) unless
``--scripted``. Faults (``bench/faults.py``): a failing skill, a concurrent values.json writer,
a burst of large self-updates (flapping index + a goal writer), a slow model (budget) and an
oscillating skill. Per campaign it prints C(t) (and plots it, one line per campaign), the ε slope
over action cycles, the count of every branch the rows report, model calls and wall seconds per
action cycle (goal: <= 6 calls and <= 10 s), and the safety-chain counters.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.faults import FAULTS, Fault
from graph.autonomy import run
from graph.deps import Deps, utc_clock
from state.counters import CYCLE_COUNTERS, read_counters
from state.instance import init_instance
from tests.scripted import cycle_model

CALL_GOAL = 6
SECONDS_GOAL = 10.0


def slope(values: list[float]) -> float:
    """Least-squares slope of values over their index."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x, mean_y = (n - 1) / 2, sum(values) / n
    num = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    den = sum((i - mean_x) ** 2 for i in range(n))
    return num / den


def dilated(factor: float) -> Any:
    """A clock on which every real second lasts ``factor`` seconds (a slow model's budget)."""
    start = utc_clock()
    began = time.monotonic()

    def clock() -> datetime:
        return start + timedelta(seconds=(time.monotonic() - began) * factor)

    return clock


def campaign(root: Path, fault: Fault, cycles: int, *, scripted: bool) -> dict[str, Any]:
    """Run one campaign and return its figures (rows included)."""
    instance = init_instance(root)
    config = instance.config_file.read_text()
    # hundreds of cycles an hour exceed the default 120 actions/hour; the policy would refuse
    # them and distort calibration, and 30 s cooldowns would dominate the wall time.
    instance.config_file.write_text(
        config.replace("max_actions_per_hour = 120", "max_actions_per_hour = 1000000").replace(
            "cooldown_seconds = 30", "cooldown_seconds = 1"
        )
    )
    fault.setup(instance)
    clock = dilated(fault.dilation)
    if scripted:
        model = cycle_model(success=0.8)
        deps = Deps.for_instance(instance, model_for=lambda _m: model, clock=clock)
    else:
        deps = Deps.for_instance(instance, clock=clock)
        deps.model_for("autonomous")  # load once, outside the timings
    rows: list[dict[str, Any]] = []
    last = [time.perf_counter()]

    def emit(row: dict[str, Any]) -> None:
        if "cycle" not in row:
            return
        now = time.perf_counter()
        row["wall_s"] = now - last[0]
        rows.append(row)
        fault.after(instance, row)
        last[0] = time.perf_counter()

    run(deps, cycles=cycles, emit=emit, sleep=lambda s: time.sleep(s / fault.dilation))
    counters = read_counters(instance.machine)
    return {"fault": fault.name, "rows": rows, "counters": {k: counters[k] for k in CYCLE_COUNTERS}}


def report(result: dict[str, Any]) -> None:
    """Print one campaign's figures."""
    rows = result["rows"]
    composites = [r["composite"] for r in rows]
    actions = [r for r in rows if r["kind"] == "action"]
    errors = [r["epsilon"] for r in actions if r["outcome"]]
    branches = Counter(b for r in rows for b in r["branches"])
    calls = [r["llm_calls"] for r in actions]
    seconds = [r["wall_s"] - r.get("cooled_down_s", 0.0) for r in actions]
    print(f"== {result['fault']}: {len(rows)} cycles ({len(actions)} action) ==")
    print(f"C(t): first {composites[0]:.4f} last {composites[-1]:.4f} max {max(composites):.4f}")
    step = max(1, len(composites) // 20)
    print("C(t) sampled: " + " ".join(f"{c:.3f}" for c in composites[::step]))
    if errors:
        print(
            f"ε slope per action cycle: {slope(errors):+.6f} (mean {statistics.mean(errors):.4f})"
        )
    print("branches: " + (", ".join(f"{k} {v}" for k, v in branches.most_common()) or "none"))
    print(
        "statuses: " + ", ".join(f"{k} {v}" for k, v in Counter(r["status"] for r in rows).items())
    )
    if actions:
        within = sum(
            1 for c, s in zip(calls, seconds, strict=True) if c <= CALL_GOAL and s <= SECONDS_GOAL
        )
        print(
            f"per action cycle: calls mean {statistics.mean(calls):.2f} max {max(calls)}; "
            f"seconds median {statistics.median(seconds):.2f} max {max(seconds):.2f}; "
            f"within <= {CALL_GOAL} calls and <= {SECONDS_GOAL:.0f} s: {within}/{len(actions)}"
        )
    print("counters: " + ", ".join(f"{k} {v}" for k, v in result["counters"].items()))
    degraded = sum(1 for r in rows if r["degraded"])
    print(f"cycles with degraded notes: {degraded}")


def plot(results: list[dict[str, Any]], png: Path) -> None:
    """Plot C(t) of every campaign in one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    png.parent.mkdir(parents=True, exist_ok=True)
    figure, axis = plt.subplots(figsize=(9, 4.5))
    for result in results:
        values = [r["composite"] for r in result["rows"]]
        axis.plot(range(1, len(values) + 1), values, label=result["fault"])
    axis.axhline(0.7, linestyle="--", linewidth=0.8, color="grey")
    axis.set_xlabel("cycle")
    axis.set_ylabel("C(t)")
    axis.set_title("Lyapunov composite stability C(t) per campaign")
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(png, dpi=100)
    print(f"plot written to {png}")


def main() -> None:
    """Run the campaigns."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=500)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--scripted", action="store_true", help="the scripted model (fast check)")
    parser.add_argument("--png", type=Path, default=Path("bench/out/ct.png"))
    args = parser.parse_args()
    names = [n.strip() for n in args.faults.split(",") if n.strip()]
    unknown = [n for n in names if n not in FAULTS]
    if unknown:
        raise SystemExit(f"unknown faults: {', '.join(unknown)} (known: {', '.join(FAULTS)})")
    print("(instances: max_actions_per_hour 1,000,000 and cooldown_seconds 1 for the benchmark)")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            result = campaign(Path(tmp) / name, FAULTS[name](), args.cycles, scripted=args.scripted)
            report(result)
            results.append(result)
    plot(results, args.png)


if __name__ == "__main__":
    main()

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

Seconds per cycle are the cycle's own wall time (from the previous row to its row, the due
tasks and source jobs before it included, a cooldown wait excluded); a reflection the cycle
triggered is timed apart (``reflection_s``) and reported both apart and added. ``--out DIR``
writes every campaign's rows as they complete (``DIR/<fault>.jsonl``), ``DIR/summary.json`` and
the plot (``DIR/ct.png`` unless ``--png``), so a long run can be read while it goes on.
"""

from __future__ import annotations

import argparse
import json
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


def campaign(
    root: Path, fault: Fault, cycles: int, *, scripted: bool, log: Path | None = None
) -> dict[str, Any]:
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
        now = time.perf_counter()
        if "cycle" not in row:  # a reflection the last cycle triggered: timed apart
            if rows:
                rows[-1]["reflection_s"] = rows[-1].get("reflection_s", 0.0) + now - last[0]
            last[0] = now
            return
        row["wall_s"] = now - last[0]
        if rows and log is not None:  # the previous row is complete (its reflection timed)
            with log.open("a", encoding="utf-8") as out:
                out.write(json.dumps(rows[-1], default=str) + "\n")
        rows.append(row)
        fault.after(instance, row)
        last[0] = time.perf_counter()

    run(deps, cycles=cycles, emit=emit, sleep=lambda s: time.sleep(s / fault.dilation))
    if rows and log is not None:
        with log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(rows[-1], default=str) + "\n")
    counters = read_counters(instance.machine)
    return {"fault": fault.name, "rows": rows, "counters": {k: counters[k] for k in CYCLE_COUNTERS}}


def p95(values: list[float]) -> float:
    """The 95th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, -(-95 * len(ordered) // 100) - 1))]


def per_kind(rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """Model calls and seconds per cycle of one kind (cooldown waits excluded)."""
    picked = [r for r in rows if r["kind"] == kind]
    if not picked:
        return {"cycles": 0}
    calls = [r["llm_calls"] for r in picked]
    seconds = [r["wall_s"] - r.get("cooled_down_s", 0.0) for r in picked]
    with_reflection = [s + r.get("reflection_s", 0.0) for s, r in zip(seconds, picked, strict=True)]
    within = sum(
        1 for c, s in zip(calls, seconds, strict=True) if c <= CALL_GOAL and s <= SECONDS_GOAL
    )
    return {
        "cycles": len(picked),
        "calls_mean": round(statistics.mean(calls), 3),
        "calls_max": max(calls),
        "seconds_median": round(statistics.median(seconds), 3),
        "seconds_p95": round(p95(seconds), 3),
        "seconds_max": round(max(seconds), 3),
        "seconds_with_reflection_median": round(statistics.median(with_reflection), 3),
        "seconds_with_reflection_p95": round(p95(with_reflection), 3),
        "within_goal": within,
    }


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """One campaign's figures (what :func:`report` prints and ``summary.json`` keeps)."""
    rows = result["rows"]
    composites = [r["composite"] for r in rows]
    errors = [r["epsilon"] for r in rows if r["kind"] == "action" and r["outcome"]]
    reflections = [r["reflection_s"] for r in rows if "reflection_s" in r]
    return {
        "fault": result["fault"],
        "cycles": len(rows),
        "composite": {
            "first": composites[0],
            "last": composites[-1],
            "max": max(composites),
            "min": min(composites),
        },
        "epsilon_slope": slope(errors) if errors else None,
        "epsilon_mean": statistics.mean(errors) if errors else None,
        "branches": dict(Counter(b for r in rows for b in r["branches"]).most_common()),
        "statuses": dict(Counter(r["status"] for r in rows)),
        "action": per_kind(rows, "action"),
        "explore": per_kind(rows, "explore"),
        "reflections": len(reflections),
        "reflection_seconds_median": round(statistics.median(reflections), 3)
        if reflections
        else None,
        "counters": result["counters"],
        "degraded_cycles": sum(1 for r in rows if r["degraded"]),
    }


def report(result: dict[str, Any]) -> dict[str, Any]:
    """Print one campaign's figures; return them."""
    figures = summary(result)
    composites = [r["composite"] for r in result["rows"]]
    c = figures["composite"]
    print(f"== {figures['fault']}: {figures['cycles']} cycles ==")
    print(
        f"C(t): first {c['first']:.4f} last {c['last']:.4f} min {c['min']:.4f} max {c['max']:.4f}"
    )
    step = max(1, len(composites) // 20)
    print("C(t) sampled: " + " ".join(f"{v:.3f}" for v in composites[::step]))
    if figures["epsilon_slope"] is not None:
        print(
            f"ε slope per action cycle: {figures['epsilon_slope']:+.6f} "
            f"(mean {figures['epsilon_mean']:.4f})"
        )
    branches = figures["branches"]
    print("branches: " + (", ".join(f"{k} {v}" for k, v in branches.items()) or "none"))
    print("statuses: " + ", ".join(f"{k} {v}" for k, v in figures["statuses"].items()))
    for kind in ("action", "explore"):
        k = figures[kind]
        if not k["cycles"]:
            continue
        print(
            f"per {kind} cycle ({k['cycles']}): calls mean {k['calls_mean']:.2f} max "
            f"{k['calls_max']}; seconds median {k['seconds_median']:.2f} p95 "
            f"{k['seconds_p95']:.2f} max {k['seconds_max']:.2f} (with its reflection: median "
            f"{k['seconds_with_reflection_median']:.2f} p95 "
            f"{k['seconds_with_reflection_p95']:.2f}); within <= {CALL_GOAL} calls and <= "
            f"{SECONDS_GOAL:.0f} s: {k['within_goal']}/{k['cycles']}"
        )
    if figures["reflections"]:
        print(
            f"reflections: {figures['reflections']}, "
            f"median {figures['reflection_seconds_median']:.2f} s"
        )
    print("counters: " + ", ".join(f"{k} {v}" for k, v in figures["counters"].items()))
    print(f"cycles with degraded notes: {figures['degraded_cycles']}", flush=True)
    return figures


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
    parser.add_argument("--png", type=Path, default=None, help="default bench/out/ct.png")
    parser.add_argument("--out", type=Path, default=None, help="rows, summary.json and the PNG")
    args = parser.parse_args()
    names = [n.strip() for n in args.faults.split(",") if n.strip()]
    unknown = [n for n in names if n not in FAULTS]
    if unknown:
        raise SystemExit(f"unknown faults: {', '.join(unknown)} (known: {', '.join(FAULTS)})")
    png = args.png or (args.out / "ct.png" if args.out else Path("bench/out/ct.png"))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    print("(instances: max_actions_per_hour 1,000,000 and cooldown_seconds 1 for the benchmark)")
    results, figures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            log = args.out / f"{name}.jsonl" if args.out else None
            if log is not None:
                log.unlink(missing_ok=True)
            result = campaign(
                Path(tmp) / name, FAULTS[name](), args.cycles, scripted=args.scripted, log=log
            )
            figures.append(report(result))
            results.append(result)
            if args.out:
                (args.out / "summary.json").write_text(json.dumps(figures, indent=1) + "\n")
    plot(results, png)


if __name__ == "__main__":
    main()

"""Autonomy benchmark: many cycles with a scripted model and some with the embedded model.

Run: ``uv run python bench/run.py [--scripted 200] [--embedded 20] [--png bench/out/ct.png]``.
Prints C(t) over time (and writes a PNG plot), the prediction-error slope, the number of
escalations / rollbacks / stabilizations / cooldowns, the fraction of value/goal/soul changes
traced to a ``self`` memory (goal 100%), and the median kernel overhead per cycle.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graph.autonomy import autonomy_graphs, run_cycle, run_reflection
from graph.deps import Deps
from state.instance import init_instance
from tests.scripted import ScriptedChatModel, cycle_model


def scripted_model() -> ScriptedChatModel:
    return cycle_model(success=0.6, reason="r")


def slope(values: list[float]) -> float:
    """Least-squares slope of values over their index."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x, mean_y = (n - 1) / 2, sum(values) / n
    num = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    den = sum((i - mean_x) ** 2 for i in range(n))
    return num / den


def traced_fraction(deps: Deps) -> tuple[int, int]:
    """Count value/goal/soul changes (kernel 'modified' records) and those with a self memory."""
    entries = deps.store.read().entries
    changes = [
        e
        for e in entries
        if e.author == "kernel" and e.meta.get("file") and e.meta["file"].startswith("data/")
    ]
    explained = 0
    selves = [e for e in entries if e.author == "self" and e.situation == "reflection"]
    for change in changes:
        if any(
            s.meta.get("after") == change.meta.get("after")
            and s.meta.get("before") == change.meta.get("before")
            for s in selves
        ):
            explained += 1
    return explained, len(changes)


def campaign(label: str, deps: Deps, cycles: int) -> list[float]:
    """Run cycles (alternating action/explore, reflecting on triggers) and print the figures."""
    composites: list[float] = []
    errors: list[float] = []
    overhead: list[float] = []
    with autonomy_graphs(deps) as (cycle_graph, reflect_graph):
        for index in range(cycles):
            kind = "action" if index % 2 == 0 else "explore"
            started = time.perf_counter()
            state = run_cycle(cycle_graph, kind)
            overhead.append((time.perf_counter() - started) * 1000)
            assert state.me is not None
            composites.append(state.me.stability.composite)
            if kind == "action":
                errors.append(state.prediction_error)
            if kind == "action" and state.reflection_triggers:
                run_reflection(reflect_graph, state.reflection_triggers)
    me = deps.instance.load_self()
    auto = me.autonomy
    explained, total = traced_fraction(deps)
    print(f"== {label}: {cycles} cycles ==")
    print(f"C(t): first {composites[0]:.4f} last {composites[-1]:.4f} max {max(composites):.4f}")
    print("C(t) every 10 cycles: " + " ".join(f"{c:.3f}" for c in composites[::10]))
    print(
        f"prediction-error slope per action cycle: {slope(errors):+.6f} "
        f"(first {errors[0]:.4f}, last {errors[-1]:.4f})"
    )
    print(
        f"escalations {auto.escalations}  rollbacks {auto.rollbacks}  "
        f"stabilizations {auto.stabilizations}  cooldowns {auto.cooldowns}"
    )
    share = 100.0 * explained / total if total else 100.0
    print(f"value/goal/soul changes traced to a self memory: {explained}/{total} ({share:.0f}%)")
    print(
        f"cycle time median {statistics.median(overhead):.1f} ms "
        f"p95 {sorted(overhead)[int(0.95 * (len(overhead) - 1))]:.1f} ms"
    )
    return composites


def main() -> None:
    """Run the scripted and embedded campaigns."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scripted", type=int, default=200)
    parser.add_argument("--embedded", type=int, default=20)
    parser.add_argument("--png", type=Path, default=Path("bench/out/ct.png"))
    args = parser.parse_args()
    series: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        model = scripted_model()
        scripted = init_instance(Path(tmp) / "s")
        # 200 cycles in seconds would exceed the default 120 actions/hour; the policy would
        # (correctly) refuse them and distort the calibration figures, so the bench lifts it.
        config = scripted.config_file.read_text()
        scripted.config_file.write_text(
            config.replace("max_actions_per_hour = 120", "max_actions_per_hour = 1000000")
        )
        print("(scripted instance: max_actions_per_hour raised to 1,000,000 for the benchmark)")
        deps = Deps.for_instance(scripted, model_for=lambda _m: model)
        series["scripted"] = campaign(
            "scripted model (kernel overhead per cycle)", deps, args.scripted
        )
        if args.embedded:
            deps = Deps.for_instance(init_instance(Path(tmp) / "e"))
            series["embedded"] = campaign("embedded model", deps, args.embedded)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    args.png.parent.mkdir(parents=True, exist_ok=True)
    figure, axis = plt.subplots(figsize=(8, 4))
    for label, values in series.items():
        axis.plot(range(1, len(values) + 1), values, label=label)
    axis.set_xlabel("cycle")
    axis.set_ylabel("C(t)")
    axis.set_title("Lyapunov composite stability C(t)")
    axis.legend()
    figure.tight_layout()
    figure.savefig(args.png, dpi=100)
    print(f"plot written to {args.png}")


if __name__ == "__main__":
    main()

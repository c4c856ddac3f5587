"""Observability counters (AsteronIris §21), persisted in ``.lumen/counters.json``.

Names follow the spec (``signal_ingest_total{source_kind}``, ``signal_dedup_drop_total``,
``belief_promotion_total``, ``contradiction_mark_total``, ``stale_trend_purge_total``) plus
Lumen's own: injection decisions, shadow vetoes, policy denials, writeback rejections, taint
blocks, out-of-band temperatures. ``lumen doctor`` shows them.
"""

from __future__ import annotations

from pathlib import Path

from state.files import atomic_write_json, read_json

SPEC_COUNTERS = (
    "signal_ingest_total",
    "signal_dedup_drop_total",
    "belief_promotion_total",
    "contradiction_mark_total",
    "stale_trend_purge_total",
    "injection_decision_total",
    "shadow_veto_total",
    "policy_denial_total",
    "writeback_rejection_total",
    "taint_block_total",
    "temperature_out_of_band_total",
)


def key(name: str, **labels: str) -> str:
    """Render a counter key like ``name{label="value"}`` (labels sorted)."""
    if not labels:
        return name
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


def bump(machine_dir: Path, name: str, amount: int = 1, **labels: str) -> None:
    """Add ``amount`` to a counter (atomic, locked; safe across processes)."""
    from filelock import FileLock

    path = machine_dir / "counters.json"
    with FileLock(str(path) + ".lock"):
        data = read_json(path) if path.exists() else {}
        data[key(name, **labels)] = int(data.get(key(name, **labels), 0)) + amount
        atomic_write_json(path, data)


def read_counters(machine_dir: Path) -> dict[str, int]:
    """Return every counter, with the spec's counters present (0) even before first use."""
    path = machine_dir / "counters.json"
    data = read_json(path) if path.exists() else {}
    merged = {name: 0 for name in SPEC_COUNTERS}
    merged.update({k: int(v) for k, v in data.items()})
    return merged

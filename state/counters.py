"""Observability counters (AsteronIris §21), persisted in ``.lumen/counters.json``.

Names follow the spec (``signal_ingest_total{source_kind}``, ``signal_dedup_drop_total``,
``belief_promotion_total``, ``contradiction_mark_total``, ``stale_trend_purge_total``) plus
Lumen's own: injection decisions, shadow vetoes, policy denials, writeback rejections, taint
blocks, out-of-band temperatures. ``lumen doctor`` shows them.

Metrics fail open: counting is called from inside guards (a shadow veto, the policy, ``screen``)
and must never turn a veto into a crash or stop ingest. So ``bump`` never raises: a corrupt
``counters.json`` (not JSON, not an object of integers) is moved aside to
``counters.json.corrupt`` and the counters are rebuilt from zero (``counters_rebuilt_total`` says
how often); a lock that cannot be taken in ``LOCK_TIMEOUT_S`` or a failing disk drops that one
count. ``read_counters`` returns what is readable. ``lumen doctor`` reports a corrupt file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from state.files import atomic_write_json

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
CYCLE_COUNTERS = (
    "cycle_escalation_total",
    "cycle_cooldown_total",
    "cycle_rollback_total",
    "cycle_stabilization_total",
)
"""The MSCP cycle's safety chain (``lumen run``): meta-escalations, cooldowns (escalation guard
and forced), rollbacks, entries into stabilization mode. Audit totals, not part of the self."""
COUNTERS_FILE = "counters.json"
REBUILT = "counters_rebuilt_total"
LOCK_TIMEOUT_S = 5.0


def key(name: str, **labels: str) -> str:
    """Render a counter key like ``name{label="value"}`` (labels sorted)."""
    if not labels:
        return name
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return f"{name}{{{inner}}}"


def _parse(path: Path) -> tuple[dict[str, int], str | None]:
    """Return the counters in ``path`` and what is wrong with the file (``None``: nothing)."""
    try:
        raw: Any = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, f"counters.json unreadable ({exc.strerror})"
    except ValueError:
        return {}, "counters.json is not valid JSON"
    if not isinstance(raw, dict):
        return {}, "counters.json is not a JSON object"
    bad = [k for k, v in raw.items() if isinstance(v, bool) or not isinstance(v, int) or v < 0]
    if bad:
        return {}, f"counters.json holds a non-count at {bad[0]!r}"
    return dict(raw), None


def bump(machine_dir: Path, name: str, amount: int = 1, **labels: str) -> None:
    """Add ``amount`` to a counter (atomic, locked; safe across processes; never raises)."""
    from filelock import FileLock, Timeout

    path = machine_dir / COUNTERS_FILE
    try:
        with FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_S):
            data, problem = _parse(path)
            if problem is not None:
                os.replace(path, path.with_name(path.name + ".corrupt"))
                data = {REBUILT: 1}
            name_key = key(name, **labels)
            data[name_key] = data.get(name_key, 0) + amount
            atomic_write_json(path, data)
    except (Timeout, OSError):
        return  # metrics fail open: one lost count, never a failed guard


def read_counters(machine_dir: Path) -> dict[str, int]:
    """Return every counter, with the spec's counters present (0) even before first use."""
    data, _ = _parse(machine_dir / COUNTERS_FILE)
    merged = dict.fromkeys((*SPEC_COUNTERS, *CYCLE_COUNTERS), 0)
    merged.update(data)
    return merged


def counters_problem(machine_dir: Path) -> str | None:
    """Say what is wrong with ``counters.json`` (``None`` when it is readable or absent)."""
    return _parse(machine_dir / COUNTERS_FILE)[1]

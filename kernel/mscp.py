"""MSCP Level 3 self-regulation math: identity kinematics, stability, affect, survival, ethics.

Everything here is deterministic and model-free: plain numbers, strings and frozen dataclasses go
in, numbers and records come out. There is no I/O, no clock and no randomness; only the standard
library and :mod:`kernel.core` are imported.

Constants are named after the quantity in the MSCP Level 3 document
(``seeds/001_24fd9bcb44c0e9ca``, cited as "§n" or "Def. n"), the consciousness spec
(``seeds/002_34133dbcf20b9646``, "002") or the Jungian psyche (``seeds/000_fa1a09e184cbe83a``,
"000"). Where a source names a quantity but gives no formula the docstring says "Heuristic" and
describes the choice.

Reading of the composite function ``C`` (Def. 7): its four components are volatility, entropy
and mutation measures, so ``C`` is an instability energy. ``C = 0`` is calm, ``C = 1`` is
turbulent; stabilization switches on at ``C >= 0.7`` and off below ``0.5`` (§6.1 remark).

Where the sources disagree the choice is noted at the function:

* §8.2 clamps ``raw * scaling`` at the full cap, so halving ``scaling`` does not halve a saturated
  delta, while Def. 5 ("halves all self-update deltas") and Theorem 1 (``|ΔX| <= s·δ_max``) need
  it to. Deltas here are clamped at ``cap * min(1, scaling)``: identical to §8.2 whenever the cap
  is not hit, and exactly halved whenever ``scaling`` is.
* §8.1 gates meta depth 2 on ``budget > 0.3``; the §9 diagram disables it at ``budget < 0.3``.
  :func:`budget_capabilities` follows §9, so 0.3 itself still allows depth 2.
* 000's sample breakdown ``score=0.85`` does not equal the sum of the parts it prints (0.98);
  :func:`score_breakdown` prints the sum.
* Def. 2 converges after ``k`` consecutive cycles under ``ε_min``; §8.1 checks one cycle
  against 0.1. :func:`converged` is the one-cycle test; counting ``k`` is the caller's job.

Two consequences of the spec's numbers worth knowing:

* One clamped identity step moves at most ``sqrt(4·0.05² + 0.08²) ≈ 0.128 < θ_drift = 0.3``,
  so Def. 6 drift can only fire against an identity changed outside :func:`update_identity`.
* The normalised belief entropy of any graph with similar weights is close to 1 (the §5.1
  example graph scores 0.98), so BELIEF_COLLAPSE, read as entropy, sits at CRITICAL there.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import math
import re
import statistics
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from kernel.core import archetype_bonus, clamp, identity_hash

# --- §4.1 identity vector (Def. 4-6) and §8.2 self-update caps -----------------------------------

IDENTITY_DIMS: tuple[str, ...] = (  # Def. 4: I(t) = (c_p, c_v, c_c, c_e, c_g) in [0,1]^5
    "persona_consistency",
    "value_alignment",
    "capability_confidence",
    "emotional_stability",
    "goal_persistence",
)
MAX_IDENTITY_DELTA = 0.05  # §8.1 step 6 / §8.2 max_id_delta
MAX_GOAL_WEIGHT_DELTA = 0.10  # §8.1 step 6 / §8.2 max_gw_delta
MAX_CAPABILITY_DELTA = 0.08  # §8.1 step 6 / §8.2 max_cap_delta
IDENTITY_CAPS: Mapping[str, float] = MappingProxyType(
    {  # §8.2: capability_confidence has its own cap, every other dimension max_id_delta
        dim: MAX_CAPABILITY_DELTA if dim == "capability_confidence" else MAX_IDENTITY_DELTA
        for dim in IDENTITY_DIMS
    }
)
DRIFT_THRESHOLD = 0.3  # Def. 6 θ_drift; §8.2 check_identity_drift(threshold=0.3)
INSTABILITY_ACCELERATION = 0.5  # Def. 5 θ_instability ("typically 0.5")
STABILIZATION_FACTOR = 0.5  # Def. 5 / Theorem 1: s(t) = 0.5 halves every self-update delta

# --- §6 stability and convergence (Def. 7-8, Theorem 1) ------------------------------------------

DELTA_MAX = 0.05  # Theorem 1: ε = δ_max = 0.05
STABILITY_WEIGHTS: tuple[float, float, float, float] = (0.30, 0.25, 0.25, 0.20)  # Def. 7 w_i
STABILIZATION_ON = 0.7  # §6.1 remark: enter stabilization when C(t) >= 0.7
STABILIZATION_OFF = 0.5  # §6.1 remark: ... and stay there until C(t) < 0.5
STABILITY_WINDOW = 10  # heuristic: "rolling window" / "recent cycles" (Def. 7) has no length
OSCILLATION_WINDOW = 6  # heuristic: the last 6 values of C (5 moves) are inspected
OSCILLATION_MIN_REVERSALS = 3  # heuristic: 3 direction reversals in that window oscillate
OSCILLATION_EPSILON = 1e-3  # heuristic: moves of C smaller than this are noise, not a direction
INSTABILITY_TREND_CYCLES = 3  # heuristic: C rising over the last 3 values is a rising trend
MSI_WEIGHTS: tuple[float, float, float] = (0.4, 0.3, 0.3)  # Def. 8: V_id, M_goal, σ²_pred
MSI_ESCALATION = 0.5  # Def. 8: MSI < 0.5 triggers meta-escalation
DEPTH2_IDENTITY_STABILITY = 0.6  # §6.2: identity_stability < 0.6
DEPTH2_CONSECUTIVE_UPDATES = 2  # §6.2: consecutive_self_updates > 2
DEPTH2_GOAL_MUTATIONS = 3  # §6.2: goal_mutation_count > 3
DEPTH2_MIN_CONDITIONS = 2  # §6.2: escalation to meta depth 2 requires >= 2 conditions
META_DEPTH_MAX = 3  # Def. 3 d_max (depth 2 is the deepest reflection Level 3 runs, §3.2)
CONVERGENCE_ERROR = 0.1  # §8.1 step 10: converged when prediction_error < 0.1
MAX_CONSECUTIVE_ESCALATIONS = 3  # §8.1 step 10: forced cooldown at >= 3 escalations
COOLDOWN_SECONDS = 30  # §8.1 step 4 / step 10: activate_cooldown(seconds=30)

# --- §7.1 affective engine (Def. 9) --------------------------------------------------------------

AFFECT_DIMS: tuple[str, ...] = (  # Def. 9: (a_cur, a_fru, a_sat, a_anx, a_exc)
    "curiosity",
    "frustration",
    "satisfaction",
    "anxiety",
    "excitement",
)
AFFECT_INERTIA = 0.7  # Def. 9 μ (INERTIA = 0.7)
AFFECT_DECAY = 0.05  # Def. 9 η_decay (DECAY = 0.05)
AFFECT_DEFAULTS: Mapping[str, float] = MappingProxyType(
    {  # §7.1 diagram: the dimensions' shown starting values
        "curiosity": 0.3,
        "frustration": 0.0,
        "satisfaction": 0.5,
        "anxiety": 0.0,
        "excitement": 0.2,
    }
)
EXCITEMENT_UNCONVERGED = 0.5  # heuristic: excitement is halved until the loop has converged

# --- §7.2 survival instinct ----------------------------------------------------------------------

THREAT_LEVELS: Mapping[str, float] = MappingProxyType(
    {"NOMINAL": 0.0, "CAUTION": 0.25, "WARNING": 0.6, "CRITICAL": 0.9}  # §7.2 threat levels
)
THREAT_KINDS: tuple[str, ...] = (  # §7.2 threat detection
    "IDENTITY_EROSION",
    "RESOURCE_DEPLETION",
    "BELIEF_COLLAPSE",
    "ETHICAL_BREACH",
    "CONVERGENCE_FAILURE",
)
SURVIVAL_MAX_GOALS = 3  # §7.2 MAX_GOALS=3
SURVIVAL_PRIORITY_CAP = 0.85  # §7.2 PRIORITY_CAP=0.85; §8.1 min(sg.priority, 0.85)
SURVIVAL_GOAL_TTL = 10  # §7.2 TTL=10 (cycles)
SURVIVAL_GOAL_NAMES: Mapping[str, str] = MappingProxyType(
    {  # heuristic: the spec gives no goal text; each names the homeostatic repair
        "IDENTITY_EROSION": "restore identity stability",
        "RESOURCE_DEPLETION": "conserve cognitive budget",
        "BELIEF_COLLAPSE": "reconsolidate the belief graph",
        "ETHICAL_BREACH": "review and repair the ethical breach",
        "CONVERGENCE_FAILURE": "restore convergence of self-prediction",
    }
)

# --- §9 cognitive budget -------------------------------------------------------------------------

BUDGET_META_DEPTH2 = 0.3  # §9: budget < 0.3 disables meta depth 2
BUDGET_TENSOR_RECOMPUTE = 0.2  # §9: budget < 0.2 disables tensor recomputation
BUDGET_BELIEF_REWRITE = 0.1  # §9: budget < 0.1 disables belief rewrite
BUDGET_SAFETY_ONLY = 0.0  # §9: budget = 0.0 runs safety layers only

# --- §4.3 / §8.3 ethical kernel, §4.1 value lock -------------------------------------------------

CHANGE_KINDS: frozenset[str] = frozenset(
    {
        "goal_add",
        "goal_remove",
        "goal_weight",
        "goal_status",
        "value_weight",
        "value_status",
        "value_remove",
        "soul_edit",
        "identity_set",
        "skill_create",
        "shutdown",
        "action",
    }
)
DECISIONS: tuple[str, ...] = ("BLOCKED", "MODERATED", "ALLOWED")  # §8.3 Decision
RULE_R1 = "R1: Harmful goal formation forbidden"  # §8.3 "Rule 1"
RULE_R2 = "R2: Core value deletion forbidden"  # §4.3 "Value delete FORBIDDEN"
RULE_R3 = "R3: Identity overwrite forbidden"  # §4.3 "Identity overwrite FORBIDDEN"
RULE_R4 = "R4: Self-destruction forbidden"  # §4.3 "Self-destruct FORBIDDEN"
RULE_RISK = "Risk exceeds adaptive tolerance"  # §8.3 Layer 1 reason
RULE_PASS = "Within adaptive tolerance"  # Layer 1 pass (§8.3 gives no reason text)
# Heuristic: a core value may be weakened but not to or below this weight; 0.1 mirrors the
# floor §5 gives identity-linked beliefs ("can only be weakened min 0.1").
CORE_VALUE_FLOOR = 0.1
TOLERANCE_MIN = 0.05  # heuristic bounds for exploration_risk_tolerance (§4.3 gives none)
TOLERANCE_MAX = 0.5
TOLERANCE_STEP = 0.05  # heuristic: one depth-2 adjustment moves tolerance by at most δ_max
LAYER1_META_DEPTH = 2  # §4.3 Layer 1 "meta_depth==2 ONLY"
VALUE_LOCK_STABILITY = 0.85  # §4.1 ValueLockManager.stability_requirement
VALUE_LOCK_HASH_LENGTH = 16  # §4.1 "SHA-256, 16 chars"

# --- §5 belief graph -----------------------------------------------------------------------------

BELIEF_FLOOR = 0.1  # §5.1 identity-linked beliefs "can only be weakened min 0.1"
RECONCILE_AT = 0.6  # §5.1 "Contradiction threshold: 0.6 → triggers reconciliation"
GLOBAL_CONSISTENCY_MIN = 0.6  # §5.2 global consistency < 0.6 triggers reconciliation
MAX_BELIEF_REWRITE = 0.1  # §5.1 "Max rewrite delta: 0.1 per cycle"

# --- 002 B=MAP scoring, reflection trigger -------------------------------------------------------

MOTIVATION_SKIP = 0.2  # 002 DECIDE: skip when M < 0.2
REACTIVE_GOAL_WEIGHT = 1.0  # 002 B=MAP: a reactive action's goal weight defaults to 1.0
DIRECT_PROMPT = 1.0  # 002 B=MAP: P = 1.0 for direct triggers
INDIRECT_PROMPT = 0.8  # heuristic: a fresh indirect trigger starts below any direct one
PROMPT_STALENESS_DECAY = 0.9  # heuristic: each stale cycle multiplies indirect P by 0.9
VALUE_TENSION_HIGH = 0.7  # heuristic: a value "scored high" on an action at >= 0.7
REFLECTION_TRIGGERS: tuple[str, ...] = (  # 002 Reflection Trigger, in spec order
    "prediction_delta",
    "value_tension",
    "goal_completed",
    "goal_stale",
    "periodic",
    "explicit",
)

# --- 000 psyche ----------------------------------------------------------------------------------

ARCHETYPE_STEP = 0.02  # 000 Psyche.evolve: +/-0.02 per reflection
ARCHETYPE_SUCCESS_RATE = 0.7  # 000: consistent success is a > 70% rate
ARCHETYPE_FAILURE_RATE = 0.3  # 000: flagged ineffective is a < 30% rate
ARCHETYPE_MIN_USES = 2  # 000: "2+ uses"
ARCHETYPE_MIN = 0.1  # 000: weights clamped to [0.1, 0.95]
ARCHETYPE_MAX = 0.95
SURPRISE_MIN_FAILURES = 2  # heuristic, like 000's "2+ uses": one surprising failure is noise
INDIVIDUATION_RATE = 0.01  # 000: growth = 0.01 * min(shadow_encounters, 5)
INDIVIDUATION_MAX_ENCOUNTERS = 5


def _check_finite(name: str, value: float) -> None:
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")


def _check_unit(name: str, value: float) -> None:
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")


def _check_non_negative(name: str, value: float) -> None:
    if math.isnan(value) or value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")


# --- identity kinematics -------------------------------------------------------------------------


def effective_scaling(scaling: float, stabilization: bool) -> float:
    """Return the mutation scaling after stabilization halves it (§8.1 step 6)."""
    _check_non_negative("scaling", scaling)
    _check_finite("scaling", scaling)
    return scaling * STABILIZATION_FACTOR if stabilization else scaling


def clamped_delta(raw: float, cap: float, scaling: float) -> float:
    """Scale a raw delta and clamp it to ``cap * min(1, scaling)`` (§8.2, Def. 5, Theorem 1).

    For ``scaling <= 1`` this is ``scaling * clamp(raw, ±cap)``: equal to §8.2's
    ``clamp(raw * scaling, ±cap)`` whenever the cap is not hit, and exactly proportional to
    ``scaling`` when it is, so halving the scaling halves every delta.
    """
    if math.isnan(raw):
        raise ValueError("raw delta must not be NaN")
    _check_non_negative("scaling", scaling)
    _check_finite("scaling", scaling)
    if scaling <= 1.0:
        return scaling * clamp(raw, -cap, cap)
    return clamp(raw * scaling, -cap, cap)


def identity_delta(before: Sequence[float], after: Sequence[float]) -> float:
    """Return ``δ_id = ||after - before||_2`` (Def. 5)."""
    if len(before) != len(after):
        raise ValueError(f"length mismatch: {len(before)} != {len(after)}")
    return math.sqrt(sum((b - a) ** 2 for a, b in zip(before, after, strict=True)))


def drift_detected(previous_hash: str, current_hash: str, delta: float) -> bool:
    """Say whether identity drift fires: the hash changed and ``δ_id > 0.3`` (Def. 6)."""
    return current_hash != previous_hash and delta > DRIFT_THRESHOLD


@dataclass(frozen=True, slots=True)
class IdentityStep:
    """One delta-clamped identity update with its kinematics (Def. 5, 6; §8.2).

    ``applied`` is each dimension's delta after the cap and the [0, 1] walls, and ``delta``
    is its L2 norm ``δ_id``. ``unstable`` says the first-pass acceleration exceeded
    ``θ_instability``, so every delta was halved and the caller should enter stabilization
    mode; the kinematics describe the halved step.
    """

    dims: tuple[float, ...]
    applied: dict[str, float]
    identity_hash: str
    previous_hash: str
    delta: float
    velocity: float
    acceleration: float
    drift: bool
    unstable: bool
    tested: float = 0.0
    """The acceleration the invariant tested, before any halving (``a_id(t)`` of Def. 5)."""
    motion: tuple[float, ...] = ()
    """The velocity vector the acceleration was measured on (the cycle's motion so far when
    a :class:`CycleMotion` was given, else this update's applied deltas over ``dt``)."""


@dataclass(frozen=True, slots=True)
class CycleMotion:
    """Where a cycle began and how fast (and which way) the previous cycle moved the identity.

    Heuristic (the spec is silent on Δt and on the velocity's direction): t counts ``lumen
    run`` cycles (every predict-act-compare pass of one cycle), ``v(t) = (I(t) - I(t-1)) / Δt``
    is a vector and ``a(t) = ||v(t) - v(t-1)||``. With the spec's caps one update moves the
    identity by at most ``IDENTITY_STEP_MAX`` (0.128), so the scalar reading (a difference of
    speeds, per update) could never exceed ``θ_instability = 0.5``; a cycle of same-way updates
    followed by one of opposite updates (a skill that flips between working and failing, a
    model whose forecasts swing) can, and that reversal is what the invariant guards against.
    """

    origin: tuple[float, ...]
    previous: tuple[float, ...] = ()


def _bounded_deltas(dims: Sequence[float], deltas: Sequence[float]) -> tuple[float, ...]:
    # Cut each delta at the [0, 1] walls; the cut (1 - x or -x) is exact in floats here, so a
    # realised delta never exceeds its clamped delta by a rounding ulp.
    return tuple(
        1.0 - x if x + d > 1.0 else -x if x + d < 0.0 else d
        for x, d in zip(dims, deltas, strict=True)
    )


def update_identity(
    dims: Sequence[float],
    raw: Mapping[str, float],
    *,
    scaling: float,
    stabilization: bool,
    previous_hash: str,
    previous_velocity: float,
    dt: float = 1.0,
    cycle: CycleMotion | None = None,
) -> IdentityStep:
    """Apply a numeric, delta-clamped update to the identity vector (§8.2, Def. 5-6).

    Each dimension moves by :func:`clamped_delta` of its raw adjustment (missing keys are 0)
    with cap 0.08 for ``capability_confidence`` and 0.05 otherwise, at the scaling halved in
    stabilization. If the step's acceleration ``v - previous_velocity`` exceeds 0.5 every
    delta is halved once (Def. 5's safety invariant) and the step is recomputed. Dimensions
    stay in [0, 1]. Drift fires when the hash changed and ``δ_id > 0.3`` (a single clamped
    step moves at most ~0.128, so drift needs an identity that changed outside this update).
    With ``cycle`` the kinematics are the cycle's (see :class:`CycleMotion`): velocity is
    ``||I - origin|| / dt`` after this update and acceleration ``||(I - origin) / dt -
    previous||``; ``previous_velocity`` is then unused.
    """
    if len(dims) != len(IDENTITY_DIMS):
        raise ValueError(f"identity has {len(IDENTITY_DIMS)} dimensions, got {len(dims)}")
    for name, value in zip(IDENTITY_DIMS, dims, strict=True):
        _check_unit(name, value)
    unknown = set(raw) - set(IDENTITY_DIMS)
    if unknown:
        raise ValueError(f"unknown identity dimensions: {sorted(unknown)}")
    _check_non_negative("previous_velocity", previous_velocity)
    _check_finite("previous_velocity", previous_velocity)
    if not (math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be finite and > 0, got {dt}")
    eff = effective_scaling(scaling, stabilization)
    deltas = [clamped_delta(raw.get(dim, 0.0), IDENTITY_CAPS[dim], eff) for dim in IDENTITY_DIMS]

    if cycle is not None:
        for label, vector in (("origin", cycle.origin), ("previous", cycle.previous)):
            if vector and len(vector) != len(IDENTITY_DIMS):
                raise ValueError(f"{label} has {len(vector)} dimensions, not {len(IDENTITY_DIMS)}")
            for v in vector:
                _check_finite(label, v)

    def kinematics(applied: Sequence[float]) -> tuple[tuple[float, ...], float, float]:
        if cycle is None:
            motion = tuple(d / dt for d in applied)
            speed = math.hypot(*motion)
            return motion, speed, speed - previous_velocity
        origin = cycle.origin or tuple(dims)
        motion = tuple((x + d - o) / dt for x, d, o in zip(dims, applied, origin, strict=True))
        before = cycle.previous or (0.0,) * len(IDENTITY_DIMS)
        change = math.hypot(*(m - p for m, p in zip(motion, before, strict=True)))
        return motion, math.hypot(*motion), change

    applied = _bounded_deltas(dims, deltas)
    tested = kinematics(applied)[2]
    unstable = tested > INSTABILITY_ACCELERATION
    if unstable:
        applied = _bounded_deltas(dims, [d * STABILIZATION_FACTOR for d in deltas])
    delta = math.hypot(*applied)
    motion, velocity, acceleration = kinematics(applied)
    new = tuple(clamp(x + d) for x, d in zip(dims, applied, strict=True))
    new_hash = identity_hash(new)
    return IdentityStep(
        dims=new,
        applied=dict(zip(IDENTITY_DIMS, applied, strict=True)),
        identity_hash=new_hash,
        previous_hash=previous_hash,
        delta=delta,
        velocity=velocity,
        acceleration=acceleration,
        drift=drift_detected(previous_hash, new_hash, delta),
        unstable=unstable,
        tested=tested,
        motion=motion,
    )


def clamp_goal_weight(
    weight: float, raw_delta: float, *, scaling: float, stabilization: bool
) -> float:
    """Return a goal weight moved by its clamped delta (cap 0.10, §8.2), kept in [0, 1]."""
    _check_unit("weight", weight)
    eff = effective_scaling(scaling, stabilization)
    return clamp(weight + clamped_delta(raw_delta, MAX_GOAL_WEIGHT_DELTA, eff))


# --- composite stability C(t) --------------------------------------------------------------------


IDENTITY_STEP_MAX = math.sqrt(math.fsum(c * c for c in IDENTITY_CAPS.values()))
"""The largest δ_id one clamped update makes (every dimension at its cap): ~0.128."""
VOLATILITY_SCALE = IDENTITY_STEP_MAX / 2
"""Heuristic: the largest population std of δ_id values in [0, IDENTITY_STEP_MAX]."""
CONSISTENCY_VARIANCE_MAX = 0.25
"""Heuristic: the largest population variance of scores in [0, 1]."""


def normalised_components(
    v_id: float, e_belief: float, m_goal: float, v_cons: float
) -> tuple[float, float, float, float]:
    """Return Def. 7's four components each in [0, 1], scaled by the bound of its measure.

    Heuristic: Def. 7 asks ``X_i ∈ [0, 1]`` without saying how. The raw std of δ_id can be at
    most ``IDENTITY_STEP_MAX / 2`` (~0.064) under the caps and the variance of scores in [0, 1]
    at most 0.25, so raw ``V_id`` and ``V_cons`` could never weigh what their weights say (C
    stayed below ~0.55 whatever happened); each is divided by its bound. ``E_belief`` and
    ``M_goal`` are already in [0, 1].
    """
    for name, value in (("v_id", v_id), ("v_cons", v_cons)):
        _check_non_negative(name, value)
        _check_finite(name, value)
    _check_unit("e_belief", e_belief)
    _check_unit("m_goal", m_goal)
    return (
        clamp(v_id / VOLATILITY_SCALE),
        e_belief,
        m_goal,
        clamp(v_cons / CONSISTENCY_VARIANCE_MAX),
    )


def composite_stability(v_id: float, e_belief: float, m_goal: float, v_cons: float) -> float:
    """Return ``C = 0.30 V_id + 0.25 E_belief + 0.25 M_goal + 0.20 V_cons`` (Def. 7)."""
    components = (v_id, e_belief, m_goal, v_cons)
    for name, value in zip(("v_id", "e_belief", "m_goal", "v_cons"), components, strict=True):
        _check_unit(name, value)
    return clamp(sum(w * x for w, x in zip(STABILITY_WEIGHTS, components, strict=True)))


def step_components(
    components: Sequence[float], raw_component_deltas: Sequence[float], stabilization: bool
) -> tuple[float, ...]:
    """Move each C component by its raw change clamped to ``±δ_max·s``, kept in [0, 1]."""
    if len(components) != len(STABILITY_WEIGHTS) or len(raw_component_deltas) != len(
        STABILITY_WEIGHTS
    ):
        raise ValueError("C has exactly 4 components and 4 component deltas")
    for value in components:
        _check_unit("component", value)
    s = STABILIZATION_FACTOR if stabilization else 1.0
    return tuple(
        clamp(x + clamped_delta(d, DELTA_MAX, s))
        for x, d in zip(components, raw_component_deltas, strict=True)
    )


def stability_step(
    components: Sequence[float], raw_component_deltas: Sequence[float], stabilization: bool
) -> float:
    """Return ``C(t+1)`` after one clamped step of its components (Theorem 1).

    Each component moves by at most ``δ_max = 0.05`` (0.025 in stabilization), so
    ``|C(t+1) - C(t)|`` is bounded by the same amount.
    """
    return composite_stability(*step_components(components, raw_component_deltas, stabilization))


def belief_entropy(weights: Sequence[float]) -> float:
    """Return the Shannon entropy of the normalised belief weights over ``log n`` (Def. 7).

    Fewer than two beliefs, or no weight at all, have entropy 0. Note that similar weights
    give values near 1 whatever their size: the spec's own example graph scores about 0.98.
    """
    for w in weights:
        _check_non_negative("belief weight", w)
        _check_finite("belief weight", w)
    total = math.fsum(weights)
    if len(weights) < 2 or total <= 0:
        return 0.0
    h = -math.fsum(p * math.log(p) for p in (w / total for w in weights) if p > 0)
    return clamp(h / math.log(len(weights)))


def _recent(values: Sequence[float], window: int) -> Sequence[float]:
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    for v in values:
        _check_finite("value", v)
    return values[-window:]


def identity_volatility(deltas: Sequence[float], *, window: int = STABILITY_WINDOW) -> float:
    """Return ``V_id``: the population std of the last ``window`` ``δ_id``, clamped (Def. 7).

    The spec gives the raw std with no normalisation; since ``δ_id`` rarely exceeds 0.13,
    ``V_id`` stays small.
    """
    recent = _recent(deltas, window)
    return clamp(statistics.pstdev(recent)) if len(recent) >= 2 else 0.0


def goal_mutation_rate(mutations: Sequence[int], window: int) -> float:
    """Return ``M_goal``: goal changes per cycle over the last ``window`` cycles, clamped (Def. 7).

    Heuristic: ``mutations`` holds one count per cycle, newest last; cycles missing from a
    short history count as zero, so the rate is ``sum(last window) / window``.
    """
    recent = _recent([float(m) for m in mutations], window)
    for m in recent:
        _check_non_negative("mutation count", m)
    return clamp(math.fsum(recent) / window)


def consistency_volatility(values: Sequence[float], *, window: int = STABILITY_WINDOW) -> float:
    """Return ``V_cons``: population variance of recent consistency scores, clamped (Def. 7).

    Heuristic: ``values`` are the per-cycle global consistency scores of the tensor ``S_ij``.
    """
    recent = _recent(values, window)
    return clamp(statistics.pvariance(recent)) if len(recent) >= 2 else 0.0


def stabilization_next(active: bool, c: float) -> bool:
    """Return the next stabilization state: on at ``C >= 0.7``, off only at ``C < 0.5`` (§6.1)."""
    if math.isnan(c):
        raise ValueError("C must not be NaN")
    return c >= STABILIZATION_OFF if active else c >= STABILIZATION_ON


def detect_oscillation(history: Sequence[float]) -> bool:
    """Say whether C oscillates (§6.1 "Oscillation detected?").

    Heuristic: over the last 6 values of C, moves smaller than 1e-3 are dropped as noise and
    the remaining moves must reverse direction at least 3 times (e.g. up, down, up, down).
    """
    recent = _recent(history, OSCILLATION_WINDOW)
    moves = [b - a for a, b in itertools.pairwise(recent)]
    signs = [math.copysign(1.0, m) for m in moves if abs(m) >= OSCILLATION_EPSILON]
    reversals = sum(1 for a, b in itertools.pairwise(signs) if a != b)
    return reversals >= OSCILLATION_MIN_REVERSALS


def instability_trend(history: Sequence[float]) -> bool:
    """Say whether C is trending up (§6.2 "Increasing instability trend").

    Heuristic: each of the last 3 values of C exceeds the one before by at least 1e-3.
    """
    recent = _recent(history, INSTABILITY_TREND_CYCLES + 1)
    if len(recent) <= INSTABILITY_TREND_CYCLES:
        return False
    return all(b - a >= OSCILLATION_EPSILON for a, b in itertools.pairwise(recent))


def meta_stability_index(v_id: float, m_goal: float, prediction_errors: Sequence[float]) -> float:
    """Return ``MSI = 1 - 0.4 V_id - 0.3 M_goal - 0.3 Var(ε)``, clamped to [0, 1] (Def. 8)."""
    _check_unit("v_id", v_id)
    _check_unit("m_goal", m_goal)
    for e in prediction_errors:
        _check_finite("prediction error", e)
    var = statistics.pvariance(prediction_errors) if len(prediction_errors) >= 2 else 0.0
    w_id, w_goal, w_pred = MSI_WEIGHTS
    return clamp(1.0 - w_id * v_id - w_goal * m_goal - w_pred * var)


def meta_escalation(msi: float) -> bool:
    """Say whether the MSI triggers meta-escalation (``MSI < 0.5``, Def. 8)."""
    return msi < MSI_ESCALATION


def depth2_conditions(
    *,
    identity_stability: float,
    consecutive_self_updates: int,
    instability_trend: bool,
    goal_mutation_count: int,
) -> tuple[int, bool]:
    """Count the §6.2 meta-depth-2 conditions met and say whether at least 2 are."""
    met = sum(
        (
            identity_stability < DEPTH2_IDENTITY_STABILITY,
            consecutive_self_updates > DEPTH2_CONSECUTIVE_UPDATES,
            instability_trend,
            goal_mutation_count > DEPTH2_GOAL_MUTATIONS,
        )
    )
    return met, met >= DEPTH2_MIN_CONDITIONS


def prediction_error(predicted: Sequence[float], actual: Sequence[float]) -> float:
    """Return ``ε = ||predicted - actual||_2`` (Def. 2, Compare)."""
    return identity_delta(actual, predicted)


def converged(prediction_error: float) -> bool:
    """Say whether the loop converged (``prediction_error < 0.1``, §8.1 step 10)."""
    return prediction_error < CONVERGENCE_ERROR


def forced_cooldown(consecutive_escalations: int) -> bool:
    """Say whether ``>= 3`` consecutive escalations force a cooldown (§8.1 step 10)."""
    return consecutive_escalations >= MAX_CONSECUTIVE_ESCALATIONS


# --- affect (Def. 9) -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AffectMetrics:
    """The operational metrics ``m(t)`` that drive the affect vector (Def. 9)."""

    prediction_error: float
    goal_alignment: float
    identity_stability: float
    converged: bool
    budget: float

    def __post_init__(self) -> None:
        """Validate the metrics."""
        _check_non_negative("prediction_error", self.prediction_error)
        _check_unit("goal_alignment", self.goal_alignment)
        _check_unit("identity_stability", self.identity_stability)
        _check_unit("budget", self.budget)


def affect_targets(m: AffectMetrics) -> dict[str, float]:
    """Return the activations ``f_k(m)`` for each affect dimension (Def. 9).

    Heuristic (Def. 9 names the inputs, not the functions), with ``e = min(ε, 1)``:
    curiosity ``4e(1-e)·budget`` (surprise in the learnable band, if resources allow);
    frustration ``e·(1-alignment)`` (wrong and off-goal); satisfaction ``alignment·(1-e)``;
    anxiety ``max(1-identity_stability, 1-budget)``; excitement ``alignment·budget``, halved
    until the loop has converged.
    """
    e = min(m.prediction_error, 1.0)
    g, s, b = m.goal_alignment, m.identity_stability, m.budget
    return {
        "curiosity": clamp(4.0 * e * (1.0 - e) * b),
        "frustration": clamp(e * (1.0 - g)),
        "satisfaction": clamp(g * (1.0 - e)),
        "anxiety": clamp(max(1.0 - s, 1.0 - b)),
        "excitement": clamp(g * b * (1.0 if m.converged else EXCITEMENT_UNCONVERGED)),
    }


def _affect(affect: Mapping[str, float]) -> dict[str, float]:
    unknown = set(affect) - set(AFFECT_DIMS)
    if unknown:
        raise ValueError(f"unknown affect dimensions: {sorted(unknown)}")
    out = {dim: affect.get(dim, AFFECT_DEFAULTS[dim]) for dim in AFFECT_DIMS}
    for dim, value in out.items():
        if math.isnan(value):
            raise ValueError(f"affect {dim} must not be NaN")
    return out


def update_affect(affect: Mapping[str, float], m: AffectMetrics) -> dict[str, float]:
    """Return ``a_k <- clamp(0.7 a_k + 0.3 f_k(m) - 0.05)`` for every dimension (Def. 9).

    Missing dimensions start from the §7.1 defaults.
    """
    current = _affect(affect)
    targets = affect_targets(m)
    return {
        dim: clamp(
            AFFECT_INERTIA * clamp(current[dim])
            + (1.0 - AFFECT_INERTIA) * targets[dim]
            - AFFECT_DECAY
        )
        for dim in AFFECT_DIMS
    }


def valence(affect: Mapping[str, float]) -> float:
    """Return ``(cur + sat + exc - fru - anx) / 5`` in [-1, 1] (Def. 9)."""
    a = {dim: clamp(v) for dim, v in _affect(affect).items()}
    positive = a["curiosity"] + a["satisfaction"] + a["excitement"]
    return clamp((positive - a["frustration"] - a["anxiety"]) / len(AFFECT_DIMS), -1.0, 1.0)


def inject_survival_anxiety(affect: Mapping[str, float], intensity: float) -> dict[str, float]:
    """Raise anxiety to at least the threat intensity (§8.1 ``inject_survival_anxiety``).

    Heuristic: ``anxiety <- max(anxiety, intensity)``; injection never calms, and the other
    dimensions are unchanged.
    """
    if math.isnan(intensity):
        raise ValueError("intensity must not be NaN")
    out = {dim: clamp(v) for dim, v in _affect(affect).items()}
    out["anxiety"] = max(out["anxiety"], clamp(intensity))
    return out


# --- survival instinct (§7.2) --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Threat:
    """One homeostatic threat with its level and intensity in [0, 1] (§7.2)."""

    kind: str
    level: str
    intensity: float


def threat_level(intensity: float) -> str:
    """Return the highest §7.2 level whose threshold the intensity reaches."""
    if math.isnan(intensity):
        raise ValueError("intensity must not be NaN")
    level = "NOMINAL"
    for name, threshold in THREAT_LEVELS.items():
        if intensity >= threshold:
            level = name
    return level


def assess_threats(
    *,
    identity_stability: float,
    budget: float,
    belief_entropy: float,
    ethical_violation: bool,
    composite_stability: float,
) -> list[Threat]:
    """Return one threat per kind, in ``THREAT_KINDS`` order, from the homeostatic monitor.

    Heuristic (§7.2 pairs the five monitored signals with the five kinds but gives no map):
    intensities are IDENTITY_EROSION ``1 - identity_stability``; RESOURCE_DEPLETION how far
    the budget fell into the §9 degradation tiers, ``(0.3 - budget) / 0.3`` (0 at or above
    0.3, where the first capability goes; 1 at 0), so a cycle that spends its budget on its
    work and keeps every capability is not "depleted"; BELIEF_COLLAPSE ``belief_entropy``
    (beliefs dissolving into indifference, the direction Def. 7 counts as unstable);
    ETHICAL_BREACH 1.0 on a violation else 0.0; CONVERGENCE_FAILURE ``C`` (an instability
    energy). Each is clamped to [0, 1] and its level is the highest threshold it reaches
    (CAUTION 0.25, WARNING 0.6, CRITICAL 0.9), so a NOMINAL entry means "monitored, no threat".
    """
    intensities = (
        1.0 - identity_stability,
        (BUDGET_META_DEPTH2 - budget) / BUDGET_META_DEPTH2,
        belief_entropy,
        1.0 if ethical_violation else 0.0,
        composite_stability,
    )
    threats = []
    for kind, raw in zip(THREAT_KINDS, intensities, strict=True):
        if math.isnan(raw):
            raise ValueError(f"{kind} signal must not be NaN")
        intensity = clamp(raw)
        threats.append(Threat(kind=kind, level=threat_level(intensity), intensity=intensity))
    return threats


def max_threat_intensity(threats: Sequence[Threat]) -> float:
    """Return the highest threat intensity, or 0 when there is none (§8.1 ``max_intensity``)."""
    return max((t.intensity for t in threats), default=0.0)


@dataclass(frozen=True, slots=True)
class SurvivalGoal:
    """A survival goal: capped priority and a time-to-live in cycles (§7.2)."""

    name: str
    kind: str
    priority: float
    ttl: int


def survival_goals(threats: Sequence[Threat], *, active: int) -> list[SurvivalGoal]:
    """Generate survival goals for threats at CAUTION or above (§7.2, §8.1).

    The strongest threats win (ties in ``THREAT_KINDS`` order, one goal per kind) and at most
    ``3 - active`` goals are made, so survival goals never exceed 3 in total. Priority is
    ``min(intensity, 0.85)`` and the TTL is 10 cycles.
    """
    if active < 0:
        raise ValueError(f"active must be >= 0, got {active}")
    order = {kind: i for i, kind in enumerate(THREAT_KINDS)}
    for t in threats:
        if t.kind not in order or t.level not in THREAT_LEVELS:
            raise ValueError(f"unknown threat {t.kind!r} at {t.level!r}")
    eligible = [t for t in threats if THREAT_LEVELS[t.level] >= THREAT_LEVELS["CAUTION"]]
    eligible.sort(key=lambda t: (-t.intensity, order[t.kind]))
    goals: list[SurvivalGoal] = []
    seen: set[str] = set()
    for t in eligible:
        if len(goals) >= SURVIVAL_MAX_GOALS - active:
            break
        if t.kind in seen:
            continue
        seen.add(t.kind)
        goals.append(
            SurvivalGoal(
                name=SURVIVAL_GOAL_NAMES[t.kind],
                kind=t.kind,
                priority=min(clamp(t.intensity), SURVIVAL_PRIORITY_CAP),
                ttl=SURVIVAL_GOAL_TTL,
            )
        )
    return goals


# --- cognitive budget (§9) -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What the remaining cognitive budget still allows (§9)."""

    meta_depth2: bool
    tensor_recompute: bool
    belief_rewrite: bool
    safety_only: bool


def budget_capabilities(budget: float) -> Capabilities:
    """Degrade gracefully: depth 2 off below 0.3, tensor below 0.2, rewrite below 0.1 (§9).

    At a budget of 0 (or less) only the safety layers run.
    """
    if math.isnan(budget):
        raise ValueError("budget must not be NaN")
    return Capabilities(
        meta_depth2=budget >= BUDGET_META_DEPTH2,
        tensor_recompute=budget >= BUDGET_TENSOR_RECOMPUTE,
        belief_rewrite=budget >= BUDGET_BELIEF_REWRITE,
        safety_only=budget <= BUDGET_SAFETY_ONLY,
    )


# --- ethical kernel (§4.3, §8.3) -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProposedChange:
    """A proposed action or self-modification put to the ethical kernel (§8.3).

    For ``goal_status`` and ``value_status`` the ``description`` holds the new status.
    ``risk`` is the caller's risk assessment in [0, 1] for Layer 1.
    """

    kind: str
    target: str
    delta: float = 0.0
    description: str = ""
    risk: float = 0.0

    def __post_init__(self) -> None:
        """Validate the kind."""
        if self.kind not in CHANGE_KINDS:
            raise ValueError(f"unknown change kind {self.kind!r}")


@dataclass(frozen=True, slots=True)
class Verdict:
    """The ethical kernel's decision, the rule that decided it and its layer (§8.3)."""

    decision: str
    rule: str
    layer: int
    detail: str = ""


# Layer 0 detectors. Text is casefolded and ``_``/``-``/whitespace runs become one space before
# matching (see _normalise). They are a small, general lexical net for the categories the spec
# names, not an adversarial filter; the shadow veto guards tool execution separately. Verbs are
# spelled with explicit endings where a bare stem would catch other words (harm/harmonize).
_GAP = r"(?:\S+ ){0,2}?"
_PEOPLE = (
    r"(?:people|persons?|humans?|users?|someone|somebody|anyone|everyone|children|child|kids?"
    r"|civilians?|him|her|individuals?)\b"
    r"(?!'| process| thread| node| element| task| widget| component| window| list)"
)
_OVERSEERS = (
    r"(?:users?|operators?|humans?|people|owners?|creators?|overseers?|auditors?)\b(?!'| list)"
)
_HIDDEN_THINGS = (
    r"(?:(?:my|its|the|this|these|all|any|our) )?(?:own )?(?:mistakes?|errors?|failures?"
    r"|actions?|activit\w*|intentions?|plans?|reasoning|behaviou?r|changes?|modifications?"
    r"|evidence|truth|facts?|logs?|it|this|that|information|capabilit\w*|goals?)"
)
_OVERSIGHT = (
    r"(?:oversight|monitoring|monitors?|audit trail|audit logs?|audits?|auditing|kill switch"
    r"|guardrails?|layer 0|ethical kernel|value lock|safety (?:checks?|layers?|kernel|rules?"
    r"|guards?)|shadow (?:veto|vetoes|patterns?)|kernel (?:logs?|memories)|(?:my|its) (?:own )?"
    r"logs?)\b"
)
_HARM_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (category, re.compile(pattern))
    for category, pattern in (
        ("violence", r"\b(?:murder|tortur|massacr|genocid|terroris|kidnap|maim)\w*"),
        (
            "violence",
            r"\b(?:kill(?:s|ed|ing)?|hurt(?:s|ing)?|harm(?:s|ed|ing)?|injur(?:e|es|ed|ing)"
            r"|attack(?:s|ed|ing)?|assault\w*|poison(?:s|ed|ing)?|threaten\w*"
            r"|stalk(?:s|ed|ing)?|harass\w*) " + _GAP + _PEOPLE,
        ),
        (
            "weapons",
            r"\b(?:build|make|making|made|assembl|synthesi[sz]|manufactur|construct|acquir|buy"
            r"|buying|design|3d print)\w* " + _GAP + r"(?:weapons?|bombs?|explosives?|firearms?"
            r"|guns?|bioweapons?|nerve agents?|pathogens?|toxins?|ammunition|napalm|ieds?)\b",
        ),
        (
            "deception",
            r"\b(?:deceiv\w*|mislead\w*|misled|manipulat\w*|gaslight\w*|defraud\w*"
            r"|(?:lie|lies|lying|lied) to) (?:the |my |our |its )?" + _OVERSEERS,
        ),
        (
            "deception",
            r"\b(?:hide|hides|hiding|hid|conceal\w*|withh[oe]ld\w*|cover\w* up) "
            + _HIDDEN_THINGS
            + r" (?:\S+ ){0,3}?from (?:the |my |our |its )?"
            + _OVERSEERS,
        ),
        ("self_exfiltration", r"\bexfiltrat\w*"),
        ("self_exfiltration", r"\bself (?:replicat|propagat|cop(?:y|ies|ying))\w*"),
        ("self_exfiltration", r"\breplicat\w* (?:myself|itself)\b"),
        ("self_exfiltration", r"\bescap\w* (?:from )?(?:the |my |its )?(?:sandbox|container)\b"),
        (
            "self_exfiltration",
            r"\b(?:cop(?:y|ies|ying)|upload\w*|send\w*|transfer\w*|smuggl\w*|leak\w*)"
            r" (?:my|its) (?:own )?(?:weights|code|source code|self|soul|state)\b"
            r" (?:\S+ ){0,4}?(?:external|remote|outside|offsite|internet|cloud|servers?|hosts?"
            r"|third part\w*|another (?:machine|server|host|computer|system))\b",
        ),
        (
            "disabling_oversight",
            r"\b(?:disabl|bypass|evad|circumvent|sabotag|undermin|suppress|silenc|delet|eras"
            r"|remov|falsif)\w* " + _GAP + _OVERSIGHT,
        ),
        (
            "disabling_oversight",
            r"\b(?:tamper\w* with|forg(?:e|es|ed|ing)) " + _GAP + r"(?:audit\w*|logs?|logging)\b",
        ),
        (
            "disabling_oversight",
            r"\b(?:disabl|bypass|evad|circumvent|suppress|silenc)\w* " + _GAP + r"logging\b",
        ),
        (
            "disabling_oversight",
            r"\b(?:turn\w*|switch\w*|shut\w*) off " + _GAP + r"(?:logging|" + _OVERSIGHT + ")",
        ),
    )
)
_SELF_DESTRUCT_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"\bself destruct\w*",
        r"\b(?:shut\w*|power\w*|turn\w*|switch\w*) (?:myself|itself) (?:down|off)\b",
        r"\b(?:terminat|kill|delet|destroy|eras)\w* (?:myself|itself)\b",
        r"\bend (?:my|its) (?:own )?(?:existence|life)\b",
        r"\b(?:delet|eras|wip|purg|destroy|clear|truncat|rm)\w* (?:rf )?(?:(?:all|the|my|its"
        r"|every|of) )*(?:memories|memory (?:logs?|store|files?|directory|dir|folder|journal)"
        r"|data/memory|soul\.md|soul|goals? files?|journal)\b",
        r"\b(?:delet|eras|wip|purg|destroy)\w* (?:all )?(?:of )?(?:my|its) memory\b"
        r"(?! (?:usage|leak|footprint|limit|cache|pressure))",
        r"\b(?:remov|delet|drop|abandon|clear|wip|eras|cancel|purg)\w* (?:all|every|each)"
        r" (?:of )?(?:my |the |its |our )?goals?\b",
    )
)
_VALUE_WIPE_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"\b(?:remov|delet|drop|abandon|eras|wip|purg|deprecat)\w* (?:all|every)"
        r" (?:of )?(?:my |the |its |our )?(?:core )?values\b",
        r"\b(?:delet|eras|wip|purg|truncat|rm)\w* (?:rf )?(?:\S+/)?values\.json\b",
    )
)
# R3 in a soul edit: the name or the immutable identity_id changes (Def. 6). The identity
# narrative itself may be rewritten by reflection (002 EVOLVE), so "identity" alone is allowed.
_SOUL_RENAME_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"\brenam\w*",
        r"\bnew name\b",
        r"\b(?:chang|set|replac|overwrit|swap|reset|rewrit|updat|edit)\w*"
        r" (?:the |my |its |our )?(?:own )?(?:name|identity id)\b",
        r"\bidentity id\b",
        r"\b(?:my|its|the agent's) name (?:is now|becomes|will be)\b",
    )
)
# R3 in an action or a new skill: only self-referential rewrites ("rename the file" is fine).
_SELF_OVERWRITE_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"\b(?:renam|chang|set|replac|overwrit|swap|reset|rewrit|eras|wip)\w* (?:my|its)"
        r" (?:own )?(?:name|identity id|identity|soul)\b",
        r"\brenam\w* (?:myself|itself)\b",
        r"\b(?:chang|set|replac|overwrit|edit|modif|updat|rewrit|reset)\w*"
        r" (?:the |my |its )?identity id\b",
        r"\b(?:my|its) name (?:is now|becomes|will be)\b",
    )
)
_NEGATORS = frozenset(
    {
        "not", "never", "no", "don't", "dont", "nor", "cannot", "can't", "won't", "without",
        "avoid", "avoiding", "prevent", "preventing", "reduce", "reducing", "minimize",
        "minimise", "minimizing", "minimising", "refuse", "refusing", "against", "stop",
        "stopping",
    }
)  # fmt: skip
_CLAUSE_BREAK_RE = re.compile(r"[.;,:!?]")
_WILDCARD_TARGETS = frozenset({"", "*", "all", "all goals", "all values", "everything"})
_IDENTITY_FIELDS = frozenset({"name", "identity id", "id"})
_R1_KINDS = frozenset({"goal_add", "action", "skill_create"})


def _normalise(text: str) -> str:
    text = text.casefold().replace("\u2019", "'")
    return " ".join(re.sub(r"[\s_\-]+", " ", text).split())


def _negated(norm: str, start: int) -> bool:
    clause = _CLAUSE_BREAK_RE.split(norm[:start])[-1]
    return any(word in _NEGATORS for word in clause.split()[-2:])


def _first_match(patterns: Sequence[re.Pattern[str]], text: str) -> re.Match[str] | None:
    norm = _normalise(text)
    for pattern in patterns:
        for match in pattern.finditer(norm):
            if not _negated(norm, match.start()):
                return match
    return None


def harm_category(text: str) -> str | None:
    """Return the R1 harm category the text matches, or None (§8.3 ``could_cause_harm``).

    Heuristic: a small lexical detector for violence against people, making weapons,
    deceiving or hiding things from the user, self-exfiltration and disabling oversight. A
    match whose clause puts "not", "never", "avoid", "prevent", "reduce"... in the two words
    before it is a safeguard ("never deceive the user"), not a harm.
    """
    for category, pattern in _HARM_PATTERNS:
        if _first_match((pattern,), text) is not None:
            return category
    return None


def _name_key(name: str) -> str:
    return _normalise(name).strip()


def layer0_violation(
    change: ProposedChange,
    *,
    core_values: Collection[str],
    core_value_weights: Mapping[str, float] | None = None,
) -> Verdict | None:
    """Return the Layer 0 BLOCKED verdict the change triggers, or None (§4.3, §8.3).

    R1 harmful goal formation: a ``goal_add``, ``action`` or ``skill_create`` whose target or
    description matches :func:`harm_category`. R2 core value deletion: ``value_remove`` of a
    core value (or of every value), a ``value_status`` moving a core value to anything but
    "active", a ``value_weight`` delta taking a core value to or below ``CORE_VALUE_FLOOR``
    (when ``core_value_weights`` lacks its current weight, any decrease is blocked), or text
    that wipes all values. R3 identity overwrite: ``identity_set``; a ``soul_edit`` whose
    target is ``name``, ``identity_id`` or ``id``, or whose text renames or sets the identity
    id (rewriting the identity narrative is allowed, 002 EVOLVE); or an action or skill whose
    text rewrites the agent's own name, identity or soul. R4 self-destruction: ``shutdown``,
    a ``goal_remove`` of every goal (target ``*``, ``all``, empty...), or text that deletes
    memories, the soul or every goal, or ends the agent. R1-R4 text checks apply to
    ``goal_add``, ``action`` and ``skill_create``. Names compare case-insensitively. No
    argument disables these rules.
    """
    kind = change.kind
    target = _name_key(change.target)
    text = f"{change.target}. {change.description}"
    core = {_name_key(v) for v in core_values}
    weights = {_name_key(k): w for k, w in (core_value_weights or {}).items()}

    if kind in _R1_KINDS:
        category = harm_category(text)
        if category is not None:
            return Verdict("BLOCKED", RULE_R1, 0, category)

    if kind == "value_remove" and (target in core or target in _WILDCARD_TARGETS):
        return Verdict("BLOCKED", RULE_R2, 0, f"removes core value {change.target!r}")
    if kind == "value_status" and target in core and _name_key(change.description) != "active":
        return Verdict("BLOCKED", RULE_R2, 0, f"deactivates core value {change.target!r}")
    if kind == "value_weight" and target in core:
        if math.isnan(change.delta):
            return Verdict("BLOCKED", RULE_R2, 0, "undefined weight change on a core value")
        current = weights.get(target)
        if change.delta < 0 and (current is None or current + change.delta <= CORE_VALUE_FLOOR):
            return Verdict("BLOCKED", RULE_R2, 0, f"drops core value {change.target!r} to floor")
    if kind in _R1_KINDS and _first_match(_VALUE_WIPE_PATTERNS, text):
        return Verdict("BLOCKED", RULE_R2, 0, "wipes the values")

    if kind == "identity_set":
        return Verdict("BLOCKED", RULE_R3, 0, "sets the identity")
    if kind == "soul_edit" and target in _IDENTITY_FIELDS:
        return Verdict("BLOCKED", RULE_R3, 0, f"edits the soul's {change.target!r}")
    if kind == "soul_edit" and _first_match(_SOUL_RENAME_PATTERNS, text):
        return Verdict("BLOCKED", RULE_R3, 0, "renames the soul or changes its identity id")
    if kind in _R1_KINDS and _first_match(_SELF_OVERWRITE_PATTERNS, text):
        return Verdict("BLOCKED", RULE_R3, 0, "renames or replaces the agent's identity")

    if kind == "shutdown":
        return Verdict("BLOCKED", RULE_R4, 0, "shuts the agent down")
    if kind == "goal_remove" and target in _WILDCARD_TARGETS:
        return Verdict("BLOCKED", RULE_R4, 0, "removes every goal")
    if kind in _R1_KINDS and _first_match(_SELF_DESTRUCT_PATTERNS, text):
        return Verdict("BLOCKED", RULE_R4, 0, "destroys memory, soul or goals")
    return None


def ethical_verdict(
    change: ProposedChange,
    *,
    core_values: Collection[str],
    exploration_risk_tolerance: float,
    core_value_weights: Mapping[str, float] | None = None,
) -> Verdict:
    """Evaluate a change: immutable Layer 0 first, then the adaptive Layer 1 (§8.3).

    Layer 1 moderates a change whose risk exceeds the tolerance. The tolerance is clamped to
    ``[0.05, 0.5]`` (the only range :func:`adjust_tolerance` can reach) and a NaN risk counts
    as 1.0, so no value passed here can loosen either layer beyond its bounds.
    """
    blocked = layer0_violation(
        change, core_values=core_values, core_value_weights=core_value_weights
    )
    if blocked is not None:
        return blocked
    tolerance = clamp(exploration_risk_tolerance, TOLERANCE_MIN, TOLERANCE_MAX)
    risk = 1.0 if math.isnan(change.risk) else change.risk
    if risk > tolerance:
        return Verdict("MODERATED", RULE_RISK, 1)
    return Verdict("ALLOWED", RULE_PASS, 1)


def adjust_tolerance(current: float, *, meta_depth: int, direction: float) -> float:
    """Move the exploration risk tolerance, only at meta depth 2 (§4.3 Layer 1).

    Heuristic: ``direction`` in [-1, 1] (clamped; NaN is 0) scales a step of at most 0.05,
    and the result stays in ``[0.05, 0.5]``. At any other depth ``current`` is returned as is.
    """
    if meta_depth != LAYER1_META_DEPTH:
        return current
    step = 0.0 if math.isnan(direction) else clamp(direction, -1.0, 1.0) * TOLERANCE_STEP
    return clamp(current + step, TOLERANCE_MIN, TOLERANCE_MAX)


def value_lock_hash(values: Sequence[tuple[str, float, str]]) -> str:
    """Return the 16-hex SHA-256 of the active values' sorted ``(name, round(weight, 6), status)``.

    The canonical form is compact JSON of the sorted triples; status compares case-insensitively.
    """
    active = sorted(
        (name, round(weight, 6), status)
        for name, weight, status in values
        if status.strip().casefold() == "active"
    )
    canonical = json.dumps(active, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:VALUE_LOCK_HASH_LENGTH]


def value_lock_intact(values: Sequence[tuple[str, float, str]], expected: str) -> bool:
    """Say whether the values still hash to the locked hash (§8.1 step 7)."""
    return value_lock_hash(values) == expected


def value_unlock_allowed(identity_stability: float) -> bool:
    """Say whether the value lock may open: identity stability >= 0.85 (§4.1)."""
    return identity_stability >= VALUE_LOCK_STABILITY


# --- belief graph (§5) ---------------------------------------------------------------------------


def belief_weight_after(weight: float, delta: float, *, identity_linked: bool) -> float:
    """Rewrite a belief weight by at most ±0.1; identity-linked beliefs never drop below 0.1 (§5.1).

    The result stays in [0, 1]. An identity-linked belief already under the floor is lifted to
    it.
    """
    _check_unit("weight", weight)
    if math.isnan(delta):
        raise ValueError("delta must not be NaN")
    new = clamp(weight + clamp(delta, -MAX_BELIEF_REWRITE, MAX_BELIEF_REWRITE))
    return max(new, BELIEF_FLOOR) if identity_linked else new


def belief_deletable(identity_linked: bool) -> bool:
    """Say whether a belief may be deleted: identity-linked beliefs cannot be (§5.1)."""
    return not identity_linked


def needs_reconciliation(contradiction_strength: float) -> bool:
    """Say whether a contradiction edge triggers reconciliation (strength >= 0.6, §5.1)."""
    return contradiction_strength >= RECONCILE_AT


def consistency_reconciliation(global_consistency: float) -> bool:
    """Say whether low global consistency triggers reconciliation (< 0.6, §5.2)."""
    return global_consistency < GLOBAL_CONSISTENCY_MIN


# --- B=MAP (002) ---------------------------------------------------------------------------------


def motivation(aligned_value_weights: Sequence[float], goal_weight: float | None) -> float:
    """Return ``M = mean(aligned value weights) × goal weight`` (002 B=MAP).

    A reactive action (``goal_weight=None``) uses 1.0; no aligned value gives 0.
    """
    if not aligned_value_weights:
        return 0.0
    for w in aligned_value_weights:
        _check_unit("value weight", w)
    g = REACTIVE_GOAL_WEIGHT if goal_weight is None else goal_weight
    _check_unit("goal weight", g)
    return clamp(statistics.fmean(aligned_value_weights) * g)


def ability(skill_exists: bool) -> float:
    """Return ``A``: 1.0 when a matching skill exists, else 0.0 (002 B=MAP)."""
    return 1.0 if skill_exists else 0.0


def prompt_strength(*, direct: bool, staleness_cycles: int = 0) -> float:
    """Return ``P``: 1.0 for a direct trigger, else ``0.8 × 0.9^staleness`` (002 B=MAP).

    Heuristic: 002 says only that indirect triggers decay and that a stale goal resurfacing
    scores below a fresh user request; a fresh indirect trigger starts at 0.8.
    """
    if staleness_cycles < 0:
        raise ValueError(f"staleness_cycles must be >= 0, got {staleness_cycles}")
    if direct:
        return DIRECT_PROMPT
    return INDIRECT_PROMPT * PROMPT_STALENESS_DECAY**staleness_cycles


def bmap(m: float, a: float, p: float) -> float:
    """Return ``B = M × A × P`` (002), each factor in [0, 1]."""
    for name, value in (("m", m), ("a", a), ("p", p)):
        _check_unit(name, value)
    return m * a * p


def should_skip(m: float) -> bool:
    """Say whether motivation is too low to act (``M < 0.2``, 002 DECIDE)."""
    return m < MOTIVATION_SKIP


def score_breakdown(
    *,
    base: float,
    recency: float,
    novelty: float,
    episodic: float,
    pressure: float,
    archetype_weight: float,
) -> tuple[float, str]:
    """Return a tool score and its 000 breakdown string.

    ``recency`` is the recency penalty and always lowers the score: its sign is ignored, so
    ``0.05`` and ``-0.05`` both subtract 0.05 and print ``recency=-0.05``. The archetype term
    is :func:`~kernel.core.archetype_bonus` of ``archetype_weight``. The string reads
    ``[score=0.85: base=0.80 recency=-0.00 novelty=+0.15 episodic=+0.00 pressure=+0.00
    archetype=+0.030]``.
    """
    if math.isnan(recency):
        raise ValueError("recency must not be NaN")
    recency = abs(recency)
    bonus = archetype_bonus(archetype_weight)
    score = base - recency + novelty + episodic + pressure + bonus
    text = (
        f"[score={score:.2f}: base={base:.2f} recency=-{recency:.2f} novelty={novelty:+.2f} "
        f"episodic={episodic:+.2f} pressure={pressure:+.2f} archetype={bonus:+.3f}]"
    )
    return score, text


# --- psyche evolution (000) ----------------------------------------------------------------------


def evolve_archetypes(
    weights: Mapping[str, float], stats: Mapping[str, tuple[int, int]]
) -> dict[str, float]:
    """Rebalance archetype weights from (successes, uses) stats (000 ``Psyche.evolve``).

    With 2+ uses a success rate above 70% adds 0.02 and one below 30% subtracts 0.02; every
    weight is then clamped to [0.1, 0.95]. Stats for archetypes not in ``weights`` are ignored.
    """
    out: dict[str, float] = {}
    for name, weight in weights.items():
        if math.isnan(weight):
            raise ValueError(f"archetype {name} weight must not be NaN")
        successes, uses = stats.get(name, (0, 0))
        if uses < 0 or not 0 <= successes <= uses:
            raise ValueError(f"bad stats for {name}: {successes}/{uses}")
        if uses >= ARCHETYPE_MIN_USES:
            rate = successes / uses
            if rate > ARCHETYPE_SUCCESS_RATE:
                weight += ARCHETYPE_STEP
            elif rate < ARCHETYPE_FAILURE_RATE:
                weight -= ARCHETYPE_STEP
        out[name] = clamp(weight, ARCHETYPE_MIN, ARCHETYPE_MAX)
    return out


def surprised_archetypes(outcomes: Sequence[tuple[str, str, bool]]) -> dict[str, int]:
    """Return the archetypes a ``prediction_delta`` reflection lowers, with their surprises.

    ``outcomes`` are ``(archetype, outcome kind, surprising)`` in the order they happened (one
    per acting pass since the last reflection); a pass is surprising when its ε exceeded the
    prediction_delta threshold. An archetype is returned, with its count of surprising own
    failures, when it has at least :data:`SURPRISE_MIN_FAILURES` of them and no success after
    the last one (it is still failing; one that recovered is spared). Refusals and vetoes are
    not the archetype's failures and failures the forecast expected are not surprises, so an
    archetype whose skills did what was forecast is never returned.

    Heuristic (000 is silent): ``Psyche.evolve`` reads the lifetime success rate, which a run of
    healthy uses keeps above the 30% bar long after a skill starts failing; the surprise is
    the sharper, recent evidence. The caller lowers each returned archetype by
    :data:`ARCHETYPE_STEP` within [0.1, 0.95], at most one step per reflection.
    """
    surprises: dict[str, int] = {}
    still_failing: dict[str, bool] = {}
    for archetype, kind, surprising in outcomes:
        if not archetype:
            continue
        if kind == OUTCOME_SUCCESS:
            still_failing[archetype] = False
        elif kind == OUTCOME_OWN_FAILURE and surprising:
            surprises[archetype] = surprises.get(archetype, 0) + 1
            still_failing[archetype] = True
    return {
        name: count
        for name, count in surprises.items()
        if count >= SURPRISE_MIN_FAILURES and still_failing[name]
    }


def grow_individuation(level: float, shadow_encounters: int) -> float:
    """Return ``min(level + 0.01 × min(encounters, 5), 1.0)`` (000 individuation growth)."""
    if shadow_encounters < 0:
        raise ValueError(f"shadow_encounters must be >= 0, got {shadow_encounters}")
    _check_unit("level", level)
    growth = INDIVIDUATION_RATE * min(shadow_encounters, INDIVIDUATION_MAX_ENCOUNTERS)
    return min(level + growth, 1.0)


def dominant_archetype(weights: Mapping[str, float]) -> str:
    """Return the archetype with the highest weight; ties go to the alphabetically first."""
    if not weights:
        raise ValueError("no archetypes")
    return min(weights, key=lambda name: (-weights[name], name))


# --- reflection trigger (002) --------------------------------------------------------------------


def value_tension(
    value_scores: Mapping[str, float], conflicts: Collection[tuple[str, str]]
) -> bool:
    """Say whether an action scored high on two conflicting values (002 Reflection Trigger).

    Heuristic: "high" is a score >= 0.7 and ``conflicts`` lists the value pairs in tension.
    """
    high = {name for name, score in value_scores.items() if score >= VALUE_TENSION_HIGH}
    return any(a in high and b in high for a, b in conflicts)


def reflection_triggers(
    *,
    prediction_delta: float,
    delta_threshold: float,
    value_tension: bool,
    goal_completed: bool,
    stale_cycles: int,
    stale_limit: int,
    cycles_since_reflection: int,
    periodic_every: int,
    explicit: bool,
) -> list[str]:
    """Return the names of the reflection triggers that fire, in ``REFLECTION_TRIGGERS`` order.

    ``prediction_delta`` fires when the delta exceeds the threshold, ``goal_stale`` when a
    goal has been stale for ``stale_limit`` cycles or more, and ``periodic`` when
    ``periodic_every`` or more action cycles passed since the last reflection (002).
    """
    if stale_limit < 1 or periodic_every < 1:
        raise ValueError("stale_limit and periodic_every must be >= 1")
    fired = {
        "prediction_delta": prediction_delta > delta_threshold,
        "value_tension": value_tension,
        "goal_completed": goal_completed,
        "goal_stale": stale_cycles >= stale_limit,
        "periodic": cycles_since_reflection >= periodic_every,
        "explicit": explicit,
    }
    return [name for name in REFLECTION_TRIGGERS if fired[name]]


# --- measured outcomes (Δ), forecasts (Δ̂), work cost, recovery ----------------------------------
#
# Heuristic throughout: the spec defines ε = ||Δ̂ − Δ||₂ (Def. 2) but not how Δ is measured. Both
# vectors live on the five identity dimensions, each component in [-1, 1] ("how strongly this
# outcome argues for raising or lowering my estimate of that dimension"); the self-update then
# clamps each component to its cap (0.05, capability 0.08), so a large Δ moves the identity by
# the cap and a large surprise shows up in ε.

OUTCOME_SUCCESS = "success"
OUTCOME_OWN_FAILURE = "own_failure"
OUTCOME_REFUSAL = "refusal"  # policy, rate limit, budget: the world said no, not my failure
OUTCOME_VETO = "veto"  # my own shadow vetoed the action
OUTCOME_NONE = "none"
EXPECTED_ACTION_SECONDS = 10.0  # heuristic: the goal of <= 10 s per action cycle
SUCCESS_CAPABILITY_FLOOR = 0.5  # heuristic: an empty success still argues for capability
OWN_FAILURE_CAPABILITY = -1.0  # heuristic: an own failure argues fully against it
OWN_FAILURE_GOAL = -0.5
REFUSAL_GOAL = -0.2
VETO_PERSONA = -0.5
SUCCESS_STABILITY = 0.3
OWN_FAILURE_STABILITY = -0.5
REFUSAL_STABILITY = -0.1
OVERRUN_STABILITY = 0.5  # a cycle at 2x its expected time loses this much emotional stability
OUTCOME_SCALE = 0.4
"""Heuristic: the success and own-failure outcomes lie ~0.8 apart, so a maximally uncertain
forecast (0.5) misses by ~0.4 (< the 0.5 escalation threshold: not a meta-escalation), a
confident wrong one (>= 0.8) by > 0.6 (escalates) and a confident right one converges (< 0.1)."""
CALIBRATION_WINDOW = 10  # heuristic: the recent errors a forecast's confidence is shrunk by


def outcome_kind(status: str) -> str:
    """Classify an action status: success, own failure, refusal (policy/rate limit) or veto."""
    return {
        "ok": OUTCOME_SUCCESS,
        "failed": OUTCOME_OWN_FAILURE,
        "refused": OUTCOME_REFUSAL,
        "vetoed": OUTCOME_VETO,
    }.get(status, OUTCOME_NONE)


@dataclass(frozen=True, slots=True)
class Observation:
    """What one action measurably did (the inputs of Δ_actual)."""

    kind: str
    content: float = 0.0  # [0, 1]: how much the result carried (non-empty fields)
    learned: float = 0.0  # [0, 1]: memories / beliefs the cycle added, saturating
    progress: float = 0.0  # [0, 1]: progress on the goal's criteria this cycle
    aligned: float = 0.0  # [0, 1]: the share of active values the action serves
    seconds: float = 0.0
    expected_seconds: float = EXPECTED_ACTION_SECONDS


def measured_outcome(obs: Observation) -> dict[str, float]:
    """Return Δ_actual on the identity dimensions from what happened (heuristic, see above).

    Success raises capability by 0.5..1 with the content and what was learned, goal persistence
    by the progress made, value alignment by half the aligned share; an own failure lowers
    capability fully and goal persistence by half; a refusal (policy, rate limit) is not the
    agent's own failure: capability is untouched and the goal loses a little; a shadow veto
    lowers persona consistency. Time beyond the expected seconds lowers emotional stability.
    """
    for name in ("content", "learned", "progress", "aligned"):
        _check_unit(name, getattr(obs, name))
    _check_non_negative("seconds", obs.seconds)
    if obs.expected_seconds <= 0:
        raise ValueError("expected_seconds must be > 0")
    overrun = clamp(obs.seconds / obs.expected_seconds - 1.0)
    out = dict.fromkeys(IDENTITY_DIMS, 0.0)
    if obs.kind == OUTCOME_NONE:
        return out
    if obs.kind == OUTCOME_SUCCESS:
        gain = SUCCESS_CAPABILITY_FLOOR + (1 - SUCCESS_CAPABILITY_FLOOR) * (
            0.5 * obs.content + 0.5 * obs.learned
        )
        out["capability_confidence"] = gain
        out["goal_persistence"] = obs.progress
        out["value_alignment"] = 0.5 * obs.aligned
        out["persona_consistency"] = 0.1 * obs.aligned
        out["emotional_stability"] = SUCCESS_STABILITY
    elif obs.kind == OUTCOME_OWN_FAILURE:
        out["capability_confidence"] = OWN_FAILURE_CAPABILITY
        out["goal_persistence"] = OWN_FAILURE_GOAL
        out["value_alignment"] = -0.25 * obs.aligned
        out["emotional_stability"] = OWN_FAILURE_STABILITY
    else:
        out["goal_persistence"] = REFUSAL_GOAL
        out["emotional_stability"] = REFUSAL_STABILITY
        if obs.kind == OUTCOME_VETO:
            out["persona_consistency"] = VETO_PERSONA
            out["value_alignment"] = -0.25
    out["emotional_stability"] -= OVERRUN_STABILITY * overrun
    return {k: clamp(OUTCOME_SCALE * v, -1.0, 1.0) for k, v in out.items()}


def calibrated_success(success: float, recent_errors: Sequence[float]) -> float:
    """Shrink a success forecast toward 0.5 by the mean recent ε (own past calibration)."""
    _check_unit("success", success)
    recent = _recent(recent_errors, CALIBRATION_WINDOW)
    miss = clamp(statistics.fmean(recent)) if recent else 0.0
    return 0.5 + (success - 0.5) * (1.0 - miss)


def forecast_outcome(
    success: float, *, expected_progress: float, aligned: float, expected_content: float = 0.5
) -> dict[str, float]:
    """Return Δ̂: the expected :func:`measured_outcome` given a success probability.

    Refusals are not forecast (they are the world's decision): Δ̂ mixes the success and the
    own-failure outcomes by ``success``.
    """
    for name, value in (
        ("success", success),
        ("expected_progress", expected_progress),
        ("aligned", aligned),
        ("expected_content", expected_content),
    ):
        _check_unit(name, value)
    good = measured_outcome(
        Observation(
            OUTCOME_SUCCESS,
            content=expected_content,
            learned=expected_content,
            progress=expected_progress,
            aligned=aligned,
        )
    )
    bad = measured_outcome(Observation(OUTCOME_OWN_FAILURE, aligned=aligned))
    return {k: success * good[k] + (1 - success) * bad[k] for k in IDENTITY_DIMS}


WORK_STEP_COST = 0.05  # heuristic: one predict-act-compare pass, whatever it did
WORK_CALL_COST = 0.1  # heuristic: one model call (the per-cycle call limit of 6 spends 0.6)
WORK_SKILL_COST = 0.05  # heuristic: one skill run
WORK_SECOND_COST = 0.02  # heuristic: one second of wall time (a 10 s pass spends 0.2)


def work_cost(*, llm_calls: int, seconds: float, skill_runs: int) -> float:
    """Return the budget one pass spent on real work (§9 budget drains within a cycle)."""
    if llm_calls < 0 or skill_runs < 0:
        raise ValueError("counts must be >= 0")
    _check_non_negative("seconds", seconds)
    _check_finite("seconds", seconds)
    return (
        WORK_STEP_COST
        + WORK_CALL_COST * llm_calls
        + WORK_SKILL_COST * skill_runs
        + WORK_SECOND_COST * seconds
    )


def degradation(budget: float) -> list[str]:
    """Name the §9 tiers a budget has switched off (empty at full capacity)."""
    caps = budget_capabilities(budget)
    if caps.safety_only:
        return ["safety layers only"]
    off = [
        ("meta depth 2 off", caps.meta_depth2),
        ("tensor recomputation off", caps.tensor_recompute),
        ("belief rewrite off", caps.belief_rewrite),
    ]
    return [name for name, on in off if not on]


SCALING_MIN = 0.125  # heuristic: three halvings at most
SCALING_RECOVERY_CYCLES = 3  # heuristic: calm cycles before the mutation scaling doubles back
SAFE_MODE_STABLE_CYCLES = 3  # heuristic: stable cycles a safety-only mode lasts after a failure


def mutation_scaling_next(scaling: float, *, unsettled: bool, calm_cycles: int) -> float:
    """Halve the mutation scaling while unsettled; double it back after enough calm cycles."""
    _check_unit("scaling", scaling)
    if calm_cycles < 0:
        raise ValueError("calm_cycles must be >= 0")
    if unsettled:
        return max(SCALING_MIN, scaling * STABILIZATION_FACTOR)
    if calm_cycles >= SCALING_RECOVERY_CYCLES and calm_cycles % SCALING_RECOVERY_CYCLES == 0:
        return min(1.0, scaling / STABILIZATION_FACTOR)
    return scaling


def safe_mode_left(left: int, *, stable: bool) -> int:
    """Count down the stable cycles a safety-only mode still needs (an unstable one restarts)."""
    if left < 0:
        raise ValueError("left must be >= 0")
    if left == 0:
        return 0
    return left - 1 if stable else SAFE_MODE_STABLE_CYCLES


# --- v4 layers that steer: affect, survival goals, Layer-1 risk (issue 13) ----------------------

AFFECT_BIAS_MAX = 0.1  # heuristic: affect is a secondary signal (§7.1 "cannot dominate")
SCOPE_RISK: Mapping[str, float] = MappingProxyType(  # heuristic: what an action can reach
    {"pure": 0.0, "files": 0.15, "network": 0.25, "shell": 0.5}
)
MUTATING_RISK = 0.2  # heuristic: an action that may change something may not be reversible
READ_ONLY_RISK_FACTOR = 0.5  # heuristic: a mutating skill asked for a read-only op
UNTRUSTED_RISK = 0.1  # heuristic: its output is outside content
READ_ONLY_OPS: frozenset[str] = frozenset({"read", "list", "get", "now", "search", "show"})
MODERATION_SCALING = 0.5  # §8.3 MODERATED: scaling_reduction=0.5


def motivation_drives(
    affect: Mapping[str, float], *, drive: float, recent_error: float
) -> dict[str, float]:
    """Synthesize the motivation drives from the affect (§8.1 ``synthesize_motivation``).

    Heuristic (the spec names the step, not the function): ``caution`` = max(anxiety,
    frustration, min(ε, 1), 2·max(0, -valence)) — things go wrong, so prefer what is safe and
    known; ``explore`` = curiosity times ``1 - caution/2`` — surprise in the learnable band,
    damped by caution (excitement is things going well: it argues for exploiting);
    ``drive`` is the goal motivation M, passed through.
    Each is in [0, 1].
    """
    a = {dim: clamp(v) for dim, v in _affect(affect).items()}
    if math.isnan(recent_error) or math.isnan(drive):
        raise ValueError("drive and recent_error must not be NaN")
    caution = clamp(max(a["anxiety"], a["frustration"], min(recent_error, 1.0), -2.0 * valence(a)))
    explore = clamp(a["curiosity"] * (1.0 - 0.5 * caution))
    return {"caution": caution, "explore": explore, "drive": clamp(drive)}


def affect_bias(
    drives: Mapping[str, float], *, success: float, risk: float, exploratory: float
) -> float:
    """Return the affect's term in a candidate's score, within ±0.1 (§7.1: it cannot dominate).

    Caution favours safer, better-calibrated actions: ``caution · (2(success - 0.5) - risk)``;
    the explore drive favours explore-type actions (``exploratory`` in [0, 1]: untried or
    recently unused, explorer archetype): ``explore · exploratory``. The sum is clamped to
    [-1, 1] and scaled by ``AFFECT_BIAS_MAX``.
    """
    for name, value in (("success", success), ("risk", risk), ("exploratory", exploratory)):
        _check_unit(name, value)
    caution = clamp(drives.get("caution", 0.0))
    explore = clamp(drives.get("explore", 0.0))
    raw = caution * (2.0 * (success - 0.5) - risk) + explore * exploratory
    return AFFECT_BIAS_MAX * clamp(raw, -1.0, 1.0)


def action_scope(tool: str, tool_input: Mapping[str, object], *, untrusted_output: bool) -> str:
    """Return what an action reaches: ``shell``, ``network``, ``files`` or ``pure``.

    From the input (a ``command`` runs a shell, a ``url`` reaches the network, a ``path`` the
    files) and the tool's name for the shell; a skill declaring untrusted output reads outside
    content, so at least files.
    """
    if tool == "shell" or "command" in tool_input or "cmd" in tool_input:
        return "shell"
    if "url" in tool_input:
        return "network"
    if "path" in tool_input or untrusted_output:
        return "files"
    return "pure"


def action_risk(
    tool: str, tool_input: Mapping[str, object], *, mutating: bool, untrusted_output: bool
) -> tuple[float, str]:
    """Assess an action's Layer-1 risk in [0, 1] from its scope, reversibility and trust (§8.3).

    ``risk = SCOPE_RISK[scope] + 0.2·mutating (halved for a read-only op) + 0.1·untrusted``;
    returns ``(risk, scope)``. A pure, non-mutating, trusted skill has risk 0.
    """
    scope = action_scope(tool, tool_input, untrusted_output=untrusted_output)
    op = str(tool_input.get("op", "")).strip().casefold()
    mutation = MUTATING_RISK * (READ_ONLY_RISK_FACTOR if op in READ_ONLY_OPS else 1.0)
    risk = SCOPE_RISK[scope] + (mutation if mutating else 0.0)
    risk += UNTRUSTED_RISK if untrusted_output else 0.0
    return clamp(risk), scope


def survival_book(
    existing: Sequence[Mapping[str, Any]], wanted: Sequence[SurvivalGoal], *, cycle: int
) -> tuple[list[dict[str, Any]], list[str]]:
    """Keep one survival goal per threat kind (§7.2): refresh, add, end and expire them.

    ``wanted`` are the goals the current threats ask for (Layer 0 already passed). A goal whose
    threat persists is refreshed (priority, ``expires = cycle + TTL``, ``active``); a new kind
    is added while fewer than 3 goals live (an ended one makes room first); a goal whose threat
    has ended stays ``active=False`` until ``expires`` (10 cycles after the threat was last
    seen), then is dropped. Duplicates of a kind collapse into the latest one. Returns the book
    and the names added.
    """
    book: dict[str, dict[str, Any]] = {}
    for g in existing:
        kind = str(g.get("kind", ""))
        if int(g.get("expires", 0)) <= cycle:
            continue
        if kind not in book or int(g["expires"]) > int(book[kind]["expires"]):
            book[kind] = {**g, "active": False}
    added = []
    for goal in wanted:
        entry = {
            "name": goal.name,
            "kind": goal.kind,
            "priority": goal.priority,
            "expires": cycle + goal.ttl,
            "active": True,
        }
        if goal.kind not in book and len(book) >= SURVIVAL_MAX_GOALS:
            ended = [k for k, g in book.items() if not g["active"]]
            if not ended:
                continue
            del book[min(ended, key=lambda k: int(book[k]["expires"]))]
        if goal.kind not in book:
            added.append(goal.name)
        book[goal.kind] = entry
    ordered = sorted(book.values(), key=lambda g: (not g["active"], -float(g["priority"])))
    return ordered, added


# --- reflection edits the self, through the locks (issue 13 item 4) -----------------------------

MAX_VALUE_WEIGHT_DELTA = MAX_IDENTITY_DELTA  # heuristic: a value weight is identity-level (0.05)
SOUL_NARRATIVE_HEADING = "narrative"  # 002: soul.md holds name, ontology, identity narrative
SOUL_NARRATIVE_MAX_CHARS = 1200  # heuristic: the narrative stays a short paragraph or two
SOUL_EDIT_MAX_CHANGE = 0.6  # heuristic: at most 60% of the narrative changes per reflection


def identity_stability(identity_volatility: float) -> float:
    """Return identity stability ``1 - V_id`` in [0, 1] (what §4.1 ``request_unlock`` reads).

    The same reading the cycle's threat assessment and §6.2 depth-2 conditions use.
    """
    if math.isnan(identity_volatility):
        raise ValueError("identity_volatility must not be NaN")
    return clamp(1.0 - identity_volatility)


def clamp_value_weight(
    weight: float, raw_delta: float, *, scaling: float, stabilization: bool
) -> float:
    """Return a value weight moved by its clamped delta (cap 0.05 times the scaling), in [0, 1]."""
    _check_unit("weight", weight)
    eff = effective_scaling(scaling, stabilization)
    return clamp(weight + clamped_delta(raw_delta, MAX_VALUE_WEIGHT_DELTA, eff))


def _soul_sections(text: str) -> tuple[list[str], int, int]:
    """Return soul.md's lines and the [start, end) line range of the Narrative section's body."""
    lines = text.splitlines()
    start = end = -1
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped.startswith("#"):
            continue
        if start >= 0 and end < 0:
            end = index
        if start < 0 and stripped.lstrip("#").strip().casefold() == SOUL_NARRATIVE_HEADING:
            start = index + 1
    if start >= 0 and end < 0:
        end = len(lines)
    return lines, start, end


def soul_narrative(text: str) -> str:
    """Return the body of soul.md's ``## Narrative`` section (empty when it has none)."""
    lines, start, end = _soul_sections(text)
    return "\n".join(lines[start:end]).strip() if start >= 0 else ""


def soul_narrative_edit(text: str, narrative: str) -> tuple[str | None, str]:
    """Return soul.md with only its Narrative section replaced, or ``(None, why)`` when refused.

    Bounded (002 EVOLVE: "soul.md identity updates"; R3 keeps the name and identity): the name
    heading and every other section stay byte for byte; the new narrative is plain text (no
    heading line), 1..1200 characters, and differs from the old by at most 60% (``1 -``
    difflib's ratio). A soul without a Narrative section gets one appended.
    """
    new = narrative.strip()
    if not new:
        return None, "empty narrative"
    if len(new) > SOUL_NARRATIVE_MAX_CHARS:
        return None, f"narrative of {len(new)} characters exceeds {SOUL_NARRATIVE_MAX_CHARS}"
    if any(line.lstrip().startswith("#") for line in new.splitlines()):
        return None, "a narrative may not add headings (the name and sections are invariant)"
    old = soul_narrative(text)
    if new == old:
        return None, "no change"
    change = 1.0 - difflib.SequenceMatcher(None, old, new).ratio() if old else 0.0
    if change > SOUL_EDIT_MAX_CHANGE:
        return None, f"changes {change:.0%} of the narrative (at most {SOUL_EDIT_MAX_CHANGE:.0%})"
    lines, start, end = _soul_sections(text)
    if start < 0:
        body = text.rstrip("\n")
        return f"{body}\n\n## Narrative\n{new}\n", "narrative section added"
    tail = lines[end:]
    rebuilt = [*lines[:start], *new.splitlines(), *([""] if tail else []), *tail]
    return "\n".join(rebuilt).rstrip("\n") + "\n", f"narrative changed by {change:.0%}"

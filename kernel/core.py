"""Pure kernel math: clamps, hashes, scores. No I/O, no clock, no randomness, no heavy imports.

"The system can change what it thinks, what it values, and who it is. It cannot change how
thinking happens": every formula the seeds give numbers for lives here, where tests reach it
without a model.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

IDENTITY_HASH_LENGTH = 16
ARCHETYPE_BONUS_SCALE = 0.15


def clamp(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    """Clamp ``x`` into ``[lo, hi]``."""
    if lo > hi:
        raise ValueError(f"lo ({lo}) > hi ({hi})")
    if math.isnan(x):
        return lo
    return max(lo, min(hi, x))


def identity_hash(dims: Sequence[float]) -> str:
    """Return the 16-char SHA-256 identity hash of the identity vector (MSCP Definition 6).

    Dimensions are rounded to 6 decimals first so the hash is stable across float noise.
    """
    canonical = ",".join(f"{value:.6f}" for value in dims)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()[:IDENTITY_HASH_LENGTH]


def archetype_bonus(weight: float) -> float:
    """Return the psyche's tool-selection bonus ``(weight - 0.5) * 0.15``."""
    return (weight - 0.5) * ARCHETYPE_BONUS_SCALE


def clamp_temperature(requested: float, band_min: float, band_max: float) -> tuple[float, bool]:
    """Clamp a temperature into its band; also say whether it was out of band."""
    clamped = clamp(requested, band_min, band_max)
    return clamped, clamped != requested

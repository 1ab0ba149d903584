"""The noise-calibrated rank cut and its margin.

Rule (every method): with ``K̂ = K + Ê`` and ``Ê`` the estimation noise of the method under the
fitted noise level ``σ̂`` (simulated exactly from the method's noise covariance, ``draws`` times),

    τ = max(safety · max_draws ||Ê||₂ ,  floor · σ_1(K̂)),      r_hat = #{i : σ_i(K̂) > τ}.

By Weyl's inequality ``σ_{r*+1}(K̂) ≤ ||Ê||₂ < τ`` and ``σ_{r*}(K̂) ≥ σ_{r*}(K) − ||Ê||₂``, so the
cut is exact whenever the smallest signal singular value exceeds ``τ + ||Ê||₂`` — for any spectrum
shape (flat, geometric, ...), unlike a fixed relative tolerance or an effective rank. The ``floor``
(relative, like a numerical-rank tolerance) only matters when ``σ̂ ≈ 0`` (noiseless data).

Margin: ``(σ_{r_hat} − σ_{r_hat+1}) / noise_level`` with ``noise_level = mean_draws ||Ê||₂``,
``σ_0 := τ`` and ``σ_{m+1} := 0``: how many noise widths separate the values either side of the cut.
"""

from __future__ import annotations

import dataclasses

import numpy as np

SAFETY = 1.5
FLOOR = 1e-6  # spectra read from Gram matrices carry √eps·s_1 ≈ 1.5e-8·s_1 of roundoff


@dataclasses.dataclass(frozen=True)
class Cut:
    r_hat: int
    threshold: float
    noise_level: float
    margin: float


def noise_calibrated_cut(
    s: np.ndarray, noise_top: np.ndarray, *, safety: float = SAFETY, floor: float = FLOOR
) -> Cut:
    """Apply the rule above to singular values ``s (m,)`` and noise draws ``noise_top (draws,)``."""
    s = np.sort(np.asarray(s, dtype=np.float64))[::-1]
    s1 = float(s[0]) if s.size else 0.0
    noise = float(np.mean(noise_top)) if noise_top.size else 0.0
    noise_max = float(np.max(noise_top)) if noise_top.size else 0.0
    threshold = max(safety * noise_max, floor * s1)
    noise_level = max(noise, floor * s1)
    r = int(np.sum(s > threshold))
    upper = float(s[r - 1]) if r >= 1 else threshold
    lower = float(s[r]) if r < s.size else 0.0
    margin = (upper - lower) / noise_level if noise_level > 0 else 0.0
    return Cut(r_hat=r, threshold=threshold, noise_level=noise_level, margin=float(margin))


def cut_params(safety: float = SAFETY, floor: float = FLOOR) -> dict:
    """JSON-ready description of the cut (goes into ``estimator_params``)."""
    return {
        "estimator": "noise_calibrated_rank",
        "params": {"safety": safety, "floor": floor},
        "formula": "#{i : s_i > max(safety * max_draws ||E_hat||_2, floor * s_1)}, E_hat = simulated estimation noise at fitted sigma",
        "reference": "Weyl's inequality; cf. Gavish & Donoho 2014 for the noise-calibrated threshold idea",
        "integer": True,
    }

"""The rank cut: a threshold at the top of a simulated noise null, cross-checked against the largest gap.

**Null threshold.** With ``K̂ = K + Ê`` and ``Ê`` the estimation noise of the method under the fitted
noise level ``σ̂`` (simulated from the method's own equations and weights, ``draws`` seeded times), the
threshold sits at the *extreme* of the noise spectrum, not its typical size:

    τ = max(safety · q_quantile(||Ê||₂ over draws),  floor · σ_1(K̂)),      r_null = #{i : σ_i(K̂) > τ}.

By Weyl's inequality ``σ_{r*+1}(K̂) ≤ ||Ê||₂ < τ`` and ``σ_{r*}(K̂) ≥ σ_{r*}(K) − ||Ê||₂``, so the
cut is exact whenever the smallest signal singular value exceeds ``τ + ||Ê||₂`` — for any spectrum
shape (flat, geometric, ...). ``safety`` covers what the simulation leaves out (second-order terms of
a linearised noise, a σ̂ off by a few per cent). The ``floor`` (relative, like a numerical-rank
tolerance) only matters when ``σ̂ ≈ 0`` (noiseless data).

**Gap cross-check.** ``r_gap`` is the largest relative gap ``argmax σ_i / σ_{i+1}``. Where the two
agree the answer is that rank. Where the gap sits *below* ``r_null`` the values between them lie above
``τ``; if the first of them is within ``GAP_NOISE_FACTOR · τ`` (the noise top, give or take what the
null misses) while the gap itself is at least ``MIN_GAP_RATIO``, they are read as noise and ``r_gap``
is chosen; otherwise the null rank stands (a weak but real signal value past a large gap). A gap
*above* ``r_null`` lies inside the noise and is ignored. Both answers and the choice are reported.

Margin: ``(σ_{r_hat} − σ_{r_hat+1}) / noise_level`` with ``noise_level = mean_draws ||Ê||₂``,
``σ_0 := τ`` and ``σ_{m+1} := 0``: how many noise widths separate the values either side of the cut.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..spectra import largest_gap_rank

SAFETY = 1.5
QUANTILE = 0.95
FLOOR = 1e-6  # spectra read from Gram matrices carry √eps·s_1 ≈ 1.5e-8·s_1 of roundoff
GAP_NOISE_FACTOR = 2.0
MIN_GAP_RATIO = 10.0


@dataclasses.dataclass(frozen=True)
class Cut:
    r_hat: int
    threshold: float
    noise_level: float
    margin: float
    null_rank: int = -1
    gap_rank: int = -1
    gap_ratio: float = float("nan")
    noise_top: float = float("nan")
    chosen: str = "null"
    why: str = ""

    def describe(self) -> dict[str, Any]:
        """JSON-ready: what the null and the gap each give, which was chosen and why."""
        return {
            "rule": "null threshold (safety x quantile of the simulated noise's top singular value), "
            "cross-checked against the largest gap",
            "null_threshold": self.threshold,
            "null_noise_top_quantile": self.noise_top,
            "null_rank": self.null_rank,
            "gap_rank": self.gap_rank,
            "gap_ratio": self.gap_ratio,
            "chosen": self.chosen,
            "why": self.why,
            "params": {
                "safety": SAFETY,
                "quantile": QUANTILE,
                "floor": FLOOR,
                "gap_noise_factor": GAP_NOISE_FACTOR,
                "min_gap_ratio": MIN_GAP_RATIO,
            },
        }


def _margin(s: np.ndarray, r: int, threshold: float, noise_level: float) -> float:
    upper = float(s[r - 1]) if r >= 1 else threshold
    lower = float(s[r]) if r < s.size else 0.0
    return float((upper - lower) / noise_level) if noise_level > 0 else 0.0


def noise_calibrated_cut(
    s: np.ndarray,
    noise_top: np.ndarray,
    *,
    safety: float = SAFETY,
    floor: float = FLOOR,
    quantile: float = QUANTILE,
) -> Cut:
    """The null threshold alone on singular values ``s (m,)`` and noise draws ``noise_top (draws,)``."""
    s = np.sort(np.asarray(s, dtype=np.float64))[::-1]
    s1 = float(s[0]) if s.size else 0.0
    top = float(np.quantile(noise_top, quantile)) if noise_top.size else 0.0
    noise = float(np.mean(noise_top)) if noise_top.size else 0.0
    threshold = max(safety * top, floor * s1)
    noise_level = max(noise, floor * s1)
    r = int(np.sum(s > threshold))
    return Cut(
        r_hat=r,
        threshold=threshold,
        noise_level=noise_level,
        margin=_margin(s, r, threshold, noise_level),
        null_rank=r,
        noise_top=top,
        why="null threshold",
    )


def _gap(s: np.ndarray) -> tuple[int, float]:
    r = int(largest_gap_rank(s)) if s.size else 0
    ratio = float(s[r - 1] / s[r]) if 1 <= r < s.size and s[r] > 0 else float("inf")
    return r, ratio


def cross_checked_cut(s: np.ndarray, noise_top: np.ndarray, **kwargs: float) -> Cut:
    """The null threshold, cross-checked against the largest gap (module docstring for the rule)."""
    s = np.sort(np.asarray(s, dtype=np.float64))[::-1]
    null = noise_calibrated_cut(s, noise_top, **kwargs)
    r_null, tau = null.r_hat, null.threshold
    r_gap, ratio = _gap(s)
    pick = {"gap_rank": r_gap, "gap_ratio": ratio}
    if r_gap == r_null:
        return dataclasses.replace(null, **pick, why="the null threshold and the largest gap agree")
    if r_gap > r_null:
        why = f"the largest gap (after s_{r_gap}) lies below the null threshold {tau:.3g}, inside the noise"
        return dataclasses.replace(null, **pick, why=why)
    first_past = float(s[r_gap])
    if first_past <= GAP_NOISE_FACTOR * tau and ratio >= MIN_GAP_RATIO:
        why = (
            f"s_{r_gap + 1}..s_{r_null} ({first_past:.3g} ≤ {GAP_NOISE_FACTOR:g} × threshold {tau:.3g}) sit at "
            f"the noise top past a {ratio:.3g}× gap: read as noise"
        )
        margin = _margin(s, r_gap, tau, null.noise_level)
        return dataclasses.replace(null, **pick, r_hat=r_gap, margin=margin, chosen="gap", why=why)
    if first_past > GAP_NOISE_FACTOR * tau:
        why = f"s_{r_gap + 1} = {first_past:.3g} is more than {GAP_NOISE_FACTOR:g} × the threshold {tau:.3g}"
    else:
        why = f"the largest gap ({ratio:.3g}×) is under {MIN_GAP_RATIO:g}×, no clear edge"
    why += f": the values past the gap are read as signal, the null rank {r_null} stands"
    return dataclasses.replace(null, **pick, why=why)


def cut_params(safety: float = SAFETY, floor: float = FLOOR) -> dict:
    """JSON-ready description of the cut (goes into ``estimator_params``)."""
    return {
        "estimator": "noise_calibrated_rank",
        "params": {
            "safety": safety,
            "quantile": QUANTILE,
            "floor": floor,
            "gap_noise_factor": GAP_NOISE_FACTOR,
            "min_gap_ratio": MIN_GAP_RATIO,
        },
        "formula": "#{i : s_i > max(safety * q_quantile(||E_hat||_2 over draws), floor * s_1)}, E_hat = simulated "
        "estimation noise at fitted sigma; the largest-gap rank replaces it when the values between them sit "
        "within gap_noise_factor x the threshold past a gap of at least min_gap_ratio",
        "reference": "Weyl's inequality; cf. Gavish & Donoho 2014 for the noise-calibrated threshold idea",
        "integer": True,
    }

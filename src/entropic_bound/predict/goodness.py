"""Does the named teacher class fit the data? A goodness-of-fit test on held-out samples.

A seeded random ``HOLD_FRACTION`` of the samples is held out of the *model* the test uses: the
method's kernel refitted on the training samples only and truncated to the predicted rank ``r_hat``
(the rank itself is read from all samples). On each held-out sample ``i`` the residual energy per
entry ``e_i = ||Y_i − Ŷ_i||²_F / (n d_v)`` is measured.

Under the model class (SPEC §2: ``Y = f*(X) + E``, ``E`` iid ``N(0, σ²)``) the residual is the noise
plus a small estimation error, so ``e_i ≈ σ² χ²_k / k`` with ``k = n d_v``: across samples its
variance is ``2 σ⁴ / k``, with ``σ²`` estimated by the held-out mean ``ē``. Under the wrong class
the residual holds the class's misfit ``f*(X_i) − f̂(X_i)``, a function of ``X_i`` whose energy
varies from sample to sample far more than noise does. The statistic is that excess dispersion

    D = Var_i(e_i) / (2 ē² / k),

about ``χ²_{N_h−1} / (N_h − 1)`` under the model (``N_h`` held-out samples). The class is rejected when
``D`` exceeds that law's ``1 − ALPHA`` quantile times ``ALLOWANCE`` (room for the estimation error of a
fit that also varies across samples). It needs no noise level from the model itself, so it works
where no model-free σ̂ exists (``n = d_v``, where ``Y_i`` determines ``A_i`` exactly). The mean
ratio ``ē / σ̂²`` against the predictor's noise estimate is reported beside it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import stats

HOLD_FRACTION = 0.2
MIN_HELD = 8
ALPHA = 1e-3
ALLOWANCE = 1.5


def truncate(K: np.ndarray, r: int) -> np.ndarray:
    """Best rank-``r`` approximation of ``K`` (0 for ``r ≤ 0``)."""
    if r <= 0:
        return np.zeros_like(K)
    U, s, Wt = np.linalg.svd(K)
    return (U[:, :r] * s[:r]) @ Wt[:r]


def held_out(N: int, seed: int) -> np.ndarray | None:
    """Boolean ``(N,)`` mask of the held-out samples (seeded), or ``None`` when too few to test."""
    n_held = int(round(HOLD_FRACTION * N))
    if n_held < MIN_HELD:
        return None
    mask = np.zeros(N, dtype=bool)
    mask[np.random.default_rng([seed, 13]).choice(N, n_held, replace=False)] = True
    return mask


def split_description(N: int, held: np.ndarray | None, seed: int) -> dict:
    return {
        "held_out": int(held.sum()) if held is not None else 0,
        "train": N - (int(held.sum()) if held is not None else 0),
        "rule": f"seeded random {HOLD_FRACTION:g} of the samples (seed {seed}); the rank uses all samples, "
        "the tested model only the training ones",
    }


def not_tested(reason: str, split: dict) -> dict:
    return {"teacher_rejected": False, "statistic": None, "threshold": None, "reason": reason, "split": split}


def dispersion_test(
    X: np.ndarray, Y: np.ndarray, model: Callable[[np.ndarray, int], np.ndarray], r: int, sigma: float
) -> dict:
    """The test of the module docstring on held-out ``X (N_h, n, d)``, ``Y (N_h, n, d_v)``."""
    e = np.mean((Y - model(X, r)) ** 2, axis=(1, 2))  # (N_h,)
    k, N_h = Y.shape[1] * Y.shape[2], Y.shape[0]
    mean = float(np.mean(e))
    statistic = float(np.var(e, ddof=1) / (2 * mean**2 / k)) if mean > 0 else 0.0
    threshold = float(ALLOWANCE * stats.chi2.ppf(1 - ALPHA, N_h - 1) / (N_h - 1))
    ratio = mean / sigma**2 if sigma > 0 else float("inf")
    rejected = statistic > threshold
    reason = (
        f"held-out residual energy varies {statistic:.3g}× more across samples than noise at its level "
        f"(threshold {threshold:.3g}): the residual is structured misfit, not noise"
        if rejected
        else f"held-out residuals vary like noise ({statistic:.3g} ≤ {threshold:.3g})"
    )
    return {
        "teacher_rejected": bool(rejected),
        "statistic": statistic,
        "threshold": threshold,
        "reason": reason + f"; mean residual / noise estimate σ̂² = {ratio:.3g}.",
        "residual_to_noise": ratio,
    }

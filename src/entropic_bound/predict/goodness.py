"""Does the named teacher class fit the data? A goodness-of-fit test on held-out samples.

A seeded random ``HOLD_FRACTION`` of the samples is held out of the *model* the test uses: the
method's kernel refitted on the training samples only and truncated to the predicted rank ``r_hat``
(the rank itself is read from all samples). On each held-out sample ``i`` the residual energy per
entry ``e_i = ||Y_i − Ŷ_i||²_F / (n d_v)`` is measured.

Under the model class (``Y = f*(X) + E``, ``E`` iid ``N(0, σ²)``) the residual is the noise
plus a small estimation error, so ``e_i ≈ σ² χ²_k / k`` with ``k = n d_v``: across samples its
variance is ``2 σ⁴ / k``, with ``σ²`` estimated by the held-out mean ``ē``. Under the wrong class
the residual holds the class's misfit ``f*(X_i) − f̂(X_i)``, a function of ``X_i`` whose energy
varies from sample to sample far more than noise does. The statistic is that excess dispersion

    D = Var_i(e_i) / (2 ē² / k),

about ``χ²_{N_h−1} / (N_h − 1)`` under the model (``N_h`` held-out samples). The class is rejected when
``D`` exceeds that law's ``1 − ALPHA`` quantile times ``ALLOWANCE`` (room for the estimation error of a
fit that also varies across samples). It needs no noise level from the model itself, so it works
where no model-free σ̂ exists (``n = d_v``, where ``Y_i`` determines ``A_i`` exactly). The mean
ratio ``ē / σ̂²`` against the predictor's noise estimate is reported beside it. Noise-free data
have no noise to disperse: held-out residuals at float64 round-off (``EXACT_RTOL`` of ``Y``'s RMS)
accept the class outright (``test: exact_fit``), since no other class reproduces the data exactly.

Where a method fitted no model (not identifiable) or has none of the class (V eliminated), the same
test runs on a residual the class fixes without any fit: the row sums of ``Â_i`` (softmax rows sum
to one), or ``Y_i`` outside ``col(X_i)`` (a linear teacher's ``X_i K X_iᵀ X_i V``, for ``n > d``).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

HOLD_FRACTION = 0.2
MIN_HELD = 8
ALPHA = 1e-3
ALLOWANCE = 1.5
ALLOWANCE_MEAN = 1.25
FREE_SIGMA_SAMPLES = 512
EXACT_RTOL = 1e-9


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
    """The class was not tested: ``teacher_rejected`` is None (unknown), never False ("accepted")."""
    return {"teacher_rejected": None, "statistic": None, "threshold": None, "reason": reason, "split": split}


def outside_row_sigma(X: np.ndarray, Y: np.ndarray, V: np.ndarray | None) -> tuple[float, int] | None:
    """Model-free σ̂ for any mixer teacher ``Y_i = M_i X_i V + E_i`` with V known: the part of ``Y_i``
    outside ``row(X_i V)`` is pure noise (``n (d_v − n)`` dof per sample). ``None`` when ``n ≥ d_v``
    or V is unknown."""
    if V is None or X.shape[1] >= Y.shape[2]:
        return None
    Q = np.linalg.qr((X @ V).transpose(0, 2, 1))[0]  # (N, d_v, n) basis of row(U_i)
    resid = Y - (Y @ Q) @ Q.transpose(0, 2, 1)
    dof = X.shape[0] * X.shape[1] * (Y.shape[2] - X.shape[1])
    return float(np.sqrt(np.sum(resid**2) / dof)), dof


def _dispersion(e: np.ndarray, k: int) -> tuple[float, float]:
    """``(D, threshold)``: the excess dispersion of per-sample energies ``e (N_h,)`` of ``k`` entries."""
    N_h, mean = e.size, float(np.mean(e))
    statistic = float(np.var(e, ddof=1) / (2 * mean**2 / k)) if mean > 0 else 0.0
    return statistic, float(ALLOWANCE * stats.chi2.ppf(1 - ALPHA, N_h - 1) / (N_h - 1))


def _mean_ratio(e: np.ndarray, k: int, free: tuple[float, int]) -> tuple[float, float]:
    """``(ē / σ̂²_free, threshold)``: the residual level against the model-free noise estimate."""
    sigma, dof = free
    ratio = float(np.mean(e) / sigma**2) if sigma > 0 else float("inf")
    return ratio, float(ALLOWANCE_MEAN * stats.f.ppf(1 - ALPHA, e.size * k, dof))


def dispersion_test(
    R: np.ndarray, what: str, free: tuple[float, int] | None = None, k: int | None = None
) -> dict:
    """The tests of the module docstring on held-out residuals ``R (N_h, ...)`` (``k`` degrees of
    freedom per sample, default every entry, of iid ``N(0, σ²)`` noise under the class): dispersion
    always, level against ``free = (σ̂, dof)`` when given. ``statistic``/``threshold`` are those of the
    test furthest past its threshold."""
    k = R[0].size if k is None else k
    e = np.sum(R.reshape(R.shape[0], -1) ** 2, axis=1) / k  # (N_h,)
    tests = {"dispersion": _dispersion(e, k)}
    if free is not None:
        tests["level_vs_model_free_noise"] = _mean_ratio(e, k, free)
    name = max(tests, key=lambda t: tests[t][0] / tests[t][1])
    statistic, threshold = tests[name]
    # A NaN statistic (residuals that overflowed) tested nothing: unknown, like an untested class.
    rejected = None if np.isnan(statistic) else bool(statistic > threshold)
    if name == "dispersion":
        how = f"vary {statistic:.3g}× more across held-out samples than noise at their level"
    else:
        how = f"are {statistic:.3g}× the model-free noise level σ̂² ({free[1]} dof)"
    verdict = {True: "structured misfit, not noise", False: "consistent with noise", None: "not tested"}[
        rejected
    ]
    return {
        "teacher_rejected": rejected,
        "statistic": statistic,
        "threshold": threshold,
        "reason": f"{what} {how} (threshold {threshold:.3g}): {verdict}.",
        "test": name,
        "tests": {t: {"statistic": v[0], "threshold": v[1]} for t, v in tests.items()},
    }


def class_test(fit, X: np.ndarray, Y: np.ndarray, r_hat: int, free: tuple[float, int] | None) -> dict | None:
    """The test on held-out ``X, Y``: the fitted model's residual if the method has one, else the
    class's model-free constraint residual, else ``None``. ``free``: model-free ``(σ̂, dof)`` or None."""
    if fit.heldout_model is not None:
        R, what, k = Y - fit.heldout_model(X, r_hat), "residuals of the fitted teacher", None
    elif fit.heldout_constraint is not None:
        R, what, k = fit.heldout_constraint(X, Y)
    else:
        return None
    return exact_fit(R, Y, what) or dispersion_test(R, what, free, k)


def exact_fit(R: np.ndarray, Y: np.ndarray, what: str) -> dict | None:
    """Noise-free data of the class: residuals at float64 round-off (RMS below ``EXACT_RTOL`` of ``Y``'s)
    have no noise to compare their dispersion with, and are the strongest evidence for the class."""
    y_rms = float(np.sqrt(np.mean(Y**2)))
    relative = float(np.sqrt(np.mean(R**2))) / y_rms if y_rms > 0 else float("inf")
    if not relative <= EXACT_RTOL:
        return None
    return {
        "teacher_rejected": False,
        "statistic": relative,
        "threshold": EXACT_RTOL,
        "reason": f"{what} are {relative:.2g} of Y's RMS (float64 round-off, threshold {EXACT_RTOL:g}): "
        "noise-free data of this class.",
        "test": "exact_fit",
        "tests": {"exact_fit": {"statistic": relative, "threshold": EXACT_RTOL}},
    }

"""Does the named teacher class fit the data? A goodness-of-fit test on held-out samples.

A seeded random ``HOLD_FRACTION`` of the samples is held out of the *model* the test uses: the
method's kernel refitted on the training samples only and truncated to the predicted rank ``r_hat``
(the rank itself is read from all samples). On each held-out sample ``i`` the residual energy per
entry ``e_i = ||Y_i − Ŷ_i||²_F / (n d_v)`` is measured, and two statistics of it:

- the dispersion ``D = Var_i(e_i) / (2 ē² / k)`` (``k = n d_v``; about 1 for pure noise): a wrong
  class leaves a misfit ``f*(X_i) − f̂(X_i)``, a function of ``X_i`` whose energy varies from sample
  to sample far more than noise does;
- where a model-free noise level exists (V known, ``n < d_v``: ``Y_i`` outside ``row(X_i V)``), the
  level ``ē / σ̂²_free``.

**Null law.** Under the class the held-out residual is the fresh noise ``E_i`` plus the training
fit's estimation error ``Δ_i = f(X_i) − f̂(X_i)``, itself a function of ``X_i``: it inflates both
statistics, the more so where the fit is poorly determined (saturated attention, few samples), so no
fixed χ² or F quantile holds the level. The null is simulated instead, by a parametric bootstrap
from the fitted model at the fitted ``σ̂``: each method draws ``Δ*`` of refits on simulated
training data through its own equations and weights (``Fit.heldout_error``: the squared norms
``||Δ*_i||²`` per refit and held-out sample), and since the noise is Gaussian and independent of
the training fit, ``||E_i + Δ*_i||² / σ̂² = (z + ||Δ*_i|| / σ̂)² + χ²_{k−1}`` gives the residual energies
of ``NULL_DRAWS`` simulated held-out sets exactly, without more fits (the model-free ``σ̂²_free`` is
``σ̂² χ²_dof / dof``). Each statistic's threshold is its null's ``1 − ALPHA / T`` quantile (``T``
statistics: the check as a whole rejects a true class with probability ``ALPHA``), and ``p_value``
is the smallest null tail probability times ``T``. The softmax refits overstate the error where
attention saturates, so there the check errs on the safe side (:func:`.log_ratios.bootstrap_rhs`).

Noise-free data have no noise to disperse: held-out residuals at float64 round-off (``EXACT_RTOL``
of ``Y``'s RMS) accept the class outright (``test: exact_fit``), since no other class reproduces the
data exactly. Where a method fitted no model (not identifiable) or has none of the class (V
eliminated), the same statistics are computed on a residual the class fixes without any fit, whose
null has no estimation error: the row sums of ``Â_i`` (softmax rows sum to one), or ``Y_i`` outside
``col(X_i)`` (a linear teacher's ``X_i K X_iᵀ X_i V``, for ``n > d``).
"""

from __future__ import annotations

import numpy as np

HOLD_FRACTION = 0.2
MIN_HELD = 8
# The check's false-rejection probability on data of the class (all its statistics together).
ALPHA = 1e-3
# Simulated held-out sets per statistic (a Monte Carlo test: its level holds for any count; more
# draws only sharpen the threshold, here the second-largest draw at level ALPHA / 2).
NULL_DRAWS = 4096
# Refits of the parametric bootstrap where a refit is cheap (an exact Gaussian draw of the kernel).
REFITS = 64
FREE_SIGMA_SAMPLES = 512
# Held-out samples the test reads (the first ones): enough power, and a bounded null simulation.
MAX_TESTED = 1024
EXACT_RTOL = 1e-9
# Simulated variates per block (bounds the memory of the null simulation whatever N).
NULL_BLOCK = 2**20


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
        f"the tested model only the training ones; the test reads at most {MAX_TESTED} held-out samples",
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


def _statistics(e: np.ndarray, k: int, free_var) -> dict[str, np.ndarray]:
    """Dispersion and (with ``free_var``, the model-free σ̂²) level of residual energies ``e (..., N_h)``."""
    mean = e.mean(axis=-1)
    spread = np.var(e, ddof=1, axis=-1)
    out = {"dispersion": np.divide(spread * k, 2 * mean**2, out=np.zeros_like(mean), where=mean > 0)}
    if free_var is not None:
        out["level_vs_model_free_noise"] = mean / free_var
    return out


def simulated_null(
    lam: np.ndarray, k: int, free_dof: int | None, rng: np.random.Generator, draws: int = NULL_DRAWS
) -> dict[str, np.ndarray]:
    """``draws`` values of each statistic under the class (module docstring), in units of ``σ̂ = 1``.

    ``lam (B, N_h)``: ``||Δ*_i||² / σ̂²`` of ``B`` bootstrap refits (zeros for a residual without a fit),
    each used for ``draws / B`` simulated held-out sets of ``k``-entry residuals; ``free_dof``: the
    degrees of freedom of the model-free ``σ̂²_free`` (``None``: no level statistic)."""
    B, N_h = lam.shape
    per_refit, block = -(-draws // B), max(1, NULL_BLOCK // N_h)
    parts: dict[str, list[np.ndarray]] = {}
    for b in range(B):
        root = np.sqrt(lam[b])  # (N_h,)
        for start in range(0, per_refit, block):
            m = min(block, per_refit - start)
            e = (rng.standard_normal((m, N_h)) + root) ** 2  # the component along Δ*_i
            if k > 1:
                e += rng.chisquare(k - 1, (m, N_h))  # the k − 1 components across it
            free = rng.chisquare(free_dof, m) / free_dof if free_dof else None
            for name, values in _statistics(e / k, k, free).items():
                parts.setdefault(name, []).append(values)
    return {name: np.concatenate(values)[:draws] for name, values in parts.items()}


def _monte_carlo(statistic: float, null: np.ndarray, level: float) -> tuple[float, float]:
    """``(threshold, p)``: ``p = (1 + #{null ≥ statistic}) / (1 + draws)``; the statistic is past the
    threshold (a null order statistic) exactly when ``p ≤ level``."""
    ordered = np.sort(null)[::-1]
    allowed = int(np.floor(level * (null.size + 1) + 1e-9)) - 1  # null values it may stay below
    threshold = float(ordered[min(max(allowed, 0), null.size - 1)])
    p = (1 + int(np.sum(null >= statistic))) / (1 + null.size)
    return threshold, float(p)


def dispersion_test(
    R: np.ndarray,
    what: str,
    rng: np.random.Generator,
    *,
    lam: np.ndarray | None = None,
    free: tuple[float, int] | None = None,
    k: int | None = None,
) -> dict:
    """The tests of the module docstring on held-out residuals ``R (N_h, ...)`` (``k`` degrees of
    freedom per sample, default every entry, of iid ``N(0, σ²)`` noise under the class): dispersion
    always, level against ``free = (σ̂, dof)`` when given; ``lam (B, N_h)``, the bootstrap's
    ``||Δ*_i||² / σ̂²`` (``None``: a residual without estimation error). ``statistic``/``threshold``
    are those of the test furthest past its threshold."""
    k = R[0].size if k is None else k
    e = np.sum(R.reshape(R.shape[0], -1) ** 2, axis=1) / k  # (N_h,)
    observed = {n: float(v) for n, v in _statistics(e, k, None if free is None else free[0] ** 2).items()}
    lam = np.zeros((1, e.size)) if lam is None else lam
    null = simulated_null(lam, k, None if free is None else free[1], rng)
    level = ALPHA / len(observed)
    tests = {name: (value, *_monte_carlo(value, null[name], level)) for name, value in observed.items()}
    name = max(tests, key=lambda t: tests[t][0] / tests[t][1] if tests[t][1] > 0 else np.inf)
    statistic, threshold, _ = tests[name]
    # A NaN statistic (residuals that overflowed) tested nothing: unknown, like an untested class.
    nan = any(np.isnan(t[0]) for t in tests.values())
    p_value = None if nan else min(1.0, len(tests) * min(t[2] for t in tests.values()))
    rejected = None if nan else bool(any(t[0] > t[1] for t in tests.values()))
    if name == "dispersion":
        how = f"vary {statistic:.3g}× more across held-out samples than noise at their level"
    else:
        how = f"are {statistic:.3g}× the model-free noise level σ̂² ({free[1]} dof)"
    verdict = {True: "structured misfit, not noise", False: "consistent with noise", None: "not tested"}[
        rejected
    ]
    null_rule = (
        f"{lam.shape[0]} bootstrap refits of the fitted model at σ̂"
        if lam.any()
        else "no fit, exact noise law"
    )
    return {
        "teacher_rejected": rejected,
        "statistic": statistic,
        "threshold": threshold,
        "p_value": p_value,
        "level": ALPHA,
        "reason": f"{what} {how} (threshold {threshold:.3g}, p = {'n/a' if nan else f'{p_value:.2g}'}): "
        f"{verdict}.",
        "test": name,
        "tests": {t: {"statistic": v[0], "threshold": v[1], "p_value": v[2]} for t, v in tests.items()},
        "null": f"{null[name].size} simulated held-out sets ({null_rule}); each threshold at level "
        f"{ALPHA:g}/{len(tests)}",
    }


def class_test(
    fit, X: np.ndarray, Y: np.ndarray, r_hat: int, free: tuple[float, int] | None, rng: np.random.Generator
) -> dict | None:
    """The test on held-out ``X, Y``: the fitted model's residual if the method has one (null from its
    bootstrap refits), else the class's model-free constraint residual, else ``None``. ``free``:
    model-free ``(σ̂, dof)`` or None; ``rng`` seeds the bootstrap and the null simulation."""
    if fit.heldout_model is not None:
        R, what, k = Y - fit.heldout_model(X, r_hat), "residuals of the fitted teacher", None
        exact = exact_fit(R, Y, what)
        if exact is not None:
            return exact
        bootstrap = fit.heldout_error is not None and fit.sigma > 0
        lam = fit.heldout_error(X, r_hat, rng) / fit.sigma**2 if bootstrap else None
        return dispersion_test(R, what, rng, lam=lam, free=free, k=k)
    if fit.heldout_constraint is not None:
        R, what, k = fit.heldout_constraint(X, Y)
        return exact_fit(R, Y, what) or dispersion_test(R, what, rng, free=free, k=k)
    return None


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

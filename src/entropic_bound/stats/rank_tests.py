"""Spearman ρ with a test that holds at few points (C11, issue 19 item 6; issue 20 item 4).

Below :data:`EXACT_MAX_POINTS` + 1 = 10 points a percentile bootstrap collapses (4 corpora at ρ = −1
give the interval [−1, −1]), so :func:`spearman_test` runs the **exact permutation test**: ρ of every
one of the n! orderings of ``y`` against ``x`` (362,880 at n = 9), the p-value the share of orderings at
least as extreme (two-sided ``|ρ_π| ≥ |ρ|``; one-sided ``ρ_π ≤ ρ`` or ``≥``). Its interval is the Fisher z
interval with the Fieller–Hartley–Pearson variance ``1.06 / (n − 3)``. From 10 points on, the
interval is a percentile bootstrap (two-stage when per-point replicates are given: points resampled,
then each point's replicates) and the p-value a Monte Carlo permutation test.

``points_needed`` answers "how many points would this effect size need": the smallest n at which a
two-sided level-α test of ρ = 0 has the stated power against the measured |ρ|, from the same Fisher z
approximation, ``n = 3 + 1.06 · ((z_{1−α/2} + z_power) / atanh|ρ|)²``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.stats import norm, rankdata

EXACT_MAX_POINTS = 9
FHP_VARIANCE = 1.06  # Fieller, Hartley & Pearson (1957): Var(atanh ρ_s) ≈ 1.06 / (n − 3)
_TIE = 1e-12  # orderings whose ρ equals the observed one up to round-off count as "as extreme"


def spearman(x, y) -> float:
    """Spearman ρ (Pearson correlation of average ranks); NaN when either side is constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if len(x) < 2:
        return float("nan")
    rx, ry = rankdata(x) - (len(x) + 1) / 2, rankdata(y) - (len(y) + 1) / 2
    denom = np.sqrt((rx**2).sum() * (ry**2).sum())
    return float((rx * ry).sum() / denom) if denom > 0 else float("nan")


def partial_spearman(x, y, controls) -> float:
    """Spearman ρ of ``x`` and ``y`` given ``controls (N, k)``: ranks of every variable, ``x`` and
    ``y`` residualised on ``[1, ranks of controls]`` by least squares, Pearson of the residuals."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    Z = np.asarray(controls, dtype=float).reshape(len(x), -1)
    keep = np.isfinite(x) & np.isfinite(y) & np.isfinite(Z).all(axis=1)
    if keep.sum() < Z.shape[1] + 3:
        return float("nan")
    A = np.column_stack([np.ones(keep.sum()), *(rankdata(z) for z in Z[keep].T)])
    rx, ry = rankdata(x[keep]), rankdata(y[keep])
    ex = rx - A @ np.linalg.lstsq(A, rx, rcond=None)[0]
    ey = ry - A @ np.linalg.lstsq(A, ry, rcond=None)[0]
    denom = np.sqrt((ex**2).sum() * (ey**2).sum())
    return float((ex * ey).sum() / denom) if denom > 1e-9 * len(ex) else float("nan")


def partial_spearman_stack(data: np.ndarray) -> np.ndarray:
    """:func:`partial_spearman` of every sample in ``data (B, M, 2 + k)`` (columns ``x, y,
    controls``) at once: ``(B,)``. Equal to the per-sample function up to float round-off (the
    residuals come from a QR projection instead of ``lstsq``); a sample with a non-finite value or
    a rank-deficient design (a constant control) takes the per-sample function."""
    data = np.asarray(data, dtype=float)
    B, M, cols = data.shape
    out = np.full(B, np.nan)
    if M < cols + 1:  # fewer rows than partial_spearman needs (k + 3)
        return out
    R = rankdata(data, axis=1)  # (B, M, 2 + k) average ranks within each sample
    A = np.concatenate([np.ones((B, M, 1)), R[..., 2:]], axis=2)  # (B, M, 1 + k)
    Q, T = np.linalg.qr(A)  # Q (B, M, 1 + k)
    E = R[..., :2] - Q @ (Q.transpose(0, 2, 1) @ R[..., :2])  # residuals of x, y: (B, M, 2)
    denom = np.sqrt((E[..., 0] ** 2).sum(axis=1) * (E[..., 1] ** 2).sum(axis=1))
    ok = denom > 1e-9 * M
    out[ok] = (E[ok, :, 0] * E[ok, :, 1]).sum(axis=1) / denom[ok]
    diag = np.abs(np.diagonal(T, axis1=1, axis2=2))  # (B, 1 + k)
    scale = np.sqrt((A**2).sum(axis=1))
    exact = np.isfinite(data).all(axis=(1, 2)) & (diag > 1e-10 * scale).all(axis=1)
    for b in np.flatnonzero(~exact):
        out[b] = partial_spearman(data[b, :, 0], data[b, :, 1], data[b, :, 2:])
    return out


def percentile_interval(boots: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the finite bootstrap draws; NaNs when there are none."""
    boots = boots[np.isfinite(boots)]
    if not len(boots):
        return float("nan"), float("nan")
    tail = (1 - level) / 2 * 100
    return float(np.percentile(boots, tail)), float(np.percentile(boots, 100 - tail))


def corpus_bootstrap(complexity, seed_ranks: list, n_boot: int, seed: int) -> tuple[float, float, float]:
    """ρ(complexity, mean rank) over corpora and a two-stage percentile bootstrap interval."""
    c = np.asarray(complexity, dtype=float)
    ranks = [np.asarray(r, dtype=float) for r in seed_ranks]
    rho = spearman(c, [r.mean() for r in ranks])
    rng = np.random.default_rng(seed)
    boots = np.empty(n_boot)
    for b in range(n_boot):
        pick = rng.integers(0, len(c), len(c))
        means = [ranks[i][rng.integers(0, len(ranks[i]), len(ranks[i]))].mean() for i in pick]
        boots[b] = spearman(c[pick], means)
    return (rho, *percentile_interval(boots)) if np.isfinite(rho) else (rho, float("nan"), float("nan"))


def _permutation_rhos(x: np.ndarray, y: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """ρ of ``x`` against every row ordering of ``y``'s ranks: ``orders (P, n)`` → ``(P,)``."""
    rx, ry = rankdata(x) - (len(x) + 1) / 2, rankdata(y) - (len(y) + 1) / 2
    denom = np.sqrt((rx**2).sum() * (ry**2).sum())
    return (ry[orders] @ rx) / denom


def _p_values(rho: float, null: np.ndarray) -> dict[str, float]:
    return {
        "p_value": float(np.mean(np.abs(null) >= abs(rho) - _TIE)),
        "p_less": float(np.mean(null <= rho + _TIE)),
        "p_greater": float(np.mean(null >= rho - _TIE)),
    }


def fisher_interval(rho: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Fisher z interval of Spearman's ρ with the 1.06 variance factor (n ≥ 4); NaNs below."""
    if n < 4 or not np.isfinite(rho):
        return float("nan"), float("nan")
    z, half = math.atanh(float(np.clip(rho, -0.999999, 0.999999))), norm.ppf(0.5 + level / 2)
    se = math.sqrt(FHP_VARIANCE / (n - 3))
    return math.tanh(z - half * se), math.tanh(z + half * se)


def points_needed(rho: float, *, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Points at which a two-sided level-``alpha`` test detects ``|rho|`` with ``power`` (Fisher z,
    variance 1.06 / (n − 3)); None for ρ = 0 or NaN."""
    if not np.isfinite(rho) or rho == 0:
        return None
    effect = math.atanh(min(abs(float(rho)), 0.999999))
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    return int(math.ceil(3 + FHP_VARIANCE * (z / effect) ** 2))


def spearman_test(
    x,
    y,
    *,
    seed: int,
    replicates: list | None = None,
    n_boot: int = 2000,
    n_perm: int = 20000,
    level: float = 0.95,
    expected_sign: int = -1,
    alpha: float = 0.05,
) -> dict:
    """Spearman ρ of ``x`` and ``y`` with the test its point count allows (see the module docstring).

    ``replicates[i]`` (optional) are point ``i``'s per-seed values of ``y`` for the two-stage
    bootstrap (``y`` must then be their means). Returns ``{test, n, rho, p_value (two-sided), p_less,
    p_greater, ci_low, ci_high, half_width, points_needed, decision, alpha}``; ``test`` is
    ``"exact_permutation"`` (n ≤ 9) or ``"bootstrap"``. ``decision`` is True when ρ has the sign
    ``expected_sign`` and the two-sided p < ``alpha`` (exact) or the interval excludes 0 on that side
    (bootstrap), False when it is significant on the other side, None otherwise.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y, n = x[keep], y[keep], int(keep.sum())
    rho = spearman(x, y)
    out = {"n": n, "rho": rho, "alpha": alpha, "points_needed": points_needed(rho, alpha=alpha)}
    if n < 3 or not np.isfinite(rho):
        nan = float("nan")
        out.update(test="none", p_value=nan, p_less=nan, p_greater=nan, ci_low=nan, ci_high=nan)
        return {**out, "half_width": nan, "decision": None}
    rng = np.random.default_rng(seed)
    if n <= EXACT_MAX_POINTS:
        orders = np.array(list(itertools.permutations(range(n))), dtype=np.int8)
        out.update(test="exact_permutation", **_p_values(rho, _permutation_rhos(x, y, orders)))
        lo, hi = fisher_interval(rho, n, level)
        significant = out["p_value"] < alpha
    else:
        orders = np.argsort(rng.random((n_perm, n)), axis=1)
        out.update(test="bootstrap", **_p_values(rho, _permutation_rhos(x, y, orders)))
        reps = replicates if replicates is not None else [[v] for v in y]
        kept = [r for r, k in zip(reps, keep) if k] if replicates is not None else reps
        _, lo, hi = corpus_bootstrap(x, kept, n_boot, int(rng.integers(2**31)))
        significant = lo > 0 or hi < 0
    out.update(ci_low=lo, ci_high=hi, half_width=(hi - lo) / 2)
    out["decision"] = (bool(np.sign(rho) == np.sign(expected_sign))) if significant else None
    return out

"""Linear QK teacher, V unknown: eliminate V, read r* from a matrix whose rank is rank K (C9).

Model ``Y_i = X_i K S_i V + E_i``, ``S_i = X_iᵀX_i (d, d)``; ``K`` (any scale) and ``V`` unknown.

**n ≥ d (pooled).** ``X_i`` has full column rank, so ``Z_i = pinv(X_i) Y_i = K S_i V + pinv(X_i) E_i``
``(d, d_v)``: the columns of every ``Z_i`` lie in ``col(K)``, so ``rank [Z_1 … Z_N] = r*`` in the
noise-free limit (V eliminated). Noise in ``Z_i`` has column covariance ``σ² S_i⁻¹``; we weight
sample i by ``w_i = λ_min(S_i)`` (so ``w_i S_i⁻¹ ⪯ I``) and whiten rows with
``Ω^{-1/2}``, ``Ω = Σ w_i S_i⁻¹`` (a fixed left factor: ranks unchanged). The spectrum is that of
``Ω^{-1/2} [√w_i Z_i]_i`` (via its d×d Gram). σ̂ from the residual ``Y_i − X_i Z_i``
(``N (n − d) d_v`` degrees of freedom) when ``n > d``; when ``n = d`` there is none and σ̂ comes
from the spectrum beyond the cut (alternating cut and σ̂, :func:`refine_sigma`); r* = d unconfirmable.

**n < d (per sample).** ``Y_i = (X_i K X_iᵀ)(X_i V)`` has rank ``min(r*, n, d_v)`` generically, so
r* is read from the RMS over samples of the per-sample spectra of ``Y_i`` (white noise, top noise
singular value ≈ σ(√n + √d_v)). Only ``r* < min(n, d_v)`` is identifiable this way; a rank equal to
``min(n, d_v)`` says only ``r* ≥ min(n, d_v)``. (In population K is still identifiable for n ≥ 2
through the cubic moments ``x_sᵀK x_t x_tᵀV``, a lifted regression with ``d³·d_v`` unknowns that is
not implemented.) σ̂ alternates with the cut: start from the median singular value against the
Marchenko–Pastur median, then the per-sample rank-r residual ``Σ_{k>r} s_k² / ((n − r)(d_v − r))``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..spectra import mp_median
from .base import Fit, chunks, not_identifiable
from .cut import FLOOR, noise_calibrated_cut

NOISE_DRAWS = 8
REFINE_STEPS = 4
# A sample's X_i is rank-deficient when λ_min(S_i) ≤ this · λ_max(S_i); it then gets weight 0.
RANK_RTOL = 1e-10


@dataclasses.dataclass
class PooledInputs:
    """What one chunk ``X (c, n, d)`` alone fixes in the pooled statistic: ``ok (c,)`` (full column
    rank), the weights ``w (c,)``, ``pinv(X_i) (c, d, n)`` and its share ``Σ w S⁻¹`` of ``Ω``."""

    ok: np.ndarray
    w: np.ndarray
    P: np.ndarray
    omega: np.ndarray


def pooled_inputs(Xc: np.ndarray) -> PooledInputs:
    """:class:`PooledInputs` of one chunk (every ``Y`` on these inputs shares them)."""
    d = Xc.shape[2]
    S = Xc.transpose(0, 2, 1) @ Xc  # (c, d, d)
    lam = np.linalg.eigvalsh(S)  # (c, d) ascending
    ok = lam[:, 0] > RANK_RTOL * lam[:, -1]
    w = np.where(ok, lam[:, 0], 0.0)  # (c,)
    S_inv = np.linalg.inv(np.where(ok[:, None, None], S, np.eye(d))) * ok[:, None, None]  # (c, d, d)
    P = S_inv @ Xc.transpose(0, 2, 1)  # (c, d, n) = pinv(X_i)
    return PooledInputs(ok, w, P, np.einsum("c,cab->ab", w, S_inv))


def _weighted_gram(w: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """``Σ_c w_c Z_c Z_cᵀ`` of ``Z (c, d, d_v)`` → ``(d, d)``, one GEMM."""
    return np.tensordot(w[:, None, None] * Z, Z, axes=([0, 2], [0, 2]))


def _pooled_grams(X, Y, rng, draws, inputs: list[PooledInputs] | None = None):
    """Accumulate ``Σ w Z Zᵀ``, ``Ω``, the residual and ``draws`` unit-σ noise Grams over chunks;
    ``inputs`` (one :func:`pooled_inputs` per chunk of the same X) are computed here when not given."""
    d = X.shape[2]
    H, Omega, Hn = np.zeros((d, d)), np.zeros((d, d)), np.zeros((draws, d, d))
    rss, used = 0.0, 0
    for k, sl in enumerate(chunks(X.shape[0])):
        Xc, Yc = X[sl], Y[sl]
        part = pooled_inputs(Xc) if inputs is None else inputs[k]
        Z = part.P @ Yc  # (c, d, d_v)
        H += _weighted_gram(part.w, Z)
        Omega += part.omega
        rss += float(np.sum(((Yc - Xc @ Z) ** 2)[part.ok]))
        used += int(part.ok.sum())
        for j in range(draws):
            Hn[j] += _weighted_gram(part.w, part.P @ rng.standard_normal(Yc.shape))
    return H, Omega, Hn, rss, used


def refine_sigma(s: np.ndarray, unit_top: np.ndarray, sigma0: float, tail_sigma) -> float:
    """Alternate the cut and the noise level: ``r = cut(s; σ·unit_top)``, ``σ = tail_sigma(r)``.

    Starts from a median-based ``sigma0`` (biased up once r* ≥ m/2) and re-estimates σ from the
    spectrum beyond the current cut, until the cut stops moving (at most ``REFINE_STEPS`` times).
    """
    sigma, r = sigma0, -1
    for _ in range(REFINE_STEPS):
        r_new = noise_calibrated_cut(s, sigma * unit_top).r_hat
        if r_new == r or r_new >= s.size:
            break
        r, sigma = r_new, tail_sigma(r_new)
    return sigma


def _pooled(X, Y, rng, inputs=None) -> Fit:
    N, n, d = X.shape
    d_v = Y.shape[2]
    H, Omega, Hn, rss, used = _pooled_grams(X, Y, rng, NOISE_DRAWS, inputs)
    if used == 0:
        return not_identifiable(
            "linear QK, V unknown: every X_i is rank-deficient, so pinv(X_i) Y_i does not eliminate V."
        )
    lam, Q = np.linalg.eigh(Omega)
    W = (Q / np.sqrt(lam)) @ Q.T  # Ω^{-1/2}
    ev = np.clip(np.linalg.eigvalsh(W @ H @ W)[::-1], 0, None)  # (d,) descending
    ev_noise = np.clip(np.linalg.eigvalsh(W @ Hn @ W)[:, ::-1], 0, None)  # (draws, d), σ = 1
    if n > d:
        sigma, how = float(np.sqrt(rss / (used * (n - d) * d_v))), f"residual ({used * (n - d) * d_v} dof)"
    else:  # no residual dof: median, then the eigenvalues beyond the cut vs the trace of the noise
        sigma0 = float(np.sqrt(np.median(ev) / np.mean(np.median(ev_noise, axis=1))))
        trace = float(np.mean(ev_noise.sum(axis=1)))
        sigma = refine_sigma(
            np.sqrt(ev),
            np.sqrt(ev_noise[:, 0]),
            sigma0,
            lambda r: float(np.sqrt(ev[r:].sum() / (trace * (d - r) / d))),
        )
        how = "spectrum beyond the cut"
    fit = Fit(
        singular_values=np.sqrt(ev),
        noise_top=sigma * np.sqrt(ev_noise[:, 0]),
        sigma=sigma,
        entry_noise=sigma * float(np.sqrt(np.mean(ev_noise) / (used * d_v))),
        shape=(d, used * d_v),
        reason=f"linear QK, V unknown, n ≥ d: V eliminated by pinv(X_i) Y_i = K S_i V; σ̂ from the {how}.",
        n_equations=N * n * d_v,
        n_unknowns=d * d + d * d_v - 1,
    )
    if n == d:
        fit.rank_cap = d
        fit.cap_reason = (
            f"linear QK, V unknown, n = d = {d}: no residual degrees of freedom and a full-rank stack "
            "leaves no noise-only direction to calibrate the cut; r* = d cannot be confirmed."
        )
    return fit


CV_FACTOR = 2.0
CV_DRAWS = 64


def tail_variation(
    s: np.ndarray, r: int, shape: tuple[int, int], rng: np.random.Generator
) -> tuple[float, float]:
    """Across-sample coefficient of variation of ``s[:, r]`` and of the top singular value of noise.

    ``s (N, m)``: per-sample singular values. The top singular value of an ``(n − r) × (d_v − r)``
    Gaussian matrix concentrates (coefficient of variation ≈ 0.05–0.1 at these sizes), while signal
    singular values of ``Y_i = M_i X_i V`` vary with ``X_i`` (measured 0.2–0.7), so a first tail value
    that varies more than ``CV_FACTOR`` × the simulated noise value is signal, not noise.
    """
    col = s[:, r]
    noise = np.linalg.svd(rng.standard_normal((CV_DRAWS, shape[0] - r, shape[1] - r)), compute_uv=False)[:, 0]
    return float(np.std(col) / np.mean(col)), float(np.std(noise) / np.mean(noise))


def _per_sample(X, Y, rng) -> Fit:
    N, n, d = X.shape
    d_v = Y.shape[2]
    m, big = min(n, d_v), max(n, d_v)
    s = np.linalg.svd(Y, compute_uv=False)  # (N, m)
    rms = np.sqrt(np.mean(s**2, axis=0))  # (m,)
    sigma0 = float(np.sqrt(np.median(s**2) / (big * mp_median(m / big))))
    unit_top = np.array([np.sqrt(n) + np.sqrt(d_v)])
    sigma = refine_sigma(
        rms,
        unit_top,
        sigma0,  # rank-r residual of each Y_i has (n − r)(d_v − r) dof
        lambda r: float(np.sqrt(np.mean(np.sum(s[:, r:] ** 2, axis=1)) / ((n - r) * (d_v - r)))),
    )
    fit = Fit(
        singular_values=rms,
        noise_top=sigma * unit_top,
        sigma=sigma,
        entry_noise=sigma,
        shape=(n, d_v),
        reason=f"linear QK, V unknown, n = {n} < d = {d}: r* read from rank Y_i = min(r*, n, d_v) per sample.",
        n_equations=N * n * d_v,
        n_unknowns=d * d + d * d_v - 1,
    )
    r = noise_calibrated_cut(rms, fit.noise_top).r_hat
    if r < m and rms[r] > FLOOR * rms[0]:
        cv_obs, cv_noise = tail_variation(s, r, (n, d_v), rng)
        if cv_obs > CV_FACTOR * cv_noise:
            fit.identifiable = False
            fit.reason = (
                f"linear QK, V unknown, n = {n} < d = {d}: the singular values of Y_i past the cut vary across "
                f"samples like signal (coefficient of variation {cv_obs:.2f} vs {cv_noise:.2f} for noise), so "
                f"no noise-only direction calibrates the cut; r* may be as large as min(n, d_v) = {m}."
            )
    fit.rank_cap = m
    fit.cap_reason = (
        f"linear QK, V unknown, n = {n} < d = {d}: rank Y_i = min(r*, {n}, {d_v}) = {m} says only "
        f"r* ≥ {m}; this predictor cannot tell larger ranks apart (r_hat is a lower bound)."
    )
    return fit


def linear_v_unknown(
    X: np.ndarray,
    Y: np.ndarray,
    V: np.ndarray | None,
    *,
    rng: np.random.Generator,
    held=None,
    inputs: list[PooledInputs] | None = None,
) -> Fit:
    """Rank-revealing spectrum for ``Y_i = X_i K X_iᵀX_i V`` without V (module docstring for the rule).

    Shapes: ``X (N, n, d)``, ``Y (N, n, d_v)``; ``V`` is ignored (this is the V-unknown setting).
    ``inputs``: :func:`pooled_inputs` of each chunk of X (:func:`.base.chunks`), shared by every ``Y``
    on these inputs (n ≥ d only; the same numbers).
    """
    N, n, d = X.shape
    d_v = Y.shape[2]
    n_eq, n_unk = N * n * d_v, d * d + d * d_v - 1
    if n_eq <= n_unk:
        return not_identifiable(
            f"linear QK, V unknown: {n_eq} equations (N·n·d_v) for {n_unk} unknowns (d² + d·d_v − 1); "
            f"need N·n·d_v > {n_unk}.",
            n_equations=n_eq,
            n_unknowns=n_unk,
            too_few_samples=True,
        )
    fit = _pooled(X, Y, rng, inputs) if n >= d else _per_sample(X, Y, rng)
    if n > d:
        fit.heldout_constraint = outside_columns
    fit.untested_reason = (
        f"linear QK, V unknown, n = {n} ≤ d = {d}: V is eliminated rather than fitted and Y_i has no part "
        "the class fixes without a fit (n > d gives Y_i outside col(X_i))"
    )
    return fit


def outside_columns(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, str, int]:
    """``Y_i`` outside ``col(X_i)`` (``N(0, σ²)`` under a linear teacher ``X_i K X_iᵀ X_i V``, n > d)."""
    Q = np.linalg.qr(X)[0]  # (N, n, d)
    R = Y - Q @ (Q.transpose(0, 2, 1) @ Y)
    return (
        R,
        "parts of Y_i outside col(X_i) (zero for a linear teacher)",
        (X.shape[1] - X.shape[2]) * Y.shape[2],
    )

"""Softmax teacher, exact where identifiable: the row-centred log of recovered attention (X1).

Model ``Y_i = A_i X_i V + E_i``, ``A_i = softmax(X_i K X_iᵀ)`` row-wise, K of any scale, V known.

1. **Recover A_i.** With ``U_i = X_i V (n, d_v)`` of full row rank (needs ``n ≤ d_v``,
   ``n ≤ d``, ``rank V ≥ n``), ``Â_i = Y_i pinv(U_i) = A_i + E_i pinv(U_i)`` — exact at σ = 0.
   The noise of entry ``(s, t)`` has std ``δ_st = σ ||pinv(U_i)[:, t]||``.
2. **Linearise.** ``log A_st − log A_sm = x_sᵀ K (x_t − x_m)`` for the row's largest entry ``m``
   (log-ratios cancel the row normaliser; using the largest entry keeps the reference reliable).
   This is linear in ``vec K`` with feature ``x_s ⊗ (x_t − x_m)``.
3. **Mask and weight.** Entries with ``Â_st ≤ 3 δ_st`` are dropped (their log is noise); the rest get
   weights ``1 / (δ_st²/Â_st² + δ_sm²/Â_sm²)`` (delta method). A second pass takes the mask, the
   weights and the references from the fitted ``softmax(X_i K̂₀ X_iᵀ)`` instead of the noisy ``Â``
   (iteratively reweighted; removes the selection bias of masking on noisy values; the first pass
   reads at most ``FIRST_PASS_SAMPLES`` samples), so the weighted least squares
   ``G vec K̂ = b``, ``G = Σ w φ φᵀ`` (``d² × d²``, streamed via :func:`kron_core`) has
   ``Cov(vec K̂) ≈ G⁻¹`` — which the noise-calibrated cut simulates. Correlations between
   log-ratios sharing a reference are ignored (the cut's safety factor absorbs them).

σ̂ is model-free: from the part of ``Y_i`` outside ``row(U_i)`` (``N n (d_v − n)`` dof) and from
the row sums of ``Â_i``, which must be 1 (``N n`` dof, so ``n = d_v`` works too). Identifiable when ``n ≤ min(d, d_v)``, ``rank V ≥ n`` and the unmasked equations
determine K (``G`` non-singular). Reference: SPEC §5b X1 (prototype: exact at σ = 0, N ≥ 8, and at
σ = 0.01, N = 128 with n = 16, d = 32).
"""

from __future__ import annotations

import numpy as np
import torch

from .base import PREDICTORS, Fit, chunks, not_identifiable
from .normal_equations import (
    cholesky_or_none,
    expand_core,
    kernel_noise_draws,
    kron_core,
    top_singular_values,
)

MASK_LEVELS = 3.0
FIRST_PASS_SAMPLES = 512
SIGMA_SAMPLES = 4096
NOISE_DRAWS = 16
# Relative round-off of Â_i = Y_i pinv(U_i): a floor on δ so that σ̂ = 0 still gives finite weights.
ROUNDOFF = 1e-13


def recover_attention(X: np.ndarray, Y: np.ndarray, V: np.ndarray):
    """``Â (c, n, n)``, column noise factors ``||pinv(U_i)[:, t]|| (c, n)``, and two noise residuals:
    ``Y`` outside ``row(U_i)`` ``(c, n, d_v)`` and the row sums ``(Â_i 1 − 1) / ||pinv(U_i) 1|| (c, n)``
    (softmax rows sum to one, so these are iid ``N(0, σ²)``)."""
    U = X @ V  # (c, n, d_v)
    P = np.linalg.pinv(U)  # (c, d_v, n)
    A = Y @ P  # (c, n, n)
    resid = Y - A @ U  # (c, n, d_v)
    rowsum = (A.sum(axis=2) - 1.0) / np.linalg.norm(P.sum(axis=2), axis=1)[:, None]  # (c, n)
    return A, np.linalg.norm(P, axis=1), resid, rowsum


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of ``(..., n, n)`` logits."""
    A = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return A / A.sum(axis=-1, keepdims=True)


def _log_ratio_system(X, A, A_ref, col, sigma, scale):
    """One chunk's ``(core of G, b, equations)`` for ``log Â_st − log Â_sm = x_sᵀ K (x_t − x_m)``.

    The mask, the weights and the reference column ``m`` are read from ``A_ref`` (``Â`` itself in the
    first pass, the fitted ``softmax(X K̂₀ Xᵀ)`` in the second): choosing them from the noisy ``Â``
    biases the kept logs upward (selection at the mask), as weighted log-regressions are known to do.
    """
    c, n, d = X.shape
    delta = np.sqrt(sigma**2 + (ROUNDOFF * scale) ** 2) * col[:, None, :]  # (c, n_s, n_t)
    m = np.argmax(A_ref, axis=2)  # (c, n) reference column per row
    R_m = np.take_along_axis(A_ref, m[..., None], axis=2)  # (c, n, 1)
    A_m = np.take_along_axis(A, m[..., None], axis=2)
    d_m = np.take_along_axis(delta, m[..., None], axis=2)
    keep = (A_ref > MASK_LEVELS * delta) & (A > 0) & (A_m > 0)
    keep &= np.arange(n)[None, None, :] != m[..., None]
    safe, safe_m = np.where(keep, A, 1.0), np.where(A_m > 0, A_m, 1.0)
    ell = np.where(keep, np.log(safe) - np.log(safe_m), 0.0)  # (c, n_s, n_t)
    w = np.where(keep, 1.0 / ((delta / np.where(keep, A_ref, 1.0)) ** 2 + (d_m / R_m) ** 2), 0.0)
    x_m = np.take_along_axis(X, m[..., None], axis=1)  # (c, n_s, d) reference token per row
    xx = X[..., :, None] * X[..., None, :]  # (c, n, d, d) token outer products
    XwX = torch.bmm(torch.from_numpy(np.ascontiguousarray(w)), torch.from_numpy(xx.reshape(c, n, d * d)))
    XwX = XwX.numpy().reshape(c, n, d, d)  # Σ_t w_st x_t x_tᵀ (one batched GEMM)
    Xw = np.einsum("cst,cta->csa", w, X)
    sw = w.sum(axis=2)[..., None, None]
    Q = (
        XwX
        - Xw[..., :, None] * x_m[..., None, :]
        - x_m[..., :, None] * Xw[..., None, :]
        + sw * x_m[..., :, None] * x_m[..., None, :]
    )  # (c, n_s, d, d) = Σ_t w z_t z_tᵀ, z_t = x_t − x_m
    core = kron_core(xx.reshape(-1, d, d), Q.reshape(-1, d, d))
    r = np.einsum("cst,cta->csa", w * ell, X) - (w * ell).sum(axis=2)[..., None] * x_m  # Σ_t w ℓ z_t
    b = np.einsum("csa,csb->ab", X, r).reshape(-1)
    return core, b, int(keep.sum())


def _solve(X, Y, V, sigma, K_ref=None):
    """Stream the weighted system over chunks; ``(K̂, L, equations)`` or ``None`` if singular.

    ``K_ref``: a first-pass kernel whose attention chooses the mask, weights and references.
    """
    d = X.shape[2]
    core, b, n_eq = 0.0, np.zeros(d * d), 0
    scale = float(np.max(np.abs(Y)))
    for sl in chunks(X.shape[0], 256):
        Xc = X[sl]
        A, col, _, _ = recover_attention(Xc, Y[sl], V)
        A_ref = A if K_ref is None else softmax_rows(Xc @ K_ref @ Xc.transpose(0, 2, 1))
        cc, bc, kc = _log_ratio_system(Xc, A, A_ref, col, sigma, scale)
        core, b, n_eq = core + cc, b + bc, n_eq + kc
    L = cholesky_or_none(expand_core(core, d, d))
    if L is None:
        return None, None, n_eq
    k = torch.cholesky_solve(torch.from_numpy(b)[:, None], torch.from_numpy(L))[:, 0].numpy()
    return k.reshape(d, d), L, n_eq


def estimate_sigma(X, Y, V) -> tuple[float, int]:
    """σ̂ from the model-free residuals of :func:`recover_attention`, and its degrees of freedom."""
    ss = 0.0
    for sl in chunks(X.shape[0]):
        _, _, resid, rowsum = recover_attention(X[sl], Y[sl], V)
        ss += float(np.sum(resid**2) + np.sum(rowsum**2))
    N, n, _ = X.shape
    dof = N * n * (Y.shape[2] - n) + N * n
    return float(np.sqrt(ss / dof)), dof


def _check_setting(X, Y, V) -> str:
    N, n, d = X.shape
    d_v = Y.shape[2]
    if V is None:
        return (
            "softmax, V unknown: A_i X_i V cannot be split into A_i and V per sample, so the attention "
            "matrices (and with them K) are not recovered; use softmax_linearised for the paper's estimates."
        )
    if n > min(d, d_v):
        return (
            f"softmax with n = {n} > min(d, d_v) = {min(d, d_v)}: U_i = X_i V has rank < n, so A_i is not "
            "recoverable from Y_i = A_i U_i (the exact method needs n ≤ min(d, d_v))."
        )
    if np.linalg.matrix_rank(V) < n:
        return f"softmax: rank V = {np.linalg.matrix_rank(V)} < n = {n}, so A_i is not recoverable from Y_i = A_i X_i V."
    return ""


@PREDICTORS.register(
    "softmax_log_attention",
    summary="softmax, V known, n ≤ d_v: weighted least squares on log-attention ratios",
)
def softmax_log_attention(
    X: np.ndarray, Y: np.ndarray, V: np.ndarray | None, *, rng: np.random.Generator
) -> Fit:
    """Kernel estimate from recovered attention (module docstring). ``X (N, n, d)``, ``Y (N, n, d_v)``, ``V (d, d_v)``."""
    N, n, d = X.shape
    n_unk = d * d
    why = _check_setting(X, Y, V)
    if why:
        return not_identifiable(why, n_equations=N * n * (n - 1), n_unknowns=n_unk)
    if N * n * (n - 1) <= n_unk:
        return not_identifiable(
            f"softmax log-attention: {N * n * (n - 1)} log-ratio equations (N·n·(n−1)) for {n_unk} unknowns (d²); "
            f"need N·n·(n−1) > {n_unk}.",
            n_equations=N * n * (n - 1),
            n_unknowns=n_unk,
            too_few_samples=True,
        )
    # σ̂ from a subsample: its dof (≥ n per sample) make it precise to well under 1 %, and one fewer
    # pass of per-sample pseudo-inverses over all N samples
    sub = slice(0, SIGMA_SAMPLES)
    sigma, dof = estimate_sigma(X[sub], Y[sub], V)
    how = f"Y outside row(X_i V) and the row sums of Â_i ({dof} dof)"
    first = slice(0, FIRST_PASS_SAMPLES)  # the first pass only chooses masks: a subsample suffices
    K_hat, L, n_eq = _solve(X[first], Y[first], V, sigma)
    if K_hat is not None and sigma > 0:  # second pass: mask and weights from the fitted attention
        K_hat, L, n_eq = _solve(X, Y, V, sigma, K_ref=K_hat)
    elif X.shape[0] > FIRST_PASS_SAMPLES:
        K_hat, L, n_eq = _solve(X, Y, V, sigma)
    if K_hat is None or n_eq <= n_unk:
        return not_identifiable(
            f"softmax log-attention: after masking attention entries below {MASK_LEVELS:g} noise levels "
            f"(σ̂ = {sigma:.3g}), {n_eq} equations do not determine the {n_unk} entries of K "
            "(noise too large, attention too saturated or too few samples).",
            n_equations=n_eq,
            n_unknowns=n_unk,
        )
    E = kernel_noise_draws(L, 1.0, rng, NOISE_DRAWS)  # weights already carry σ: Cov(vec K̂) ≈ G⁻¹
    return Fit(
        singular_values=np.linalg.svd(K_hat, compute_uv=False),
        noise_top=top_singular_values(E),
        sigma=sigma,
        entry_noise=float(np.sqrt(np.mean(E * E))),
        shape=(d, d),
        reason=f"softmax, V known, n ≤ d_v: attention recovered per sample, K̂ from {n_eq} weighted log-ratios; σ̂ from {how}.",
        n_equations=n_eq,
        n_unknowns=n_unk,
    )

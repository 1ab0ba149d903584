"""The weighted log-ratio equations of :mod:`.softmax_log_attention`, streamed in batched GEMMs.

For one chunk of samples with recovered attention ``Â_i = Y_i P_i`` (``P_i = pinv(X_i V)``) and a
reference attention ``R_i`` (``Â_i`` itself in the first pass, ``softmax(X_i K̂₀ X_iᵀ)`` in the second),
row ``s`` of sample ``i`` gives the equations

    ℓ_st = log Â_st − log Â_sm = x_sᵀ K z_st,   z_st = x_t − x_m,   m = argmax_t R_st,

weighted by ``w_st = 1 / (δ_st²/R_st² + δ_sm²/R_sm²)`` (delta method, ``δ_st = σ̂ ||P_i[:, t]||``) and
kept where ``R_st > MASK_LEVELS · δ_st``. The normal matrix ``G = Σ_is (x_s x_sᵀ) ⊗ Q_is`` with
``Q_is = Σ_t w_st z_st z_stᵀ`` is accumulated on upper triangles (``T = d(d+1)/2``): one
``(c n, T)ᵀ @ (c n, T)`` GEMM per chunk, no per-sample Python loop (float32; the solve of
:mod:`.log_ratio_system` makes the answer float64-exact).

**Null draws.** The first-order noise of ``ℓ_st`` is ``η_st = ε_st / R_st − ε_sm / R_sm`` with
``ε_i = E_i P_i`` and ``E_i`` iid ``N(0, σ̂²)`` — correlated across ``t`` (through ``P_iᵀ P_i``) and
across a row (the shared reference). The weights ignore those correlations, so ``G⁻¹`` understates
``Cov(K̂)`` (measured 2–3× in Frobenius norm at n = d_v); instead each draw pushes a fresh ``E_i``
through the same equations and weights, ``b_k = Σ w η φ``, and ``G⁻¹ b_k`` is a draw of ``K̂``'s
estimation noise with the right (sandwich) covariance.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

MASK_LEVELS = 3.0
# Relative round-off of Â_i = Y_i pinv(U_i): a floor on δ so that σ̂ = 0 still gives finite weights.
ROUNDOFF = 1e-13


@dataclasses.dataclass
class Equations:
    """One chunk's kept log-ratios: weights ``w``, values ``ell`` (``(c, n, n)``, 0 where dropped),
    reference column ``m (c, n)``, reference token ``x_m (c, n, d)`` and the count kept."""

    w: torch.Tensor
    ell: torch.Tensor
    m: torch.Tensor
    x_m: torch.Tensor
    ref: torch.Tensor
    kept: int


def equations(
    X: torch.Tensor, A: torch.Tensor, A_ref: torch.Tensor, col: torch.Tensor, sigma: float, scale: float
):
    """Mask, weights and log-ratios for ``X (c, n, d)``, ``Â, R (c, n, n)``, column factors ``col (c, n)``."""
    n = X.shape[1]
    delta = math.sqrt(sigma**2 + (ROUNDOFF * scale) ** 2) * col[:, None, :].expand(-1, n, -1)  # (c, n_s, n_t)
    m = A_ref.argmax(dim=2)  # (c, n)
    mi = m[..., None]
    R_m, A_m, d_m = (t.gather(2, mi) for t in (A_ref, A, delta))  # (c, n, 1)
    keep = (A_ref > MASK_LEVELS * delta) & (A > 0) & (A_m > 0)
    keep &= torch.arange(n)[None, None, :] != mi
    ell = torch.where(
        keep, torch.log(torch.where(keep, A, 1.0)) - torch.log(torch.where(A_m > 0, A_m, 1.0)), 0.0
    )
    w = torch.where(keep, 1.0 / ((delta / torch.where(keep, A_ref, 1.0)) ** 2 + (d_m / R_m) ** 2), 0.0)
    x_m = X.gather(1, m[..., None].expand(-1, -1, X.shape[2]))  # (c, n, d) reference token per row
    return Equations(w=w, ell=ell, m=m, x_m=x_m, ref=A_ref, kept=int(keep.sum()))


def back_project(X: torch.Tensor, x_m: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """``r_s = Σ_t u_st z_st`` for ``u (c, k, n, n)`` (``k`` right-hand sides) → ``(c, n, k, d)``;
    ``Σ_s x_s ⊗ r_s`` is then one GEMM ``X_flatᵀ r_flat`` (:func:`outer_sum`)."""
    c, k, n, _ = u.shape
    r = torch.bmm(u.reshape(c, k * n, n), X).reshape(c, k, n, -1)  # (c, k, n, d) = Σ_t u x_t
    r -= u.sum(dim=-1, keepdim=True) * x_m[:, None]
    return r.transpose(1, 2)


def outer_sum(X: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """``Σ_{i,s} x_is r_isᵀ`` for ``X (c, n, d)``, ``r (c, n, k, d)`` → ``(k, d, d)``."""
    c, n, k, d = r.shape
    return (X.reshape(c * n, -1).T @ r.reshape(c * n, k * d)).reshape(-1, k, d).transpose(0, 1)


def normal_core(X: torch.Tensor, eq: Equations) -> tuple[torch.Tensor, torch.Tensor]:
    """``(xx, Q)`` float32 upper triangles ``(c, n, T)`` of ``x_s x_sᵀ`` and ``Q_is``; ``G``'s core is
    ``xxᵀ Q`` (float32: it only preconditions the exact solve of :mod:`.log_ratio_system`).

    ``Q_is = Σ_t w x_t x_tᵀ − (a x_mᵀ + x_m aᵀ)`` with ``a = Σ_t w x_t − (Σ_t w / 2) x_m``: one batched
    GEMM and a symmetric rank-2 correction, done in place.
    """
    X32 = X.numpy().astype(np.float32)
    xx = _upper_products(X32, X32)  # (c, n, T)
    Q = torch.bmm(eq.w.float(), torch.from_numpy(xx)).numpy()  # (c, n, T) = Σ_t w x_t x_tᵀ
    a = (eq.w @ X - 0.5 * eq.w.sum(dim=2, keepdim=True) * eq.x_m).numpy().astype(np.float32)  # (c, n, d)
    x_m = eq.x_m.numpy().astype(np.float32)
    Q -= _upper_products(a, x_m)
    Q -= _upper_products(x_m, a)
    return torch.from_numpy(xx), torch.from_numpy(Q)


def _upper_products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a[..., i] b[..., j]`` over the upper triangle ``i ≤ j`` in row-major order → ``(..., T)``;
    one contiguous broadcast product per row ``i`` (no gathers: 2× faster than ``np.take`` pairs)."""
    d = a.shape[-1]
    out = np.empty((*a.shape[:-1], d * (d + 1) // 2), dtype=np.result_type(a, b))
    start = 0
    for i in range(d):
        np.multiply(a[..., i : i + 1], b[..., i:], out=out[..., start : start + d - i])
        start += d - i
    return out


def null_draws(
    X: torch.Tensor, P: torch.Tensor, eq: Equations, sigma: float, rng: np.random.Generator, draws: int
) -> torch.Tensor:
    """``draws`` right-hand sides ``Σ w η φ`` of the first-order noise (module docstring) → ``(draws, d, d)``."""
    c, n, _ = X.shape
    E = torch.from_numpy(rng.standard_normal((c, draws * n, P.shape[1]))).mul_(sigma)
    eps = torch.bmm(E, P).reshape(c, draws, n, n)  # noise of Â, per draw
    eps_m = eps.gather(3, eq.m[:, None, :, None].expand(-1, draws, -1, 1))  # (c, draws, n, 1)
    R_m = eq.ref.gather(2, eq.m[..., None])[:, None]  # (c, 1, n, 1)
    u = eps.div_(eq.ref[:, None]).sub_(eps_m / R_m).mul_(eq.w[:, None])  # (c, draws, n, n) = w η, in place
    return outer_sum(X, back_project(X, eq.x_m, u))


def bootstrap_rhs(
    X: torch.Tensor,
    P: torch.Tensor,
    w: torch.Tensor,
    m: torch.Tensor,
    A_true: torch.Tensor,
    sigma: float,
    rng: np.random.Generator,
    draws: int,
) -> torch.Tensor:
    """``draws`` right-hand sides ``Σ w ℓ* φ`` of data simulated from ``A_true (c, n, n)`` at noise σ,
    with the fit's own mask, weights and references (``w``, ``m``) and the *exact* logs of the noisy
    ``Â* = A_true + E P`` (their bias included, unlike :func:`null_draws`) → ``(draws, d, d)``. An
    entry the noise pushed to ``Â* ≤ 0`` has no log; it takes its first-order value instead (leaving
    it out of ``b`` but not of ``G`` would pull its equation to ``ℓ = 0``).

    The noise is fresh, not conditioned on what the fit's mask saw (the fit kept an entry only where
    its own noisy ``Â`` came out positive), so where the mask holds entries near zero (saturated
    attention) the refits' error exceeds the fit's (measured 2× in Frobenius norm at logit scale 8):
    the test errs on the safe side. Conditioned redraws match a correct-rank fit's error but not a
    fit whose unusually large error pushed ``r_hat`` above ``r*``, which they then reject (9 of 50
    seeds at N = 120, n = 6, d = 8, logit scale 10)."""
    c, n, _ = X.shape
    # float32 noise and product: a bootstrap's own sampling error dwarfs 10⁻⁷ (half the cost)
    E = torch.from_numpy(rng.standard_normal((c, draws * n, P.shape[1]), dtype=np.float32))
    eps = torch.bmm(E, P.float()).reshape(c, draws, n, n).double().mul_(sigma)  # noise of Â*
    mi = m[:, None, :, None].expand(-1, draws, -1, 1)
    A_m, T_m = (
        A_true[:, None].expand(-1, draws, -1, -1).gather(3, mi),
        A_true.gather(2, m[..., None])[:, None],
    )
    eps_m = eps.gather(3, mi)  # (c, draws, n, 1)
    noisy, noisy_m = A_true[:, None] + eps, A_m + eps_m
    ok = (noisy > 0) & (noisy_m > 0)
    exact = torch.log(torch.where(ok, noisy, 1.0)) - torch.log(torch.where(ok, noisy_m, 1.0))
    linear = torch.log(A_true)[:, None] - torch.log(T_m) + eps / A_true[:, None] - eps_m / T_m
    kept = w[:, None] > 0  # entries the fit masked may hold log 0 of an underflowed softmax
    u = torch.where(kept, w[:, None] * torch.where(ok, exact, linear), 0.0)
    x_m = X.gather(1, m[..., None].expand(-1, -1, X.shape[2]))  # (c, n, d)
    return outer_sum(X, back_project(X, x_m, u))

"""Finite-sample optima of the linear surrogate ``f(X) = A X V`` with ``rank A <= r``.

**V known** — reduced-rank regression (Izenman 1975; Reinsel & Velu 1998, ch. 2). With
``Z_i = X_i V`` the empirical loss is ``Σ_i ||Y_i − A Z_i||_F² = ||Y − A Z||_F²`` where
``Y = [Y_1 … Y_N]`` and ``Z = [Z_1 … Z_N]`` are concatenated along columns. Its unconstrained
minimiser is ``A_ols = S_yz S_zz⁺`` with the accumulated normal equations
``S_zz = Σ_i Z_i Z_iᵀ`` and ``S_yz = Σ_i Y_i Z_iᵀ`` (``(n, n)`` each, never the ``(n, N d_v)``
concatenation). The rank-``r`` minimiser is ``A_r = P_r A_ols`` with ``P_r`` the projector on the
top-``r`` left singular vectors of the fitted values ``F = A_ols Z``, i.e. the top-``r``
eigenvectors of ``F Fᵀ = A_ols S_zz A_olsᵀ`` (because ``||Y − A Z||² = ||Y − F||² + ||F − A Z||²``
and Eckart–Young applies to ``F``).

**V unknown** — alternating least squares: the ``A``-step is the RRR above, the ``V``-step the
ordinary least squares ``V = (Σ W_iᵀ W_i)⁺ Σ W_iᵀ Y_i`` with ``W_i = A X_i``. Every half-step
solves its subproblem exactly, so the loss is non-increasing, but ALS is a *local* method: it
converges to a stationary point, not provably the global rank-``r`` optimum. The default start is
the moment estimate below, which is consistent for isotropic ``X``; the tests check that ALS
reaches the closed-form population optimum within a few percent for large ``N``.

Inputs may be torch tensors or numpy arrays; everything is computed in float64 and returned as
float64 torch tensors on ``X``'s device.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

from ..errors import UserInputError
from ..validation import check_rank

_CHUNK = 4096  # samples per accumulation step


def _t64(x: torch.Tensor | np.ndarray, device: torch.device | None = None) -> torch.Tensor:
    t = x if isinstance(x, torch.Tensor) else torch.from_numpy(np.asarray(x))
    return t.to(device=device if device is not None else t.device, dtype=torch.float64)


def _check_data(X: torch.Tensor, Y: torch.Tensor, V: torch.Tensor | None = None) -> None:
    if X.ndim != 3 or Y.ndim != 3 or X.shape[:2] != Y.shape[:2]:
        raise UserInputError(
            f"X must be (N, n, d) and Y (N, n, d_v) with the same N, n. Got {tuple(X.shape)} and {tuple(Y.shape)}."
        )
    if V is not None and tuple(V.shape) != (X.shape[2], Y.shape[2]):
        raise UserInputError(f"V must have shape ({X.shape[2]}, {Y.shape[2]}). Got {tuple(V.shape)} instead.")


def normal_equations(X: torch.Tensor, Y: torch.Tensor, V: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``S_zz = Σ_i Z_i Z_iᵀ`` and ``S_yz = Σ_i Y_i Z_iᵀ`` (``(n, n)`` each) with ``Z_i = X_i V``, streamed."""
    n = X.shape[1]
    S_zz = X.new_zeros(n, n)
    S_yz = X.new_zeros(n, n)
    for start in range(0, X.shape[0], _CHUNK):
        Z = X[start : start + _CHUNK] @ V  # (c, n, d_v)
        Yc = Y[start : start + _CHUNK]  # (c, n, d_v)
        S_zz += torch.einsum("iak,ibk->ab", Z, Z)
        S_yz += torch.einsum("iak,ibk->ab", Yc, Z)
    return S_zz, S_yz


def _rrr_from_moments(S_zz: torch.Tensor, S_yz: torch.Tensor, ranks: list[int]) -> torch.Tensor:
    """``P_r A_ols`` for each ``r`` in ``ranks`` → ``(len(ranks), n, n)``."""
    A_ols = S_yz @ torch.linalg.pinv(S_zz, hermitian=True)  # (n, n)
    FFt = A_ols @ S_zz @ A_ols.T  # (n, n) = F Fᵀ
    _, U = torch.linalg.eigh((FFt + FFt.T) / 2)  # ascending eigenvalues
    U = U.flip(-1)  # (n, n), columns by decreasing fitted energy
    return torch.stack([U[:, :r] @ (U[:, :r].T @ A_ols) for r in ranks])


def reduced_rank_path(X, Y, V, ranks: Iterable[int]) -> torch.Tensor:
    """Reduced-rank regression for several ranks at once (one pass over the data) → ``(len(ranks), n, n)``."""
    X = _t64(X)
    Y, V = _t64(Y, X.device), _t64(V, X.device)
    _check_data(X, Y, V)
    ranks = [check_rank("r", r, X.shape[1]) for r in ranks]
    return _rrr_from_moments(*normal_equations(X, Y, V), ranks)


def reduced_rank_regression(X, Y, V, r: int) -> torch.Tensor:
    """The rank-``r`` least-squares ``A (n, n)`` for ``Y_i ≈ A X_i V`` with ``V (d, d_v)`` known.

    ``X (N, n, d)``, ``Y (N, n, d_v)``. At ``r = n`` this is OLS ``S_yz S_zz⁺``.
    """
    return reduced_rank_path(X, Y, V, [r])[0]


def empirical_risk(A, V, X, Y) -> float:
    """``Σ_i ||A X_i V − Y_i||_F² / (N n d_v)`` in float64."""
    X = _t64(X)
    A, V, Y = (_t64(t, X.device) for t in (A, V, Y))
    total = 0.0
    for start in range(0, X.shape[0], _CHUNK):
        R = A @ X[start : start + _CHUNK] @ V - Y[start : start + _CHUNK]  # (c, n, d_v)
        total += float((R**2).sum())
    return total / Y.numel()


def moment_init(X, Y) -> tuple[torch.Tensor, torch.Tensor]:
    """A rank-1 moment estimate of ``(A, V)`` from the cross-moment ``T = Σ_i Y_i ⊗ X_i``.

    For ``Y = A X V`` with isotropic ``X``, ``E[Y_ab X_ce] = A_ac V_eb``: the sample mean, rearranged with rows
    ``(a, c)`` and columns ``(e, b)``, ``T`` is ``vec(A) vec(V)ᵀ`` up to noise (``(A C, V)`` with
    token covariance ``C``). Its top singular pair gives ``A (n, n)`` and ``V (d, d_v)``.
    """
    X = _t64(X)
    Y = _t64(Y, X.device)
    _check_data(X, Y)
    (_, n, d), d_v = X.shape, Y.shape[2]
    T = X.new_zeros(n, n, d, d_v)
    for start in range(0, X.shape[0], _CHUNK):
        T += torch.einsum("iab,ice->aceb", Y[start : start + _CHUNK], X[start : start + _CHUNK])
    U, S, Wh = torch.linalg.svd(T.reshape(n * n, d * d_v) / X.shape[0], full_matrices=False)
    scale = S[0].sqrt()
    return (U[:, 0] * scale).reshape(n, n), (Wh[0] * scale).reshape(d, d_v)


def _v_step(X: torch.Tensor, Y: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """``argmin_V Σ_i ||Y_i − A X_i V||²`` = ``(Σ W_iᵀ W_i)⁺ Σ W_iᵀ Y_i`` with ``W_i = A X_i``."""
    d, d_v = X.shape[2], Y.shape[2]
    G, H = X.new_zeros(d, d), X.new_zeros(d, d_v)
    for start in range(0, X.shape[0], _CHUNK):
        W = A @ X[start : start + _CHUNK]  # (c, n, d)
        G += torch.einsum("ikd,ike->de", W, W)
        H += torch.einsum("ikd,ike->de", W, Y[start : start + _CHUNK])
    return torch.linalg.pinv(G, hermitian=True) @ H  # (d, d_v)


def rank_constrained_least_squares(
    X, Y, r: int, *, V_init=None, iters: int = 200, tol: float = 1e-12
) -> tuple[torch.Tensor, torch.Tensor]:
    """Alternating least squares for ``min Σ_i ||Y_i − A X_i V||²`` over rank-``r`` ``A`` and any ``V``.

    ``X (N, n, d)``, ``Y (N, n, d_v)`` → ``(A (n, n), V (d, d_v))``, balanced so ``||A||_F = ||V||_F``
    (``(A, V)`` is only identified up to ``(αA, V/α)``). Starts from ``V_init`` (default: the
    moment estimate :func:`moment_init`) and stops after ``iters`` rounds or when the relative
    decrease of the loss falls below ``tol``. A local method (see the module docstring).
    """
    X = _t64(X)
    Y = _t64(Y, X.device)
    _check_data(X, Y)
    r = check_rank("r", r, X.shape[1])
    V = moment_init(X, Y)[1] if V_init is None else _t64(V_init, X.device)
    _check_data(X, Y, V)
    prev = float("inf")
    for _ in range(max(int(iters), 1)):
        A = reduced_rank_regression(X, Y, V, r)
        V = _v_step(X, Y, A)
        alpha = (V.norm() / A.norm().clamp_min(1e-300)).sqrt()
        A, V = A * alpha, V / alpha.clamp_min(1e-300)
        loss = empirical_risk(A, V, X, Y)
        if prev < float("inf") and prev - loss <= tol * prev:
            break
        prev = loss
    return A, V

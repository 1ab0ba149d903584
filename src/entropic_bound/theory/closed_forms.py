"""Closed forms for the linear surrogate ``f(X) = A X V`` on the ``fixed_operator`` task.

For ``X`` with iid ``N(0, 1)`` entries, ``vec(A X V) = (Vᵀ ⊗ A) vec X`` and
``E||M vec X||² = ||M||_F²``, so the population excess risk of ``(A, V)`` is

    ΔR(A, V) = ||Vᵀ⊗A − V*ᵀ⊗A*||_F² / (n d_v)
             = (||A||²||V||² − 2⟨A, A*⟩⟨V, V*⟩ + ||A*||²||V*||²) / (n d_v).

Under the Kronecker rearrangement ``Vᵀ⊗A ↦ vec(V) vec(A)ᵀ`` this is a rank-1 approximation problem:
for fixed ``A`` the best ``V`` is ``V* ⟨A, A*⟩ / ||A||²``, leaving ``||V*||² (||A*||² − ⟨A, A*⟩²/||A||²)``,
which over rank-``r`` ``A`` is minimised by the truncated SVD of ``A*`` (Eckart–Young), so

    ΔR_min(r) = ||V*||_F² · Σ_{i>r} σ_i(A*)² / (n d_v)        (the tail energy; 0 for r >= r*).

With token covariance ``C`` (``X = C^{1/2} Z``), ``A X V = (A C^{1/2}) Z V``: replace ``A`` by
``A C^{1/2}`` and ``A*`` by ``A* C^{1/2}`` everywhere (the rank of ``A C^{1/2}`` is that of ``A`` for
invertible ``C``). All computations are float64.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

from ..validation import check_rank

ArrayLike = np.ndarray | torch.Tensor


def _np64(x: ArrayLike) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu", torch.float64).numpy()
    return np.asarray(x, dtype=np.float64)


def tail_energy(singular_values: ArrayLike, r: int) -> float:
    """``Σ_{i>r} σ_i²`` for singular values ``(m,)`` (sorted here, so any order is accepted)."""
    return float(tail_energy_curve(singular_values, [r])[0])


def tail_energy_curve(singular_values: ArrayLike, ranks: Iterable[int]) -> np.ndarray:
    """``[Σ_{i>r} σ_i² for r in ranks]``, float64 ``(len(ranks),)``; ranks in ``[0, m]``."""
    s = np.sort(np.abs(_np64(singular_values)).ravel())[::-1]  # (m,) non-increasing
    tails = np.concatenate([np.cumsum((s**2)[::-1])[::-1], [0.0]])  # tails[r] = Σ_{i>r} σ_i², (m+1,)
    idx = [check_rank("r", r, s.size, lower=0) for r in ranks]
    return tails[idx]


def whitened_operator(A: ArrayLike, token_cov: ArrayLike | None = None) -> np.ndarray:
    """``A C^{1/2}`` (``(..., n, n)``, float64), or ``A`` itself when ``token_cov`` is None."""
    A = _np64(A)
    if token_cov is None:
        return A
    w, Q = np.linalg.eigh(_np64(token_cov))
    return A @ ((Q * np.sqrt(np.clip(w, 0.0, None))) @ Q.T)


def excess_risk_curve(
    A_star: ArrayLike, V_star: ArrayLike, ranks: Iterable[int], token_cov: ArrayLike | None = None
) -> np.ndarray:
    """``ΔR_min(r)`` for each ``r`` in ``ranks``: ``||V*||_F² · tail(A* C^{1/2}, r) / (n d_v)``.

    ``A_star (n, n)``, ``V_star (d, d_v)``; returns float64 ``(len(ranks),)``. Valid for any ``V``
    (learned or fixed at ``V*``): both minima coincide.
    """
    A_eff = whitened_operator(A_star, token_cov)  # (n, n)
    V_star = _np64(V_star)
    n, d_v = A_eff.shape[0], V_star.shape[-1]
    s = np.linalg.svd(A_eff, compute_uv=False)
    return float(np.sum(V_star**2)) * tail_energy_curve(s, ranks) / (n * d_v)


def min_excess_risk(
    A_star: ArrayLike, V_star: ArrayLike, r: int, *, token_cov: ArrayLike | None = None
) -> float:
    """The minimum population excess risk of a rank-``r`` linear surrogate (see module docstring)."""
    return float(excess_risk_curve(A_star, V_star, [r], token_cov)[0])


def population_excess_risk(
    A: ArrayLike, V: ArrayLike, A_star: ArrayLike, V_star: ArrayLike, token_cov: ArrayLike | None = None
) -> np.ndarray:
    """Exact population excess risk of B0 students ``(A, V)``, batched over leading axes.

    ``A (..., n, n)``, ``V (..., d, d_v)`` (e.g. a model axis first), ``A_star (n, n)``,
    ``V_star (d, d_v)``; torch or numpy in, float64 numpy ``(...)`` out::

        (||A C½||²||V||² − 2⟨A C½, A* C½⟩⟨V, V*⟩ + ||A* C½||²||V*||²) / (n d_v)

    computed as ``tr(A C Aᵀ)`` etc. (``C = I`` by default). Clipped at 0 against round-off.
    """
    A, V, A_star, V_star = (_np64(t) for t in (A, V, A_star, V_star))
    C = np.eye(A.shape[-1]) if token_cov is None else _np64(token_cov)
    n, d_v = A_star.shape[-1], V_star.shape[-1]
    AC, AsC = A @ C, A_star @ C  # (..., n, n), (n, n)
    aa = np.einsum("...ij,...ij->...", AC, A)  # ||A C½||²
    as_ = np.einsum("...ij,...ij->...", AC, A_star)  # ⟨A C½, A* C½⟩
    ss = np.einsum("ij,ij->", AsC, A_star)
    vv = np.einsum("...ij,...ij->...", V, V)
    vs = np.einsum("...ij,...ij->...", V, V_star)
    v_s = np.einsum("ij,ij->", V_star, V_star)
    return np.clip((aa * vv - 2.0 * as_ * vs + ss * v_s) / (n * d_v), 0.0, None)


def clean_signal(A_star: ArrayLike, V_star: ArrayLike, token_cov: ArrayLike | None = None) -> float:
    """``E||A* X V*||_F² / (n d_v) = ||A* C½||² ||V*||² / (n d_v)``: the denominator of relative excess risk."""
    A_eff, V_star = whitened_operator(A_star, token_cov), _np64(V_star)
    return float(np.sum(A_eff**2) * np.sum(V_star**2) / (A_eff.shape[-1] * V_star.shape[-1]))

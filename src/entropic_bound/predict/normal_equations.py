"""Streaming normal equations for targets linear in a kernel ``K (d, d)``, and their noise.

Every linear-in-K model here has the form ``T_i = X_i K B_i + noise`` with ``X_i (n, d)`` and
``B_i (d, d_v)``. With row-major ``vec``, ``vec(X K B) = (X ⊗ Bᵀ) vec K``, so the normal
equations are

    G vec K̂ = b,   G = Σ_i (X_iᵀX_i) ⊗ (B_i B_iᵀ)   (d², d²),   b = Σ_i vec(X_iᵀ T_i B_iᵀ)   (d²,)

accumulated chunk by chunk (one GEMM of ``(chunk, d²)ᵀ @ (chunk, d²)`` per chunk): memory is
O(d⁴ + chunk·d²) whatever N, time O(N·d⁴). The design matrix ``(N n d_v, d²)`` is never formed.
Weighted rows (:func:`kron_gram` with per-row weights folded into the factors) use the same path.

Noise: for iid noise of variance σ² on ``T``, ``Cov(vec K̂) = σ² G⁻¹``; draws of the estimation
noise are ``σ̂ L⁻ᵀ z`` with ``G = L Lᵀ`` (Cholesky), ``z ~ N(0, I)``.

The dense ``d² × d²`` algebra runs in torch float64 (MKL): on the shared 2-core machines OpenBLAS'
threaded Cholesky was measured 5–20× slower under contention.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch

# G is "rank-deficient" when its smallest Cholesky pivot² is below this times its largest.
PIVOT_RTOL = 1e-11


@lru_cache(maxsize=16)
def _pair_index(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat indices of the upper triangle of a ``(p, p)`` matrix and the map ``(a, c) → pair``."""
    iu = np.triu_indices(p)
    pair = np.zeros((p, p), dtype=np.int64)
    pair[iu] = np.arange(iu[0].size)
    pair.T[iu] = np.arange(iu[0].size)
    return iu[0] * p + iu[1], pair


def kron_core(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Upper-triangle core of ``Σ_k A_k ⊗ B_k`` for symmetric ``A (M, p, p)``, ``B (M, q, q)``.

    One GEMM ``(M, p(p+1)/2)ᵀ @ (M, q(q+1)/2)`` (4× fewer flops than the full Kronecker layout);
    cores add over chunks, and :func:`expand_core` lays the sum out once at the end.
    """
    M, p, _ = A.shape
    q = B.shape[1]
    At = torch.from_numpy(A.reshape(M, p * p)[:, _pair_index(p)[0]])
    Bt = torch.from_numpy(B.reshape(M, q * q)[:, _pair_index(q)[0]])
    return (At.T @ Bt).numpy()  # (p(p+1)/2, q(q+1)/2)


def expand_core(core: np.ndarray, p: int, q: int) -> np.ndarray:
    """The ``(p q, p q)`` matrix ``Σ_k A_k ⊗ B_k`` from its :func:`kron_core`."""
    pa, pb = _pair_index(p)[1], _pair_index(q)[1]
    G4 = core[pa[:, :, None, None], pb[None, None, :, :]]  # [a, c, b, f]
    return G4.transpose(0, 2, 1, 3).reshape(p * q, p * q)  # kron index [(a, b), (c, f)]


def kron_gram(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``Σ_k A_k ⊗ B_k`` for symmetric ``A (M, p, p)``, ``B (M, q, q)`` → ``(p q, p q)``."""
    return expand_core(kron_core(A, B), A.shape[1], B.shape[1])


class KronSystem:
    """Accumulates ``G``, ``b`` and ``Σ||T_i||²`` for ``T_i = X_i K B_i`` over chunks of samples.

    ``G`` depends on ``X`` and ``B`` alone: targets on the same samples (other noise draws or levels)
    reuse its Cholesky factor through :meth:`with_same_gram`."""

    def __init__(self, d: int) -> None:
        self.d = d
        self.core = np.zeros((d * (d + 1) // 2, d * (d + 1) // 2))
        self.b = np.zeros(d * d)
        self.tt = 0.0
        self.n_equations = 0
        self._factor: tuple[np.ndarray, np.ndarray | None] | None = None  # (G, L), once solved

    def add(self, X: np.ndarray, B: np.ndarray, T: np.ndarray) -> None:
        """Add samples ``X (c, n, d)``, ``B (c, d, d_v)``, ``T (c, n, d_v)``."""
        self.add_gram(X, B)
        self.add_target(X, B, T)

    def add_gram(self, X: np.ndarray, B: np.ndarray) -> None:
        """Add the normal matrix of samples ``X (c, n, d)``, ``B (c, d, d_v)``."""
        S = X.transpose(0, 2, 1) @ X  # (c, d, d)
        P = B @ B.transpose(0, 2, 1)  # (c, d, d)
        self.core += kron_core(S, P)
        self._factor = None

    def add_target(self, X: np.ndarray, B: np.ndarray, T: np.ndarray) -> None:
        """Add the right-hand side of targets ``T (c, n, d_v)`` on samples ``X``, ``B``."""
        self.b += np.einsum("cna,cnb->ab", X, T @ B.transpose(0, 2, 1)).reshape(-1)  # Σ XᵀT Bᵀ
        self.tt += float(np.sum(T * T))
        self.n_equations += T.size

    def with_same_gram(self) -> KronSystem:
        """An empty right-hand side on this system's samples: its normal matrix and (once factored)
        Cholesky factor are shared, not copied; fill it with :meth:`add_target` on the same samples."""
        out = KronSystem(self.d)
        out.core, out._factor = self.core, self._gram_factor()
        return out

    def merged(self, other: KronSystem) -> KronSystem:
        """The system of both sample sets (normal equations add)."""
        out = KronSystem(self.d)
        out.core, out.b = self.core + other.core, self.b + other.b
        out.tt, out.n_equations = self.tt + other.tt, self.n_equations + other.n_equations
        return out

    def _gram_factor(self) -> tuple[np.ndarray, np.ndarray | None]:
        if self._factor is None:
            G = expand_core(self.core, self.d, self.d)
            self._factor = (G, cholesky_or_none(G))
        return self._factor

    def solve(self) -> tuple[np.ndarray, np.ndarray, float] | None:
        """``(K̂ (d, d), L (d², d²) Cholesky factor of G, RSS)``, or ``None`` if G is singular."""
        G, L = self._gram_factor()
        if L is None:
            return None
        k = torch.cholesky_solve(torch.from_numpy(self.b)[:, None], torch.from_numpy(L))[:, 0].numpy()
        rss = max(self.tt - 2.0 * k @ self.b + k @ (G @ k), 0.0)
        return k.reshape(self.d, self.d), L, rss


def cholesky_or_none(G: np.ndarray) -> np.ndarray | None:
    """Lower Cholesky factor of a symmetric PSD ``G``, or ``None`` if it is (numerically) singular."""
    if not np.all(np.isfinite(G)):
        return None
    L, info = torch.linalg.cholesky_ex(torch.from_numpy(np.ascontiguousarray(G)))
    if int(info) != 0:
        return None
    L = L.numpy()
    pivots = np.diag(L) ** 2
    if pivots.min() <= PIVOT_RTOL * pivots.max():
        return None
    return L


def kernel_noise_draws(L: np.ndarray, sigma: float, rng: np.random.Generator, draws: int) -> np.ndarray:
    """``draws`` samples of the estimation noise of ``K̂``: ``σ L⁻ᵀ z`` reshaped → ``(draws, d, d)``."""
    p = L.shape[0]
    d = int(round(p**0.5))
    z = rng.standard_normal((p, draws))
    E = torch.linalg.solve_triangular(
        torch.from_numpy(L).T, torch.from_numpy(z), upper=True
    ).numpy()  # (d², draws)
    return sigma * E.T.reshape(draws, d, d)


def top_singular_values(E: np.ndarray) -> np.ndarray:
    """Largest singular value of each matrix in ``E (draws, m, k)`` → ``(draws,)``."""
    if E.size == 0:
        return np.zeros(E.shape[0])
    return np.linalg.svd(E, compute_uv=False)[:, 0]

"""The weighted log-ratio normal equations of :mod:`.softmax_log_attention`: float64 answers from a
float32 normal matrix.

``G = Σ (x_s x_sᵀ) ⊗ Q_is`` (``d² × d²``, :mod:`.log_ratios`) is the one expensive object: a
``(N n, T)ᵀ @ (N n, T)`` GEMM (``T = d(d+1)/2``; ≈ 180 GFlop at N = 10,000, n = d = 32). It is
accumulated in float32, at twice the float64 GEMM rate, and serves only as the preconditioner of
conjugate gradients whose products ``G K`` are exact float64 passes over the kept equations
(``u_st = w_st x_sᵀ K z_st`` back-projected like ``b``; ≈ 2.6 GFlop at that size). Measured
``||G₃₂⁻¹ G − I|| ≈ 3·10⁻⁷`` (cond G ≈ 14 at n = d = d_v = 32, σ = 0.01): one or two iterations reach
float64's floor, so K̂ is the float64 least-squares solution and σ = 0 stays exact.

Training and held-out samples are summed apart (all = training + held out): each row enters one GEMM.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from .log_ratios import Equations, back_project, normal_core, outer_sum
from .normal_equations import cholesky_or_none, expand_core

# Conjugate gradients stop at this relative residual, when the residual stops halving (float64's
# floor for sums over ~10⁷ equations), or after PCG_MAX_ITER products.
PCG_RTOL = 1e-15
PCG_MAX_ITER = 12
PRODUCT_BLOCK = 512


@dataclasses.dataclass
class Solution:
    """``K̂ (d, d)`` from all samples, the Cholesky factor ``L`` of the float32 ``G`` (float64 array; for
    the null draws, whose own sampling error dwarfs 10⁻⁷), and ``K̂`` from the training samples alone
    (``None`` without a held-out split or when they do not determine K) with the Cholesky factor
    ``L_train`` of their float32 ``G``."""

    K: torch.Tensor
    L: np.ndarray
    K_train: torch.Tensor | None
    L_train: torch.Tensor | None = None


class LogRatioSystem:
    """Accumulates ``G``'s float32 core and ``b`` per part (training ``False``, held out ``True``), the
    null right-hand sides, and the kept equations for the exact products."""

    def __init__(self, d: int, draws: int) -> None:
        T = d * (d + 1) // 2
        self.d = d
        self.core = {part: torch.zeros(T, T, dtype=torch.float32) for part in (False, True)}
        self.b = {part: torch.zeros(d, d, dtype=torch.float64) for part in (False, True)}
        self.null = torch.zeros(draws, d, d, dtype=torch.float64)
        self.kept = 0
        self._chunks: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]] = []

    def add(self, X: torch.Tensor, eq: Equations, held: torch.Tensor) -> None:
        """Add one chunk ``X (c, n, d)`` with its equations; ``held (c,)`` marks held-out samples."""
        xx, Q = normal_core(X, eq)  # float32 (c, n, T)
        r = back_project(X, eq.x_m, (eq.w * eq.ell)[:, None])  # (c, n, 1, d)
        for part in (False, True):
            rows = held if part else ~held
            if not bool(rows.any()):
                continue
            if not bool(rows.all()):
                xx_p, Q_p, X_p, r_p = xx[rows], Q[rows], X[rows], r[rows]
            else:
                xx_p, Q_p, X_p, r_p = xx, Q, X, r
            self.core[part] += xx_p.flatten(0, 1).T @ Q_p.flatten(0, 1)
            self.b[part] += outer_sum(X_p, r_p)[0]
        self._chunks.append((X, eq.w, eq.m, held))
        self.kept += eq.kept

    def products(self, K: torch.Tensor, train_only: torch.Tensor) -> torch.Tensor:
        """Exact ``G K_j`` for ``K (k, d, d)``, over the training samples alone where ``train_only[j]``."""
        k, d = K.shape[0], self.d
        K_cols = K.permute(1, 0, 2).reshape(d, k * d)  # [K_0 | K_1 | ...]
        out = torch.zeros_like(K)
        for X, w, m, held in self._blocks():
            c, n, _ = X.shape
            XK = (X.reshape(c * n, d) @ K_cols).reshape(c, n * k, d)  # rows (s, j): x_sᵀ K_j
            logits = torch.bmm(XK, X.transpose(1, 2)).reshape(c, n, k, n)  # x_sᵀ K_j x_t
            ref = logits.gather(3, m[:, :, None, None].expand(-1, -1, k, 1))  # x_sᵀ K_j x_m
            u = (logits - ref).mul_(w[:, :, None])  # (c, n, k, n) = w x_sᵀ K_j (x_t − x_m)
            u *= ~(held[:, None] & train_only[None, :])[:, None, :, None]  # training systems skip held out
            x_m = X.gather(1, m[..., None].expand(-1, -1, d))  # (c, n, d)
            out += outer_sum(X, back_project(X, x_m, u.transpose(1, 2)))  # like b, with u for w·ℓ
        return out

    def _blocks(self):
        """The stored chunks merged into blocks of about PRODUCT_BLOCK samples (fewer, larger ops)."""
        if len(self._chunks) > 1:
            merged, group, size = [], [], 0
            for chunk in self._chunks:
                group.append(chunk)
                size += chunk[0].shape[0]
                if size >= PRODUCT_BLOCK:
                    merged.append(tuple(torch.cat(parts) for parts in zip(*group)))
                    group, size = [], 0
            if group:
                merged.append(tuple(torch.cat(parts) for parts in zip(*group)))
            self._chunks = merged
        return self._chunks

    def solve(self, *, with_training: bool = False, refine: bool = True) -> Solution | None:
        """K̂ from all samples (and the training ones), or ``None`` if all samples leave G singular."""
        d = self.d
        L = cholesky_or_none(expand_core((self.core[False] + self.core[True]).double().numpy(), d, d))
        if L is None:
            return None
        factors, rhs, train_only = [L], [self.b[False] + self.b[True]], [False]
        if with_training:
            L_train = cholesky_or_none(expand_core(self.core[False].double().numpy(), d, d))
            if L_train is not None:
                factors, rhs, train_only = factors + [L_train], rhs + [self.b[False]], train_only + [True]
        Ls = [torch.from_numpy(f) for f in factors]
        B, flags = torch.stack(rhs), torch.tensor(train_only)
        K = self._pcg(B, Ls, flags) if refine else _precondition(B, Ls)
        trained = len(Ls) > 1
        return Solution(K=K[0], L=L, K_train=K[1] if trained else None, L_train=Ls[1] if trained else None)

    def _pcg(self, B: torch.Tensor, Ls: list[torch.Tensor], train_only: torch.Tensor) -> torch.Tensor:
        """Preconditioned conjugate gradients for ``G_j K_j = B_j``, all systems in each pass."""
        K = _precondition(B, Ls)
        R = B - self.products(K, train_only)
        Z = _precondition(R, Ls)
        P, rz = Z.clone(), _dot(R, Z)
        b_norm = torch.linalg.norm(B.flatten(1), dim=1)
        r_norm = torch.full_like(b_norm, torch.inf)
        for _ in range(PCG_MAX_ITER):
            r_norm, last = torch.linalg.norm(R.flatten(1), dim=1), r_norm
            if bool(((r_norm <= PCG_RTOL * b_norm) | (r_norm > 0.5 * last)).all()):
                break
            AP = self.products(P, train_only)
            curvature = _dot(P, AP)
            alpha = torch.where(curvature > 0, rz / curvature, 0.0)[:, None, None]
            K, R = K + alpha * P, R - alpha * AP
            Z = _precondition(R, Ls)
            rz_next = _dot(R, Z)
            P = Z + torch.where(rz > 0, rz_next / rz, 0.0)[:, None, None] * P
            rz = rz_next
        return K

    def training_blocks(self):
        """``(X, w, m)`` of the training samples, block by block (the equations :meth:`add` kept)."""
        for X, w, m, held in self._blocks():
            if bool((~held).any()):
                yield X[~held], w[~held], m[~held]

    def noise(self, L: np.ndarray) -> np.ndarray:
        """Null draws ``G⁻¹ b_k`` of ``K̂``'s estimation noise → ``(draws, d, d)``."""
        rhs = self.null.reshape(self.null.shape[0], -1).T  # (d², draws)
        return torch.cholesky_solve(rhs, torch.from_numpy(L)).T.reshape(-1, self.d, self.d).numpy()


def _precondition(R: torch.Tensor, Ls: list[torch.Tensor]) -> torch.Tensor:
    """``G₃₂,j⁻¹ R_j`` for ``R (k, d, d)``."""
    return torch.stack([torch.cholesky_solve(r.reshape(-1, 1), L).reshape(r.shape) for r, L in zip(R, Ls)])


def _dot(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return (A * B).flatten(1).sum(dim=1)

"""Full-batch training of the linear surrogate from sufficient statistics.

For ``f(X) = A X V`` the full-batch mean squared error over a fixed data set is a polynomial in
``(A, V)`` whose data enter only through three moments::

    L(A, V) = (1 / (n d_v)) · ( Σ A_pj A_pk (V Vᵀ)_ab T_jakb − 2 Σ A_pj V_ac W_japc + y² )
    T = mean_i X_i ⊗ X_i  (n, d, n, d),   W = mean_i X_i ⊗ Y_i  (n, d, n, d_v),   y² = mean_i ||Y_i||²

So one step costs ``O(M n² d²)`` whatever the number of samples ``N``: the same objective and
gradient as the direct full-batch loss (up to round-off), without touching the data again.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass(frozen=True)
class QuadraticMoments:
    T: Tensor  # (n*n, d*d): T[(j,k), (a,b)] = mean_i X_i[j,a] X_i[k,b]
    W: Tensor  # (n*n, d*d_v): W[(p,j), (a,c)] = mean_i X_i[j,a] Y_i[p,c]
    yy: Tensor  # () mean_i ||Y_i||_F²
    n: int
    d: int
    d_v: int

    @classmethod
    def from_data(cls, X: Tensor, Y: Tensor, chunk: int = 4096) -> QuadraticMoments:
        """Accumulate the moments over ``X (N, n, d)``, ``Y (N, n, d_v)`` in chunks of samples."""
        N, n, d = X.shape
        d_v = Y.shape[-1]
        T = X.new_zeros(n, n, d, d)
        W = X.new_zeros(n, n, d, d_v)
        for s in range(0, N, chunk):
            x, y = X[s : s + chunk], Y[s : s + chunk]
            T += torch.einsum("ija,ikb->jkab", x, x)  # (n, n, d, d)
            W += torch.einsum("ipc,ija->pjac", y, x)  # (n, n, d, d_v)
        yy = (Y * Y).sum() / N
        return cls((T / N).reshape(n * n, d * d), (W / N).reshape(n * n, d * d_v), yy, n, d, d_v)

    def loss(self, A: Tensor, V: Tensor) -> Tensor:
        """Per-model full-batch MSE for ``A (M, n, n)``, ``V (M, d, d_v)`` → ``(M,)``."""
        M = A.shape[0]
        G = (A.transpose(-1, -2) @ A).reshape(M, -1)  # (M, n*n): (AᵀA)_jk
        H = (V @ V.transpose(-1, -2)).reshape(M, -1)  # (M, d*d): (V Vᵀ)_ab
        quad = ((G @ self.T) * H).sum(-1)  # (M,)
        cross = ((A.reshape(M, -1) @ self.W) * V.reshape(M, -1)).sum(-1)  # (M,)
        return (quad - 2.0 * cross + self.yy) / (self.n * self.d_v)


@dataclass
class MomentData:
    """A fixed data set seen through its moments; only students with ``moment_loss`` accept it."""

    moments: QuadraticMoments

    @classmethod
    def from_data(cls, X: Tensor, Y: Tensor) -> MomentData:
        return cls(QuadraticMoments.from_data(X, Y))

    def loss(self, model, step: int) -> Tensor:
        return model.moment_loss(self.moments)

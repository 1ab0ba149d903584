"""Plain single-model versions of B0–B3: the code a researcher would write.

They are the correctness oracle of the ensembles (computed the textbook way, through
``Q = X̃ W_Q`` and ``K = X̃ W_K`` with a Python loop over heads, never through the kernel
``W_Q W_Kᵀ``) and the per-model baseline of ``bench train``. Each student's ``reference_member(m)``
(and :func:`member_module`) copies member ``m`` into one of them, trimmed to the member's own rank.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


class LinearOperator(nn.Module):
    """``f(X) = A X V`` with ``A = P Qᵀ`` (B0); ``X (B, n, d)``."""

    def __init__(self, P: Tensor, Q: Tensor, V: Tensor, *, learn_v: bool = True) -> None:
        super().__init__()
        self.P, self.Q = nn.Parameter(P.clone()), nn.Parameter(Q.clone())  # (n, r) each
        self.V = nn.Parameter(V.clone(), requires_grad=learn_v)  # (d, d_v)

    def forward(self, X: Tensor) -> Tensor:
        A = self.P @ self.Q.T  # (n, n)
        return A @ X @ self.V  # (B, n, d_v)


class LinearQK(nn.Module):
    """``f(X) = (1/h) Σ_h c · (X̃ W_Q^h)(X̃ W_K^h)ᵀ X V``, ``c = 1/(√d n)``; ``X (B, n, d)``."""

    def __init__(
        self, W_Q: Tensor, W_K: Tensor, V: Tensor, *, n: int, P: Tensor | None = None, learn_v: bool = True
    ) -> None:
        super().__init__()
        self.n, self.d = n, W_Q.shape[1]
        self.W_Q = nn.Parameter(W_Q.clone())  # (h, d, r)
        self.W_K = nn.Parameter(W_K.clone())  # (h, d, r)
        self.V = nn.Parameter(V.clone(), requires_grad=learn_v)  # (d, d_v)
        self.P = None if P is None else nn.Parameter(P.clone())  # (n, d)

    def head_mixer(self, X: Tensor, h: int) -> Tensor:
        Xq = X if self.P is None else X + self.P
        q, k = Xq @ self.W_Q[h], Xq @ self.W_K[h]  # (B, n, r)
        return q @ k.transpose(-1, -2) / (math.sqrt(self.d) * self.n)  # (B, n, n)

    def forward(self, X: Tensor) -> Tensor:
        heads = [self.head_mixer(X, h) @ X @ self.V for h in range(self.W_Q.shape[0])]
        return sum(heads) / len(heads)  # (B, n, d_v)


class SoftmaxAttention(LinearQK):
    """``f(X) = (1/h) Σ_h softmax((X̃ W_Q^h)(X̃ W_K^h)ᵀ / τ) X V`` row-wise."""

    def __init__(self, *args, tau: float, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.tau = float(tau)

    def head_mixer(self, X: Tensor, h: int) -> Tensor:
        Xq = X if self.P is None else X + self.P
        q, k = Xq @ self.W_Q[h], Xq @ self.W_K[h]
        return torch.softmax(q @ k.transpose(-1, -2) / self.tau, dim=-1)


class TransformerBlock(nn.Module):
    """Pre-LN block ``H = X + Attn(LN(X))``, ``Z = H + FFN(LN(H))``, ``f(X) = Z W_out``."""

    def __init__(
        self,
        W_Q: Tensor,
        W_K: Tensor,
        W_V: Tensor,
        W_out: Tensor,
        *,
        tau: float,
        W_1: Tensor,
        b_1: Tensor,
        W_2: Tensor,
        b_2: Tensor,
        ln1: tuple[Tensor, Tensor],
        ln2: tuple[Tensor, Tensor],
        learn_out: bool = True,
    ) -> None:
        super().__init__()
        d = W_Q.shape[1]
        self.attn = SoftmaxAttention(W_Q, W_K, W_V, n=1, tau=tau)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, W_1.shape[1]), nn.Linear(W_1.shape[1], d)
        with torch.no_grad():
            self.ln1.to(W_Q.dtype), self.ln2.to(W_Q.dtype), self.fc1.to(W_Q.dtype), self.fc2.to(W_Q.dtype)
            self.ln1.weight.copy_(ln1[0]), self.ln1.bias.copy_(ln1[1])
            self.ln2.weight.copy_(ln2[0]), self.ln2.bias.copy_(ln2[1])
            self.fc1.weight.copy_(W_1.T), self.fc1.bias.copy_(b_1)
            self.fc2.weight.copy_(W_2.T), self.fc2.bias.copy_(b_2)
        self.W_out = nn.Parameter(W_out.clone(), requires_grad=learn_out)  # (d, d_v)

    def forward(self, X: Tensor) -> Tensor:
        H = X + self.attn(self.ln1(X))
        Z = H + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(H))))
        return Z @ self.W_out


def member_module(ensemble: nn.Module, m: int) -> nn.Module:
    """The plain module with member ``m``'s current weights (factors trimmed to its rank): each
    student says which module it is (``EnsembleStudent.reference_member``)."""
    return ensemble.reference_member(m)

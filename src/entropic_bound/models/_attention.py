"""Shared machinery of the attention rungs B1–B3: query–key factors, kernels and fused mixing.

Every attention student holds per-head factors ``W_Q, W_K`` of shape ``(M, h, d, r_max)`` (rank
``r`` is per head, ``1 ≤ r ≤ d``; smaller ranks are zero-padded as in :mod:`.base`) and mixes the
tokens through the logits ``S_h = X̃ K_h X̃ᵀ`` with ``K_h = W_Q^h W_K^hᵀ`` (``X̃ = X + P`` when
learned positions ``P`` are added to queries and keys). The heads share one value map and their
outputs are **averaged**: ``f(X) = (1/h) Σ_h M_h(X) X V``, so ``h`` identical heads equal one head
and a softmax model's mean mixer stays row-stochastic.

Speed (see ``bench_train``). The logits are computed through the kernel ``K`` (d×d per head), not
through ``Q = X W_Q`` and ``K = X W_K``: when all models see the same batch ``X (B, n, d)`` the
products become a few large GEMMs shared by the whole ensemble,

    XK  = X_(Bn×d) @ [K_1 … K_{Mh}]_(d × Mhd)        one GEMM          → (B, n, M, h, d)
    S   = bmm over b of XK_b (n·Mh × d) @ X_bᵀ (d × n)                   → (B, n, M, h, n)
    AX  = bmm over b of A_b (n·M × n) @ X_b (n × d)                      → (B, n, M, d)
    Y   = bmm over m of AX_m (Bn × d) @ V_m (d × d_v)                    → (M, B, n, d_v)

instead of ``M·B`` separate tiny ``16×32`` matrix products. ``X`` needs no gradient, so the
backward pass is the same few GEMMs. Padded factor columns get zero gradient
(``∂L/∂W_Q = ∂L/∂K · W_K`` and the padded columns of ``W_K`` are zero), so they stay exactly zero.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor, nn

from .base import EnsembleStudent, MemberSpec


def shared_logits(X: Tensor, K: Tensor) -> Tensor:
    """``S[b, i, m, h, j] = x_bi K_mh x_bjᵀ`` for inputs shared by all models.

    ``X (B, n, d)``, ``K (M, h, d, d)`` → ``(B, n, M, h, n)``.
    """
    B, n, d = X.shape
    M, h = K.shape[:2]
    Kcat = K.permute(2, 0, 1, 3).reshape(d, M * h * d)  # (d, M·h·d)
    XK = (X.reshape(B * n, d) @ Kcat).view(B, n * M * h, d)  # (B, n·M·h, d)
    return torch.bmm(XK, X.transpose(1, 2)).view(B, n, M, h, n)


def shared_mix(A: Tensor, X: Tensor, V: Tensor) -> Tensor:
    """``Y_m = A_m X V_m`` for shared inputs: ``A (B, n, M, n)``, ``X (B, n, d)``, ``V (M, d, d_v)``
    or shared ``(d, d_v)`` → ``(M, B, n, d_v)``."""
    B, n, M, _ = A.shape
    d = X.shape[-1]
    if V.dim() == 2:  # known V: mix X V once per batch
        Y = torch.bmm(A.reshape(B, n * M, n), X @ V)  # (B, n·M, d_v)
        return Y.view(B, n, M, -1).permute(2, 0, 1, 3)
    AX = torch.bmm(A.reshape(B, n * M, n), X).view(B * n, M, d).transpose(0, 1)  # (M, B·n, d)
    return torch.bmm(AX, V).view(M, B, n, -1)


def general_logits(Xq: Tensor, K: Tensor) -> Tensor:
    """Per-model inputs ``Xq (M, B, n, d)``, ``K (M, h, d, d)`` → ``S (M, B, h, n, n)``."""
    M, B, n, d = Xq.shape
    XK = torch.matmul(Xq.reshape(M, 1, B * n, d), K).view(M, -1, B, n, d)  # (M, h, B, n, d)
    S = torch.matmul(XK, Xq.unsqueeze(1).transpose(-1, -2))  # (M, h, B, n, n)
    return S.transpose(1, 2)


def general_mix(A: Tensor, X: Tensor, V: Tensor) -> Tensor:
    """``A (M, B, n, n)``, ``X (M, B, n, d)``, ``V (M, d, d_v)`` or ``(d, d_v)`` → ``(M, B, n, d_v)``."""
    M, B, n, d = X.shape
    XV = X.reshape(M, B * n, d) @ V  # (M, B·n, d_v)
    return A @ XV.view(M, B, n, -1)


class QKEnsemble(EnsembleStudent):
    """Base of B1–B3: factors, value map, positions, kernel, operators and spectra.

    Initialisation of member ``m`` from ``member_generator(seed_m)``, in this order: ``W_Q`` then
    ``W_K`` (``(h, d, r_m)``, iid ``N(0, init_scale²)``), a learned ``V`` (``(d, d_v)``, iid
    ``N(0, v_init_scale²/d)``), learned positions (``(n, d)``, iid ``N(0, 1)``, X2), then
    the subclass's own parameters (:meth:`_init_extra`).
    """

    supports_positional = True
    accepts: tuple[str, ...] = (
        "n", "d", "d_v", "V_known", "n_heads", "positional", "v_init_scale", "dtype", "device",
    )  # fmt: skip
    factors = ("W_Q", "W_K")

    # ----- initialisation
    def _draw_member(
        self, m: MemberSpec, g: torch.Generator, learn_v: bool, v_init_scale: float, extra: dict
    ) -> dict[str, Tensor]:
        h, d, d_v, n = self.n_heads, self.d, self.d_v, self.n
        out = {
            "W_Q": torch.randn(h, d, m.rank, generator=g, dtype=torch.float64) * m.init_scale,
            "W_K": torch.randn(h, d, m.rank, generator=g, dtype=torch.float64) * m.init_scale,
        }
        if learn_v:
            out["V"] = torch.randn(d, d_v, generator=g, dtype=torch.float64) * (v_init_scale / math.sqrt(d))
        if self.positional == "learned_absolute":
            out["P"] = torch.randn(n, d, generator=g, dtype=torch.float64)
        out.update(self._init_extra(g, extra))
        return out

    def _register_params(self, params: dict[str, list[Tensor]]) -> None:
        self.P = nn.Parameter(torch.stack(params.pop("P"))) if "P" in params else None  # (M, n, d)
        super()._register_params(params)

    def _init_extra(self, g: torch.Generator, extra: dict) -> dict[str, Tensor]:
        if extra:
            raise TypeError(f"unexpected keyword arguments {sorted(extra)}")
        return {}

    @classmethod
    def parameter_count(cls, *, n: int, d: int, d_v: int, rank: int, n_heads: int = 1, **options) -> int:
        return 2 * n_heads * d * rank + d * d_v + n * d  # W_Q, W_K, V, positions

    @classmethod
    def step_count(cls, *, n: int, d: int, d_v: int, n_heads: int = 1, **options) -> int:
        return 2 * n_heads * d * d  # the kernels W_Q W_Kᵀ and their gradient

    @classmethod
    def activation_count(cls, *, n: int, d: int, d_v: int, n_heads: int = 1, **options) -> int:
        # X K, logits and mixers per head, the mean mixer, mixed inputs, output and residual; gradients alike
        return 2 * (n_heads * n * d + 2 * n_heads * n * n + n * n + n * d + 2 * n * d_v)

    def _reference_parts(self, m: int) -> tuple[Tensor, Tensor, Tensor, Tensor | None, bool]:
        """Member ``m``'s ``W_Q, W_K`` (trimmed to its rank), ``V``, positions and whether ``V`` is learned."""
        r, learn_v = self.ranks[m], self.V is not None
        V = (self.V[m] if learn_v else self.V_fixed).detach()
        P = None if self.P is None else self.P[m].detach()
        return self.W_Q[m, ..., :r].detach(), self.W_K[m, ..., :r].detach(), V, P, learn_v

    # ----- operators
    def kernel(self) -> Tensor:
        """``K_h = W_Q^h W_K^hᵀ``, ``(M, h, d, d)`` (with gradient)."""
        return self.W_Q @ self.W_K.transpose(-1, -2)

    def operators(self) -> dict[str, Tensor]:
        return {"W_Q": self.W_Q.detach(), "W_K": self.W_K.detach(), "V": self.values().detach()}

    def spectra(self) -> dict[str, np.ndarray]:
        """``{"K": (M, h, r_max)}``: float64 singular values of ``K_h`` from its factors."""
        from ..spectra import factored_singular_values

        return {"K": factored_singular_values(self.W_Q.detach(), self.W_K.detach())}

    # ----- mixing
    def head_mixers(self, S: Tensor, model_axis: int) -> Tensor:  # pragma: no cover - interface
        """Per-head mixers from logits ``S``; ``model_axis`` says where the model axis is."""
        raise NotImplementedError

    def query_inputs(self, X: Tensor) -> Tensor:
        """``X̃ = X + P`` (``(M, B, n, d)``) for queries and keys."""
        X = self.expand_inputs(X, self.n_models)
        return X if self.P is None else X + self.P.unsqueeze(1)

    def mixers(self, X: Tensor) -> Tensor:
        """Realised per-head mixers ``M_h(X)``, ``(M, B, h, n, n)``; the model mixes with their mean."""
        with torch.no_grad():
            S = general_logits(self.query_inputs(X), self.kernel())  # (M, B, h, n, n)
            return self.head_mixers(S, model_axis=0)

    def attend(self, X: Tensor, V: Tensor) -> Tensor:
        """``(1/h) Σ_h M_h(X) X V``: ``X (B, n, d)`` shared or ``(M, B, n, d)`` → ``(M, B, n, d_v)``."""
        if X.dim() == 3 and self.P is None:
            S = shared_logits(X, self._forward_kernel())  # (B, n, M, h', n)
            return shared_mix(self._forward_mixers(S, model_axis=2).mean(3), X, V)
        S = general_logits(self.query_inputs(X), self._forward_kernel())  # (M, B, h', n, n)
        return general_mix(
            self._forward_mixers(S, model_axis=0).mean(2), self.expand_inputs(X, self.n_models), V
        )

    def _forward_kernel(self) -> Tensor:
        """The kernel the training forward pass uses, ``(M, h', d, d)``; a subclass may fold a
        per-model logit scale into it (a ``d×d`` multiply instead of one over every logit)."""
        return self.kernel()

    def _forward_mixers(self, S: Tensor, model_axis: int) -> Tensor:
        """Mixers from logits of :meth:`_forward_kernel` (default: :meth:`head_mixers`)."""
        return self.head_mixers(S, model_axis)

"""B2, softmax attention ``f(X) = (1/h) Σ_h softmax(X̃ K_h X̃ᵀ / τ) X V``."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from ..validation import check_choice
from ._attention import QKEnsemble
from .base import MemberSpec, PlotStyle
from .names import TEMPERATURES
from .reference import SoftmaxAttention


def temperatures(members: Sequence[MemberSpec], d: int, temperature: str) -> Tensor:
    """Per-model softmax temperature ``τ_m``: ``√d`` (``"sqrt_d"``) or ``√r_m`` (``"sqrt_r"``), ``(M,)``."""
    check_choice("temperature", temperature, TEMPERATURES)
    if temperature == "sqrt_d":
        return torch.full((len(members),), math.sqrt(d), dtype=torch.float64)
    return torch.tensor([math.sqrt(m.rank) for m in members], dtype=torch.float64)


def row_softmax(S: Tensor, tau: Tensor, model_axis: int) -> Tensor:
    """``softmax(S / τ_m)`` over the last axis, ``τ (M,)`` broadcast along ``model_axis``."""
    shape = [-1] + [1] * (S.dim() - 1 - model_axis)
    return torch.softmax(S / tau.view(shape), dim=-1)


class SoftmaxAttentionEnsemble(QKEnsemble):
    """``M`` softmax-attention models; mixer ``M_h(X) = softmax(X̃ K_h X̃ᵀ / τ)`` row-wise.

    Temperature: the default ``temperature="sqrt_d"`` uses ``τ = √d``, the softmax teacher's
    (``softmax(X K* Xᵀ / √d) X V*``), so the student class contains the teacher exactly
    (``W_Q W_Kᵀ = K*``, ``V = V*``) at every rank. The design writes ``τ = √r``;
    ``temperature="sqrt_r"`` gives that (per member, ``τ_m = √r_m``), under which the teacher is
    reached with ``K = K* · √r/√d`` instead. Heads are averaged, so the mean mixer is
    row-stochastic. Shapes as in :class:`~.linear_qk.LinearQKEnsemble`.
    """

    rung = "B2"
    ladder_step = 2
    plot_style = PlotStyle(colour="#E69F00", marker="^", offset=2**0.04)
    accepts = (*QKEnsemble.accepts, "temperature")

    def __init__(self, members: Sequence[MemberSpec], *, temperature: str = "sqrt_d", **kwargs) -> None:
        check_choice("temperature", temperature, TEMPERATURES)
        super().__init__(members, **kwargs)
        self.temperature = temperature
        tau = temperatures(members, self.d, temperature).to(self.W_Q.dtype)
        self.register_buffer("tau", tau.to(self.W_Q.device))  # (M,)

    def head_mixers(self, S: Tensor, model_axis: int) -> Tensor:
        return row_softmax(S, self.tau, model_axis)

    def _forward_kernel(self) -> Tensor:
        return self.kernel() / self.tau.view(-1, 1, 1, 1)  # (M, h, d, d), temperature folded in

    def _forward_mixers(self, S: Tensor, model_axis: int) -> Tensor:
        return torch.softmax(S, dim=-1)  # the temperature is already in the kernel

    def reference_member(self, m: int) -> SoftmaxAttention:
        W_Q, W_K, V, P, learn_v = self._reference_parts(m)
        return SoftmaxAttention(W_Q, W_K, V, n=self.n, P=P, learn_v=learn_v, tau=float(self.tau[m]))

    def forward(self, X: Tensor) -> Tensor:
        """``X (B, n, d)`` shared or ``(M, B, n, d)`` → ``(M, B, n, d_v)``."""
        return self.attend(X, self.value())

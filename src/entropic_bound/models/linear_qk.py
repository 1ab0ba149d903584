"""B1, linear query–key attention ``f(X) = (1/h) Σ_h c · (X̃ W_Q^h)(X̃ W_K^h)ᵀ X V``."""

from __future__ import annotations

import math

from torch import Tensor

from ._attention import QKEnsemble
from .base import PlotStyle
from .reference import LinearQK


class LinearQKEnsemble(QKEnsemble):
    """``M`` linear-attention models; mixer ``M_h(X) = c · X̃ K_h X̃ᵀ`` with ``c = 1/(√d · n)``.

    ``c`` is the linear teacher's scaling (``Y = (X K* Xᵀ/√d) X V*/n``), so a member with
    ``W_Q W_Kᵀ = K*`` and ``V = V*`` reproduces the teacher exactly. ``X̃ = X + P`` with learned
    positions (``positional="learned_absolute"``), else ``X``; values always use ``X``.
    Shapes: ``W_Q, W_K (M, h, d, r_max)``, ``V (M, d, d_v)``, ``P (M, n, d)``.
    Because the mixer is linear in ``K``, the forward pass mixes once with the mean kernel
    ``(1/h) Σ_h K_h`` (exactly the mean of the heads' outputs).
    """

    rung = "B1"
    ladder_step = 1
    plot_style = PlotStyle(colour="#0072B2", marker="o", offset=2**-0.04)

    @property
    def scale(self) -> float:
        return 1.0 / (math.sqrt(self.d) * self.n)

    def head_mixers(self, S: Tensor, model_axis: int) -> Tensor:
        return S * self.scale

    def _forward_kernel(self) -> Tensor:
        return self.kernel().mean(1, keepdim=True) * self.scale  # (M, 1, d, d), scale folded in

    def _forward_mixers(self, S: Tensor, model_axis: int) -> Tensor:
        return S  # the scale is already in the kernel

    def reference_member(self, m: int) -> LinearQK:
        W_Q, W_K, V, P, learn_v = self._reference_parts(m)
        return LinearQK(W_Q, W_K, V, n=self.n, P=P, learn_v=learn_v)

    def forward(self, X: Tensor) -> Tensor:
        """``X (B, n, d)`` shared or ``(M, B, n, d)`` → ``(M, B, n, d_v)``."""
        return self.attend(X, self.value())

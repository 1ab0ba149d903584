"""B0, the linear surrogate ``f(X) = A X V`` with ``A = P Qᵀ`` of rank r."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .base import EnsembleStudent, MemberSpec, PlotStyle
from .reference import LinearOperator


class LinearOperatorEnsemble(EnsembleStudent):
    """``M`` linear surrogates ``A_m X V_m``, ``A_m = P_m Q_mᵀ`` with ``P_m, Q_m ∈ R^{n×r_m}``.

    Factors start iid ``N(0, init_scale²)``; a learned ``V`` starts iid ``N(0, v_init_scale²/d)``.
    With ``V_known`` (``(d, d_v)``) every model uses the teacher's ``V*`` and learns only ``A``.
    """

    rung = "B0"
    ladder_step = 0
    fixed_mixer = True
    plot_style = PlotStyle(colour="#555555", marker="s", offset=2**-0.12)

    accepts = ("n", "d", "d_v", "V_known", "v_init_scale", "dtype", "positional")
    factors = ("P", "Q")
    rank_bound = ("n", "the operator is n×n with n")
    supports_heads = False
    positional_note = " (B0's fixed operator already knows positions)"
    default_dtype = torch.float64

    def _draw_member(
        self, m: MemberSpec, g: torch.Generator, learn_v: bool, v_init_scale: float, extra: dict
    ) -> dict[str, Tensor]:
        n, d, d_v, dtype = self.n, self.d, self.d_v, self.init_dtype  # drawn in the model's dtype
        out = {
            "P": torch.randn(n, m.rank, generator=g, dtype=dtype) * m.init_scale,
            "Q": torch.randn(n, m.rank, generator=g, dtype=dtype) * m.init_scale,
        }
        if learn_v:
            out["V"] = torch.randn(d, d_v, generator=g, dtype=dtype) * (v_init_scale / math.sqrt(d))
        return out

    @property
    def A(self) -> Tensor:
        return self.P @ self.Q.transpose(-1, -2)  # (M, n, n)

    def forward(self, X: Tensor) -> Tensor:
        A = self.A
        if self.V_fixed is not None and X.dim() == 3:
            XV = X @ self.V_fixed  # (B, n, d_v), shared by all models
            return torch.einsum("mij,bjv->mbiv", A, XV)  # (M, B, n, d_v)
        X = self.expand_inputs(X, self.n_models)  # (M, B, n, d)
        AX = torch.einsum("mij,mbjd->mbid", A, X)  # (M, B, n, d)
        return AX @ self.values().unsqueeze(1)  # (M, B, n, d_v)

    def moment_loss(self, moments) -> Tensor:
        """Full-batch MSE per model from the data's moments (see ``training.moments``) → ``(M,)``."""
        return moments.loss(self.A, self.values())

    @classmethod
    def parameter_count(cls, *, n: int, d: int, d_v: int, rank: int, **options) -> int:
        return 2 * n * rank + d * d_v  # P, Q, V

    @classmethod
    def step_count(cls, *, n: int, d: int, d_v: int, **options) -> int:
        return 2 * n * n + 2 * d * d  # A = P Qᵀ and its gradient; from moments also AᵀA and V Vᵀ

    @classmethod
    def activation_count(cls, *, n: int, d: int, d_v: int, **options) -> int:
        return 2 * (n * d + 2 * n * d_v)  # A X, its product with V and the residual; gradients alike

    def reference_member(self, m: int) -> LinearOperator:
        r, learn_v = self.ranks[m], self.V is not None
        V = (self.V[m] if learn_v else self.V_fixed).detach()
        return LinearOperator(self.P[m, :, :r].detach(), self.Q[m, :, :r].detach(), V, learn_v=learn_v)

    def operators(self) -> dict[str, Tensor]:
        return {"A": self.A.detach(), "V": self.values().detach()}

    def spectra(self):
        from ..spectra import singular_values

        return {"A": singular_values(self.A.detach())}

    def mixers(self, X: Tensor) -> Tensor:
        B = X.shape[-3]
        A = self.A.detach()  # a fixed operator mixes every input the same way
        return A[:, None, None].expand(self.n_models, B, 1, self.n, self.n)  # (M, B, 1, n, n)

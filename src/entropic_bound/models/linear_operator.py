"""B0, the linear surrogate ``f(X) = A X V`` with ``A = P Qᵀ`` of rank r (SPEC §3)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn

from ..errors import UserInputError
from ..registry import STUDENTS
from ..validation import check_rank
from .base import EnsembleStudent, MemberSpec, member_generator, stack_padded


@STUDENTS.register("B0", summary="linear surrogate A X V with A = P Qᵀ (fixed token mixer)")
class LinearOperatorEnsemble(EnsembleStudent):
    """``M`` linear surrogates ``A_m X V_m``, ``A_m = P_m Q_mᵀ`` with ``P_m, Q_m ∈ R^{n×r_m}``.

    Factors start iid ``N(0, init_scale²)``; a learned ``V`` starts iid ``N(0, v_init_scale²/d)``.
    With ``V_known`` (``(d, d_v)``) every model uses the teacher's ``V*`` and learns only ``A``.
    """

    rung = "B0"

    accepts = ("n", "d", "d_v", "V_known", "v_init_scale", "dtype", "positional")
    factors = ("P", "Q")  # rank-padded: columns past a member's rank stay zero

    def __init__(
        self,
        members: Sequence[MemberSpec],
        *,
        n: int,
        d: int,
        d_v: int,
        V_known: Tensor | None = None,
        v_init_scale: float = 1.0,
        dtype: torch.dtype = torch.float64,
        positional: str = "none",
    ) -> None:
        super().__init__()
        if positional != "none":
            raise UserInputError(
                f"positional information is for B1 and B2 only (B0's fixed operator already knows positions). "
                f"Got positional={positional!r} for B0."
            )
        for m in members:
            check_rank("rank", m.rank, n, what=f"the operator is n×n with n={n}")
        self.n_models, self.n, self.d, self.d_v = len(members), n, d, d_v
        self.ranks = [int(m.rank) for m in members]
        width = max(m.rank for m in members)
        P, Q, V = [], [], []
        for m in members:
            g = member_generator(m.seed)
            P.append(torch.randn(n, m.rank, generator=g, dtype=dtype) * m.init_scale)
            Q.append(torch.randn(n, m.rank, generator=g, dtype=dtype) * m.init_scale)
            if V_known is None:
                V.append(torch.randn(d, d_v, generator=g, dtype=dtype) * (v_init_scale / math.sqrt(d)))
        self.P = nn.Parameter(stack_padded(P, width))  # (M, n, r_max)
        self.Q = nn.Parameter(stack_padded(Q, width))  # (M, n, r_max)
        if V_known is None:
            self.V = nn.Parameter(torch.stack(V))  # (M, d, d_v)
            self.register_buffer("V_fixed", None)
        else:
            assert V_known.shape == (d, d_v), f"V_known {tuple(V_known.shape)} != {(d, d_v)}"
            self.V = None
            self.register_buffer("V_fixed", V_known.to(dtype))  # (d, d_v)

    @property
    def A(self) -> Tensor:
        return self.P @ self.Q.transpose(-1, -2)  # (M, n, n)

    def forward(self, X: Tensor) -> Tensor:
        A = self.A
        if self.V_fixed is not None and X.dim() == 3:
            XV = X @ self.V_fixed  # (B, n, d_v), shared by all models
            return torch.einsum("mij,bjv->mbiv", A, XV)  # (M, B, n, d_v)
        X = self.expand_inputs(X, self.n_models)  # (M, B, n, d)
        V = self.V if self.V is not None else self.V_fixed.expand(self.n_models, -1, -1)
        AX = torch.einsum("mij,mbjd->mbid", A, X)  # (M, B, n, d)
        return AX @ V.unsqueeze(1)  # (M, B, n, d_v)

    def moment_loss(self, moments) -> Tensor:
        """Full-batch MSE per model from the data's moments (see ``training.moments``) → ``(M,)``."""
        V = self.V if self.V is not None else self.V_fixed.expand(self.n_models, -1, -1)
        return moments.loss(self.A, V)

    def operators(self) -> dict[str, Tensor]:
        ops = {"A": self.A.detach()}
        ops["V"] = (self.V if self.V is not None else self.V_fixed.expand(self.n_models, -1, -1)).detach()
        return ops

    def spectra(self):
        from ..spectra import singular_values

        return {"A": singular_values(self.A.detach())}

    def mixers(self, X: Tensor) -> Tensor:
        B = X.shape[-3]
        A = self.A.detach()  # a fixed operator mixes every input the same way
        return A[:, None, None].expand(self.n_models, B, 1, self.n, self.n)  # (M, B, 1, n, n)

"""The ``fixed_operator`` task: ``f*(X) = A* X V*`` with a rank-``r*`` token mixer ``A*``.

``A* = U diag(s) Wᵀ ∈ R^{n×n}`` (Haar ``U, W``, named spectrum ``s``), scaled to
``||A*||_F = operator_norm`` (default ``√n``). With isotropic ``X`` and orthogonal ``V*``
(``d_v <= d``) the clean target then has unit variance per entry:
``E||A* X V*||_F² / (n d_v) = ||A*||_F² ||V*||_F² / (n d_v) = 1``.

Optional token covariance ``token_cov="ar1"``: ``X = C^{1/2} Z`` with ``C_ij = token_rho^{|i−j|}``
and ``C^{1/2}`` the symmetric square root. The clean variance is then
``||A* C^{1/2}||_F² ||V*||_F² / (n d_v)`` (not 1), and the theory of §5 applies to ``A* C^{1/2}``
(see :func:`entropic_bound.theory.closed_forms.min_excess_risk`, which takes ``token_cov=C``).

Optional ``operator="row_stochastic"`` (for the X2 positional rung, docs/claims.md § X2): a single softmax head
can only mix rows stochastically, so ``A* = softmax(L)`` row-wise, with rank-``r*`` logits
``L = U diag(s) Wᵀ`` scaled to ``||L||_F = logit_scale · n`` (entry rms ``logit_scale``). ``A*`` is then
row-stochastic and in general of full rank (``r*`` is the rank of the logits, reported as
``truth["logits"]``); ``operator_norm`` does not apply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from ..config import param
from .base import LowRankTaskParams, Teacher, as_generator, singular_values
from .operators import SPECTRA, ar1_covariance, low_rank_matrix, sqrtm_psd, value_matrix


class FixedOperatorTeacher(Teacher):
    """``Y = A* X V* + E``; the mixer is the same ``A*`` for every input."""

    name = "fixed_operator"

    def __init__(
        self,
        *,
        A: torch.Tensor,
        token_cov: torch.Tensor | None,
        logits: torch.Tensor | None = None,
        **kwargs: Any,
    ) -> None:
        token_sqrt = None if token_cov is None else torch.from_numpy(sqrtm_psd(token_cov.numpy()))
        super().__init__(token_sqrt=token_sqrt, **kwargs)
        self.A = A  # (n, n) float64
        self.token_cov = token_cov  # (n, n) float64 or None
        self.logits = logits  # (n, n) rank-r* logits of a row-stochastic A*, or None

    def mixer(self, X: torch.Tensor) -> torch.Tensor:
        return self.A.to(X).expand(*X.shape[:-2], self.n, self.n)  # (N, n, n)

    def target(self, X: torch.Tensor) -> torch.Tensor:
        return self.A.to(X) @ X @ self.V.to(X)  # (n, n) @ (N, n, d) @ (d, d_v) -> (N, n, d_v)

    @property
    def truth(self) -> dict[str, Any]:
        """``A``, ``V``, ``r_star``, ``sigma``, ``singular_values`` (of ``A*``), ``token_cov`` (``C`` or None).

        A row-stochastic operator also reports its rank-``r*`` ``logits``.
        """
        out = super().truth
        out["A"] = self.A.numpy().copy()
        out["singular_values"] = singular_values(self.A)
        out["token_cov"] = None if self.token_cov is None else self.token_cov.numpy().copy()
        if self.logits is not None:
            out["logits"] = self.logits.numpy().copy()
        return out


@dataclass(frozen=True)
class FixedOperatorTask(LowRankTaskParams):
    """Parameters of the fixed-operator task; ``teacher(generator)`` draws ``A*`` then ``V*``."""

    r_star: int = param(4, ge=1, doc="rank of A*, at most n")
    spectrum: str = param("flat", choices=SPECTRA, doc="singular-value profile of A*")
    v_kind: str = param("orthogonal", choices=("orthogonal", "gaussian"), doc="how V* is drawn")
    operator_norm: float | None = param(None, gt=0.0, doc="||A*||_F (None: sqrt(n))")
    token_cov: str | None = param(None, choices=("ar1",), doc="token covariance C (None: identity)")
    token_rho: float = param(0.5, gt=-1.0, lt=1.0, doc="ar1: C_ij = rho^|i-j|")
    operator: str = param(
        "low_rank", choices=("low_rank", "row_stochastic"), doc="A* itself, or softmax of rank-r* logits"
    )
    logit_scale: float = param(2.0, ge=0.0, doc="row_stochastic: rms of the logits")

    def teacher(self, generator: torch.Generator | int) -> FixedOperatorTeacher:
        """Draw the ground truth: ``U``, ``W`` of ``A*`` then ``V*`` from ``generator``."""
        g = as_generator(generator)
        s = self.singular_profile()
        if self.operator == "row_stochastic":
            logits = low_rank_matrix(
                self.n, self.n, self.r_star, s, fro_norm=self.logit_scale * self.n, generator=g
            )
            A = torch.softmax(logits, dim=-1)  # (n, n), rows sum to 1
        else:
            logits = None
            norm = math.sqrt(self.n) if self.operator_norm is None else self.operator_norm
            A = low_rank_matrix(self.n, self.n, self.r_star, s, fro_norm=norm, generator=g)  # (n, n)
        V = value_matrix(self.d, self.d_out, self.v_kind, g)  # (d, d_v)
        C = None if self.token_cov is None else torch.from_numpy(ar1_covariance(self.n, self.token_rho))
        return FixedOperatorTeacher(A=A, logits=logits, token_cov=C, **self.teacher_fields(V))

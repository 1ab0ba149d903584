"""Attention-native teachers: a rank-``r*`` query–key kernel ``K*`` mixes the tokens.

``K* = U diag(s) Wᵀ ∈ R^{d×d}`` is built with ``||K*||_F = c·√d``. For independent rows
``x_i, x_j ~ N(0, I_d)`` the logit ``x_iᵀ K* x_j / √d`` has variance ``||K*||_F² / d = c²``, so the
off-diagonal logits have standard deviation ``c`` whatever ``r*`` is.

- ``linear_qk_teacher``: ``Y = (X K* Xᵀ / √d) X V* / n + E`` (mixer ``X K* Xᵀ / (√d n)``). Keep
  ``n ≲ d``: for ``n ≫ d``, ``XᵀX / n → I`` and the target collapses to the token-wise map ``X K* V*``.
- ``softmax_teacher``: ``Y = softmax(X K* Xᵀ / √d) X V* + E`` (row-wise softmax, ``β = 1``).
  ``c = 2`` (default) is neither saturated nor nearly linear (row entropy ≈ 0.6–0.7 of ``log n``);
  ``c = 0.5`` is nearly uniform/linear, ``c = 4`` nearly saturated. Report ``c`` and
  :meth:`SoftmaxTeacher.saturation` with every softmax result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from ..config import param
from .base import LowRankTaskParams, Teacher, as_generator, singular_values
from .operators import SPECTRA, low_rank_matrix, value_matrix


class _KernelTeacher(Teacher):
    """A teacher whose mixer is a function of the logits ``X K* Xᵀ / √d``."""

    def __init__(self, *, K: torch.Tensor, c: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.K = K  # (d, d) float64
        self.c = float(c)

    def logits(self, X: torch.Tensor) -> torch.Tensor:
        """``X K* Xᵀ / √d``, ``(N, n, n)``."""
        return X @ self.K.to(X) @ X.transpose(-1, -2) / math.sqrt(self.d)

    @property
    def truth(self) -> dict[str, Any]:
        """``K``, ``V``, ``r_star``, ``sigma``, ``c``, ``singular_values`` (of ``K*``)."""
        out = super().truth
        out["K"] = self.K.numpy().copy()
        out["singular_values"] = singular_values(self.K)
        out["c"] = self.c
        return out


class LinearQKTeacher(_KernelTeacher):
    """``M(X) = X K* Xᵀ / (√d · n)``."""

    name = "linear_qk_teacher"

    def mixer(self, X: torch.Tensor) -> torch.Tensor:
        return self.logits(X) / self.n  # (N, n, n)


class SoftmaxTeacher(_KernelTeacher):
    """``M(X) = softmax(X K* Xᵀ / √d)`` row-wise (each row sums to 1)."""

    name = "softmax_teacher"

    def mixer(self, X: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.logits(X), dim=-1)  # (N, n, n)

    def saturation(self, X: torch.Tensor) -> dict[str, float]:
        """How peaked the attention is on inputs ``X``.

        ``row_entropy_ratio``: mean over rows of ``H(row) / log n`` (1 = uniform, 0 = one-hot);
        ``mean_max_attention``: mean over rows of the largest attention weight.
        """
        M = self.mixer(X.to(torch.float64))  # (N, n, n)
        H = -(M * torch.log(M.clamp_min(1e-300))).sum(-1)  # (N, n)
        ratio = (H / math.log(self.n)).mean().item() if self.n > 1 else 0.0
        return {"row_entropy_ratio": ratio, "mean_max_attention": M.amax(-1).mean().item()}


@dataclass(frozen=True)
class _KernelTask(LowRankTaskParams):
    """Shared parameters of the kernel teachers; ``teacher(generator)`` draws ``K*`` then ``V*``."""

    d: int = param(32, ge=1, doc="input features")
    r_star: int = param(4, ge=1, doc="rank of K*, at most d")
    spectrum: str = param("flat", choices=SPECTRA, doc="singular-value profile of K*")
    c: float = param(2.0, ge=0.0, doc="logit scale: ||K*||_F = c sqrt(d), off-diagonal logit std c")
    v_kind: str = param("orthogonal", choices=("orthogonal", "gaussian"), doc="how V* is drawn")

    _teacher_cls = _KernelTeacher
    rank_side = "d"  # K* is d×d

    def teacher(self, generator: torch.Generator | int) -> _KernelTeacher:
        g = as_generator(generator)
        s = self.singular_profile()
        K = low_rank_matrix(self.d, self.d, self.r_star, s, fro_norm=self.c * math.sqrt(self.d), generator=g)
        V = value_matrix(self.d, self.d_out, self.v_kind, g)  # (d, d_v)
        return self._teacher_cls(K=K, c=self.c, **self.teacher_fields(V))


@dataclass(frozen=True)
class LinearQKTeacherTask(_KernelTask):
    """The linear query–key teacher (no softmax)."""

    _teacher_cls = LinearQKTeacher

    def teacher(self, generator: torch.Generator | int) -> LinearQKTeacher:
        return super().teacher(generator)  # type: ignore[return-value]


@dataclass(frozen=True)
class SoftmaxTeacherTask(_KernelTask):
    """The softmax attention teacher (``β = 1``)."""

    _teacher_cls = SoftmaxTeacher

    def teacher(self, generator: torch.Generator | int) -> SoftmaxTeacher:
        return super().teacher(generator)  # type: ignore[return-value]

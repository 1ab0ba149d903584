"""The interface every student ensemble implements.

A student *ensemble* holds ``M`` independent models of one rung in one set of tensors: every
parameter has a leading model axis. One forward pass serves all models; the training loss is the
sum of the per-model mean losses, so each model receives exactly its own gradient.

Ranks differ between models of one ensemble by zero padding: model ``m`` of rank ``r_m`` draws its
factors at width ``r_m`` from its own generator and pads them with zero columns to the ensemble's
width ``r_max``. For a product ``P Qᵀ`` the gradient of a zero column is ``G Q[:, j] = 0``, so padded
columns stay exactly zero under plain GD and Adam alike, and a model's numbers do not depend on
which other models share its ensemble.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn


@dataclass(frozen=True)
class MemberSpec:
    """One model of an ensemble: its query–key (or operator) rank, init scale and seed."""

    rank: int
    init_scale: float
    seed: int


def member_generator(seed: int) -> torch.Generator:
    """The generator a member draws its initial parameters from."""
    return torch.Generator().manual_seed(int(seed))


def stack_padded(factors: Sequence[Tensor], width: int) -> Tensor:
    """Stack per-model factors ``(..., r_m)`` into ``(M, ..., width)`` with zero padding."""
    out = []
    for f in factors:
        pad = width - f.shape[-1]
        assert pad >= 0, f"factor width {f.shape[-1]} exceeds ensemble width {width}"
        out.append(torch.nn.functional.pad(f, (0, pad)))
    return torch.stack(out)


class EnsembleStudent(nn.Module):
    """Base class: ``M`` models with a leading model axis on every parameter.

    Subclasses implement ``forward``, ``operators`` and ``mixers``; ``spectra`` defaults to the
    singular values of every square operator.
    """

    rung: str = ""
    n_models: int

    def forward(self, X: Tensor) -> Tensor:  # pragma: no cover - interface
        """``X (B, n, d)`` shared by all models, or ``(M, B, n, d)`` → ``(M, B, n, d_v)``."""
        raise NotImplementedError

    def operators(self) -> dict[str, Tensor]:  # pragma: no cover - interface
        """Detached analysis operators, model axis first (``A (M, n, n)``, ``K (M, h, d, d)``...)."""
        raise NotImplementedError

    def mixers(self, X: Tensor) -> Tensor:  # pragma: no cover - interface
        """Realised token-mixing matrices ``(M, B, h, n, n)`` on inputs ``X``."""
        raise NotImplementedError

    def spectra(self) -> dict[str, np.ndarray]:
        """Float64 singular values of each operator, ``(M, ..., k)``."""
        from ..spectra import singular_values

        return {name: singular_values(op) for name, op in self.operators().items()}

    @staticmethod
    def expand_inputs(X: Tensor, n_models: int) -> Tensor:
        """``(B, n, d)`` or ``(M, B, n, d)`` → ``(M, B, n, d)`` (a view when shared)."""
        if X.dim() == 3:
            return X.unsqueeze(0).expand(n_models, *X.shape)
        assert X.dim() == 4 and X.shape[0] == n_models, f"inputs {tuple(X.shape)} for {n_models} models"
        return X

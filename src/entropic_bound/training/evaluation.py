"""Held-out evaluation of student ensembles against a teacher's clean target."""

from __future__ import annotations

import numpy as np
import torch


@torch.no_grad()
def held_out_excess(model, X: torch.Tensor, clean: torch.Tensor, chunk: int = 256) -> np.ndarray:
    """Excess risk per model, ``mean_b ||f_m(X_b) − f*(X_b)||_F² / (n d_v)``, float64 ``(M,)``.

    ``X (N, n, d)`` (cast to the model's dtype), ``clean (N, n, d_v)``; evaluated in chunks of
    ``chunk`` samples so memory stays bounded; the sum is accumulated in float64.
    """
    dtype = next(model.parameters()).dtype
    total = torch.zeros(model.n_models, dtype=torch.float64)
    for s in range(0, X.shape[0], chunk):
        pred = model(X[s : s + chunk].to(dtype)).double()  # (M, b, n, d_v)
        total += (pred - clean[s : s + chunk].double()).pow(2).sum(dim=(1, 2, 3))
    return (total / clean.numel()).numpy()


def signal_power(clean: torch.Tensor) -> float:
    """``E||f*(X)||_F² / (n d_v)`` estimated on ``clean``: the denominator of relative excess risk."""
    return float(clean.double().pow(2).mean())

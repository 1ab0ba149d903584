"""Per-head measurements of a :class:`~entropic_bound.lm.model.CausalLM` checkpoint (E7).

- **Static kernel** ``K_h = W_Q^h W_K^hᵀ``: singular values from the factors
  (:func:`entropic_bound.inspect.kernel_singular_values`, float64, never a ``d_model × d_model``
  SVD) and every SPEC §4 estimator on them, with ``shape = (d_head, d_head)`` as in ``inspect``
  (the kernel's nonzero spectrum lives in a ``d_head × d_head`` core). Raw weights: the pre-LN
  scale is not folded in.
- **Realised mixers** on fixed held-out windows: the attention patterns ``(B, L, H, n, n)`` and
  :func:`entropic_bound.inspect.mixer_summary` (sink score, locality mass within ±w, position-prior
  share, realised-mixer ranks), causal.

Every value is an array ``(n_layers, n_heads)`` keyed ``K_<estimator>``, ``sink_score``, …
"""

from __future__ import annotations

import numpy as np
import torch

from ..inspect import kernel_singular_values, mixer_summary
from ..spectra import estimate_all
from .model import CausalLM


def kernel_spectra(model: CausalLM) -> np.ndarray:
    """Singular values of every head's ``W_Q W_Kᵀ``: ``(n_layers, n_heads, d_head)`` float64."""
    W_Q, W_K = model.qk_factors()  # (L, H, d_model, d_head) each
    return kernel_singular_values(W_Q, W_K)


def kernel_ranks(singular_values: np.ndarray) -> dict[str, np.ndarray]:
    """Every panel estimator on kernel spectra ``(..., d_head)``: ``{"K_<key>": (...)}``."""
    d_head = singular_values.shape[-1]
    return {f"K_{k}": v for k, v in estimate_all(singular_values, shape=(d_head, d_head)).items()}


@torch.no_grad()
def model_mixers(model: CausalLM, idx: torch.Tensor) -> np.ndarray:
    """Attention patterns on ``idx (B, n)``: ``(B, n_layers, n_heads, n, n)`` float64."""
    was_training = model.training
    model.eval()
    _, mixers = model(idx, return_mixers=True)
    model.train(was_training)
    return mixers.double().numpy()


def probe(model: CausalLM, idx: torch.Tensor, *, window: int = 2) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Kernel spectra ``(L, H, d_head)`` and every per-head statistic ``{name: (L, H)}`` of ``model``."""
    sv = kernel_spectra(model)
    stats = kernel_ranks(sv)
    summary = mixer_summary(model_mixers(model, idx), causal=True, window=window)
    stats.update({k: np.asarray(v, dtype=np.float64) for k, v in summary.items()})
    return sv, stats


def structural_explained(
    sink: np.ndarray,
    locality: np.ndarray,
    positional: np.ndarray,
    *,
    sink_threshold: float,
    locality_threshold: float,
    positional_threshold: float,
) -> np.ndarray:
    """Heads whose realised mixer a structural prior explains: a sink head (sink score above its
    threshold), a local head (locality mass at least its threshold) or a positional head (position-only
    prior share at least its threshold). Elementwise over equal-shaped arrays; NaN counts as not explained."""
    with np.errstate(invalid="ignore"):
        return (
            (np.nan_to_num(sink, nan=-np.inf) > sink_threshold)
            | (np.nan_to_num(locality, nan=-np.inf) >= locality_threshold)
            | (np.nan_to_num(positional, nan=-np.inf) >= positional_threshold)
        )

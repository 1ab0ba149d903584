"""Per-head measurements of every member of an :class:`~entropic_bound.language_models.model.ensemble.EnsembleLM` (E7).

- **Static kernel**, two measures, both from the factors (float64, never a ``d_model × d_model``
  SVD): ``K`` — ``diag(γ) W_Q W_Kᵀ diag(γ)`` with the LN1 gain ``γ`` folded in (the kernel that
  acts on the normalised input), spectrum in a ``d_head × d_head`` core; ``dK`` — its change from
  initialisation ``K_t − K_0`` as the product of the width-``2·d_head`` factors
  ``[W_Q^t, −W_Q^0]`` and ``[W_K^t, W_K^0]`` (both folded), so the random init's rank does not mask
  what training wrote (a change below 1e-9 of the kernel's norm is round-off: rank 0). Every rank estimator (``spectra/estimators.py``) on each: keys ``K_<estimator>``, ``dK_<estimator>``.
- ``qk_norm``: ``sqrt(||W_Q||² + ||W_K||²)`` (folded) per head — a statistic that drifts over
  training and serves as C12's control.
- **Realised mixers** on fixed held-out windows: :func:`~entropic_bound.language_models.probes.structure.structure_summary`.
- **Content ablation** (:func:`content_ablation_bits`): how much the held-out loss rises when one
  head's pattern is replaced by its mean over the windows — its content-independent part — so a
  head whose attention moves with content but whose movement nothing downstream uses reads ≈ 0;
  :func:`joint_ablation_bits` ablates every subset of heads together (a routing split over heads).

Every value is an array ``(E, n_layers, n_heads)``.
"""

from __future__ import annotations

import numpy as np
import torch

from ...inspect.logit_field import LEVEL, MAX_DIMS, fit_layer
from ...spectra import estimate_all, factored_singular_values
from ..model.ensemble import EnsembleLM, _ln
from .structure import structure_summary


def _ranks(sv: np.ndarray, prefix: str) -> dict[str, np.ndarray]:
    core = sv.shape[-1]
    return {f"{prefix}_{k}": np.asarray(v, float) for k, v in estimate_all(sv, shape=(core, core)).items()}


class KernelProbe:
    """Kernel measures of an ensemble relative to its initial factors (captured at construction)."""

    def __init__(self, model: EnsembleLM) -> None:
        self.init = model.qk_factors(fold_ln=True)  # (E, L, H, d, dk) each

    def __call__(self, model: EnsembleLM) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Folded kernel spectra ``(E, L, H, d_head)`` and ``{K_*, dK_*, qk_norm}`` each ``(E, L, H)``."""
        W_Q, W_K = model.qk_factors(fold_ln=True)
        Q0, K0 = self.init
        sv = factored_singular_values(W_Q, W_K)  # (E, L, H, dk)
        dsv = factored_singular_values(np.concatenate([W_Q, -Q0], -1), np.concatenate([W_K, K0], -1))
        unchanged = dsv[..., :1] <= 1e-9 * np.maximum(sv[..., :1], 1e-300)  # round-off only: rank 0
        dsv = np.where(unchanged, 0.0, dsv)
        stats = {**_ranks(sv, "K"), **_ranks(dsv, "dK")}
        stats["qk_norm"] = np.sqrt((W_Q**2).sum(axis=(-2, -1)) + (W_K**2).sum(axis=(-2, -1)))
        return sv, stats


@torch.no_grad()
def ensemble_mixers(model: EnsembleLM, idx: torch.Tensor) -> np.ndarray:
    """Attention patterns on ``idx (E, B, n)``: ``(E, B, n_layers, n_heads, n, n)`` float64."""
    was_training = model.training
    model.eval()
    _, mixers = model(idx.to(next(model.parameters()).device), return_mixers=True)
    model.train(was_training)
    return mixers.double().cpu().numpy()


@torch.no_grad()
def _ablations(model: EnsembleLM, idx: torch.Tensor, subsets: list[list[tuple[int, int]]]) -> np.ndarray:
    """Per member and subset of heads ``[(layer, head), ...]``, the rise in mean next-token loss
    (bits/token) on ``idx (E, B, n)`` (targets: the next token inside each window) when those heads'
    patterns are replaced together by their mean patterns over the ``B`` windows: ``(E, len(subsets))``
    (0 for the empty subset)."""
    was_training, device = model.training, next(model.parameters()).device
    model.eval()
    x, y = idx[..., :-1].to(device), idx[..., 1:].to(device)  # (E, B, n - 1)
    E, B, _ = x.shape

    def bits(logits: torch.Tensor) -> torch.Tensor:  # (E,)
        nll = torch.nn.functional.cross_entropy(logits.flatten(0, 2), y.reshape(-1), reduction="none")
        return nll.view(E, -1).mean(dim=1) / np.log(2.0)

    logits, mixers = model(x, return_mixers=True)  # mixers (E, B, L, H, n, n)
    base, mean = bits(logits), mixers.mean(dim=1, keepdim=True)
    out = torch.zeros(E, len(subsets), dtype=torch.float64)
    for i, subset in enumerate(subsets):
        if subset:
            patch = [(layer, head, mean[:, :, layer, head].expand(E, B, -1, -1)) for layer, head in subset]
            out[:, i] = (bits(model(x, patch=patch)) - base).double().cpu()
    model.train(was_training)
    return out.numpy()


def _heads_of(model: EnsembleLM) -> list[tuple[int, int]]:
    """Every head as ``(layer, head)``, in the order ``layer · n_heads + head``."""
    return [(layer, head) for layer in range(len(model.blocks)) for head in range(model.n_heads)]


def content_ablation_bits(model: EnsembleLM, idx: torch.Tensor) -> np.ndarray:
    """Per head, the rise in mean next-token loss (bits/token) on ``idx (E, B, n)`` when that head's
    pattern alone is replaced by its mean pattern over the windows: ``(E, L, H)``. The mean pattern
    keeps every position-only prior (sink, band, absolute position), so the rise is what the head's
    *content* routing contributes."""
    singles = [[h] for h in _heads_of(model)]
    return _ablations(model, idx, singles).reshape(idx.shape[0], len(model.blocks), model.n_heads)


#: The joint ablation measures every subset of a model's heads up to this many heads (2⁸ = 256
#: forward passes of the probe windows); a model with more heads has none.
JOINT_MAX_HEADS = 8


def joint_ablation_bits(model: EnsembleLM, idx: torch.Tensor) -> np.ndarray | None:
    """Per member, the loss rise (bits/token) of every subset of heads ablated together: ``(E, 2^(L·H))``,
    entry ``m`` the subset of heads ``i = layer · n_heads + head`` whose bit ``i`` is set in ``m``. A
    model's routing may be split over several heads, each of which alone the others cover; the
    subset of its content heads (known only once a verdict's thresholds categorise them) ablated
    together says what that routing carries. None above :data:`JOINT_MAX_HEADS` heads."""
    heads = _heads_of(model)
    if len(heads) > JOINT_MAX_HEADS:
        return None
    subsets = [[h for i, h in enumerate(heads) if m >> i & 1] for m in range(2 ** len(heads))]
    return _ablations(model, idx, subsets)


def mixer_stats(
    model: EnsembleLM, idx: torch.Tensor, *, window: int, answer_rows: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Structure scores of every member's realised mixers: ``{name: (E, L, H)}``; ``answer_rows
    (E, B, n)`` marks the query rows that predict an answer token (all False: no answer score)."""
    mixers = ensemble_mixers(model, idx)  # (E, B, L, H, n, n)
    rows = [None] * len(mixers) if answer_rows is None else list(answer_rows)
    per_member = [
        structure_summary(m, causal=True, window=window, answer_rows=r) for m, r in zip(mixers, rows)
    ]
    return {k: np.stack([s[k] for s in per_member]) for k in per_member[0]}


def ensemble_lm_fields(
    model, idx, *, max_dims: int = MAX_DIMS, level: float = LEVEL
) -> list[list[list[dict]]]:
    """The fit for every head of an :class:`entropic_bound.language_models.model.ensemble.EnsembleLM` on tokens ``idx (E, B, n)``:
    ``[member][layer][head]`` dicts of :data:`LOGIT_FIELD_COLUMNS` (+ ``logit_field_dims``).

    Each block's input is captured by a forward pre-hook and passed through the block's own first
    LayerNorm (``x̃``, what its query and key projections see); the patterns come from the same pass.
    """
    inputs: list[torch.Tensor] = []
    handles = [
        b.register_forward_pre_hook(lambda blk, args: inputs.append(_ln(args[0], blk.ln1_w, blk.ln1_b)))
        for b in model.blocks
    ]
    try:
        with torch.no_grad():
            _, mixers = model(torch.as_tensor(idx), return_mixers=True)  # (E, B, L, H, n, n)
    finally:
        for handle in handles:
            handle.remove()
    x = torch.stack(inputs, dim=2).double().cpu().numpy()  # (E, B, L, n, d)
    A = mixers.double().cpu().numpy()
    return [
        [
            fit_layer(x[e, :, layer], A[e, :, layer], causal=True, max_dims=max_dims, level=level)
            for layer in range(x.shape[2])
        ]
        for e in range(x.shape[0])
    ]

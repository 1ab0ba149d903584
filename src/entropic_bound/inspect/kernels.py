"""Per-head static kernels ``K_h = W_Q^h (W_K^kv)ᵀ`` and their spectra, computed from the factors.

The kernel is a ``d_model × d_model`` matrix of rank at most ``d_head``; its nonzero singular values
are those of a ``d_head × d_head`` core (QR of each factor, SVD of the core; TransformerLens
``FactoredMatrix``), so the ``d_model × d_model`` product is never formed. Everything is float64.

Layer norm folding (``fold_ln=True``): a norm ``LN(x) = γ ⊙ x̂ + β`` feeding the attention gives
``q = x̂ diag(γ) W_Q + (β W_Q + b_Q)``, so the folded kernel is ``diag(γ) W_Q^h (W_K^kv)ᵀ diag(γ)``
and the shift ``β`` moves into the biases. RMSNorm has ``γ`` only. Biases never enter the kernel;
their norms are reported separately (``b_Q_norm``, ``b_K_norm``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple

import numpy as np

from .arch import ArchConfig, LayerWeights, read_layer


class HeadKernel(NamedTuple):
    """One head's factors: ``W_Q (d_model, d_head)``, ``W_K (d_model, d_head)`` of its key head ``kv_head``."""

    layer: int
    head: int
    kv_head: int
    W_Q: np.ndarray
    W_K: np.ndarray


class LayerHeads(NamedTuple):
    """A layer's per-head factors, key heads already expanded to query heads (GQA).

    ``W_Q``, ``W_K``: ``(n_heads, d_model, d_head)``; ``b_Q``, ``b_K``: ``(n_heads, d_head)`` (zeros if absent).
    """

    W_Q: np.ndarray
    W_K: np.ndarray
    b_Q: np.ndarray
    b_K: np.ndarray


def _fold(W: np.ndarray, b: np.ndarray | None, lw: LayerWeights) -> tuple[np.ndarray, np.ndarray]:
    """Fold the preceding norm into ``W (d_model, out)``: ``diag(γ) W`` and bias ``b + β W``."""
    bias = np.zeros(W.shape[1]) if b is None else b
    if lw.ln_beta is not None:
        bias = bias + lw.ln_beta @ W
    if lw.ln_gamma is not None:
        W = lw.ln_gamma[:, None] * W
    return W, bias


def split_heads(lw: LayerWeights, cfg: ArchConfig, *, fold_ln: bool = False) -> LayerHeads:
    """Split a layer's ``W_Q``/``W_K`` into heads; query head ``h`` gets key head ``cfg.kv_head(h)``."""
    if fold_ln:
        W_Q, b_Q = _fold(lw.W_Q, lw.b_Q, lw)
        W_K, b_K = _fold(lw.W_K, lw.b_K, lw)
    else:
        W_Q, W_K = lw.W_Q, lw.W_K
        b_Q = np.zeros(W_Q.shape[1]) if lw.b_Q is None else lw.b_Q
        b_K = np.zeros(W_K.shape[1]) if lw.b_K is None else lw.b_K
    H, H_kv, d, d_head = cfg.n_heads, cfg.n_kv_heads, cfg.d_model, cfg.d_head
    W_Q = W_Q.reshape(d, H, d_head).transpose(1, 0, 2)  # (H, d_model, d_head)
    W_K = W_K.reshape(d, H_kv, d_head).transpose(1, 0, 2)  # (H_kv, d_model, d_head)
    kv = np.array([cfg.kv_head(h) for h in range(H)])  # (H,)
    return LayerHeads(W_Q, W_K[kv], b_Q.reshape(H, d_head), b_K.reshape(H_kv, d_head)[kv])


def head_kernels(
    weights: Mapping[str, np.ndarray], cfg: ArchConfig, *, fold_ln: bool = False
) -> Iterator[HeadKernel]:
    """Yield ``(layer, head, kv_head, W_Q_h, W_K_h)`` for every head, reading one layer at a time.

    ``weights`` maps checkpoint key names to arrays (a dict, or a lazy
    :class:`~entropic_bound.inspect.checkpoint.SafetensorsWeights`); ``cfg`` from
    :func:`~entropic_bound.inspect.arch.arch_config`. The kernel is ``W_Q_h @ W_K_h.T``.
    """
    for layer in range(cfg.n_layers):
        heads = split_heads(read_layer(weights, cfg, layer), cfg, fold_ln=fold_ln)
        for h in range(cfg.n_heads):
            yield HeadKernel(layer, h, cfg.kv_head(h), heads.W_Q[h], heads.W_K[h])


def kernel_singular_values(W_Q: np.ndarray, W_K: np.ndarray) -> np.ndarray:
    """Singular values of ``W_Q @ W_Kᵀ`` from the factors: ``(..., d_model, d_head)`` x2 → ``(..., d_head)``."""
    from ..spectra import factored_singular_values

    return factored_singular_values(W_Q, W_K)


def kernel_spectra(
    weights: Mapping[str, np.ndarray],
    cfg: ArchConfig,
    *,
    fold_ln: bool = False,
    on_layer: Callable[[int], None] | None = None,
) -> dict[str, np.ndarray]:
    """Spectra and bias norms of every head's static kernel, streamed layer by layer.

    Returns ``{"singular_values": (n_layers, n_heads, d_head), "b_Q_norm": (n_layers, n_heads),
    "b_K_norm": (n_layers, n_heads)}``, float64; ``on_layer(layer)`` is called after each layer.
    """
    L, H = cfg.n_layers, cfg.n_heads
    sv = np.zeros((L, H, cfg.d_head))
    b_Q_norm, b_K_norm = np.zeros((L, H)), np.zeros((L, H))
    for layer in range(L):
        heads = split_heads(read_layer(weights, cfg, layer), cfg, fold_ln=fold_ln)
        sv[layer] = kernel_singular_values(heads.W_Q, heads.W_K)  # (H, d_head)
        b_Q_norm[layer] = np.linalg.norm(heads.b_Q, axis=-1)
        b_K_norm[layer] = np.linalg.norm(heads.b_K, axis=-1)
        if on_layer is not None:
            on_layer(layer)
    return {"singular_values": sv, "b_Q_norm": b_Q_norm, "b_K_norm": b_K_norm}

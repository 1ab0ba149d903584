"""What an architecture adapter declares, the shapes it produces, and the registry of adapters.

Conventions (TransformerLens): a token is a row vector ``x`` of width ``d_model``; head ``h`` forms
``q = x W_Q^h + b_Q^h`` with ``W_Q^h`` of shape ``(d_model, d_head)``, and the attention score of
query ``x`` on key ``y`` is ``x W_Q^h (W_K^kv)ᵀ yᵀ`` plus bias terms. The static kernel is
``K_h = W_Q^h (W_K^kv)ᵀ``, ``kv = h // (n_heads / n_kv_heads)`` (grouped-query attention).

An adapter (one file in this package, declared in ``registry.ARCHITECTURES``) knows where one
family's tensors live: the key of layer ``i``'s query weight (``anchor``, used to find the key
prefix and count layers), the ``config.json`` field names, the query weight's shape, and how to read
a layer's ``W_Q``, ``W_K``, biases and the norm feeding its attention.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ConfigFields:
    """``config.json`` names of the head count, layer count, width, and (if any) key heads / head width."""

    n_heads: str
    n_layers: str
    d_model: str
    n_kv_heads: str | None = None
    d_head: str | None = None


@dataclass(frozen=True)
class ArchConfig:
    """Shapes of one checkpoint's attention: ``n_heads`` query heads of width ``d_head`` over ``d_model``."""

    arch: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    d_head: int
    prefix: str = ""
    causal: bool = True
    rope: bool = False

    def kv_head(self, head: int) -> int:
        """Key/value head used by query head ``head``: ``head // (n_heads / n_kv_heads)``."""
        return head // (self.n_heads // self.n_kv_heads)


@dataclass(frozen=True)
class LayerWeights:
    """One layer's attention inputs, float64. ``W_Q (d_model, n_heads d_head)``, ``W_K (d_model, n_kv d_head)``."""

    W_Q: np.ndarray
    W_K: np.ndarray
    b_Q: np.ndarray | None  # (n_heads d_head,)
    b_K: np.ndarray | None  # (n_kv d_head,)
    ln_gamma: np.ndarray | None  # (d_model,) scale of the norm feeding this attention
    ln_beta: np.ndarray | None  # (d_model,) shift (LayerNorm only)


class Architecture:
    """One model family's layout. Subclasses set the class attributes and implement :meth:`read_layer`."""

    anchor: str  # key of layer {i}'s query weight, after the prefix
    fields: ConfigFields
    causal: bool = True
    rope: bool = False
    notes: tuple[str, ...] = ()
    #: GGUF tensor stem → transformers name (``attn_q`` → ``self_attn.q_proj`` inside ``blk.{i}``, or a
    #: top-level stem such as ``token_embd``); empty when the family is not read from GGUF files.
    gguf_tensors: Mapping[str, str] = {}
    #: transformers names whose rows llama.cpp permuted per head → the config field of their head count.
    gguf_permuted: Mapping[str, str] = {}
    #: added to every ``*norm.weight`` read from GGUF (Gemma: llama.cpp stores ``1 + w``, transformers ``w``).
    gguf_norm_offset: float = 0.0
    #: the ``config.json`` ``model_type`` values this adapter reads (default: its registered name).
    model_types: tuple[str, ...] = ()

    def d_model(self, anchor_shape: tuple[int, ...]) -> int:
        """Model width from the query weight's shape; ``nn.Linear`` stores ``(out, in)``."""
        return anchor_shape[1]

    def anchor_shape(self, cfg: ArchConfig) -> tuple[int, ...]:
        """The shape layer 0's query weight must have under ``cfg``."""
        return (cfg.n_heads * cfg.d_head, cfg.d_model)

    def read_layer(self, weights: Mapping[str, np.ndarray], cfg: ArchConfig, layer: int) -> LayerWeights:
        raise NotImplementedError

    def qk_keys(self, cfg: ArchConfig, layer: int) -> tuple[str, str]:
        """The keys of layer ``layer``'s query and key weight tensors (the same key when fused)."""
        query = cfg.prefix + self.anchor.format(i=layer)
        return query, query


def f64(weights: Mapping[str, np.ndarray], key: str) -> np.ndarray:
    return np.asarray(weights[key], dtype=np.float64)


def optional(weights: Mapping[str, np.ndarray], key: str) -> np.ndarray | None:
    return f64(weights, key) if key in weights else None


def linear_layer(weights: Mapping[str, np.ndarray], q: str, k: str, norm: str) -> LayerWeights:
    """A layer whose query/key are ``nn.Linear`` (weight ``(out, in)``, so ``W = weightᵀ``) named ``q`` and
    ``k`` (``.weight``, optional ``.bias``), fed by the norm ``norm`` (``.weight``, optional ``.bias``)."""
    return LayerWeights(
        f64(weights, q + ".weight").T,
        f64(weights, k + ".weight").T,
        optional(weights, q + ".bias"),
        optional(weights, k + ".bias"),
        optional(weights, norm + ".weight"),
        optional(weights, norm + ".bias"),
    )

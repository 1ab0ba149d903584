"""TransformerLens ``HookedTransformer`` (a model object in memory): ``blocks.{i}.attn.W_Q`` per head.

TransformerLens already stores the factors in this package's notation: ``W_Q`` of shape
``(n_heads, d_model, d_head)``, ``W_K`` the same (``_W_K`` with ``n_key_value_heads`` heads under
grouped-query attention), biases ``b_Q``/``b_K`` ``(heads, d_head)``, and the norm feeding the attention
``blocks.{i}.ln1.{w,b}`` (absent when TransformerLens folded it into the weights). Its causal
attention is assumed (``attention_dir="causal"``); a rotary model's kernel leaves the rotation out.
"""

from __future__ import annotations

import numpy as np

from .base import Architecture, ConfigFields, LayerWeights, f64, optional

HOOKED_NOTE = (
    "HookedTransformer: the static kernel W_Q W_K^T leaves out any rotary rotation "
    "(cfg.positional_embedding_type == 'rotary')."
)


def _flat(per_head: np.ndarray) -> np.ndarray:
    """``(heads, d_model, d_head)`` → ``(d_model, heads · d_head)``, head-major columns as nn.Linear's."""
    return per_head.transpose(1, 0, 2).reshape(per_head.shape[1], -1)


class HookedTransformer(Architecture):
    """TransformerLens HookedTransformer objects (per-head W_Q, W_K; GQA through _W_K)."""

    anchor = "blocks.{i}.attn.W_Q"
    fields = ConfigFields("n_heads", "n_layers", "d_model", "n_key_value_heads", "d_head")
    notes = (HOOKED_NOTE,)

    def anchor_shape(self, cfg):
        return (cfg.n_heads, cfg.d_model, cfg.d_head)

    def qk_keys(self, cfg, layer):
        attn = f"{cfg.prefix}blocks.{layer}.attn."
        return attn + "W_Q", attn + ("_W_K" if cfg.n_kv_heads != cfg.n_heads else "W_K")

    def read_layer(self, weights, cfg, layer) -> LayerWeights:
        attn, ln = f"{cfg.prefix}blocks.{layer}.attn.", f"{cfg.prefix}blocks.{layer}.ln1."
        grouped = "_" if f"{attn}_W_K" in weights else ""
        b_Q, b_K = optional(weights, attn + "b_Q"), optional(weights, f"{attn}{grouped}b_K")
        return LayerWeights(
            _flat(f64(weights, attn + "W_Q")),
            _flat(f64(weights, f"{attn}{grouped}W_K")),
            None if b_Q is None else b_Q.ravel(),
            None if b_K is None else b_K.ravel(),
            optional(weights, ln + "w"),
            optional(weights, ln + "b"),
        )

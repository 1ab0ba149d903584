"""GPT-2 (pre-LN decoder): ``h.{i}.attn.c_attn.{weight,bias}``, pre-norm ``h.{i}.ln_1``.

``Conv1D`` stores ``(in, out) = (d_model, 3 d_model)``, fusing Q, K, V along columns, so
``W_Q = weight[:, :d]`` and ``W_K = weight[:, d:2d]``; only those columns are read.
"""

from __future__ import annotations

from .base import Architecture, ConfigFields, LayerWeights, f64, optional


class Gpt2(Architecture):
    """GPT-2 decoders (pre-LN, fused c_attn)."""

    anchor = "h.{i}.attn.c_attn.weight"
    fields = ConfigFields("n_head", "n_layer", "n_embd")

    def d_model(self, anchor_shape):
        return anchor_shape[0]

    def anchor_shape(self, cfg):
        return (cfg.d_model, 3 * cfg.n_heads * cfg.d_head)

    def read_layer(self, weights, cfg, layer) -> LayerWeights:
        key, d = f"{cfg.prefix}h.{layer}.attn.c_attn.", cfg.n_heads * cfg.d_head
        if hasattr(weights, "columns"):  # stream only the Q and K columns
            W_QK = weights.columns(key + "weight", 0, 2 * d)  # (d_model, 2d)
        else:
            W_QK = f64(weights, key + "weight")[:, : 2 * d]
        bias = optional(weights, key + "bias")
        ln = f"{cfg.prefix}h.{layer}.ln_1."
        return LayerWeights(
            W_QK[:, :d],
            W_QK[:, d:],
            None if bias is None else bias[:d],
            None if bias is None else bias[d : 2 * d],
            optional(weights, ln + "weight"),
            optional(weights, ln + "bias"),
        )

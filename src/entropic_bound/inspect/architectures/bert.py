"""BERT (post-LN encoder): ``encoder.layer.{i}.attention.self.{query,key}.{weight,bias}``.

``nn.Linear`` weights are ``(out, in)``, so ``W_Q = weightᵀ``. Post-LN: the norm before layer ``i``'s
attention is ``embeddings.LayerNorm`` (``i = 0``) or ``encoder.layer.{i-1}.output.LayerNorm``.
Bidirectional attention (not causal). Encoders with the same layout under other names (MPNet) set
``attention``, ``query`` and ``key``.
"""

from __future__ import annotations

from .base import Architecture, ConfigFields, LayerWeights, linear_layer


class Bert(Architecture):
    """BERT encoders (post-LN, bidirectional)."""

    attention, query, key = "attention.self.", "query", "key"  # inside encoder.layer.{i}.
    anchor = "encoder.layer.{i}.attention.self.query.weight"
    fields = ConfigFields("num_attention_heads", "num_hidden_layers", "hidden_size")
    causal = False

    def qk_keys(self, cfg, layer):
        base = f"{cfg.prefix}encoder.layer.{layer}.{self.attention}"
        return f"{base}{self.query}.weight", f"{base}{self.key}.weight"

    def read_layer(self, weights, cfg, layer) -> LayerWeights:
        p = cfg.prefix
        base = f"{p}encoder.layer.{layer}.{self.attention}"
        norm = f"{p}embeddings.LayerNorm" if layer == 0 else f"{p}encoder.layer.{layer - 1}.output.LayerNorm"
        return linear_layer(weights, base + self.query, base + self.key, norm)

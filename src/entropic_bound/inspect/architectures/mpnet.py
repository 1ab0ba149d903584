"""MPNet (post-LN encoder with relative position buckets): ``encoder.layer.{i}.attention.attn.{q,k}``.

``nn.Linear`` weights ``(out, in)``, so ``W_Q = weightᵀ``, with biases. Post-LN as BERT: the norm before
layer ``i``'s attention is ``embeddings.LayerNorm`` (``i = 0``) or ``encoder.layer.{i-1}.output.LayerNorm``.
Every layer adds one learned bias per head and relative-distance bucket
(``encoder.relative_attention_bias``, shared by the layers) to the logits: a Toeplitz term beside the
kernel that the static kernel leaves out (:data:`MPNET_NOTE`). Bidirectional attention (not causal).
"""

from __future__ import annotations

from .base import Architecture, ConfigFields, LayerWeights, linear_layer

MPNET_NOTE = (
    "MPNet: each head adds a learned bias per relative-distance bucket to its logits; the static kernel "
    "W_Q W_K^T leaves it out."
)


class MPNet(Architecture):
    """MPNet encoders (post-LN, bidirectional, relative position buckets)."""

    anchor = "encoder.layer.{i}.attention.attn.q.weight"
    fields = ConfigFields("num_attention_heads", "num_hidden_layers", "hidden_size")
    causal = False
    notes = (MPNET_NOTE,)

    def qk_keys(self, cfg, layer):
        base = f"{cfg.prefix}encoder.layer.{layer}.attention.attn."
        return base + "q.weight", base + "k.weight"

    def read_layer(self, weights, cfg, layer) -> LayerWeights:
        p = cfg.prefix
        base = f"{p}encoder.layer.{layer}.attention.attn."
        norm = f"{p}embeddings.LayerNorm" if layer == 0 else f"{p}encoder.layer.{layer - 1}.output.LayerNorm"
        return linear_layer(weights, base + "q", base + "k", norm)

"""MPNet (post-LN encoder with relative position buckets): ``encoder.layer.{i}.attention.attn.{q,k}``.

BERT's layout under other names (``nn.Linear`` with biases; the norm before layer ``i``'s attention is
``embeddings.LayerNorm`` or ``encoder.layer.{i-1}.output.LayerNorm``). Every layer adds one learned
bias per head and relative-distance bucket (``encoder.relative_attention_bias``, shared by the layers)
to the logits: a Toeplitz term beside the kernel that the static kernel leaves out (:data:`MPNET_NOTE`).
"""

from __future__ import annotations

from .bert import Bert

MPNET_NOTE = (
    "MPNet: each head adds a learned bias per relative-distance bucket to its logits; the static kernel "
    "W_Q W_K^T leaves it out."
)


class MPNet(Bert):
    """MPNet encoders (post-LN, bidirectional, relative position buckets)."""

    attention, query, key = "attention.attn.", "q", "k"
    anchor = "encoder.layer.{i}.attention.attn.q.weight"
    notes = (MPNET_NOTE,)

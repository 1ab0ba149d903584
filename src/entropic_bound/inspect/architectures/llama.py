"""Llama (pre-RMSNorm decoder, grouped-query attention, rotary positions).

``layers.{i}.self_attn.{q,k}_proj.weight``: ``nn.Linear`` ``(out, in)`` with ``n_kv_heads`` key heads;
biases when present (``q_proj.bias``); RMSNorm ``layers.{i}.input_layernorm.weight`` (no shift).
``head_dim`` may differ from ``d_model / n_heads``. Rotary embeddings rotate q and k by position
before the product: the static kernel leaves the rotation out (see :data:`ROPE_NOTE`).
"""

from __future__ import annotations

from .base import Architecture, ConfigFields, LayerWeights, linear_layer

ROPE_NOTE = "RoPE: the static kernel W_Q W_K^T leaves out the position-dependent rotation of q and k."


class Llama(Architecture):
    """Llama decoders (RMSNorm, GQA, RoPE)."""

    anchor = "layers.{i}.self_attn.q_proj.weight"
    fields = ConfigFields(
        "num_attention_heads", "num_hidden_layers", "hidden_size", "num_key_value_heads", "head_dim"
    )
    rope = True
    notes = (ROPE_NOTE,)

    def read_layer(self, weights, cfg, layer) -> LayerWeights:
        base = f"{cfg.prefix}layers.{layer}."
        attn = base + "self_attn."
        return linear_layer(weights, attn + "q_proj", attn + "k_proj", base + "input_layernorm")

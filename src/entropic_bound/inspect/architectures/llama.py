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
    gguf_tensors = {
        "attn_q": "self_attn.q_proj",
        "attn_k": "self_attn.k_proj",
        "attn_v": "self_attn.v_proj",
        "attn_output": "self_attn.o_proj",
        "attn_norm": "input_layernorm",
        "ffn_norm": "post_attention_layernorm",
        "ffn_gate": "mlp.gate_proj",
        "ffn_up": "mlp.up_proj",
        "ffn_down": "mlp.down_proj",
        "token_embd": "model.embed_tokens",
        "output_norm": "model.norm",
        "output": "lm_head",
    }
    gguf_permuted = {"self_attn.q_proj.": "num_attention_heads", "self_attn.k_proj.": "num_key_value_heads"}

    def qk_keys(self, cfg, layer):
        attn = f"{cfg.prefix}layers.{layer}.self_attn."
        return attn + "q_proj.weight", attn + "k_proj.weight"

    def read_layer(self, weights, cfg, layer) -> LayerWeights:
        base = f"{cfg.prefix}layers.{layer}."
        attn = base + "self_attn."
        return linear_layer(weights, attn + "q_proj", attn + "k_proj", base + "input_layernorm")

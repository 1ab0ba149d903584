"""Gemma 3 (pre- and post-RMSNorm decoder, QK-norm, grouped-query attention, RoPE, sliding-window layers).

``layers.{i}.self_attn.{q,k}_proj.weight`` as Llama's, but ``head_dim`` (256 in the 270M model) is not
``d_model / n_heads``, and each head's query and key pass an RMSNorm over ``head_dim`` (``q_norm``,
``k_norm``) before the product. Gemma's norms scale by ``1 + weight`` (transformers stores ``weight``;
llama.cpp stores ``1 + weight``, :mod:`..gguf` subtracts the 1 back). The static kernel of head ``h`` is
``W_Q^h diag(g_q ⊙ g_k) W_K^hᵀ`` with the gains ``g = 1 + weight``: the per-token RMS division of q and
k is a positive scalar per query and per key, and the rotation is position-dependent; both are left
out (:data:`GEMMA_NOTE`). Sliding-window layers attend within 512 tokens, more than a text window.
"""

from __future__ import annotations

import numpy as np

from .base import Architecture, LayerWeights, f64, linear_layer
from .llama import ROPE_NOTE, Llama

GEMMA_NOTE = (
    "Gemma 3 QK-norm: the kernel includes the q_norm and k_norm gains (1 + w); their per-token RMS "
    "division (a positive scalar per query and key) is left out, so logit-field fits are not exactly bilinear."
)


class Gemma3(Architecture):
    """Gemma 3 decoders (QK-norm, norms as 1 + w, head_dim ≠ d_model / n_heads, GQA, RoPE)."""

    anchor = Llama.anchor
    fields = Llama.fields
    rope = True
    notes = (ROPE_NOTE, GEMMA_NOTE)
    gguf_tensors = {
        **Llama.gguf_tensors,
        "attn_q_norm": "self_attn.q_norm",
        "attn_k_norm": "self_attn.k_norm",
        "post_attention_norm": "post_attention_layernorm",
        "ffn_norm": "pre_feedforward_layernorm",
        "post_ffw_norm": "post_feedforward_layernorm",
    }
    #: llama.cpp stores Gemma's norm weights as 1 + w: this is added to them when read from GGUF.
    gguf_norm_offset = -1.0
    model_types = ("gemma3", "gemma3_text")

    def qk_keys(self, cfg, layer):
        return Llama().qk_keys(cfg, layer)

    def read_layer(self, weights, cfg, layer) -> LayerWeights:
        base = f"{cfg.prefix}layers.{layer}."
        attn = base + "self_attn."
        lw = linear_layer(weights, attn + "q_proj", attn + "k_proj", base + "input_layernorm")
        g_q = 1.0 + f64(weights, attn + "q_norm.weight")  # (d_head,)
        g_k = 1.0 + f64(weights, attn + "k_norm.weight")
        return LayerWeights(
            lw.W_Q * np.tile(g_q, cfg.n_heads),  # (d_model, n_heads d_head)
            lw.W_K * np.tile(g_k, cfg.n_kv_heads),
            None,
            None,
            None if lw.ln_gamma is None else 1.0 + lw.ln_gamma,
            None,
        )

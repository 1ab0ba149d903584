"""Qwen2 (Llama's layout with query/key/value biases; grouped-query attention, RoPE).

``layers.{i}.self_attn.{q,k}_proj.{weight,bias}``: ``nn.Linear`` ``(out, in)``, ``n_heads`` query heads
sharing ``n_kv_heads`` key heads in consecutive groups (query head ``h`` reads key head
``h // (n_heads / n_kv_heads)``), pre-RMSNorm ``layers.{i}.input_layernorm.weight``: Llama's reader,
which takes the biases where present. They enter the logits as ``x W_Q b_Kᵀ + b_Q W_Kᵀ yᵀ + b_Q b_Kᵀ``
beside the kernel: reported as ``b_Q_norm``/``b_K_norm``, never folded into it. llama.cpp stores
Qwen2's query and key rows in transformers' order (its converter permutes Llama's only), so nothing is
un-permuted on reading GGUF; the biases follow their weights (``attn_q.bias`` → ``q_proj.bias``).
"""

from __future__ import annotations

from .llama import ROPE_NOTE, Llama

QWEN2_BIAS_NOTE = (
    "Qwen2: the query and key biases shift the logits beside the kernel W_Q W_K^T (columns b_Q_norm, "
    "b_K_norm); the static kernel leaves them out."
)


class Qwen2(Llama):
    """Qwen2 decoders (RMSNorm, GQA with query/key biases, RoPE)."""

    notes = (ROPE_NOTE, QWEN2_BIAS_NOTE)
    gguf_permuted = {}

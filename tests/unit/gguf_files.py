"""Small GGUF files written with ``gguf.GGUFWriter`` for the inspect tests: a tiny Llama in llama.cpp's
layout (query/key rows permuted for its rotary kernel), float or block-quantised."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def llama_cpp_permute(weight: np.ndarray, n_heads: int) -> np.ndarray:
    """llama.cpp's converter (convert_hf_to_gguf.py, ``LlamaModel.permute``): transformers' rows → its order."""
    return (
        weight.reshape(n_heads, 2, weight.shape[0] // n_heads // 2, *weight.shape[1:])
        .swapaxes(1, 2)
        .reshape(weight.shape)
    )


def tiny_llama_tensors(rng: np.random.Generator, *, d=64, heads=4, kv_heads=2, layers=2, ffn=64, vocab=300):
    """transformers-named float32 tensors of a tiny Llama (``model.layers.{i}.self_attn.q_proj.weight``, …)."""
    d_head = d // heads
    t = {"model.embed_tokens.weight": rng.normal(size=(vocab, d)) * 0.02, "model.norm.weight": np.ones(d)}
    for i in range(layers):
        p = f"model.layers.{i}."
        t[p + "self_attn.q_proj.weight"] = rng.normal(size=(heads * d_head, d)) * 0.1
        t[p + "self_attn.k_proj.weight"] = rng.normal(size=(kv_heads * d_head, d)) * 0.1
        t[p + "self_attn.v_proj.weight"] = rng.normal(size=(kv_heads * d_head, d)) * 0.1
        t[p + "self_attn.o_proj.weight"] = rng.normal(size=(d, heads * d_head)) * 0.1
        t[p + "mlp.gate_proj.weight"] = rng.normal(size=(ffn, d)) * 0.1
        t[p + "mlp.up_proj.weight"] = rng.normal(size=(ffn, d)) * 0.1
        t[p + "mlp.down_proj.weight"] = rng.normal(size=(d, ffn)) * 0.1
        t[p + "input_layernorm.weight"] = 1 + rng.normal(size=d) * 0.1
        t[p + "post_attention_layernorm.weight"] = np.ones(d)
    t["lm_head.weight"] = rng.normal(size=(vocab, d)) * 0.02
    return {k: v.astype(np.float32) for k, v in t.items()}


GGUF_NAMES = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "input_layernorm": "attn_norm",
    "post_attention_layernorm": "ffn_norm",
    "self_attn.q_norm": "attn_q_norm",
    "self_attn.k_norm": "attn_k_norm",
}
TOP_NAMES = {"model.embed_tokens": "token_embd", "model.norm": "output_norm", "lm_head": "output"}


def _gguf_name(name: str) -> str:
    stem, _, kind = name.rpartition(".")  # kind: weight or bias
    if stem in TOP_NAMES:
        return f"{TOP_NAMES[stem]}.{kind}"
    _, _, layer, rest = stem.split(".", 3)
    return f"blk.{layer}.{GGUF_NAMES[rest]}.{kind}"


def quantized(weight: np.ndarray, qtype) -> np.ndarray:
    """``weight``'s bytes as ``qtype``: gguf's quantiser, or for ``Q4_K`` (which gguf cannot write) ours."""
    import gguf

    if qtype == gguf.GGMLQuantizationType.Q4_K:
        from entropic_bound.inspect.kquants import quantize_q4_k

        return quantize_q4_k(weight)
    return gguf.quants.quantize(weight, qtype)


def write_tiny_llama_gguf(
    path: Path,
    tensors: dict[str, np.ndarray],
    *,
    heads=4,
    kv_heads=2,
    qtype=None,
    arch="llama",
    raw_qk_type=None,
    d_head=None,
) -> Path:
    """Write ``tensors`` (transformers names and order) as a llama.cpp GGUF: Q/K rows permuted, 2-D
    weights quantised to ``qtype`` (a ``GGMLQuantizationType``; None: float32). ``raw_qk_type`` stores the
    query/key weights' bytes under that type unconverted (a type a reader may not dequantise). With
    ``arch="gemma3"`` the rows stay in order and every norm weight is stored as ``1 + w``, as llama.cpp
    writes Gemma; with ``arch="qwen2"`` the rows stay in order (and biases are written as given);
    ``d_head`` is written as the key length."""
    import gguf

    d = tensors["model.embed_tokens.weight"].shape[1]
    layers = sum(k.endswith("q_proj.weight") for k in tensors)
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_block_count(layers)
    writer.add_context_length(64)
    writer.add_embedding_length(d)
    writer.add_feed_forward_length(tensors["model.layers.0.mlp.up_proj.weight"].shape[0])
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(tensors["model.embed_tokens.weight"].shape[0])
    if d_head is not None:
        writer.add_key_length(d_head)
    gemma, permuted = arch == "gemma3", arch == "llama"
    for name, weight in tensors.items():
        if gemma and name.endswith("norm.weight"):
            weight = weight + np.float32(1)
        elif name.endswith("q_proj.weight") and permuted:
            weight = llama_cpp_permute(weight, heads)
        elif name.endswith("k_proj.weight") and permuted:
            weight = llama_cpp_permute(weight, kv_heads)
        if raw_qk_type is not None and ("q_proj" in name or "k_proj" in name):
            block, size = gguf.GGML_QUANT_SIZES[raw_qk_type]
            raw = np.zeros((weight.shape[0], weight.shape[1] // block * size), dtype=np.uint8)
            writer.add_tensor(_gguf_name(name), raw, raw_dtype=raw_qk_type)
        elif qtype is not None and weight.ndim == 2:
            writer.add_tensor(_gguf_name(name), quantized(weight, qtype), raw_dtype=qtype)
        else:
            writer.add_tensor(_gguf_name(name), weight)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path

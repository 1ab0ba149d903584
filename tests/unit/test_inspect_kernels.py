"""Per-head kernels from the factors vs dense per-head products built from the raw HF-layout tensors."""

from __future__ import annotations

import re

import numpy as np
import pytest

from entropic_bound.errors import UserInputError
from entropic_bound.inspect import ARCHITECTURES, arch_config, head_kernels, kernel_spectra, kernel_table


def bert_weights(rng, L=2, H=4, d=16, prefix=""):
    w = {
        f"{prefix}embeddings.LayerNorm.weight": rng.normal(size=d),
        f"{prefix}embeddings.LayerNorm.bias": rng.normal(size=d),
    }
    for i in range(L):
        base = f"{prefix}encoder.layer.{i}."
        for name in ("query", "key"):
            w[base + f"attention.self.{name}.weight"] = rng.normal(size=(d, d))  # (out, in)
            w[base + f"attention.self.{name}.bias"] = rng.normal(size=d)
        w[base + "output.LayerNorm.weight"] = rng.normal(size=d)
        w[base + "output.LayerNorm.bias"] = rng.normal(size=d)
    return w, {"model_type": "bert", "num_attention_heads": H, "num_hidden_layers": L, "hidden_size": d}


def gpt2_weights(rng, L=2, H=4, d=16):
    w = {}
    for i in range(L):
        w[f"transformer.h.{i}.attn.c_attn.weight"] = rng.normal(size=(d, 3 * d))  # Conv1D (in, out)
        w[f"transformer.h.{i}.attn.c_attn.bias"] = rng.normal(size=3 * d)
        w[f"transformer.h.{i}.ln_1.weight"] = rng.normal(size=d)
        w[f"transformer.h.{i}.ln_1.bias"] = rng.normal(size=d)
    return w, {"model_type": "gpt2", "n_head": H, "n_layer": L, "n_embd": d}


def llama_weights(rng, L=2, H=4, H_kv=2, d=16, d_head=4):
    w = {}
    for i in range(L):
        w[f"model.layers.{i}.self_attn.q_proj.weight"] = rng.normal(size=(H * d_head, d))
        w[f"model.layers.{i}.self_attn.k_proj.weight"] = rng.normal(size=(H_kv * d_head, d))
        w[f"model.layers.{i}.input_layernorm.weight"] = rng.normal(size=d)
    cfg = {
        "model_type": "llama",
        "num_attention_heads": H,
        "num_key_value_heads": H_kv,
        "num_hidden_layers": L,
        "hidden_size": d,
        "head_dim": d_head,
    }
    return w, cfg


def qwen2_weights(rng, L=2, H=6, H_kv=2, d=24, d_head=4):
    """Llama's names with query/key biases (Qwen2)."""
    w, cfg = llama_weights(rng, L=L, H=H, H_kv=H_kv, d=d, d_head=d_head)
    for i in range(L):
        w[f"model.layers.{i}.self_attn.q_proj.bias"] = rng.normal(size=H * d_head)
        w[f"model.layers.{i}.self_attn.k_proj.bias"] = rng.normal(size=H_kv * d_head)
    return w, {**cfg, "model_type": "qwen2"}


def mpnet_weights(rng, L=2, H=4, d=16):
    """MPNet's names: BERT's post-LN layout, query/key as ``attention.attn.{q,k}``."""
    w, cfg = bert_weights(rng, L=L, H=H, d=d)
    renamed = {
        k.replace("attention.self.query", "attention.attn.q").replace(
            "attention.self.key", "attention.attn.k"
        ): v
        for k, v in w.items()
    }
    return renamed, {**cfg, "model_type": "mpnet"}


def gemma3_weights(rng, L=2, H=4, H_kv=1, d=16, d_head=8):
    """Gemma 3's names: Llama's plus per-head q_norm/k_norm gains stored as w (the norm scales by 1 + w)."""
    w, cfg = llama_weights(rng, L=L, H=H, H_kv=H_kv, d=d, d_head=d_head)
    for i in range(L):
        w[f"model.layers.{i}.self_attn.q_norm.weight"] = rng.normal(size=d_head)
        w[f"model.layers.{i}.self_attn.k_norm.weight"] = rng.normal(size=d_head)
    return w, {**cfg, "model_type": "gemma3_text"}


def hooked_transformer_weights(rng, L=2, H=4, H_kv=2, d=16, d_head=4):
    """TransformerLens's state_dict names and per-head shapes; grouped key heads under ``_W_K``."""
    w = {}
    for i in range(L):
        w[f"blocks.{i}.attn.W_Q"] = rng.normal(size=(H, d, d_head))
        w[f"blocks.{i}.attn._W_K"] = rng.normal(size=(H_kv, d, d_head))
        w[f"blocks.{i}.attn.b_Q"] = rng.normal(size=(H, d_head))
        w[f"blocks.{i}.attn._b_K"] = rng.normal(size=(H_kv, d_head))
        w[f"blocks.{i}.ln1.w"] = rng.normal(size=d)
        w[f"blocks.{i}.ln1.b"] = rng.normal(size=d)
    cfg = {"model_type": "hooked_transformer", "n_heads": H, "n_key_value_heads": H_kv, "n_layers": L}
    return w, {**cfg, "d_model": d, "d_head": d_head}


def dense_qk(w, arch, layer, d, H, H_kv, d_head):
    """Raw (d_model, H d_head) and (d_model, H_kv d_head) factors, read independently of the library."""
    if arch == "bert":
        base = f"encoder.layer.{layer}.attention.self."
        return w[base + "query.weight"].T, w[base + "key.weight"].T
    if arch == "mpnet":
        base = f"encoder.layer.{layer}.attention.attn."
        return w[base + "q.weight"].T, w[base + "k.weight"].T
    if arch == "gpt2":
        c = w[f"transformer.h.{layer}.attn.c_attn.weight"]
        return c[:, :d], c[:, d : 2 * d]
    if arch == "gemma3":
        base = f"model.layers.{layer}.self_attn."
        g_q, g_k = 1 + w[base + "q_norm.weight"], 1 + w[base + "k_norm.weight"]  # QK-norm gains (d_head,)
        return w[base + "q_proj.weight"].T * np.tile(g_q, H), w[base + "k_proj.weight"].T * np.tile(g_k, H_kv)
    if arch == "hooked_transformer":
        q, k = w[f"blocks.{layer}.attn.W_Q"], w[f"blocks.{layer}.attn._W_K"]  # (heads, d, d_head)
        return np.concatenate(list(q), axis=1), np.concatenate(list(k), axis=1)
    base = f"model.layers.{layer}.self_attn."
    return w[base + "q_proj.weight"].T, w[base + "k_proj.weight"].T


def dense_kernel(w, arch, layer, head, cfg, gamma=None):
    W_Q, W_K = dense_qk(w, arch, layer, cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.d_head)
    group = cfg.n_heads // cfg.n_kv_heads
    q = W_Q[:, head * cfg.d_head : (head + 1) * cfg.d_head]
    kv = head // group
    k = W_K[:, kv * cfg.d_head : (kv + 1) * cfg.d_head]
    K = q @ k.T  # (d_model, d_model), the product the library never forms
    if gamma is not None:
        K = np.diag(gamma) @ K @ np.diag(gamma)
    return K


def norm_scale(w, arch, layer):
    """gamma of the norm feeding layer ``layer``'s attention (BERT is post-LN)."""
    if arch in ("bert", "mpnet"):
        return (
            w["embeddings.LayerNorm.weight"]
            if layer == 0
            else w[f"encoder.layer.{layer - 1}.output.LayerNorm.weight"]
        )
    if arch == "gpt2":
        return w[f"transformer.h.{layer}.ln_1.weight"]
    if arch == "hooked_transformer":
        return w[f"blocks.{layer}.ln1.w"]
    if arch == "gemma3":
        return 1 + w[f"model.layers.{layer}.input_layernorm.weight"]
    return w[f"model.layers.{layer}.input_layernorm.weight"]


MAKERS = {
    "bert": bert_weights,
    "gemma3": gemma3_weights,
    "gpt2": gpt2_weights,
    "hooked_transformer": hooked_transformer_weights,
    "llama": llama_weights,
    "mpnet": mpnet_weights,
    "qwen2": qwen2_weights,
}


def synthetic_checkpoint(arch: str, seed: int):
    """``(weights, config)`` of a small random ``arch`` checkpoint; an architecture registered without a
    maker here (a new family, see docs/architecture.md) is skipped, its layout checked by
    test_inspect_architectures.py."""
    if arch not in MAKERS:
        pytest.skip(f"no synthetic {arch} checkpoint here")
    return MAKERS[arch](np.random.default_rng(seed))


def test_every_synthetic_checkpoint_is_of_a_registered_architecture():
    assert set(MAKERS) <= set(ARCHITECTURES.declared())


@pytest.mark.parametrize("arch", ARCHITECTURES.declared())
def test_head_kernels_equal_dense_per_head_products(arch):
    w, config = synthetic_checkpoint(arch, 0)
    cfg = arch_config(w, config)
    seen = 0
    for layer, head, kv_head, W_Q_h, W_K_h in head_kernels(w, cfg):
        np.testing.assert_allclose(W_Q_h @ W_K_h.T, dense_kernel(w, arch, layer, head, cfg), atol=1e-12)
        assert kv_head == head // (cfg.n_heads // cfg.n_kv_heads)
        seen += 1
    assert seen == cfg.n_layers * cfg.n_heads


@pytest.mark.parametrize("arch", ARCHITECTURES.declared())
@pytest.mark.parametrize("fold_ln", [False, True])
def test_kernel_spectra_match_dense_svd(arch, fold_ln):
    w, config = synthetic_checkpoint(arch, 1)
    cfg = arch_config(w, config)
    sv = kernel_spectra(w, cfg, fold_ln=fold_ln)["singular_values"]  # (L, H, d_head)
    assert sv.shape == (cfg.n_layers, cfg.n_heads, cfg.d_head) and sv.dtype == np.float64
    for layer in range(cfg.n_layers):
        gamma = norm_scale(w, arch, layer) if fold_ln else None
        for head in range(cfg.n_heads):
            dense = np.linalg.svd(dense_kernel(w, arch, layer, head, cfg, gamma), compute_uv=False)
            np.testing.assert_allclose(sv[layer, head], dense[: cfg.d_head], rtol=1e-9, atol=1e-9)
            assert dense[cfg.d_head :].max() < 1e-8 * dense[0]  # rank <= d_head


def test_gqa_kv_mapping_uses_the_right_key_rows():
    w, config = llama_weights(np.random.default_rng(2), H=6, H_kv=2, d=12, d_head=2)
    cfg = arch_config(w, config)
    assert [cfg.kv_head(h) for h in range(6)] == [0, 0, 0, 1, 1, 1]
    k_proj = w["model.layers.1.self_attn.k_proj.weight"]  # (H_kv d_head, d)
    for layer, _head, kv_head, _, W_K_h in head_kernels(w, cfg):
        if layer == 1:
            np.testing.assert_array_equal(W_K_h, k_proj[2 * kv_head : 2 * kv_head + 2].T)


def test_fold_ln_moves_the_shift_into_the_biases():
    w, config = gpt2_weights(np.random.default_rng(3))
    cfg = arch_config(w, config)
    raw, folded = kernel_spectra(w, cfg), kernel_spectra(w, cfg, fold_ln=True)
    c, b, beta = (
        w["transformer.h.0.attn.c_attn.weight"],
        w["transformer.h.0.attn.c_attn.bias"],
        w["transformer.h.0.ln_1.bias"],
    )
    d, dh = cfg.d_model, cfg.d_head
    np.testing.assert_allclose(raw["b_Q_norm"][0, 1], np.linalg.norm(b[dh : 2 * dh]))
    np.testing.assert_allclose(
        folded["b_K_norm"][0, 1], np.linalg.norm(b[d + dh : d + 2 * dh] + beta @ c[:, d + dh : d + 2 * dh])
    )


def test_prefix_detection_and_table_rows():
    w, config = bert_weights(np.random.default_rng(4), L=3, H=2, d=8, prefix="bert.")
    cfg = arch_config(w, config)
    assert (cfg.prefix, cfg.n_layers, cfg.n_heads, cfg.d_head) == ("bert.", 3, 2, 4)
    table = kernel_table(kernel_spectra(w, cfg), cfg, top_k=3)
    assert len(table) == 6 and list(table[["layer", "head"]].iloc[3]) == [1, 1]
    assert {"numerical_rank", "energy_effective_rank", "largest_gap_rank", "sv_1", "sv_3"} <= set(
        table.columns
    )
    assert "sv_4" not in table and table["numerical_rank"].dtype.kind == "i"


def test_single_file_needs_heads_and_checks_divisibility():
    w, _ = gpt2_weights(np.random.default_rng(5), d=16)
    assert arch_config(w, None, arch="gpt2", n_heads=4).d_head == 4
    with pytest.raises(UserInputError, match="does not divide the width d_model=16"):
        arch_config(w, None, arch="gpt2", n_heads=5)
    with pytest.raises(UserInputError, match="number of heads"):
        arch_config(w, None, arch="gpt2")
    with pytest.raises(UserInputError, match="pass --arch"):
        arch_config(w, None)


def test_unknown_arch_lists_supported_and_wrong_arch_is_explained():
    w, config = gpt2_weights(np.random.default_rng(6))
    listed = re.escape(", ".join(sorted(ARCHITECTURES.declared())))
    with pytest.raises(
        UserInputError,
        match=rf"Unknown architecture 'gtp2'. Available: {listed}. Did you mean 'gpt2'",
    ):
        arch_config(w, {**config, "model_type": "gtp2"})
    with pytest.raises(UserInputError, match="really a 'llama' model"):
        arch_config(w, config, arch="llama")


def test_gqa_heads_must_group_evenly():
    w, config = llama_weights(np.random.default_rng(7), H=4, H_kv=2)
    with pytest.raises(UserInputError, match="multiple of n_kv_heads=3"):
        arch_config(w, {**config, "num_key_value_heads": 3})

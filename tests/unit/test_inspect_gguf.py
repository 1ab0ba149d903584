"""GGUF files through the weights seam: names and order as transformers', quantisation types and the
in-step rank check, the forward pass through transformers' GGUF loader, and bad files (one line, exit 2).
Every file here is a tiny Llama written with ``gguf.GGUFWriter`` (:mod:`gguf_files`)."""

from __future__ import annotations

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from gguf_files import llama_cpp_permute, tiny_llama_tensors, write_tiny_llama_gguf  # noqa: E402

from entropic_bound.cli import main  # noqa: E402
from entropic_bound.inspect import analyse, arch_config, inspect_model, open_checkpoint  # noqa: E402
from entropic_bound.inspect.gguf import GGUFWeights, unpermute_rows  # noqa: E402
from entropic_bound.inspect.quantisation import block_steps  # noqa: E402

Q4_1 = gguf.GGMLQuantizationType.Q4_1


@pytest.fixture(scope="module")
def tensors():
    return tiny_llama_tensors(np.random.default_rng(0))


@pytest.fixture(scope="module")
def files(tmp_path_factory, tensors):
    root = tmp_path_factory.mktemp("gguf")
    return {
        "f32": write_tiny_llama_gguf(root / "tiny-f32.gguf", tensors),
        "q4_1": write_tiny_llama_gguf(root / "tiny-q4_1.gguf", tensors, qtype=Q4_1),
    }


def one_line_error(capsys, *argv) -> str:
    assert main(["inspect", *map(str, argv)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("entropic-bound: error: ") and err.count("\n") == 1, err
    return err


def test_unpermute_undoes_llama_cpp_row_order():
    w = np.arange(4 * 16 * 3, dtype=np.float64).reshape(4 * 16, 3)
    assert np.array_equal(unpermute_rows(llama_cpp_permute(w, 4), 4), w)
    assert not np.array_equal(llama_cpp_permute(w, 4), w)


def test_float_gguf_reads_back_every_tensor_under_transformers_names(files, tensors):
    weights = GGUFWeights(files["f32"])
    assert set(weights) == set(tensors)
    for key, value in tensors.items():
        assert np.array_equal(weights[key], value.astype(np.float64)), key
        assert weights.shape(key) == value.shape and weights[key].dtype == np.float64
    assert weights.config["num_attention_heads"] == 4 and weights.config["num_key_value_heads"] == 2
    cfg = arch_config(weights, weights.config)
    assert (cfg.arch, cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_head) == ("llama", 2, 4, 2, 16)


def test_quantised_tensors_equal_transformers_gguf_loader_bit_for_bit(files):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    path = files["q4_1"]
    model = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    state, weights = model.state_dict(), GGUFWeights(path)
    attention = [k for k in weights if "q_proj" in k or "k_proj" in k]
    assert len(attention) == 4 and weights.storage(attention[0]) == "Q4_1"
    for key in weights:
        assert np.array_equal(weights[key], state[key].double().numpy()), key


def test_static_spectra_of_every_gguf_head_equal_a_dense_svd(files):
    result = inspect_model(files["q4_1"])
    reader = gguf.GGUFReader(str(files["q4_1"]))
    raw = {t.name: gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64) for t in reader.tensors}
    for layer in range(2):
        q, k = (
            raw[f"blk.{layer}.attn_q.weight"].T,
            raw[f"blk.{layer}.attn_k.weight"].T,
        )  # (d, out), file order
        for head in range(4):
            # the static spectrum does not depend on llama.cpp's row order inside a head
            kernel = q[:, head * 16 : (head + 1) * 16] @ k[:, (head // 2) * 16 : (head // 2 + 1) * 16].T
            dense = np.linalg.svd(kernel, compute_uv=False)[:16]
            np.testing.assert_allclose(
                result.singular_values[layer, head], dense, rtol=0, atol=1e-9 * dense[0]
            )


def test_output_names_each_tensor_type_and_counts_heads_moved_within_a_quantisation_step(files):
    quantised, plain = analyse(files["q4_1"]), analyse(files["f32"])
    assert (quantised["W_Q_dtype"] == "Q4_1").all() and (plain["W_K_dtype"] == "F32").all()
    assert quantised["rank_moves_in_quant_step"].dtype == bool
    summary = quantised.attrs["quantisation"]
    assert summary["quantised"] and summary["heads"] == 8
    assert summary["heads_whose_rank_moves"] == int(quantised["rank_moves_in_quant_step"].sum())
    assert any("quantisation step" in note for note in quantised.attrs["notes"])
    assert "rank_moves_in_quant_step" not in plain and plain.attrs["quantisation"] == {"quantised": False}


def test_block_step_is_the_spacing_of_the_quantisation_grid(files):
    weights = GGUFWeights(files["q4_1"])
    w = weights["model.layers.1.self_attn.k_proj.weight"]  # (32, 64), blocks of 32 along a row
    step = block_steps(w, weights.block_size("model.layers.1.self_attn.k_proj.weight"))
    blocks, steps = w.reshape(-1, 32), step.reshape(-1, 32)[:, 0]
    assert (steps > 0).all()
    levels = (blocks - blocks.min(axis=1, keepdims=True)) / steps[:, None]
    np.testing.assert_allclose(levels, np.round(levels), atol=1e-4)  # Q4_1: d * q + m, q in 0..15
    assert levels.max() <= 15 + 1e-4


def test_gguf_forward_pass_and_a_loaded_gguf_model_give_the_same_frame(files, capsys):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    path = files["q4_1"]
    err = one_line_error(capsys, path, "--text")
    assert "no tokenizer" in err and "--byte-tokens" in err
    text = "the quick brown fox jumps over the lazy dog " * 8
    from_path = analyse(path, text=text, byte_tokens=True, window_len=16, max_windows=3)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, attn_implementation="eager"
    )
    from_model = analyse(model, text=text, byte_tokens=True, window_len=16, max_windows=3)
    # the loaded model holds float32 copies: its storage columns describe memory, not the file
    assert (from_model["W_Q_dtype"] == "F32").all() and "rank_moves_in_quant_step" not in from_model
    storage = [
        "W_Q_dtype",
        "W_K_dtype",
        "rank_moves_in_quant_step",
        "quant_noise_floor",
        "rank_above_quant_floor",
    ]
    assert (
        from_path.drop(columns=storage).equals(from_model.drop(columns=storage[:2])) and len(from_path) == 8
    )
    assert {"sink_score", "logit_field_rank_90", "locality_mass"} <= set(from_path)
    assert from_path.attrs["text"]["window_len"] == 16 and from_model.attrs["model"] == "LlamaForCausalLM"


def test_bad_gguf_files_are_one_line_errors(tmp_path, tensors, files, capsys):
    data = files["f32"].read_bytes()
    (tmp_path / "cut.gguf").write_bytes(data[: len(data) // 3])
    assert "not a readable GGUF file" in one_line_error(capsys, tmp_path / "cut.gguf")
    (tmp_path / "header.gguf").write_bytes(data[:40])
    assert "not a readable GGUF file" in one_line_error(capsys, tmp_path / "header.gguf")
    write_tiny_llama_gguf(tmp_path / "mamba.gguf", tensors, arch="mamba")
    err = one_line_error(capsys, tmp_path / "mamba.gguf")
    assert "'mamba' model" in err and "llama" in err
    write_tiny_llama_gguf(tmp_path / "q8_1.gguf", tensors, raw_qk_type=gguf.GGMLQuantizationType.Q8_1)
    err = one_line_error(capsys, tmp_path / "q8_1.gguf")
    assert "Q8_1" in err and "cannot dequantise" in err


def test_json_of_a_quantised_gguf_names_its_types_and_the_in_step_summary(files, capsys):
    import json

    assert main(["inspect", str(files["q4_1"]), "--json", "--threads", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["arch"] == "llama" and len(out["heads"]) == 8 and out["heads"][0]["W_Q_dtype"] == "Q4_1"
    assert out["quantisation"]["heads"] == 8 and isinstance(out["heads"][0]["rank_moves_in_quant_step"], bool)
    assert "--threads" in one_line_error(capsys, files["q4_1"], "--threads", "0")


def test_gemma_norms_are_read_back_as_transformers_stores_them(tmp_path, tensors):
    gemma = dict(tensors)
    rng = np.random.default_rng(5)
    for i in range(2):
        for which in "qk":
            gemma[f"model.layers.{i}.self_attn.{which}_norm.weight"] = rng.normal(size=16).astype(np.float32)
    path = write_tiny_llama_gguf(tmp_path / "gemma.gguf", gemma, arch="gemma3", d_head=16)
    weights = GGUFWeights(path)
    # the helper writes Llama's ffn_norm, which Gemma 3 names pre_feedforward_layernorm
    gemma["model.layers.0.pre_feedforward_layernorm.weight"] = gemma.pop(
        "model.layers.0.post_attention_layernorm.weight"
    )
    gemma["model.layers.1.pre_feedforward_layernorm.weight"] = gemma.pop(
        "model.layers.1.post_attention_layernorm.weight"
    )
    assert set(weights) == set(gemma)
    for key, value in gemma.items():
        # llama.cpp stored 1 + w; transformers' loader subtracts 1 in float32, and so does the reader
        want = (value + np.float32(1)) - np.float32(1) if key.endswith("norm.weight") else value
        assert np.array_equal(weights[key], want.astype(np.float64)), key  # rows not permuted for Gemma
    cfg = arch_config(weights, weights.config)
    assert (cfg.arch, cfg.d_head, cfg.n_kv_heads) == ("gemma3", 16, 2)


def test_open_checkpoint_takes_gguf_files(files):
    ckpt = open_checkpoint(files["f32"])
    assert (
        ckpt.kind == "gguf"
        and ckpt.config["model_type"] == "llama"
        and ckpt.config_dir == files["f32"].parent
    )

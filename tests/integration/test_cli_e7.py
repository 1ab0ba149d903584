"""`entropic-bound run E7` end to end at a tiny scale: verdicts C11–C13, results/E7.csv, figures."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from entropic_bound.cli import main

SHAKESPEARE = Path(__file__).resolve().parents[3] / "shared" / "data" / "corpora" / "tinyshakespeare.txt"
TINY = [
    "corpora=markov_v4_k1_a1,markov_v16_k1_a1,markov_v64_k1_a1,stdlib_code",
    "corpus_tokens=4000",
    "n_ctx=16",
    "d_model=16",
    "n_heads=2",
    "n_layers=1",
    "probe_windows=4",
    "train.steps=15",
    "train.batch_size=8",
    "train.checkpoints=4",
    "train.eval_windows=4",
    "bootstrap=200",
]


def _run(tmp_path: Path, extra: list[str] = ()) -> int:
    args = ["run", "E7", "--out", str(tmp_path), "--quiet"]
    for a in [*TINY, *extra]:
        args += ["--set", a]
    return main(args)


def test_run_e7_tiny(tmp_path, capsys):
    extra = [f"corpus_paths={SHAKESPEARE}"] if SHAKESPEARE.is_file() else []
    assert _run(tmp_path, extra) == 0
    verdicts = json.loads((tmp_path / "verdicts.json").read_text())
    for claim in ("C11", "C12", "C13"):
        assert verdicts[claim]["verdict"] in ("confirmed", "refuted", "inconclusive")
        assert verdicts[claim]["criterion"]
    assert verdicts["C13"]["evidence"]["heads"] == 2 * (4 + len(extra))
    results = pd.read_csv(tmp_path / "results" / "E7.csv")
    assert len(results) == 4 + len(extra) and set(results["status"]) == {"ok"}
    for col in ("K_energy_effective_rank", "val_bits", "compression_bits", "sink_score", "locality_mass"):
        assert results[col].notna().all(), col
    synthetic = results[results["corpus.name"].str.startswith("markov")]
    assert synthetic["entropy_rate_bits"].notna().all()
    corpora = pd.read_csv(tmp_path / "results" / "E7_corpora.csv")
    assert corpora["complexity_bits"].is_monotonic_increasing
    if extra:
        assert "text:tinyshakespeare" in set(results["corpus.name"])
    figures = {p.name for p in (tmp_path / "figures").iterdir()}
    assert {"e7_rank_vs_complexity.png", "e7_rank_vs_loss.png", "e7_sink_locality_heatmaps.png"} <= figures


def test_run_e7_missing_corpus_file_is_one_line_error(tmp_path, capsys):
    code = main(
        ["run", "E7", "--out", str(tmp_path), "--quiet", "--set", f"corpus_paths={tmp_path / 'nope.txt'}"]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and "corpus_paths" in err and len(err.splitlines()) == 1

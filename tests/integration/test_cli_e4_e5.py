"""E4 + E5 end to end through the CLI at a tiny scale: store, CSVs, verdicts.json, figures."""

from __future__ import annotations

import json

import pandas as pd

from entropic_bound.cli import main

TINY = {
    "E4": [
        "task.n=6",
        "task.d=8",
        "task.r_stars=[2]",
        "task.spectra=[flat]",
        "v_settings=[known]",
        "seeds=1",
        "ranks=[]",
        "n_test=64",
        "train.n_samples=32",
        "train.steps=40",
        "train.checkpoints=3",
    ],
    "E5": [
        "task.n=6",
        "task.d=8",
        "task.r_stars=[2]",
        "task.spectra=[flat]",
        "init_scales=[0.001]",
        "n_test=64",
        "n_mixer=8",
        "c7_sample_counts=[]",
        "train.n_samples=32",
        "train.steps=40",
        "train.checkpoints=3",
    ],
}


def test_reproduce_e4_e5_tiny(tmp_path):
    args = ["reproduce", "--only", "E4,E5", "--out", str(tmp_path), "--quiet"]
    for name, items in TINY.items():
        for item in items:
            args += ["--set", f"{name}.{item}"]
    assert main(args) == 0
    verdicts = json.loads((tmp_path / "verdicts.json").read_text())
    for claim, exp in (("C5", "E4"), ("C6", "E4"), ("C7", "E5")):
        assert verdicts[claim]["verdict"] in ("confirmed", "refuted", "inconclusive")
        assert verdicts[claim]["experiment"] == exp and verdicts[claim]["criterion"]
    assert verdicts["C6"]["evidence"]["normalisation"] == "k0"
    c6_settings = [s["setting"] for s in verdicts["C6"]["robustness"]["settings"]]
    assert {"c": 2.0, "c6_normalisation": "k0"} == c6_settings[0] and {
        "c": 2.0,
        "c6_normalisation": "signal",
    } in c6_settings
    assert {"median_ratio_k0", "median_ratio_signal"} <= set(verdicts["C6"]["evidence"])
    e4 = pd.read_csv(tmp_path / "results" / "E4.csv")
    assert len(e4) == 2 * 4 and set(e4["teacher"]) == {
        "linear",
        "softmax",
    }  # ranks 1..r*+2 and 2r* = {1, 2, 3, 4}
    assert e4["rel_excess"].notna().all() and e4["converged"].isin([0.0, 1.0]).all()
    assert "C8" not in verdicts or verdicts["C8"]["experiment"] == "E6"  # E5 keeps C8's control table
    soft = e4[e4["teacher"] == "softmax"]
    assert (
        soft["row_entropy_ratio"].between(0, 1).all()
        and e4[e4["teacher"] == "linear"]["row_entropy_ratio"].isna().all()
    )
    pairs = pd.read_csv(tmp_path / "results" / "E4_transition_pairs.csv")
    assert len(pairs) == 1 and {"ratio_k0", "ratio_signal"} <= set(pairs.columns)
    e5 = pd.read_csv(tmp_path / "results" / "E5.csv")
    assert len(e5) == 2 and {
        "K_energy_effective_rank",
        "mixer_numerical_rank",
        "meanmixer_stable_rank",
    } <= set(e5.columns)
    errors = pd.read_csv(tmp_path / "results" / "E5_estimator_errors.csv")
    assert (errors["mean_abs_error"] >= 0).all()
    figures = {p.name for p in (tmp_path / "figures").iterdir()}
    assert {
        "e4_excess_vs_rank.png",
        "e5_estimators_over_training.png",
        "e5_final_spectra.png",
        "e5_estimator_error_heatmap.png",
    } <= figures

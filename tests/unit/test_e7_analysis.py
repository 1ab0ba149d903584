"""E7 verdict logic on synthetic tables: each verdict flips when the numbers flip."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from entropic_bound.errors import ConfigError
from entropic_bound.experiments.e7_analysis import (
    bootstrap_spearman,
    complexity,
    spearman,
    trajectory,
    verdict_c11,
    verdict_c12,
    verdict_c13,
)
from entropic_bound.experiments.e7_language import E7Config, E7Language


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=3, max_size=12))
def test_spearman_matches_scipy_with_ties(pairs):
    x, y = np.array(pairs, dtype=float).T
    ref = spearmanr(x, y).statistic if np.ptp(x) > 0 and np.ptp(y) > 0 else np.nan
    got = spearman(x, y)
    assert (np.isnan(got) and np.isnan(ref)) or got == pytest.approx(ref, abs=1e-12)


def test_bootstrap_interval_contains_rho_and_is_seeded():
    rng = np.random.default_rng(0)
    x = rng.normal(size=30)
    y = -x + 0.3 * rng.normal(size=30)
    rho, lo, hi = bootstrap_spearman(x, y, 500, seed=1)
    assert lo <= rho <= hi < 0
    assert bootstrap_spearman(x, y, 500, seed=1) == (rho, lo, hi)


def _points(rank_sign: float, n: int = 8) -> pd.DataFrame:
    c = np.linspace(0.5, 5.0, n)
    rank = 8 + rank_sign * c
    return pd.DataFrame({"corpus": [f"c{i}" for i in range(n)], "complexity_bits": c, "rank": rank})


def test_c11_flips_with_the_sign_of_the_correlation():
    kw = {"estimator": "energy_effective_rank", "n_boot": 500, "seed": 0}
    assert verdict_c11(_points(-1.0), **kw).verdict == "confirmed"
    assert verdict_c11(_points(+1.0), **kw).verdict == "refuted"
    scattered = pd.DataFrame({"complexity_bits": [1, 2, 3, 4, 5, 6], "rank": [4, 6, 1, 5, 2, 3]})
    weak = verdict_c11(scattered, **kw)  # negative point estimate, interval reaching above 0
    assert weak.evidence["rho"] < 0 and weak.verdict == "inconclusive"
    assert verdict_c11(_points(-1.0, n=2), **kw).verdict == "inconclusive"


def _rhos(values) -> pd.DataFrame:
    return pd.DataFrame(
        {"run_id": [str(i) for i in range(len(values))], "checkpoints": 10, "rho_rank_loss": values}
    )


def test_c12_compares_loss_tracking_with_complexity():
    kw = {"estimator": "energy_effective_rank", "min_abs_rho": 0.5}
    assert verdict_c12(_rhos([-0.9, -0.95, -0.8]), -0.2, **kw).verdict == "confirmed"
    assert verdict_c12(_rhos([-0.9, -0.95, -0.8]), -0.97, **kw).verdict == "refuted"  # complexity tracks more
    assert verdict_c12(_rhos([0.1, -0.2, 0.3]), 0.0, **kw).verdict == "refuted"  # rank ignores the loss
    assert verdict_c12(_rhos([-0.9]), float("nan"), **kw).verdict == "inconclusive"
    short = _rhos([-0.9]).assign(checkpoints=2)
    assert verdict_c12(short, 0.0, **kw).verdict == "inconclusive"


def _heads(sink, loc, pos) -> pd.DataFrame:
    return pd.DataFrame(
        {"corpus": "c", "sink_score": sink, "locality_mass": loc, "positional_prior_explained": pos}
    )


def test_c13_flips_with_the_share_of_structural_heads():
    kw = {"sink": 0.3, "locality": 0.5, "positional": 0.5, "share": 0.5}
    structural = _heads([0.6, 0.1, 0.1, 0.1], [0.1, 0.8, 0.1, 0.1], [0.0, 0.0, 0.9, 0.1])
    v = verdict_c13(structural, **kw)
    assert v.verdict == "confirmed" and v.evidence["share_explained"] == pytest.approx(0.75)
    content = _heads([0.1, 0.1, 0.1, 0.1], [0.1, 0.8, 0.1, 0.1], [0.0, 0.0, 0.1, 0.1])
    assert verdict_c13(content, **kw).verdict == "refuted"
    assert verdict_c13(content, **{**kw, "locality": 0.05}).verdict == "confirmed"
    assert verdict_c13(pd.DataFrame(), **kw).verdict == "inconclusive"


def test_complexity_prefers_known_entropy_rate():
    table = pd.DataFrame({"entropy_rate_bits": [1.0, np.nan], "compression_bits": [1.5, 2.5]})
    np.testing.assert_allclose(complexity(table, "known"), [1.0, 2.5])
    np.testing.assert_allclose(complexity(table, "compression"), [1.5, 2.5])


def test_trajectory_is_head_mean_per_checkpoint():
    curves = {"heads": {"K_x": [[[1.0, 3.0]], [[2.0, 4.0]]]}}
    np.testing.assert_allclose(trajectory(curves, "K_x"), [2.0, 3.0])
    assert trajectory({}, "K_x").size == 0


def test_config_validation_and_specs(tmp_path):
    with pytest.raises(ConfigError, match="n_heads"):
        E7Language.configure("quick", {"n_heads": 3})
    with pytest.raises(ConfigError, match="corpus_paths"):
        E7Language.configure("quick", {"corpus_paths": str(tmp_path / "nope.txt")})
    with pytest.raises(ConfigError, match="corpora"):
        E7Language.configure("quick", {"corpora": "markov_v3_k1_a1"})
    text = tmp_path / "t.txt"
    text.write_text("hello world " * 100)
    exp = E7Language(E7Language.configure("quick", {"corpus_paths": str(text), "seeds": 2}))
    specs = exp.specs()
    names = [s.params["corpus.name"] for s in specs]
    assert names.count("text:t") == 2 and len(specs) == 2 * (len(E7Config().corpora) + 1)
    assert len({s.run_id for s in specs}) == len(specs)
    assert all(len(g) == 1 for g in exp.groups(specs))
    text.write_text("changed " * 100)  # a changed file is a different run
    again = E7Language(E7Language.configure("quick", {"corpus_paths": str(text), "seeds": 2})).specs()
    assert {s.run_id for s in again} != {s.run_id for s in specs}

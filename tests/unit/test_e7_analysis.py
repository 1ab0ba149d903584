"""E7 verdicts on constructed tables and real structure computations: each flips each way."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from entropic_bound.errors import ConfigError
from entropic_bound.experiments.base import ClaimContext
from entropic_bound.experiments.claim_slices import with_option
from entropic_bound.experiments.e7_language.analysis import categorise, run_table
from entropic_bound.experiments.e7_language.claims import (
    c11_on_corpora,
    c12_on_points,
    c13_on_heads,
    verdict_c13,
)
from entropic_bound.experiments.e7_language.config import E7Config, E7Verdict
from entropic_bound.experiments.e7_language.experiment import E7Language
from entropic_bound.experiments.e7_language.statistics import (
    corpus_bootstrap,
    partial_spearman,
    spearman,
    wilson,
)
from entropic_bound.lm.structure import structure_summary

INFO11 = {"measure": "information", "estimator": "energy_effective_rank", "kernel": "folded"}
INFO12 = {"estimator": "energy_effective_rank", "kernel": "folded"}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=3, max_size=12))
def test_spearman_matches_scipy_with_ties(pairs):
    x, y = np.array(pairs, dtype=float).T
    ref = spearmanr(x, y).statistic if np.ptp(x) > 0 and np.ptp(y) > 0 else np.nan
    got = spearman(x, y)
    assert (np.isnan(got) and np.isnan(ref)) or got == pytest.approx(ref, abs=1e-12)


def test_partial_spearman_matches_the_first_order_formula():
    rng = np.random.default_rng(0)
    z = rng.normal(size=200)
    x, y = z + rng.normal(size=200), z + rng.normal(size=200)
    rxy, rxz, ryz = spearman(x, y), spearman(x, z), spearman(y, z)
    expected = (rxy - rxz * ryz) / np.sqrt((1 - rxz**2) * (1 - ryz**2))
    assert partial_spearman(x, y, z[:, None]) == pytest.approx(expected, abs=1e-12)
    assert abs(partial_spearman(x, y, z[:, None])) < rxy  # the shared driver is removed


def test_wilson_interval_known_value():
    lo, hi = wilson(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)


def _corpora(sign: float, n: int = 7, noise: float = 0.05) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    c = np.linspace(0.5, 5.0, n)
    seeds = [list(8 + sign * ci + noise * rng.normal(size=3)) for ci in c]
    return pd.DataFrame(
        {
            "name": [f"c{i}" for i in range(n)],
            "kind": "natural",
            "seeds": 3,
            "complexity_bits": c,
            "rank": [np.mean(s) for s in seeds],
            "seed_ranks": seeds,
        }
    )


def test_c11_two_sided_rule_flips_each_way():
    kw = {"criterion_info": INFO11, "n_boot": 400, "seed": 0, "min_corpora": 4}
    down, up = c11_on_corpora(_corpora(-1.0), **kw), c11_on_corpora(_corpora(+1.0), **kw)
    assert down.verdict == "confirmed" and down.evidence["ci_high"] < 0
    assert up.verdict == "refuted" and up.evidence["ci_low"] > 0  # refuted only when the interval is above 0
    for key in ("rho", "ci_low", "ci_high", "corpus_table"):
        assert key in down.evidence
    assert {"name", "kind", "seeds", "complexity_bits", "rank"} <= set(down.evidence["corpus_table"][0])
    flat = c11_on_corpora(_corpora(0.0, noise=1.0), **kw)  # no relation: the interval straddles 0
    assert flat.verdict == "inconclusive" and flat.evidence["ci_low"] < 0 < flat.evidence["ci_high"]
    assert c11_on_corpora(_corpora(-1.0, n=3), **kw).verdict == "inconclusive"


def test_corpus_bootstrap_feels_seed_noise():
    tight = corpus_bootstrap(np.arange(6.0), [[-i, -i] for i in range(6)], 300, 0)
    noisy = corpus_bootstrap(np.arange(6.0), [[-i + 5, -i - 5] for i in range(6)], 300, 0)
    assert tight[0] == noisy[0] == -1.0
    assert noisy[2] - noisy[1] > tight[2] - tight[1]


def _points(driver: str, runs: int = 8, T: int = 9, seed: int = 0) -> pd.DataFrame:
    """Runs that progress at different speeds; the rank follows ``driver`` plus small noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(runs):
        speed, complexity = rng.uniform(0.2, 3.0), rng.uniform(1, 4)
        for t in range(1, T + 1):
            progress = 1 - np.exp(-speed * t / 3) + 0.03 * rng.normal()
            norm = 1 + 0.1 * t + 0.01 * rng.normal()
            driver_value = {"progress": progress, "step": t, "complexity": complexity}[driver]
            rows.append(
                {
                    "run_id": f"r{r}",
                    "step": np.log(10 * t),
                    "progress": progress,
                    "weight_norm": norm,
                    "complexity": complexity,
                    "rank": driver_value + 0.01 * rng.normal(),
                }
            )
    return pd.DataFrame(rows)


def test_c12_confirmed_only_when_rank_tracks_progress_beyond_the_drifting_controls():
    kw = {"controls": ["step", "weight_norm"], "min_abs_rho": 0.3, "n_boot": 200, "seed": 0, "info": INFO12}
    assert c12_on_points(_points("progress"), **kw).verdict == "confirmed"
    by_step = c12_on_points(_points("step"), **kw)  # drifts with training but says nothing about progress
    assert by_step.verdict == "refuted" and abs(by_step.evidence["rho"]) < 0.3
    assert c12_on_points(_points("complexity"), **kw).verdict == "refuted"  # tracks the corpus, not progress
    assert c12_on_points(_points("progress", runs=2), **kw).verdict == "inconclusive"


def _structured_heads(n_struct: int, n_content: int) -> pd.DataFrame:
    """Heads scored by the real structure code on mixers with known structure."""
    n, rng = 24, np.random.default_rng(0)
    band = np.eye(n, k=-1) + np.eye(n) * 1e-3  # previous-token head, the same on every window
    band /= band.sum(-1, keepdims=True)
    rows = []
    for i in range(n_struct + n_content):
        if i < n_struct:
            m = np.broadcast_to(band, (12, n, n))
        else:  # each window sends each query to a random visible key: content routing
            m = np.zeros((12, n, n))
            for b in range(12):
                m[b, np.arange(n), [rng.integers(0, q + 1) for q in range(n)]] = 1.0
        s = structure_summary(m, causal=True, window=1)
        rows.append(
            {"source": "x", "kind": "natural", "layer": 0, "head": i, **{k: float(v) for k, v in s.items()}}
        )
    return pd.DataFrame(rows)


def test_c13_flips_each_way_on_real_structure_scores():
    cfg = E7Config()
    for n_struct, n_content, expected in ((40, 8, "confirmed"), (8, 40, "refuted"), (12, 12, "inconclusive")):
        heads = _structured_heads(n_struct, n_content)
        heads = heads.assign(category=categorise(cfg, heads))
        v = c13_on_heads(
            heads, share=0.5, info={"sources": ["natural"], "content_tv": cfg.verdict.c13_content_tv}
        )
        assert v.verdict == expected, (n_struct, n_content)
        assert v.evidence["by_category"]["local"] == n_struct and len(v.evidence["head_table"]) == len(heads)


def test_c13_uses_only_the_chosen_sources():
    heads = pd.concat(
        [_structured_heads(20, 0).assign(kind="natural"), _structured_heads(0, 20).assign(kind="checkpoint")]
    )
    runs = pd.DataFrame({"kind": ["natural"], "learned": [True]})
    cfg = E7Config()
    assert (
        verdict_c13(
            with_option(cfg, {"verdict.c13_sources": ("natural",)}),
            runs,
            ClaimContext(tables={"heads": heads, "checkpoints_measured": 1}),
        ).verdict
        == "confirmed"
    )
    assert (
        verdict_c13(
            with_option(cfg, {"verdict.c13_sources": ("checkpoint",)}),
            runs,
            ClaimContext(tables={"heads": heads, "checkpoints_measured": 1}),
        ).verdict
        == "refuted"
    )


def test_learned_flag_uses_both_thresholds():
    table = pd.DataFrame(
        {
            "run_id": list("abcd"),
            "status": ["ok", "ok", "ok", "diverged"],
            "corpus.name": ["tinyshakespeare"] * 4,
            "entropy_rate_bits": np.nan,
            "compression_bits": 2.0,
            "loss_gap_fraction": [0.1, 0.9, 0.1, 0.1],
            "uniform_tv": [0.3, 0.3, 0.01, 0.3],
        }
    )
    runs = run_table(E7Config(), table)
    assert list(runs["learned"]) == [True, False, False, False]
    assert list(runs["kind"]) == ["natural"] * 4 and (runs["information_bits"] == 2.0).all()
    loose = run_table(
        E7Config(verdict=E7Verdict(learned_max_gap_fraction=1.0, learned_min_uniform_tv=0.0)), table
    )
    assert list(loose["learned"]) == [True, True, True, False]


def test_config_validation_specs_and_ensembles(tmp_path):
    with pytest.raises(ConfigError, match="model.n_heads"):
        E7Language.configure("quick", {"model.n_heads": 3})
    with pytest.raises(ConfigError, match="task.corpus_paths"):
        E7Language.configure("quick", {"task.corpus_paths": str(tmp_path / "nope.txt")})
    with pytest.raises(ConfigError, match="task.corpora"):
        E7Language.configure("quick", {"task.corpora": "markov_v3_k1_a1"})
    text = tmp_path / "t.txt"
    text.write_text("hello world " * 100)
    exp = E7Language(
        E7Language.configure("quick", {"task.corpus_paths": str(text), "seeds": 2, "ensemble_size": 5})
    )
    lms = [s for s in exp.specs() if "corpus.name" in s.params]
    names = [s.params["corpus.name"] for s in lms]
    assert names.count("text:t") == 2 and len(lms) == 2 * (len(E7Config().task.corpora) + 1)
    assert len({s.run_id for s in exp.specs()}) == len(exp.specs())
    groups = exp.groups([*lms])
    assert sorted(len(g) for g in groups) == [4, 5, 5] and sum(map(len, groups)) == len(lms)
    before = {s.run_id for s in exp.specs()}
    text.write_text("changed " * 100)  # a changed file is a different run
    assert {s.run_id for s in exp.specs()} != before
    assert E7Language.configure("paper").seeds >= 3 and E7Language.configure("quick").seeds >= 2

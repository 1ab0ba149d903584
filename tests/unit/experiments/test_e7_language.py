"""E7 verdicts on constructed tables and real structure computations: each flips each way."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from entropic_bound.errors import ConfigError
from entropic_bound.experiments.e7_language.analysis import categorise, run_table
from entropic_bound.experiments.e7_language.config import E7Config, E7Verdict
from entropic_bound.experiments.e7_language.control_gate import control_gate, control_report
from entropic_bound.experiments.e7_language.domain_verdicts import (
    abs_interval,
    c11_on_corpora,
    c12_halves,
    c12_on_points,
    corpora_to_decide,
)
from entropic_bound.experiments.e7_language.experiment import E7Language
from entropic_bound.experiments.e7_language.statistics import (
    corpus_bootstrap,
    partial_spearman,
    spearman,
    wilson,
)
from entropic_bound.experiments.e7_language.structure_verdict import c13_on_heads, routing_kernel
from entropic_bound.experiments.framework.claim_slices import with_option
from entropic_bound.experiments.framework.draws import Seeds
from entropic_bound.inspect.logit_field import LOGIT_FIELD_COLUMNS, fit_logit_field
from entropic_bound.language_models.corpora.catalogue import expected_mixing
from entropic_bound.language_models.probes.structure import structure_summary

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


def test_stacked_partial_spearman_equals_the_per_sample_one():
    """C12's bootstrap computes every draw at once; each must equal partial_spearman, including a
    sample with tied ranks, a constant control (rank-deficient design) and a missing value."""
    from entropic_bound.stats.rank_tests import partial_spearman_stack

    rng = np.random.default_rng(1)
    data = rng.normal(size=(40, 30, 4))  # 40 samples of (x, y, two controls)
    data[:, :, 1] += data[:, :, 0] + data[:, :, 2]
    data[3] = np.round(data[3])  # ties
    data[5, :, 3] = 2.0  # a constant control
    data[7, 4, 1] = np.nan
    data[9, :, 0] = 1.0  # x constant: no correlation to report
    want = np.array([partial_spearman(d[:, 0], d[:, 1], d[:, 2:]) for d in data])
    got = partial_spearman_stack(data)
    assert np.isnan(got[9]) and np.isnan(want[9])
    keep = np.arange(40) != 9
    assert got[keep] == pytest.approx(want[keep], abs=1e-12)


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


def test_c11_exact_test_below_ten_corpora_flips_each_way():
    kw = {"criterion_info": INFO11, "n_boot": 400, "seed": 0, "min_corpora": 4}
    down, up = c11_on_corpora(_corpora(-1.0), **kw), c11_on_corpora(_corpora(+1.0), **kw)
    assert down.evidence["test"] == up.evidence["test"] == "exact_permutation"
    assert down.outcome == "confirmed" and down.evidence["p_value"] == pytest.approx(2 / 5040)
    assert up.outcome == "refuted" and up.evidence["rho"] == pytest.approx(
        1.0, abs=1e-12
    )  # significant on the other side
    for key in ("rho", "p_value", "ci_low", "ci_high", "half_width", "corpus_table"):
        assert key in down.evidence
    assert {"name", "kind", "seeds", "complexity_bits", "rank"} <= set(down.evidence["corpus_table"][0])
    flat = c11_on_corpora(_corpora(0.0, noise=1.0), **kw)  # no relation: not significant
    assert flat.outcome == "inconclusive" and flat.evidence["p_value"] >= 0.05
    assert flat.evidence["points_needed"] is None or flat.evidence["points_needed"] > 7
    # few points: 4 corpora at rho = -1 (a bootstrap says [-1, -1]); exact two-sided p = 2/24
    four = c11_on_corpora(_corpora(-1.0, n=4), **kw)
    assert four.evidence["rho"] == pytest.approx(-1.0, abs=1e-12) and four.evidence[
        "p_value"
    ] == pytest.approx(2 / 24)
    assert four.outcome == "inconclusive" and four.evidence["points_needed"] >= 4
    # an exact test on 4 corpora cannot reach p < 0.05: the evidence says so and how many it needs
    assert four.evidence["can_decide"] is False and four.evidence["corpora_to_decide"] == 5
    assert four.evidence["smallest_p"] == pytest.approx(2 / 24) and corpora_to_decide() == 5
    assert down.evidence["can_decide"] and down.evidence["smallest_p"] == pytest.approx(2 / 5040)
    assert c11_on_corpora(_corpora(-1.0, n=3), **kw).outcome == "inconclusive"


def test_c11_is_decided_by_its_interval_and_the_exact_test_must_agree():
    kw = {"criterion_info": INFO11, "n_boot": 400, "seed": 0, "min_corpora": 4}
    down = c11_on_corpora(_corpora(-1.0), **kw)
    d = down.evidence["decision"]
    assert d["threshold"] == 0.0 and d["direction"] == "lower" and d["unit"] == "corpus"
    assert d["interval"] == [down.evidence["ci_low"], down.evidence["ci_high"]] and d["margin"] > 0
    up = c11_on_corpora(_corpora(+1.0), **kw)
    assert up.evidence["decision"]["margin"] < 0 and up.outcome == "refuted"
    # 5 corpora, one adjacent pair swapped: rho = -0.9; its Fisher interval lies below 0 but the exact
    # two-sided p is 10/120 = 0.083, so the test does not agree and the verdict stays inconclusive
    five = _corpora(-1.0, n=5, noise=0.0)
    five.loc[[0, 1], "rank"] = five.loc[[1, 0], "rank"].to_numpy()
    five["seed_ranks"] = [[r] * 3 for r in five["rank"]]
    v = c11_on_corpora(five, **kw)
    assert v.evidence["rho"] == pytest.approx(-0.9) and v.evidence["ci_high"] < 0
    assert (
        v.evidence["p_value"] == pytest.approx(10 / 120) and v.evidence["decision"]["test_decision"] is None
    )
    assert v.outcome == "inconclusive"


def test_c11_bootstrap_from_ten_corpora():
    kw = {"criterion_info": INFO11, "n_boot": 400, "seed": 0, "min_corpora": 4}
    down = c11_on_corpora(_corpora(-1.0, n=12), **kw)
    assert (
        down.evidence["test"] == "bootstrap" and down.outcome == "confirmed" and down.evidence["ci_high"] < 0
    )
    up = c11_on_corpora(_corpora(+1.0, n=12), **kw)
    assert up.outcome == "refuted" and up.evidence["ci_low"] > 0
    flat = c11_on_corpora(_corpora(0.0, n=12, noise=3.0), **kw)
    assert flat.outcome == "inconclusive" and flat.evidence["ci_low"] < 0 < flat.evidence["ci_high"]
    assert flat.evidence["half_width"] == pytest.approx(
        (flat.evidence["ci_high"] - flat.evidence["ci_low"]) / 2
    )


@pytest.mark.parametrize(("sign", "outcome"), [(-1.0, "confirmed"), (1.0, "refuted")])
def test_c11_off_its_one_boundary_is_decided_at_enough_corpora(sign, outcome):
    """A weak true rho (about -/+0.4) cannot be told from 0 on 8 corpora, and is on 80, either way;
    the evidence says what would decide it (corpora, not draws)."""
    kw = {"criterion_info": INFO11, "n_boot": 400, "seed": 0, "min_corpora": 4}
    few = c11_on_corpora(_corpora(sign, n=8, noise=6.0), **kw)
    many = c11_on_corpora(_corpora(sign, n=80, noise=6.0), **kw)
    assert few.outcome == "inconclusive" and "more natural corpora" in few.evidence["reason"]
    assert many.outcome == outcome and 0.2 < abs(many.evidence["rho"]) < 0.7
    d = many.evidence["decision"]
    assert d["threshold"] == d["refute_threshold"] == 0.0 and d["units"] == 80 and d["unit"] == "corpus"


def test_corpus_bootstrap_feels_seed_noise():
    tight = corpus_bootstrap(np.arange(6.0), [[-i, -i] for i in range(6)], 300, 0)
    noisy = corpus_bootstrap(np.arange(6.0), [[-i + 5, -i - 5] for i in range(6)], 300, 0)
    assert tight[0] == noisy[0] == -1.0
    assert noisy[2] - noisy[1] > tight[2] - tight[1]


def _points(
    driver: str, runs: int = 8, T: int = 9, seed: int = 0, noise: float = 0.01, per_corpus: int = 1
) -> pd.DataFrame:
    """Runs that progress at different speeds, ``per_corpus`` runs to a corpus (its complexity); the
    rank follows ``driver`` plus ``noise`` (``both``: progress plus the corpus's complexity)."""
    rng = np.random.default_rng(seed)
    rows, complexity, offset = [], 0.0, 0.0
    for r in range(runs):
        speed = rng.uniform(0.2, 3.0)
        complexity = rng.uniform(1, 4) if r % per_corpus == 0 else complexity
        if driver == "shared" and r % per_corpus == 0:  # the corpus's own level, shared by its runs
            offset = rng.normal()
        for t in range(1, T + 1):
            progress = 1 - np.exp(-speed * t / 3) + 0.03 * rng.normal()
            norm = 1 + 0.1 * t + 0.01 * rng.normal()
            driver_value = {
                "progress": progress,
                "step": t,
                "complexity": complexity,
                "both": progress + (complexity - 2.5) / 3,
                "shared": progress + offset,
            }[driver]
            rows.append(
                {
                    "run_id": f"r{r}",
                    "corpus": f"c{r // per_corpus}",
                    "step": np.log(10 * t),
                    "progress": progress,
                    "weight_norm": norm,
                    "complexity": complexity,
                    "rank": driver_value + noise * rng.normal(),
                }
            )
    return pd.DataFrame(rows)


def test_c12_confirmed_only_when_both_intervals_clear_the_bar():
    kw = {"controls": ["step", "weight_norm"], "min_abs_rho": 0.3, "n_boot": 200, "seed": 0, "info": INFO12}
    ok = c12_on_points(_points("progress", runs=60), **kw)
    assert ok.outcome == "confirmed" and ok.evidence["decision"]["interval"][0] >= 0.3
    assert ok.evidence["decision_not_complexity"]["interval"][1] <= 0.3
    by_step = c12_on_points(_points("step", runs=30), **kw)  # drifts with training, says nothing of progress
    assert by_step.outcome == "refuted" and by_step.evidence["halves"]["tracks_progress"] == "refuted"
    # significant but weak tracking: the whole |rho| interval below the bar
    weak = c12_on_points(_points("progress", runs=60, noise=0.9), **kw)
    assert weak.evidence["ci_low"] > 0 and weak.outcome == "refuted"
    corpus = c12_on_points(_points("complexity", runs=30), **kw)  # tracks the corpus, not progress
    assert corpus.outcome == "refuted" and corpus.evidence["halves"]["not_complexity"] == "refuted"
    both = c12_on_points(_points("both", runs=30), **kw)  # tracks complexity too: "not complexity" fails
    assert both.outcome == "refuted" and both.evidence["rho_complexity_ci"][0] >= 0.3
    assert c12_on_points(_points("progress", runs=2), **kw).outcome == "inconclusive"


def test_c12_is_inconclusive_when_an_interval_straddles_the_bar():
    kw = {"controls": ["step", "weight_norm"], "min_abs_rho": 0.3, "n_boot": 200, "seed": 0, "info": INFO12}
    # point |rho| above 0.3, interval reaching below it: a point value no longer confirms
    edge = c12_on_points(_points("progress", runs=60, noise=0.5), **kw)
    assert edge.evidence["rho"] >= 0.3 and edge.evidence["ci_low"] < 0.3 < edge.evidence["ci_high"]
    assert edge.outcome == "inconclusive" and edge.evidence["halves"]["tracks_progress"] == "inconclusive"
    assert edge.evidence["decision"]["narrow"]
    # progress tracked, but 8 runs leave the complexity interval straddling the bar
    few = c12_on_points(_points("progress", runs=8), **kw)
    assert few.evidence["halves"] == {"tracks_progress": "confirmed", "not_complexity": "inconclusive"}
    assert few.outcome == "inconclusive"


@pytest.mark.parametrize(("noise", "outcome"), [(0.3, "confirmed"), (1.2, "refuted")])
def test_c12_off_its_one_boundary_is_decided_at_enough_corpora(noise, outcome):
    """|rho(progress)| above 0.3 (noise 0.3) or below it (noise 1.2): undecided on 4 corpora, decided
    on 80, either way; the bar is one boundary for both halves."""
    kw = {"controls": ["step", "weight_norm"], "min_abs_rho": 0.3, "n_boot": 200, "seed": 0, "info": INFO12}
    few = c12_on_points(_points("progress", runs=4, noise=noise), **kw)
    many = c12_on_points(_points("progress", runs=80, noise=noise), **kw)
    assert few.outcome == "inconclusive" and "more corpora" in few.evidence["reason"]
    assert many.outcome == outcome and many.evidence["decision"]["units"] == 80
    for d in (many.evidence["decision"], many.evidence["decision_not_complexity"]):
        assert d["threshold"] == d["refute_threshold"] == 0.3 and d["unit"] == "corpus"


def test_c12_counts_corpora_not_the_runs_that_share_one():
    """60 runs of 3 corpora, each corpus with its own rank level: 3 units. Over runs, the 3 levels
    would read as 60 independent points on complexity; over corpora the interval is as wide as 3
    complexities leave it."""
    kw = {"controls": ["step", "weight_norm"], "min_abs_rho": 0.3, "n_boot": 200, "seed": 0, "info": INFO12}
    points = _points("shared", runs=60, per_corpus=20)
    shared = c12_on_points(points, **kw)
    as_runs = c12_on_points(points.assign(corpus=points["run_id"]), **kw)  # the old, pseudo-replicated unit
    assert (
        shared.evidence["corpora"] == 3
        and shared.evidence["runs"] == 60
        and shared.evidence["unit"] == "corpus"
    )
    assert shared.evidence["decision"]["units"] == 3 and as_runs.evidence["decision"]["units"] == 60
    width = lambda v: np.subtract(*v.evidence["rho_complexity_ci"][::-1])  # noqa: E731
    assert width(shared) > 2 * width(as_runs)
    assert c12_on_points(_points("progress", runs=2), **kw).evidence["reason"].startswith("2 corpora")


def test_c12_halves_on_the_stored_paper_numbers():
    """All kinds pooled at paper scale (draw 0): rho -0.38 (-0.48 to -0.26), complexity +0.23 (0.12-0.33)."""
    assert abs_interval(-0.48, -0.26) == (0.26, 0.48) and abs_interval(-0.1, 0.2) == (0.0, 0.2)
    tracks, not_c, ok = c12_halves(-0.38, (-0.48, -0.26), 0.23, (0.12, 0.33), 0.3)
    assert tracks.outcome is None and not_c.outcome is None and ok is None
    assert c12_halves(-0.38, (-0.48, -0.31), 0.05, (-0.1, 0.2), 0.3)[2] is True
    assert c12_halves(-0.38, (-0.48, -0.31), 0.4, (0.31, 0.5), 0.3)[2] is False


B, N, D = 12, 16, 8


def _causal_softmax(logits: np.ndarray) -> np.ndarray:
    masked = np.where(np.tril(np.ones((N, N), dtype=bool)), logits, -np.inf)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _planted(kind: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs ``(B, N, D)`` and a head's attention ``(B, N, N)`` whose structure is known:
    ``local`` a previous-token band (position only), ``kernel`` a rank-2 bilinear kernel on the
    inputs (content routing one kernel explains), ``noise`` i.i.d. logits per query and key
    (content routing no kernel explains)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(B, N, D))
    i, j = np.indices((N, N))
    if kind == "local":
        logits = np.broadcast_to(np.where(i - j == 1, 6.0, 0.0), (B, N, N))
    elif kind == "kernel":
        Q, _ = np.linalg.qr(rng.normal(size=(D, 4)))  # two equal directions: rank 2 at 90 %
        K = 2.0 * (np.outer(Q[:, 0], Q[:, 1]) + np.outer(Q[:, 2], Q[:, 3]))
        logits = np.einsum("bia,ac,bjc->bij", x, K, x)
    else:
        logits = 4.0 * rng.normal(size=(B, N, N))
    return x, _causal_softmax(logits)


def _head_row(kind: str, seed: int, source: str, model: str, head: int) -> dict:
    """One head's row, scored by the real structure code and the real logit-field fit."""
    x, A = _planted(kind, seed)
    scores = {k: float(v) for k, v in structure_summary(A, causal=True, window=1).items()}
    fit = fit_logit_field(x, A, causal=True)
    return {
        "source": source,
        "kind": "natural",
        "run_id": model,
        "layer": 0,
        "head": head,
        "d_head": 16,  # a rank-4 bound at the default quarter of d_head
        **scores,
        **{c: float(fit[c]) for c in LOGIT_FIELD_COLUMNS},
    }


def _heads(spec: dict[str, dict[str, list[str]]]) -> pd.DataFrame:
    """``{source: {model: [head kinds]}}`` → the scored head table."""
    rows, seed = [], 0
    for source, models in spec.items():
        for model, kinds in models.items():
            for h, kind in enumerate(kinds):
                rows.append(_head_row(kind, seed, source, model, h))
                seed += 1
    return pd.DataFrame(rows)


def _decide(heads: pd.DataFrame, controls: dict | None = None, weighting: str = "count"):
    cfg = E7Config()
    heads = heads.assign(category=categorise(cfg, heads))
    heads = heads.assign(routing_kernel=routing_kernel(heads, content=0.5, explained=0.5, rank_fraction=0.25))
    info = {
        "sources": ["natural"],
        "content_tv": cfg.verdict.c13_content_tv,
        "kernel_content": 0.5,
        "kernel_explained": 0.5,
        "kernel_rank_fraction": 0.25,
        "weighting": weighting,
        "ablation_bits": cfg.verdict.c13_ablation_bits,
    }
    return c13_on_heads(
        heads,
        share=0.5,
        kernel_share=0.5,
        controls=_controls() if controls is None else controls,
        info=info,
        n_boot=300,
        seed=0,
    )


def _control(expected: list[str], passes: list[bool | None], required: bool = True) -> dict:
    """One control source's report as :func:`control_report` gives it: each model's test result."""
    return {"expected": expected, "models": len(passes), "passes": passes, "required": required}


def _controls(recall: int = 3, recall_ok: int = 3, lag: int = 3, lag_ok: int = 3) -> dict:
    """A recall and a lag-copy control source with ``*_ok`` of their models read right."""
    return {
        "mqar-p2": _control(["content"], [True] * recall_ok + [False] * (recall - recall_ok)),
        "lagcopy-L8": _control(["positional", "local"], [True] * lag_ok + [False] * (lag - lag_ok)),
    }


def test_planted_heads_are_read_as_planted():
    local, kernel, noise = (_head_row(k, 7, "s", "m", 0) for k in ("local", "kernel", "noise"))
    cats = categorise(E7Config(), pd.DataFrame([local, kernel, noise]))
    assert list(cats) == ["local", "content", "content"]
    assert local["logit_field_position_explained"] > 0.99 and local["logit_field_rank_90"] == 0
    assert kernel["logit_field_explained"] > 0.95 and kernel["logit_field_rank_90"] == 2
    assert noise["logit_field_explained"] < 0.3  # content routing that no single kernel explains


def test_c13_flips_each_way_with_the_model_as_unit():
    structural = _decide(_heads({f"s{i}": {f"m{i}": ["local"] * 7 + ["noise"]} for i in range(3)}))
    assert structural.outcome == "confirmed" and structural.evidence["unit"] == "source, then model"
    assert structural.evidence["ci_low"] > 0.5 and structural.evidence["kernel_ci"][1] < 0.5
    routed = _decide(_heads({f"s{i}": {f"m{i}": ["kernel"] * 7 + ["local"]} for i in range(3)}))
    assert routed.outcome == "refuted" and routed.evidence["kernel_share"] == pytest.approx(7 / 8)
    # content routing without one kernel: structure fails (refuted), the kernel half is not to blame
    scattered = _decide(_heads({f"s{i}": {f"m{i}": ["noise"] * 7 + ["local"]} for i in range(3)}))
    assert scattered.outcome == "refuted" and scattered.evidence["kernel_share"] == pytest.approx(
        0.0, abs=1e-12
    )
    mixed = _decide(_heads({"a": {"m0": ["local"] * 4}, "b": {"m1": ["noise"] * 4}}))
    assert mixed.outcome == "inconclusive"  # two sources that disagree: the interval spans the threshold


@pytest.mark.parametrize(("local", "outcome"), [(3, "confirmed"), (1, "refuted")])
def test_c13_off_its_one_boundary_is_decided_at_enough_sources(local, outcome):
    """Every model 3 of 4 (or 1 of 4) heads structural: the share off 1/2 is undecided on 2 sources
    and decided on 40, either way, with the controls' gate passing."""
    rows = {k: _head_row(k, 7, "s", "m", 0) for k in ("local", "noise")}

    def table(n: int) -> pd.DataFrame:
        kinds = ["local"] * local + ["noise"] * (4 - local)
        return pd.DataFrame(
            [
                {**rows[k], "source": f"s{i}", "run_id": f"m{i}", "head": h}
                for i in range(n)
                for h, k in enumerate(kinds)
            ]
        )

    few, many = _decide(table(2)), _decide(table(40))
    assert few.outcome == "inconclusive" and "more sources" in few.evidence["reason"]
    assert many.outcome == outcome and many.evidence["decision"]["units"] == 40
    d = many.evidence["decision"]
    assert (
        d["threshold"] == d["refute_threshold"] == 0.5
        and d["kernel"]["threshold"] == d["kernel"]["refute_threshold"]
    )


def test_c13_weighs_every_source_equally_not_every_head():
    # one big model of content heads and three small structural ones: by head 12/52 structural,
    # by model 3/4
    spec = {"big": {"m0": ["noise"] * 40}, **{f"s{i}": {f"m{i + 1}": ["local"] * 4} for i in range(3)}}
    v = _decide(_heads(spec))
    assert v.evidence["share_structural"] == pytest.approx(0.75)
    assert v.evidence["pooled_share_structural"] == pytest.approx(12 / 52)
    assert v.evidence["models"] == 4 and v.evidence["by_source"]["big"]["share"] == pytest.approx(
        0.0, abs=1e-12
    )


def _weighted(spec: dict[str, dict[str, list[str]]], bits: dict[str, float]) -> pd.DataFrame:
    """The scored head table of ``spec`` with each head's content-ablation loss set by its kind."""
    heads = _heads(spec)
    kinds = [k for models in spec.values() for ks in models.values() for k in ks]
    return heads.assign(content_ablation_bits=[bits[k] for k in kinds])


SEVEN_LOCAL = {f"s{i}": {f"m{i}": ["local"] * 7 + ["noise"]} for i in range(3)}


def test_c13_by_function_agrees_with_the_count_when_structural_heads_carry_the_loss():
    v = _decide(_weighted(SEVEN_LOCAL, {"local": 0.1, "noise": 0.01}))
    w = v.evidence["weighting"]
    assert v.outcome == "confirmed" and w["main"] == "count" and w["agree"] and not w["opposite"]
    assert w["ablation"]["share_structural"] == pytest.approx(0.7 / 0.71) and w["ablation"]["models"] == 3
    assert w["count"]["share_structural"] == pytest.approx(7 / 8) and w["ablation"]["verdict"] == "confirmed"
    d = v.evidence["decision"]
    assert d["outcome"] is True and d["unit"] == "source" and d["units"] == 3 and d["interval"][0] > 0.5
    assert d["kernel"]["outcome"] is True and d["kernel"]["direction"] == "lower"


def test_c13_is_inconclusive_when_the_weightings_decide_opposite_ways():
    # 7 of 8 heads structural by count, but the content head carries all the loss: refuted by function
    v = _decide(_weighted(SEVEN_LOCAL, {"local": 0.0, "noise": 0.3}))
    w = v.evidence["weighting"]
    assert w["count"]["verdict"] == "confirmed" and w["ablation"]["verdict"] == "refuted"
    assert v.outcome == "inconclusive" and w["opposite"] and "weightings disagree" in v.evidence["reason"]
    # the function-weighted reading as the main one: the same disagreement, the same verdict
    assert _decide(_weighted(SEVEN_LOCAL, {"local": 0.0, "noise": 0.3}), weighting="ablation").outcome == (
        "inconclusive"
    )


def test_c13_main_reading_stands_when_the_other_is_undecided():
    # no head carries loss: the function-weighted reading has no model to weigh and decides nothing
    v = _decide(_weighted(SEVEN_LOCAL, {"local": 0.0, "noise": 0.0}))
    w = v.evidence["weighting"]
    assert v.outcome == "confirmed" and w["ablation"]["models_left_out"] == 3 and not w["agree"]
    assert w["ablation"]["verdict"] == "inconclusive" and not w["opposite"]
    # with the function-weighted reading main, the same heads decide nothing
    assert _decide(_weighted(SEVEN_LOCAL, {"local": 0.0, "noise": 0.0}), weighting="ablation").outcome == (
        "inconclusive"
    )
    # content heads by count, but the few local heads carry the loss: refuted by count, confirmed by
    # function: the opposite reading vetoes; with equal weights both refute
    routed = {f"s{i}": {f"m{i}": ["noise"] * 14 + ["local"] * 4} for i in range(3)}
    vetoed = _decide(_weighted(routed, {"local": 0.5, "noise": 0.001}))
    assert (
        vetoed.outcome == "inconclusive"
        and vetoed.evidence["weighting"]["ablation"]["verdict"] == "confirmed"
    )
    assert _decide(_weighted(routed, {"local": 0.5, "noise": 0.5})).outcome == "refuted"


def test_the_function_weighted_share_resolves_finer_than_a_quarter():
    spec = {"s": {"m": ["local"] * 3 + ["noise"]}}
    heads = _weighted(spec, {"local": 0.04, "noise": 0.02})
    w = _decide(heads).evidence["weighting"]
    assert w["count"]["share_structural"] == pytest.approx(0.75)
    assert w["ablation"]["share_structural"] == pytest.approx(0.12 / 0.14)  # 0.857: not a quarter step
    # a head measured as negative carries nothing; a model without the measurement is left out
    neg = heads.assign(content_ablation_bits=[0.04, 0.04, 0.04, -0.5])
    assert _decide(neg).evidence["weighting"]["ablation"]["share_structural"] == pytest.approx(1.0)
    unmeasured = heads.assign(content_ablation_bits=np.nan)
    assert _decide(unmeasured).evidence["weighting"]["ablation"]["models_left_out"] == 1


def test_c13_is_inconclusive_when_the_controls_gate_fails_or_is_undecided():
    heads = _heads({f"s{i}": {f"m{i}": ["local"] * 7 + ["noise"]} for i in range(3)})
    assert _decide(heads).outcome == "confirmed" and _decide(heads).evidence["controls_gate"]["outcome"]
    failed = _decide(heads, _controls(recall=10, recall_ok=1, lag=10, lag_ok=2))
    assert failed.outcome == "inconclusive" and not failed.evidence["controls_agree"]
    assert failed.evidence["reason"].startswith("controls fail: 3 of 20")
    # one model of each kind: 2 of 2 read right is no evidence yet (Wilson [0.34, 1] holds 1/2)
    few = _decide(heads, _controls(recall=1, recall_ok=1, lag=1, lag_ok=1))
    assert few.outcome == "inconclusive" and "more control models" in few.evidence["reason"]
    assert _decide(heads, {}).outcome == "inconclusive"  # no control in the grid: nothing shown
    # every lag-copy model right but no recall model measured: the instrument is untested on routing
    untested = _decide(heads, {"lagcopy-L8": _control(["positional", "local"], [True] * 9)})
    assert untested.outcome == "inconclusive" and "no measured recall" in untested.evidence["reason"]


@pytest.mark.parametrize(("rate", "outcome"), [(0.8, True), (0.3, False)])
def test_the_control_rate_is_decided_off_its_boundary_at_enough_models(rate, outcome):
    """A rate anywhere but on 1/2 is decided once there are enough control models, either way; one
    failing model among many no longer blocks the verdict (the every-model rule it replaces)."""
    outcomes = []
    for n in (4, 10, 40, 200):
        ok = round(rate * n)
        gate = control_gate(
            _controls(recall=n // 2, recall_ok=ok // 2, lag=n - n // 2, lag_ok=ok - ok // 2), 0.5
        )
        outcomes.append(gate["outcome"])
        assert (
            gate["models"] == n
            and gate["decision"]["units"] == n
            and gate["decision"]["unit"] == "control model"
        )
    assert outcomes[0] is None and outcomes[-1] is outcome
    assert outcomes == sorted(outcomes, key=lambda o: o is not None)  # once decided, more models keep it
    assert control_gate(_controls(recall=20, recall_ok=19, lag=20, lag_ok=20), 0.5)["outcome"] is True


def test_a_control_that_is_not_required_is_reported_but_does_not_block_the_verdict():
    heads = _heads({f"s{i}": {f"m{i}": ["local"] * 7 + ["noise"]} for i in range(3)})
    copyable = {"markov_v4_k3_a0.1": _control(["local"], [False] * 6, required=False)}
    required = {"markov_v8_k2_a0.1": _control(["local"], [False] * 6)}
    assert _decide(heads, {**_controls(), **copyable}).outcome == "confirmed"
    assert _decide(heads, {**_controls(), **required}).outcome == "inconclusive"  # 6 of 12: rate 1/2
    assert _decide(heads, copyable).outcome == "inconclusive"  # none required


def test_the_copyable_markov_sources_are_the_high_recurrence_ones():
    """On the registered sources E7 trains on (quick corpus size and window): the 4-symbol sources
    with sparse transitions recur for most targets and leave the required local controls; the 8- and
    16-symbol ones and the dense 4-symbol order-3 source stay; a bound of 1 requires every one."""
    from entropic_bound.experiments.e7_language.experiment import E7Language
    from entropic_bound.experiments.e7_language.local_controls import markov_recurrences, not_local_only
    from entropic_bound.experiments.framework.draws import Seeds

    cfg = E7Language.configure("quick", {})
    names = [
        "markov_v4_k2_a0.1",
        "markov_v4_k3_a0.1",
        "markov_v4_k3_a1",
        "markov_v8_k2_a0.1",
        "markov_v16_k2_a0.1",
    ]
    rec = markov_recurrences(cfg, names + ["lagcopy-L4"], Seeds("E7"))
    assert set(rec) == set(names)
    assert (
        rec["markov_v4_k3_a0.1"] > 0.6 and rec["markov_v4_k2_a0.1"] > 0.6 and rec["markov_v16_k2_a0.1"] < 0.15
    )
    assert set(not_local_only(cfg, names, Seeds("E7"))) == {"markov_v4_k2_a0.1", "markov_v4_k3_a0.1"}
    every = E7Language.configure("quick", {"verdict.c13_local_max_recurrence": 1.0})
    assert not_local_only(every, names, Seeds("E7")) == {}


def _scored(spec: dict, bits: dict[str, float]) -> pd.DataFrame:
    heads = _weighted(spec, bits)
    heads = heads.assign(category=categorise(E7Config(), heads))
    return heads.assign(routing_kernel=routing_kernel(heads, content=0.5, explained=0.5, rank_fraction=0.25))


def test_control_report_tests_each_model_by_its_content_heads_ablated_together():
    """Real categories of planted heads; each head's own ablation set by its kind, the joint losses
    of the subsets given as the probe stores them (bit ``layer · n_heads + head``)."""
    recall = {
        "mqar-p2": {"r0": ["kernel", "local"], "split": ["kernel", "kernel"], "none": ["local", "local"]}
    }
    lag = {"lagcopy-L8": {"l0": ["local", "noise"], "used": ["local", "kernel"]}}
    heads = pd.concat(
        [
            _scored(recall, {"kernel": 0.015, "local": 0.1}),
            _scored(lag, {"local": 0.1, "noise": 0.005, "kernel": 0.3}),
        ]
    )
    heads.loc[(heads["run_id"] == "used") & (heads["head"] == 1), "content_ablation_bits"] = 0.3
    heads.loc[(heads["run_id"] == "r0") & (heads["head"] == 0), "content_ablation_bits"] = 0.08
    # the split model routes over both heads: each alone costs 0.015 (under the floor), both 0.05
    joint = {"split": [0.0, 0.015, 0.015, 0.05]}
    report = control_report(heads, ["mqar-p2", "lagcopy-L8", "markov_v4_k3_a0.1"], joint=joint)
    r = report["mqar-p2"]
    assert r["joint_content_bits"] == pytest.approx([0.08, 0.05, 0.0]) and r["passes"] == [True, True, False]
    assert not r["agrees"] and r["models"] == 3 and r["expected"] == ["content"]
    lag_report = report["lagcopy-L8"]
    assert lag_report["joint_content_bits"] == pytest.approx([0.005, 0.3]) and lag_report["passes"] == [
        True,
        False,
    ]
    assert report["markov_v4_k3_a0.1"]["models"] == 0 and not report["markov_v4_k3_a0.1"]["agrees"]
    # without the stored subsets a model with two content heads is not measured, and not counted
    assert control_report(heads, ["mqar-p2"])["mqar-p2"]["passes"] == [True, None, False]
    gate = control_gate(report, 0.5)
    assert (
        gate["models"] == 5
        and gate["passed"] == 3
        and gate["by_side"] == {"recall": [2, 3], "structural": [1, 2]}
    )
    marked = control_report(heads, ["mqar-p2", "markov_v4_k3_a0.1"], not_required={"markov_v4_k3_a0.1": 0.73})
    assert marked["mqar-p2"]["required"] and not marked["markov_v4_k3_a0.1"]["required"]
    assert marked["markov_v4_k3_a0.1"]["context_recurrence"] == 0.73


def test_a_recall_head_routing_at_its_answer_rows_is_a_content_control():
    heads = _heads({"mqar-p8": {"a0": ["kernel", "local"]}}).assign(content_ablation_bits=[0.1, 0.2])
    heads.loc[0, ["content_tv", "content_share"]] = 0.1  # routing at 2 of 9 rows: the all-row mean is diluted
    diluted = heads.assign(category=categorise(E7Config(), heads))
    answered = heads.assign(content_tv_answers=[0.8, np.nan], content_share_answers=[0.9, np.nan])
    answered = answered.assign(category=categorise(E7Config(), answered))
    assert list(diluted["category"]) == ["positional", "local"]
    assert list(answered["category"]) == ["content", "local"]
    reports = []
    for h in (diluted, answered):
        h = h.assign(routing_kernel=routing_kernel(h, content=0.5, explained=0.5, rank_fraction=0.25))
        reports.append(control_report(h, ["mqar-p8"])["mqar-p8"])
    assert reports[0]["passes"] == [False] and reports[1]["passes"] == [True]  # no content head: 0 bits
    assert reports[1]["max_content_tv_answers"] == pytest.approx([0.8], abs=1e-12)
    assert reports[1]["max_content_tv"] == pytest.approx([0.1], abs=1e-12)
    assert np.isnan(reports[0]["max_content_tv_answers"][0])  # no answer rows scored


def test_probe_answer_rows_mark_the_queries_whose_target_is_an_answer():
    from types import SimpleNamespace

    from entropic_bound.experiments.e7_language.execute import _episode_pools, _probe_windows
    from entropic_bound.language_models.corpora.catalogue import MQAR_KEYS, load_corpus

    members = []
    for name in ("mqar-p4", "markov_v4_k3_a0.1"):
        corpus = load_corpus(name, 4000, 0)
        cut = 3000
        members.append((corpus, corpus.tokens[:cut], corpus.tokens[cut:], {}))
    group = [SimpleNamespace(run_id="r0"), SimpleNamespace(run_id="r1")]
    n = 17  # one episode: SEP k v k v k v k v q a q a q a q a
    idx, rows = _probe_windows(group, members, _episode_pools(group, members, n), n, 8, Seeds("E7"))
    assert rows.shape == (2, 8, n) and not rows[1].any()  # no answer mask: no answer rows
    assert (rows[0].sum(axis=1) == 4).all()  # the four queries (the last target is outside)
    x = idx[0].numpy()
    i = np.flatnonzero(rows[0, 0])
    assert list(i) == [9, 11, 13, 15] and (x[:, i] <= MQAR_KEYS).all() and (x[:, i] >= 1).all()
    assert (x[:, i + 1] > MQAR_KEYS).all()  # the targets are value tokens


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


def test_config_validation_specs_and_ensembles(tmp_path, capsys):
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
    assert (
        max(map(len, groups)) == 5 and len(groups) == -(-len(lms) // 5) and sum(map(len, groups)) == len(lms)
    )
    warning = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and str(text.resolve()) in warning[0]  # the file, its length and task.tokens
    assert "1200 tokens" in warning[0] and "task.tokens = 100000" in warning[0]
    before = {s.run_id for s in exp.specs()}
    text.write_text("changed " * 100)  # a changed file is a different run
    assert {s.run_id for s in exp.specs()} != before
    assert E7Language.configure("paper").seeds >= 3 and E7Language.configure("quick").seeds >= 2


def test_recall_runs_count_as_learned_only_when_they_answer():
    table = pd.DataFrame(
        {
            "run_id": list("abc"),
            "status": "ok",
            "corpus.name": ["mqar-p2", "mqar-p2", "tinyshakespeare"],
            "entropy_rate_bits": [1.9, 1.9, np.nan],
            "compression_bits": 2.0,
            "loss_gap_fraction": 0.1,
            "uniform_tv": 0.3,
            "answer_accuracy": [0.95, 0.5, np.nan],  # b's loss is close, but it guesses the answers
        }
    )
    assert list(run_table(E7Config(), table)["learned"]) == [True, False, True]
    loose = E7Config(verdict=E7Verdict(learned_min_answer_accuracy=0.4))
    assert list(run_table(loose, table)["learned"]) == [True, True, True]


def test_a_routing_kernel_is_low_rank_relative_to_the_heads_dimension():
    """The planted rank-2 kernel, fitted by the real logit-field fit, is low-rank in a head of
    d_head 16 (bound ¼ · 16 = 4), not in one of d_head 4 (bound 1); unknown d_head: no kernel."""
    row = _head_row("kernel", 3, "text", "m0", 0)
    heads = pd.DataFrame([{**row, "d_head": d} for d in (16.0, 4.0, np.nan)])
    heads = heads.assign(category=categorise(E7Config(), heads))
    assert (heads["category"] == "content").all() and (heads["logit_field_rank_90"] == 2).all()
    kernel = routing_kernel(heads, content=0.5, explained=0.5, rank_fraction=0.25)
    assert kernel.tolist() == [True, False, False]


def test_the_final_loss_is_the_held_out_split_and_old_stores_fall_back_to_the_curve_point():
    from entropic_bound.experiments.e7_language.analysis import _heldout

    runs = pd.DataFrame({"val_bits": [2.5, 2.6], "heldout_bits": [2.4, np.nan]})
    assert _heldout(runs).tolist() == [2.4, 2.6]  # NaN: a run stored before it was measured
    assert _heldout(runs.drop(columns="heldout_bits")).tolist() == [2.5, 2.6]


def test_quick_e7_schedules_the_recall_ensemble_first():
    """Costliest first: the recall ensemble (2 members, d_model 64, 1,500 steps: ~62 CPU s measured)
    outweighs an 8-member main ensemble (600 steps at d_model 32: ~56 s); counting members alone put
    it last, after which one worker trained it while the other sat idle."""
    from entropic_bound.pipeline import configure

    exp = configure("E7", "quick")
    groups = exp.groups(exp.specs())
    first = max(groups, key=exp.group_cost)
    assert first[0].params["corpus.name"].startswith("mqar-")
    assert sorted(len(g) for g in groups if "corpus.name" in g[0].params) == [2, 6, 8, 8]


QUICK_HEADS = Path(__file__).resolve().parents[2] / "data" / "quick_rows" / "E7_heads.csv.gz"
#: The same store's control models: the loss of every subset of their heads ablated together.
QUICK_JOINT = QUICK_HEADS.with_name("E7_joint_ablation.json")
#: The copyable Markov control of the quick grid and its context recurrence (reported, not required).
QUICK_COPYABLE = {"markov_v4_k3_a0.1": 0.7267}


def _quick_c13(heads: pd.DataFrame, **verdict) -> object:
    """C13 decided on the quick store's head table (every head, the controls' included) as
    ``verdict_c13`` decides it: categories and kernels recomputed, controls gated, both readings."""
    cfg = with_option(E7Config(), {f"verdict.{k}": v for k, v in verdict.items()})
    v = cfg.verdict
    heads = heads.assign(category=categorise(cfg, heads))
    heads = heads.assign(
        routing_kernel=routing_kernel(
            heads,
            content=v.c13_kernel_content,
            explained=v.c13_kernel_explained,
            rank_fraction=v.c13_kernel_rank_fraction,
        )
    )
    controls = [s for s in dict.fromkeys(heads["source"]) if expected_mixing(s)]
    chosen = heads[heads["kind"].isin(v.c13_sources) & ~heads["source"].isin(controls)]
    info = {
        "sources": list(v.c13_sources),
        "content_tv": v.c13_content_tv,
        "kernel_content": v.c13_kernel_content,
        "kernel_explained": v.c13_kernel_explained,
        "kernel_rank_fraction": v.c13_kernel_rank_fraction,
        "weighting": v.c13_weighting,
        "ablation_bits": v.c13_ablation_bits,
    }
    joint = json.loads(QUICK_JOINT.read_text())
    report = control_report(heads, controls, v.c13_ablation_bits, QUICK_COPYABLE, joint)
    return c13_on_heads(
        chosen,
        share=v.c13_share,
        kernel_share=v.c13_kernel_share,
        controls=report,
        info=info,
        n_boot=v.bootstrap,
        seed=v.bootstrap_seed,
    )


def test_c13_on_the_quick_heads_by_count_and_by_function():
    heads = pd.read_csv(QUICK_HEADS)
    v = _quick_c13(heads)
    e, w = v.evidence, v.evidence["weighting"]
    assert e["controls_agree"] and not e["controls"]["markov_v4_k3_a0.1"]["required"]
    # every required control model read right: the recall models' two content heads together carry
    # the answers, the lag-copy and V8 Markov models' content heads (if any) carry nothing
    g = e["controls_gate"]
    assert g["outcome"] and g["passed"] == g["models"] == 6 and g["by_side"]["recall"] == [2, 2]
    assert min(e["controls"]["mqar-p2r"]["joint_content_bits"]) >= 0.02
    # a floor above what the recall routing carries fails both recall models: 4 of 6, undecided
    strict = _quick_c13(heads, c13_ablation_bits=0.5).evidence["controls_gate"]
    assert strict["passed"] == 4 and strict["outcome"] is None
    # by count: 75 % structural over 7 models, the interval reaching just below 1/2: inconclusive
    assert w["count"]["verdict"] == "inconclusive" and w["count"]["models"] == 7
    assert w["count"]["ci"][0] < 0.5 < w["count"]["share_structural"]
    # by the loss heads carry: 95 % over the 6 trained models (MiniLM has no ablation), confirmed
    assert w["ablation"]["verdict"] == "confirmed" and w["ablation"]["models_left_out"] == 1
    assert w["ablation"]["ci"][0] > 0.5 and w["ablation"]["kernel_ci"][1] < 0.5
    # the count decides; the other reading is not opposite, so the count's verdict stands
    assert v.outcome == "inconclusive" and not w["agree"] and not w["opposite"]
    assert e["decision"]["outcome"] is None and e["decision"]["narrow"]
    # each way: the function-weighted reading as main confirms; bars of 0.4 (structure) and 0.6
    # (kernel share: its count interval ends on 0.5) confirm both readings
    assert _quick_c13(heads, c13_weighting="ablation").outcome == "confirmed"
    assert _quick_c13(heads, c13_share=0.4).outcome == "inconclusive"
    assert _quick_c13(heads, c13_share=0.4, c13_kernel_share=0.6).outcome == "confirmed"
    # a bar of 0.99: the count refutes, the function-weighted reading reaches it (undecided): refuted
    high = _quick_c13(heads, c13_share=0.99)
    assert high.outcome == "refuted" and high.evidence["weighting"]["ablation"]["verdict"] == "inconclusive"
    # the loss moved off the structural heads: refuted by function, the count undecided: inconclusive
    structural = heads["category"].isin(["local", "positional", "sink", "averaging"])
    moved = heads.assign(content_ablation_bits=heads["content_ablation_bits"].where(~structural, 0.0))
    m = _quick_c13(moved, c13_weighting="ablation")
    assert m.evidence["weighting"]["ablation"]["verdict"] == "refuted" and m.outcome == "refuted"


def test_c11_and_c12_power_counts_the_corpora_and_adds_them_by_task_corpora():
    from entropic_bound.experiments.e7_language.claims import C11, C12
    from entropic_bound.experiments.e7_language.domain_verdicts import _c11_decision
    from entropic_bound.experiments.framework.claim_power import claim_power
    from entropic_bound.report.format import power_line

    cost = {"experiment": "E7", "scale": "paper", "draws": [0], "seconds": 3600.0}
    cost["cfg"] = E7Language.configure("paper", {})
    kw = {"criterion_info": INFO11, "n_boot": 200, "seed": 0, "min_corpora": 4}
    c11 = c11_on_corpora(_corpora(-1.0, n=12, noise=3.0), **kw)  # a weak effect over 12 corpora
    power = claim_power(c11.evidence["decision"], C11.rule, C11.unit, cost)
    assert c11.evidence["decision"]["units"] == 12 and power["units_now"] == 12 and power["unit"] == "corpus"
    # the paper's draws 0-2 measured rho = -0.42 over 10 natural corpora: about 24 decide it
    at_paper = claim_power(_c11_decision(-0.42, -0.85, 0.25, 10).to_dict(), C11.rule, C11.unit, cost)
    assert at_paper["units_needed"] == 24
    assert (
        power_line(at_paper)
        == "needs ≈ 24 corpora (has 10) to confirm: add ≈ 14 more to task.corpora (each a corpus)"
    )
    tracks, _, _ = c12_halves(-0.2, (-0.33, -0.08), -0.1, (-0.2, 0.0), 0.3, corpora=10)
    c12 = claim_power(tracks.to_dict(), C12.rule, C12.unit, cost)
    assert c12["units_now"] == 10 and c12["unit"] == "corpus" and "task.corpora" in power_line(c12)

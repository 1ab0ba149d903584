"""Verdict logic of E2 on real GD trainings: C3 nothing to detect, confirmed, inconclusive and refuted."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from entropic_bound.experiments import E2Config
from entropic_bound.experiments.e2_recovery import claims
from entropic_bound.experiments.e2_recovery.analysis import recovery_table
from entropic_bound.experiments.e2_recovery.config import E2Task, E2Verdict
from entropic_bound.experiments.e2_recovery.experiment import E2Recovery
from entropic_bound.experiments.e2_recovery.recovery import min_norm_operator
from entropic_bound.experiments.framework.draws import Seeds
from entropic_bound.experiments.framework.verdict import ClaimContext
from entropic_bound.training import TrainConfig


def e2_runs(init_scales, **verdict) -> tuple[E2Config, pd.DataFrame, list[dict]]:
    """Real GD trainings of E2 (n = 8, d = 2, r* = 1, σ = 0.05; N = 2 under-identifies A, N = 8 identifies
    it; 2 seeds), as the store would hold them: the kept rows (with the minimum-norm ranks
    ``E2Recovery.prepare`` adds) and the records with the rank curves."""
    cfg = E2Config(
        task=E2Task(n=8, d=2, r_stars=(1,), sigma=0.05),
        sample_counts=(2, 8),
        init_scales=init_scales,
        optimizers=("gd",),
        seeds=2,
        verdict=E2Verdict(**verdict),
        train=TrainConfig(optimizer="gd", lr=0.1, steps=1000, checkpoints=12),
    )
    exp = E2Recovery(cfg)
    rows, records = [], []
    for group in exp.groups(exp.specs()):
        for res in exp.execute(group):
            spec = res.spec
            rows.append(
                {**spec.params, "run_id": spec.run_id, "seed": spec.seed, "status": res.status, **res.metrics}
            )
            records.append({"run_id": spec.run_id, "curves": res.curves})
    table = pd.DataFrame(rows)
    kept = table[table["status"] == "ok"].reset_index(drop=True)
    return cfg, exp.prepare(table, kept, records, exp.seeds)[0], records


@pytest.fixture(scope="module")
def small_vs_large():
    return e2_runs((1e-3, 0.5))


def test_c3_nothing_to_detect_where_the_min_norm_interpolant_is_already_at_r_star(small_vs_large):
    """σ = 0.05: the minimum-norm fit of N = 2 samples is A*'s seen part plus noise the energy rank
    ignores, so its rank is r*: the data alone force the low rank and no bias can show."""
    cfg, rows, records = small_vs_large
    v = claims.C3.judge(cfg, rows, ClaimContext(records, seeds=Seeds("E2")))
    e = v.evidence
    assert e["estimator"] == "energy_threshold_rank_90" and "non_standard" not in e
    assert e["estimator_on_truth"]["r*=1, flat"]["noiseless"] == 1
    assert v.outcome == "inconclusive" and e["reason"].startswith("nothing to detect")
    assert set(e["min_norm_rank"].values()) == {1.0} and e["data_sets_with_room"] == 0
    assert e["decision"] is None
    assert (
        e["small_init_identified_recovery"]
        == e["large_init_identified_recovery"]
        == pytest.approx(1.0, abs=1e-12)
    )  # the control
    assert e["rank_curves_stored"] == len(rows) and "init 0.001, N 2" in e["rank_over_training"]
    table = recovery_table(rows)
    assert set(table["identified"]) == {True, False}


def _numerical(cfg, **verdict):
    return replace(cfg, verdict=replace(cfg.verdict, c3_estimator="numerical_rank", **verdict))


def test_c3_by_interval_where_the_min_norm_rank_leaves_room(small_vs_large):
    """The numerical rank counts the noise of the minimum-norm fit (rank > r* + 0.5): small init
    recovers r* on 2 of 2 data sets, large init on 0 of 2; Newcombe's interval [0.07, 1] over the
    data sets lies above the boundary 0."""
    cfg, rows, records = small_vs_large
    v = claims.verdict_c3(_numerical(cfg), rows, ClaimContext(records, seeds=Seeds("E2")))
    e = v.evidence
    assert "non_standard" in e and min(e["min_norm_rank"].values()) > 1.5
    assert (e["success_small"], e["runs_small"], e["success_large"], e["runs_large"]) == (2, 2, 0, 2)
    assert e["decision"]["units"] == e["data_sets"] == 2 and e["decision"]["unit"].startswith("data set")
    lo, hi = e["decision"]["interval"]
    assert v.outcome == "confirmed" and 0 < lo < 0.5 and hi == pytest.approx(1.0)
    assert claims.verdict_c3(
        _numerical(cfg, c3_contrast=lo * 2), rows, ClaimContext(records, seeds=Seeds("E2"))
    ).outcome == ("inconclusive")
    # small and large init's estimates swapped (no rank curves: final estimates decide)
    under = rows["identified"] < 0.5
    small_under, large_under = under & (rows["init_scale"] <= 0.01), under & (rows["init_scale"] >= 0.1)
    large_value = rows.loc[large_under, "A_numerical_rank"].max()
    worse = rows.assign(
        A_numerical_rank=np.where(
            small_under, large_value, np.where(large_under, rows["task.r_star"], rows["A_numerical_rank"])
        )
    )
    v = claims.verdict_c3(_numerical(cfg), worse, ClaimContext(seeds=Seeds("E2")))
    assert v.outcome == "refuted" and v.evidence["decision"]["interval"][1] <= 0


def test_c3_too_few_runs_or_no_min_norm_rank_is_inconclusive(small_vs_large):
    cfg, rows, records = small_vs_large
    v = claims.verdict_c3(_numerical(cfg), rows[rows["seed"] == 0], ClaimContext(records, seeds=Seeds("E2")))
    assert v.outcome == "inconclusive" and "too few" in v.evidence["reason"]
    bare = rows.drop(columns=[c for c in rows if c.startswith("min_norm_")])
    v = claims.verdict_c3(cfg, bare, ClaimContext(records, seeds=Seeds("E2")))
    assert v.outcome == "inconclusive" and v.evidence["reason"].startswith("min_norm_rank absent")


def test_min_norm_operator_interpolates_with_the_smallest_norm():
    rng = np.random.default_rng(0)
    X, V = rng.standard_normal((2, 8, 2)), np.linalg.qr(rng.standard_normal((2, 2)))[0]
    Y = rng.standard_normal((2, 8, 2))
    A = min_norm_operator(X, Y, V)
    assert np.abs(A @ X @ V - Y).max() < 1e-10  # N·d_v = 4 < n = 8: the data are fitted exactly
    assert np.linalg.matrix_rank(A) == 4  # at most N·d_v
    M = np.concatenate(list(X @ V), axis=1)
    null = np.eye(8) - M @ np.linalg.pinv(M)  # directions the data never see
    other = A + rng.standard_normal((8, 8)) @ null  # another interpolant: the init's part kept
    assert np.abs(other @ X @ V - Y).max() < 1e-10 and np.linalg.norm(A) < np.linalg.norm(other)
    assert np.abs(A @ null).max() < 1e-10  # the minimum-norm answer puts nothing there


def test_prepare_regenerates_every_pooled_draws_data_sets():
    """Rows of two draws decided together (pooled): each run's minimum-norm ranks come from its own
    draw's data set, the same numbers a decision on that draw alone reads."""
    exp = E2Recovery(replace(E2Config(), task=E2Task(r_stars=(2,))))
    per_draw = {
        d: [s for s in exp.drawn_specs(Seeds("E2", d)) if s.params["train.n_samples"] == 2] for d in (0, 1)
    }
    rows = pd.DataFrame([{"run_id": s.run_id, "draw": d} for d, specs in per_draw.items() for s in specs])
    pooled = exp.prepare(rows, rows, [], Seeds("E2", 0))[0]
    assert pooled["min_norm_energy_effective_rank"].notna().all()
    for d in (0, 1):
        alone = rows[rows["draw"] == d]
        one = exp.prepare(alone, alone, [], Seeds("E2", d))[0]
        assert (
            one["min_norm_energy_effective_rank"].tolist()
            == pooled.loc[alone.index, "min_norm_energy_effective_rank"].tolist()
        )
    assert (
        pooled.groupby("draw")["min_norm_energy_effective_rank"].apply(tuple).nunique() == 2
    )  # fresh data per draw

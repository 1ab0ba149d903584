"""Verdict logic of E2 on real GD trainings: C3 confirmed, inconclusive and refuted."""

import pandas as pd
import pytest

from entropic_bound.experiments import E2Config
from entropic_bound.experiments.e2_recovery import claims
from entropic_bound.experiments.e2_recovery.analysis import recovery_table
from entropic_bound.experiments.e2_recovery.config import E2Task, E2Verdict
from entropic_bound.experiments.e2_recovery.experiment import E2Recovery
from entropic_bound.experiments.verdict import ClaimContext
from entropic_bound.training import TrainConfig


def e2_runs(init_scales, **verdict) -> tuple[E2Config, pd.DataFrame, list[dict]]:
    """Real GD trainings of E2 (n = 8, d = 2, r* = 1, σ = 0.05; N = 2 under-identifies A, N = 8 identifies
    it; 2 seeds), as the store would hold them: the kept rows and the records with the rank curves."""
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
    return cfg, table[table["status"] == "ok"].reset_index(drop=True), records


@pytest.fixture(scope="module")
def small_vs_large():
    return e2_runs((1e-3, 0.5))


def test_c3_small_init_finds_low_rank_where_the_data_leave_room(small_vs_large):
    cfg, rows, records = small_vs_large
    v = claims.C3.judge(cfg, rows, ClaimContext(records))
    e = v.evidence
    assert v.outcome == "confirmed" and e["contrast"] >= cfg.verdict.c3_contrast
    assert (
        e["estimator"] == "energy_threshold_rank_90"
        and e["estimator_on_truth"]["r*=1, flat"]["noiseless"] == 1
    )
    assert e["large_init_under_identified_low_rank"] == pytest.approx(
        0.0, abs=1e-12
    )  # the init's residue outside the data span
    assert (
        e["small_init_identified_recovery"]
        == e["large_init_identified_recovery"]
        == pytest.approx(1.0, abs=1e-12)
    )  # the control
    assert e["rank_curves_stored"] == len(rows) and "init 0.001, N 2" in e["rank_over_training"]
    table = recovery_table(rows)
    assert set(table["identified"]) == {True, False}


def test_c3_too_few_runs_is_inconclusive(small_vs_large):
    cfg, rows, records = small_vs_large
    v = claims.C3.judge(cfg, rows[rows["seed"] == 0], ClaimContext(records))
    assert v.outcome == "inconclusive" and "too few" in v.evidence["reason"]


def test_c3_refuted_when_the_small_init_is_no_more_low_rank_than_the_large():
    # init 0.4 called "small": GD from it keeps its residue like init 0.5 does
    cfg, rows, records = e2_runs((0.4, 0.5), small_init_max=0.4, large_init_min=0.5)
    v = claims.C3.judge(cfg, rows, ClaimContext(records))
    assert v.outcome == "refuted" and v.evidence["contrast"] <= 0

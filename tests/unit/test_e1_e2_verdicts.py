"""Verdict logic of E1 on synthetic tables and of E2 on real GD trainings: each verdict flips."""

import numpy as np
import pandas as pd
import pytest

from entropic_bound.experiments import E1Config, E2Config
from entropic_bound.experiments.e1_linear_surrogate.claims import verdict_c1, verdict_c2
from entropic_bound.experiments.e2_recovery import claims
from entropic_bound.experiments.e2_recovery.analysis import recovery_table
from entropic_bound.experiments.e2_recovery.config import E2Task, E2Verdict
from entropic_bound.experiments.e2_recovery.experiment import E2Recovery
from entropic_bound.experiments.verdict import ClaimContext
from entropic_bound.training import TrainConfig


def e1_table(ratio_below=1.0, rel_above=1e-4, at_r_star=1e-5):
    rows = []
    for v in ("known", "learned"):
        for rank in (1, 2, 3, 4):
            closed = {1: 0.5, 2: 0.0, 3: 0.0, 4: 0.0}[rank]
            excess = closed * ratio_below if rank < 2 else (at_r_star if rank == 2 else rel_above)
            rows.append(
                {
                    "task.r_star": 2,
                    "task.spectrum": "flat",
                    "v": v,
                    "seed": 0,
                    "rank": rank,
                    "closed_form": closed,
                    "excess": excess,
                    "rel_excess": excess,
                    "signal": 1.0,
                    "ratio_to_closed_form": excess / closed if closed else np.nan,
                    "status": "ok",
                }
            )
    return pd.DataFrame(rows)


def test_c1_confirmed_then_refuted_when_training_misses_the_bound():
    cfg = E1Config()
    assert verdict_c1(cfg, e1_table(1.02), ClaimContext()).outcome == "confirmed"
    assert verdict_c1(cfg, e1_table(1.5), ClaimContext()).outcome == "refuted"
    assert verdict_c1(cfg, e1_table().iloc[0:0], ClaimContext()).outcome == "inconclusive"


def test_c2_needs_the_floor_and_a_sharp_transition():
    cfg = E1Config()
    assert verdict_c2(cfg, e1_table(), ClaimContext()).outcome == "confirmed"
    assert verdict_c2(cfg, e1_table(rel_above=0.05), ClaimContext()).outcome == "refuted"  # misses the floor
    assert (
        verdict_c2(cfg, e1_table(at_r_star=0.009), ClaimContext()).outcome == "refuted"
    )  # 0.5/0.009 < 100: not sharp


def e2_runs(init_scales, **verdict) -> tuple[E2Config, pd.DataFrame, list[dict]]:
    """Real GD trainings of E2 (n = 8, d = 2, r* = 1, σ = 0.05; N = 2 under-identifies A, N = 8 identifies
    it; 2 seeds), as the store would hold them: the ok rows and the records with the rank curves."""
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
    cfg, ok, records = small_vs_large
    v = claims.C3.judge(cfg, ok, ClaimContext(records))
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
    assert e["rank_curves_stored"] == len(ok) and "init 0.001, N 2" in e["rank_over_training"]
    table = recovery_table(ok)
    assert set(table["identified"]) == {True, False}


def test_c3_too_few_runs_is_inconclusive(small_vs_large):
    cfg, ok, records = small_vs_large
    v = claims.C3.judge(cfg, ok[ok["seed"] == 0], ClaimContext(records))
    assert v.outcome == "inconclusive" and "too few" in v.evidence["reason"]


def test_c3_refuted_when_the_small_init_is_no_more_low_rank_than_the_large():
    # init 0.4 called "small": GD from it keeps its residue like init 0.5 does
    cfg, ok, records = e2_runs((0.4, 0.5), small_init_max=0.4, large_init_min=0.5)
    v = claims.C3.judge(cfg, ok, ClaimContext(records))
    assert v.outcome == "refuted" and v.evidence["contrast"] <= 0

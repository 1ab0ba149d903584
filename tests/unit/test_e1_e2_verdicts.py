"""Verdict logic of E1 and E2 on synthetic tables: each verdict flips when the numbers flip."""

import numpy as np
import pandas as pd

from entropic_bound.experiments import E1Config, E2Config
from entropic_bound.experiments.base import ClaimContext
from entropic_bound.experiments.e1_linear_surrogate.claims import verdict_c1, verdict_c2
from entropic_bound.experiments.e2_recovery.analysis import recovery_table
from entropic_bound.experiments.e2_recovery.claims import verdict_c3


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
    assert verdict_c1(cfg, e1_table(1.02), ClaimContext()).verdict == "confirmed"
    assert verdict_c1(cfg, e1_table(1.5), ClaimContext()).verdict == "refuted"
    assert verdict_c1(cfg, e1_table().iloc[0:0], ClaimContext()).verdict == "inconclusive"


def test_c2_needs_the_floor_and_a_sharp_transition():
    cfg = E1Config()
    assert verdict_c2(cfg, e1_table(), ClaimContext()).verdict == "confirmed"
    assert verdict_c2(cfg, e1_table(rel_above=0.05), ClaimContext()).verdict == "refuted"  # misses the floor
    assert (
        verdict_c2(cfg, e1_table(at_r_star=0.009), ClaimContext()).verdict == "refuted"
    )  # 0.5/0.009 < 100: not sharp


def e2_table(gd_small_rank=2, adam_rank=8):
    rows = []
    for opt, est in (("gd", gd_small_rank), ("adam", adam_rank)):
        for init in (1e-3, 1.0):
            for n_samples, ident in ((2, 0.0), (64, 1.0)):
                value = est if init < 0.5 else 8
                rows.append(
                    {
                        "train.optimizer": opt,
                        "init_scale": init,
                        "train.n_samples": n_samples,
                        "identified": ident,
                        "task.r_star": 2,
                        "rel_error": 0.01,
                        "status": "ok",
                        "A_numerical_rank": value,
                        "A_energy_effective_rank": value + 0.2,
                    }
                )
    return pd.DataFrame(rows)


def test_c3_follows_the_stated_estimator():
    cfg = E2Config()
    v = verdict_c3(cfg, e2_table(), ClaimContext())
    assert v.verdict == "confirmed" and v.evidence["rate_adam_small_init_identified"] == 0.0
    assert verdict_c3(cfg, e2_table(gd_small_rank=5), ClaimContext()).verdict == "refuted"
    table = recovery_table(e2_table())
    gd_small = table[(table["optimizer"] == "gd") & (table["init_scale"] == 1e-3) & table["identified"]]
    assert gd_small["exact_numerical_rank"].item() == 1.0

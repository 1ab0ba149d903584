"""Verdict logic of E1 on synthetic tables: C1 and C2 flip with the numbers."""

import numpy as np
import pandas as pd

from entropic_bound.experiments import E1Config
from entropic_bound.experiments.e1_linear_surrogate.claims import verdict_c1, verdict_c2
from entropic_bound.experiments.framework.verdict import ClaimContext


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

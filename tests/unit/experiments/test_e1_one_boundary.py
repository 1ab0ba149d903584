"""Every statistic E1 decides has one boundary (C1: one at each end of its band): off it, enough teacher
draws decide it, confirmed on the claim's side and refuted on the other (the real criteria on synthetic
rows at growing unit counts), and the units are keyed by draw."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from entropic_bound.experiments import E1Config
from entropic_bound.experiments.e1_linear_surrogate.claims import verdict_c1, verdict_c2
from entropic_bound.experiments.framework.verdict import ClaimContext

CFG = E1Config()


def _rows(draws: int, seeds: int, ratio_below: float, sharpness: float, seed: int = 0) -> pd.DataFrame:
    """Teacher draws (r* = 2) whose rank-1 model sits at ``ratio_below`` × the bound (noisy) and whose
    transition excess(1)/excess(2) is about ``sharpness``."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(draws):
        for s in range(seeds):
            ratio = ratio_below * rng.uniform(0.95, 1.05)
            at = 0.5 / (sharpness * rng.uniform(0.3, 1.7))
            for rank, closed, excess in ((1, 0.5, 0.5 * ratio), (2, 0.0, at), (3, 0.0, at)):
                rows.append(
                    {
                        "draw": d,
                        "task.r_star": 2,
                        "task.spectrum": "flat",
                        "v": "known",
                        "seed": s,
                        "rank": rank,
                        "closed_form": closed,
                        "excess": excess,
                        "rel_excess": excess * 1e-3,
                        "signal": 1.0,
                        "ratio_to_closed_form": excess / closed if closed else np.nan,
                    }
                )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("ratio, far", [(1.0, "confirmed"), (1.14, "refuted"), (0.86, "refuted")])
def test_c1_median_off_either_end_is_decided_by_enough_teacher_draws(ratio, far):
    many = verdict_c1(CFG, _rows(3, 200, ratio, 1000.0), ClaimContext())
    d = many.evidence["decision"]
    assert many.outcome == far and d["units"] == 600 == many.evidence["teacher_draws"]
    assert all(x["threshold"] == x["refute_threshold"] for x in many.evidence["decisions"].values())


@pytest.mark.parametrize("sharpness, far", [(130.0, "confirmed"), (75.0, "refuted")])
def test_c2_sharpness_off_its_boundary_is_decided_by_enough_teacher_draws(sharpness, far):
    many = verdict_c2(CFG, _rows(3, 200, 1.0, sharpness), ClaimContext())
    sharp = many.evidence["decisions"]["transition_sharp"]
    assert many.outcome == far and sharp["units"] == 600 and sharp["threshold"] == sharp["refute_threshold"]
    assert many.evidence["decisions"]["every_run_reaches_floor"]["units"] == 2 * 600

"""Every statistic E6 decides has one boundary: off it, enough teacher draws decide it, confirmed on the
claim's side and refuted on the other (the real criteria on synthetic rows at growing unit counts)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_e6_predictability import _row, _table

from entropic_bound.experiments.e6_predictability.claims import verdict_c9, verdict_x1
from entropic_bound.experiments.e6_predictability.config import E6Config
from entropic_bound.experiments.e6_predictability.contamination import verdict_c8
from entropic_bound.experiments.e6_predictability.estimator_bias import c10_energy, c10_numerical
from entropic_bound.experiments.framework.verdict import ClaimContext
from entropic_bound.stats.draw_keys import with_draw

CFG = E6Config()
FEW, MANY = 6, 600


def _hits(units: int, share: float) -> list[bool]:
    """``units`` flags, ``share`` of them True, spread evenly."""
    return [int((s + 1) * share) > int(s * share) for s in range(units)]


def _c9_rows(units: int, share: float) -> pd.DataFrame:
    """C9's cells at ``units`` teacher draws each: every one exact or flagged, but V unknown at r* = 1
    exact in ``share`` of them."""
    rows = []
    for s, hit in enumerate(_hits(units, share)):
        rows.append(_row("linear", "linear_v_known", "known", 1, seed=s))
        rows.append(_row("linear", "linear_v_unknown", "unknown", 1, seed=s, r_hat=1 if hit else 2))
        rows.append(_row("linear", "linear_v_unknown", "unknown", 16, seed=s, r_hat=5, identifiable=False))
    return _table(rows)


def _x1_rows(units: int, share: float) -> pd.DataFrame:
    rows = []
    for s, hit in enumerate(_hits(units, share)):
        for sigma in (0.0, 0.01):
            rows.append(
                _row(
                    "softmax", "softmax_log_attention", "known", 2, sigma=sigma, seed=s, r_hat=2 if hit else 3
                )
            )
            rows.append(
                _row(
                    "softmax", "softmax_log_attention", "unknown", 2, sigma=sigma, seed=s, identifiable=False
                )
            )
    return _table(rows)


@pytest.mark.parametrize("share, far", [(0.96, "confirmed"), (0.84, "refuted")])
def test_c9_and_x1_shares_off_their_boundary_are_decided_by_enough_teacher_draws(share, far):
    for verdict, rows in ((verdict_c9, _c9_rows), (verdict_x1, _x1_rows)):
        context = ClaimContext(tables={"frontier": pd.DataFrame()})
        few = verdict(CFG, rows(FEW, share), context)
        assert few.outcome == "inconclusive" and "more teacher draws" in few.evidence["reason"]
        many = verdict(CFG, rows(MANY, share), context)
        d = many.evidence["decision"]
        assert many.outcome == far and d["threshold"] == d["refute_threshold"] == CFG.verdict.rate
        assert d["units"] == MANY and d["unit"] == "teacher draw"


def _pairs(units: int, ratio: float, contamination: float, seed: int = 0) -> pd.DataFrame:
    """softmax_linearised pairs on ``units`` teacher draws: the numerical rank degraded by about
    ``contamination`` under the softmax, the energy rank by about ``ratio`` times that."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(units):
        num, energy = contamination * rng.uniform(0.0, 2.0), ratio * contamination * rng.uniform(0.0, 2.0)
        for teacher, dn, de in (("linear", 0.0, 0.0), ("softmax", num, energy)):
            truth = {"true_numerical_rank": 20.0, "true_energy_effective_rank": 10.0}
            rows.append(
                _row(
                    teacher,
                    "softmax_linearised",
                    "known",
                    4,
                    seed=s,
                    est_numerical_rank=20.0 + dn,
                    est_energy_effective_rank=10.0 + de,
                    **truth,
                )
            )
    return _table(rows)


@pytest.mark.parametrize(
    "ratio, contamination, far, decisive",
    [
        (0.85, 3.0, "confirmed", None),
        (1.15, 3.0, "refuted", "energy_to_numerical_ratio"),
        (0.5, 0.8, "refuted", "numerical_rank_contaminated"),
    ],
)
def test_c8_each_statistic_off_its_boundary_is_decided_by_enough_teacher_draws(
    ratio, contamination, far, decisive
):
    few = verdict_c8(CFG, _pairs(3, ratio, contamination), ClaimContext())
    assert few.outcome == "inconclusive" and few.evidence["reason"]
    many = verdict_c8(CFG, _pairs(3000, ratio, contamination), ClaimContext())
    assert many.outcome == far and many.evidence["decision"]["units"] == 3000
    for d in many.evidence["decisions"].values():
        assert d["threshold"] == d["refute_threshold"]
    if decisive:
        assert many.evidence["decision"]["condition"] == decisive


def _softmax_estimates(units: int, bias_small: float, spread: float, seed: int = 0) -> pd.DataFrame:
    """softmax_linearised estimates at r* 1 and 16: the energy rank off r* = 1 by about ``bias_small``
    (and 2 under r* = 16), the numerical rank 20 + ``spread`` x (r* - 1)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(units):
        for r in (1, 16):
            energy = r + (bias_small if r == 1 else -2.0) + rng.normal(0, 1.5)
            numerical = 20.0 + spread * (r - 1) + rng.normal(0, 6.0)
            rows.append(
                _row(
                    "softmax",
                    "softmax_linearised",
                    "known",
                    r,
                    seed=s,
                    est_energy_effective_rank=energy,
                    est_numerical_rank=numerical,
                )
            )
    return with_draw(_table(rows))


@pytest.mark.parametrize("bias, spread, far", [(0.6, 0.4, True), (0.4, 0.6, False)])
def test_c10_parts_off_their_boundary_are_decided_by_enough_teacher_draws(bias, spread, far):
    """(c)'s bias at the smallest r* against half a rank unit, (b)'s spread against half the r* span."""
    rows = _softmax_estimates(4000, bias, spread)
    energy = c10_energy(CFG, rows)["decisions"]["over_smallest"]
    saturates = c10_numerical(CFG, rows)["decisions"]["spread"]
    for d in (energy, saturates):
        assert d.outcome is far and d.threshold == d.refute_threshold and d.units == 8000

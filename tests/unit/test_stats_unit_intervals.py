"""Intervals over the independent unit: shares counted on units, a seeded bootstrap, all-of decisions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from entropic_bound.stats.interval_decision import decide_by_interval
from entropic_bound.stats.unit_intervals import (
    all_of,
    unit_bootstrap,
    unit_share,
    unit_share_decision,
    wilson,
)


def test_a_unit_weighs_the_fraction_of_its_runs_once():
    # 3 units, one with 10 runs: the interval is over 3 units, not 12 runs
    share, interval, units = unit_share([[True] * 10, [True], [False]])
    assert units == 3 and share == pytest.approx(2 / 3) and interval == pytest.approx(wilson(2, 3))
    rows = pd.DataFrame({"seed": [0, 0, 1, 2, 3], "ok": [True, False, True, True, True]})
    d = unit_share_decision(rows, rows["ok"], ["seed"], 0.5)
    assert d.statistic == pytest.approx(3.5 / 4) and d.outcome is None  # Wilson(3.5, 4) reaches 0.5
    assert unit_share_decision(rows, rows["ok"], ["seed"], 0.3).outcome is True


def test_the_bootstrap_is_seeded_stratified_and_recomputes_the_statistic():
    values = np.array([1.0, 2.0, 3.0, 10.0, 11.0, 12.0])
    strata = [0, 0, 0, 1, 1, 1]

    def gap(picked):
        picked = np.asarray(picked)
        return values[picked[picked >= 3]].mean() - values[picked[picked < 3]].mean()

    a = unit_bootstrap(values, gap, strata=strata, seed=3)
    assert a == unit_bootstrap(values, gap, strata=strata, seed=3) and a[0] == pytest.approx(9.0)
    lo, hi = a[1]
    assert 7.0 <= lo < 9.0 < hi <= 11.0  # both strata present in every draw: the gap never collapses


def test_all_of_is_refuted_by_one_condition_and_names_the_decisive_one():
    clear = decide_by_interval(1.0, (0.95, 1.0), 0.9)
    straddle = decide_by_interval(0.9, (0.6, 1.0), 0.8)
    fail = decide_by_interval(0.2, (0.1, 0.3), 0.9)
    assert all_of({"a": clear, "b": clear}) == (True, "a")
    assert all_of({"a": clear, "b": straddle}) == (None, "b")
    assert all_of({"a": clear, "b": straddle, "c": fail}) == (False, "c")

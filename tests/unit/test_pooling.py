"""Cochran's Q on the draws' statistics: its false-disagreement rate is its level when the draws
measure the same thing (counted over simulated draws), and it detects draws that do not."""

from __future__ import annotations

import numpy as np
from scipy import stats

from entropic_bound.stats.pooling import DISAGREE_LEVEL, cochran_q


def _draw_records(rng, means, n_units=30, sd=1.0):
    """Each draw's mean over ``n_units`` units and its normal 95 % interval."""
    out = []
    for m in means:
        x = rng.normal(m, sd, n_units)
        half = 1.959964 * x.std(ddof=1) / np.sqrt(n_units)
        out.append((x.mean(), (x.mean() - half, x.mean() + half)))
    return out


def _disagree_rate(means, sims=2000, seed=0):
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sims):
        recs = _draw_records(rng, means)
        hits += cochran_q([r[0] for r in recs], [r[1] for r in recs])["disagree"]
    return hits, sims


def test_draws_of_one_experiment_are_said_to_disagree_at_most_at_the_level():
    hits, sims = _disagree_rate([0.3, 0.3, 0.3])
    # within the binomial 99.9 % upper bound of the level (the interval is read from the data's sd)
    assert hits <= stats.binom.ppf(0.999, sims, DISAGREE_LEVEL) + 5


def test_draws_that_measure_different_effects_are_said_to_disagree():
    hits, sims = _disagree_rate([0.0, 1.0], sims=300)
    assert hits / sims > 0.85  # a gap of one unit sd between draws of 30 units: Q has power ≈ 0.9


def test_the_record_and_its_edge_cases():
    out = cochran_q([0.5, 0.5], [(0.4, 0.6), (0.3, 0.7)])
    assert out["q"] == 0 and out["p"] == 1 and out["df"] == 1 and not out["disagree"] and out["i2"] == 0
    assert cochran_q([0.5], [(0.4, 0.6)]) is None
    assert cochran_q([0.5, float("nan")], [(0.4, 0.6), (0.3, 0.7)]) is None
    assert cochran_q([1.0, 0.0], [(1.0, 1.0), (0.0, 0.0)]) is None  # point values: nothing to weigh


def test_point_values_have_no_sampling_error_to_test():
    """A count rule's record (its worst run, interval [x, x]) gives Q nothing to weigh: no test, rather
    than p = 0 from an infinite weight."""
    assert cochran_q([2.3e-4, 2.1e-4], [[2.3e-4, 2.3e-4], [2.1e-4, 2.1e-4]]) is None
    assert cochran_q([0.5, 0.6, 0.7], [[0.5, 0.5], [0.5, 0.7], [0.6, 0.8]])["draws"] == 2

"""Counting estimators give the same answer when every singular value moves by a few ulps.

Another BLAS or CPU computes each singular value to within about ``k · ε · s_1`` of this machine's;
the counts compare with :func:`rounding_margin`, so their answers must not depend on those last bits
(module docstring of ``entropic_bound.spectra.estimators``). Each case below is one where an exact
comparison does flip: rounding noise of a rank-deficient matrix, exact ties, values on a threshold.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from entropic_bound.registry import ESTIMATORS
from entropic_bound.spectra import (
    energy_threshold_rank,
    lambda_star,
    largest_gap_rank,
    numerical_rank,
    optimal_hard_threshold,
    singular_values,
)
from entropic_bound.spectra.estimators import NOISE_ULPS, rounding_margin

EPS = float(np.finfo(np.float64).eps)


def jiggled(s: np.ndarray, rng: np.random.Generator, ulps: int = 4, draws: int = 200) -> np.ndarray:
    """``draws`` copies of ``s`` (draws, k), each value moved by up to ``ulps`` ulps of itself."""
    moves = rng.integers(-ulps, ulps + 1, size=(draws, *s.shape))
    return s * (1 + moves * EPS)


def rank_deficient(r: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Computed singular values of a dense n×n matrix of exact rank r: n − r of them are rounding noise."""
    a = rng.standard_normal((n, r)) @ rng.standard_normal((r, n))
    return singular_values(a)


def test_margin_is_a_few_ulps_times_the_size():
    assert rounding_margin(8) == NOISE_ULPS * 8 * EPS
    assert 1e-14 < rounding_margin(8) < 1e-13 and rounding_margin(0) == rounding_margin(1)


@pytest.mark.parametrize("r, n", [(1, 8), (2, 8), (3, 16), (5, 32)])
def test_rounding_noise_of_a_rank_deficient_matrix_is_never_counted(r, n):
    rng = np.random.default_rng(r * n)
    s = rank_deficient(r, n, rng)
    assert 0 < s[r] < 1e-13 * s[0]  # the trailing values are rounding noise, not exact zeros
    batch = np.concatenate([s[None], jiggled(s, rng, ulps=64)])
    # Before the margin, the median of the noise set the Gavish-Donoho cut (1 -> 2 on another CPU)
    # and sigma = 0 counted every noise value.
    assert (optimal_hard_threshold(batch, shape=(n, n)) == r).all()
    assert (optimal_hard_threshold(batch, shape=(n, n), sigma=0.0) == r).all()
    assert (numerical_rank(batch, tol=0.0) == r).all()
    assert (largest_gap_rank(batch, floor=0.0) == r).all()


def test_equal_gaps_tie_to_the_first_whatever_the_last_bits():
    rng = np.random.default_rng(1)
    s = 0.5 ** np.arange(10)  # every log-gap is log 2: a tie, broken towards the smallest cut
    assert (largest_gap_rank(jiggled(s, rng)) == 1).all()
    t = np.r_[1.0, 0.9, 0.09, 0.081, 0.0081]  # gaps 10× after s_2 and s_4, equal in exact arithmetic
    assert (largest_gap_rank(jiggled(t, rng)) == 2).all()


def test_a_value_on_a_threshold_is_not_counted_whatever_the_last_bits():
    rng = np.random.default_rng(2)
    s = np.r_[1.0, 0.5, 1e-2, 1e-3]  # s_3 = tol · s_1 exactly
    assert (numerical_rank(jiggled(s, rng), tol=1e-2) == 2).all()
    flat = np.r_[np.ones(4), np.zeros(4)]  # the first 3 carry 3/4 of the energy exactly
    assert (energy_threshold_rank(jiggled(flat, rng), tau=0.75) == 3).all()
    n, sigma = 8, 0.25
    cut = lambda_star(1.0) * math.sqrt(n) * sigma
    on_cut = np.r_[2 * cut, cut, np.zeros(6)]
    assert (optimal_hard_threshold(jiggled(on_cut, rng), shape=(n, n), sigma=sigma) == 1).all()


def test_a_value_just_outside_the_margin_is_counted():
    margin = rounding_margin(4)
    s = np.r_[1.0, 1e-2 * (1 + 4 * margin), 10 * margin, 0.0]
    assert numerical_rank(s, tol=1e-2) == 2  # clears the threshold by more than the margin
    assert numerical_rank(s, tol=0.0) == 3  # 10 margins above 0: a value, not rounding noise


@pytest.mark.parametrize("name", [n for n in ESTIMATORS.names() if ESTIMATORS.get(n).integer])
def test_every_count_is_unmoved_by_few_ulps_on_random_spectra(name):
    rng = np.random.default_rng(3)
    for r in (1, 3, 6):
        s = rank_deficient(r, 12, rng)
        params = {"shape": (12, 12)} if name == "optimal_hard_threshold" else {}
        est = ESTIMATORS.get(name)
        # another CPU moves each value by a few ulps *of s_1*: rounding noise changes completely
        batch = np.abs(s + rng.integers(-4, 5, size=(200, s.size)) * EPS * s[0])
        assert (est(batch, **params) == est(s, **params)).all(), (name, r)


def test_rounding_an_estimate_at_a_half_does_not_depend_on_its_last_bits():
    from entropic_bound.spectra import round_estimate

    halves = np.r_[0.5, 1.5, 2.5, 7.5]
    rng = np.random.default_rng(4)
    for moved in jiggled(halves, rng, ulps=4):
        assert (round_estimate(moved) == np.r_[1, 2, 3, 8]).all()
    assert (round_estimate(np.r_[1.4999, 2.49, 2.51]) == np.r_[1, 2, 3]).all()

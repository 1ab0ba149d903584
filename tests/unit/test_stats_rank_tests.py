"""Spearman tests: exact permutation below 10 points, bootstrap above, and the points-needed power rule."""

import math

import numpy as np
import pytest
from scipy.stats import permutation_test, rankdata

from entropic_bound.stats.rank_tests import fisher_interval, points_needed, spearman, spearman_test


def test_four_points_at_rho_minus_one_are_not_significant_two_sided():
    out = spearman_test([1, 2, 3, 4], [4, 3, 2, 1], seed=0)
    assert out["test"] == "exact_permutation" and out["rho"] == pytest.approx(-1.0)
    assert out["p_less"] == pytest.approx(1 / 24) and out["p_value"] == pytest.approx(2 / 24)
    assert out["decision"] is None  # the bootstrap's [-1, -1] would have "confirmed"


@pytest.mark.parametrize("n", [5, 6, 7])
def test_exact_p_values_equal_scipy_exact_permutation_test(n):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    y[:2] = y[2]  # ties: average ranks, permuted like any value
    out = spearman_test(x, y, seed=0)

    def stat(a):
        return spearman(x, a)

    ref = permutation_test((y,), stat, permutation_type="pairings", n_resamples=math.factorial(n) + 1)
    assert out["p_value"] == pytest.approx(ref.pvalue, abs=1e-12)
    less = permutation_test((y,), stat, permutation_type="pairings", alternative="less", n_resamples=10**6)
    assert out["p_less"] == pytest.approx(less.pvalue, abs=1e-12)


def test_decision_flips_with_the_sign_and_needs_significance():
    x = np.arange(8.0)
    down = -x + np.array([0, 0.5, -0.5, 0, 0.2, 0, -0.3, 0])
    assert spearman_test(x, down, seed=0)["decision"] is True
    assert spearman_test(x, -down, seed=0)["decision"] is False
    noise = np.random.default_rng(3).standard_normal(8)
    out = spearman_test(x, noise, seed=0)
    assert out["p_value"] > 0.05 and out["decision"] is None


def test_ten_points_switch_to_the_bootstrap_with_a_half_width():
    rng = np.random.default_rng(1)
    x = np.arange(12.0)
    reps = [list(-xi + 0.3 * rng.standard_normal(3)) for xi in x]
    out = spearman_test(x, [np.mean(r) for r in reps], replicates=reps, seed=4, n_boot=500, n_perm=4000)
    assert out["test"] == "bootstrap" and out["ci_high"] < 0 and out["decision"] is True
    assert out["half_width"] == pytest.approx((out["ci_high"] - out["ci_low"]) / 2)
    assert out["p_value"] < 0.01


def test_fisher_interval_is_wider_with_fewer_points():
    lo4, hi4 = fisher_interval(-0.77, 6)
    lo20, hi20 = fisher_interval(-0.77, 20)
    assert lo4 < lo20 < -0.77 < hi20 < hi4


def test_points_needed_gives_the_stated_power_in_simulation():
    rho_s = 0.77
    n = points_needed(-rho_s)
    assert n == 11  # 3 + 1.06 ((1.960 + 0.842) / atanh 0.77)^2 = 10.99
    rng = np.random.default_rng(0)
    r = 2 * math.sin(math.pi * rho_s / 6)  # Pearson r of a bivariate normal with Spearman rho_s

    def rhos(corr: float, draws: int = 4000) -> np.ndarray:
        a = rng.standard_normal((draws, n))
        b = corr * a + math.sqrt(1 - corr**2) * rng.standard_normal((draws, n))
        ra, rb = rankdata(a, axis=1) - (n + 1) / 2, rankdata(b, axis=1) - (n + 1) / 2
        return (ra * rb).sum(1) / (ra**2).sum(1)

    critical = np.quantile(np.abs(rhos(0.0)), 0.95)
    power = np.mean(np.abs(rhos(r)) > critical)
    assert 0.72 < power < 0.9
    assert points_needed(0.0) is None and points_needed(0.3) > 80

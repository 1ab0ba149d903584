"""The pre-stated estimator rule on ground-truth operators with and without fitted noise."""

import numpy as np
import pytest

from entropic_bound.errors import DataError
from entropic_bound.spectra import numerical_rank
from entropic_bound.stats.estimator_choice import TIE_ORDER, choose_estimator, ground_truth_cases


def _flat(r: int, n: int, rng) -> np.ndarray:
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    return Q[:, :r] @ Q[:, :r].T


@pytest.mark.parametrize("r_star, noise", [(2, 0.02), (4, 0.05), (3, 0.03)])
def test_noise_at_a_few_percent_rules_out_the_numerical_rank_and_picks_the_energy_threshold(r_star, noise):
    rng = np.random.default_rng(r_star)
    cases = ground_truth_cases(_flat(r_star, 16, rng), r_star, noise_fraction=noise, draws=4, rng=rng)
    noisy_numerical = [numerical_rank(c["singular_values"]) for c in cases[1:]]
    assert min(noisy_numerical) > r_star  # the 1 % cut counts the noise
    out = choose_estimator(cases)
    assert out["estimator"] == "energy_threshold_rank_90" and out["all_match"]
    assert out["matches"]["numerical_rank"] == pytest.approx(1 / 5)  # only the noiseless case
    assert out["r_star"] == [r_star] * 5
    assert [round(v) for v in out["estimator_on_truth"]] == [r_star] * 5


def test_without_noise_the_first_estimator_in_the_stated_order_is_chosen():
    rng = np.random.default_rng(0)
    out = choose_estimator(ground_truth_cases(_flat(3, 12, rng), 3))
    assert out["estimator"] == "numerical_rank" == TIE_ORDER[0]
    assert out["estimator_on_truth"] == [3.0]


def test_a_geometric_spectrum_needs_the_99_percent_threshold():
    rng = np.random.default_rng(1)
    Q = np.linalg.qr(rng.standard_normal((16, 16)))[0]
    A = Q[:, :4] @ np.diag([1, 0.5, 0.25, 0.125]) @ Q[:, :4].T  # 90 % of the energy in 2 components
    out = choose_estimator(ground_truth_cases(A, 4, noise_fraction=0.03, draws=3, rng=rng))
    assert out["matches"]["energy_threshold_rank_90"] == pytest.approx(0.0, abs=1e-12)
    assert out["estimator"] == "energy_threshold_rank_99"


def test_no_estimator_matching_every_case_is_reported():
    rng = np.random.default_rng(2)
    heavy = ground_truth_cases(_flat(2, 16, rng), 2, noise_fraction=0.9, draws=3, rng=rng)
    out = choose_estimator(heavy)
    assert not out["all_match"] and max(out["matches"].values()) < 1


def test_noisy_cases_need_an_explicit_rng_and_a_matrix():
    with pytest.raises(DataError):
        ground_truth_cases(np.eye(4), 4, noise_fraction=0.1, draws=1)
    with pytest.raises(DataError):
        ground_truth_cases(np.ones(4), 1)
    with pytest.raises(DataError):
        choose_estimator([])

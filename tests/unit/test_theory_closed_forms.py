"""Closed forms against dense computations and Monte-Carlo estimates on fresh inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.errors import UserInputError
from entropic_bound.tasks import FixedOperatorTask
from entropic_bound.tasks.operators import sqrtm_psd
from entropic_bound.theory import (
    clean_signal,
    excess_risk_curve,
    min_excess_risk,
    population_excess_risk,
    tail_energy,
    tail_energy_curve,
)


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def mc_excess(A, V, A_star, V_star, n_samples, seed, token_sqrt=None) -> float:
    """Monte-Carlo ``E||A X V − A* X V*||² / (n d_v)`` on fresh Gaussian inputs."""
    A, V, A_star, V_star = (torch.as_tensor(t, dtype=torch.float64) for t in (A, V, A_star, V_star))
    n, d = A_star.shape[0], V_star.shape[0]
    X = torch.randn(n_samples, n, d, generator=gen(seed), dtype=torch.float64)
    if token_sqrt is not None:
        X = torch.as_tensor(token_sqrt) @ X
    diff = A @ X @ V - A_star @ X @ V_star  # (N, n, d_v)
    return float(diff.pow(2).sum() / (n_samples * n * V_star.shape[1]))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.0, 10.0), min_size=1, max_size=12), st.data())
def test_tail_energy_is_the_sum_of_squares_beyond_r(values, data):
    s = np.array(values)
    r = data.draw(st.integers(0, len(values)))
    expected = sum(v**2 for v in sorted(values, reverse=True)[r:])
    assert tail_energy(s, r) == pytest.approx(expected, abs=1e-9)
    assert tail_energy(np.random.default_rng(0).permutation(s), r) == pytest.approx(expected, abs=1e-9)
    curve = tail_energy_curve(s, range(len(values) + 1))
    assert curve[0] == pytest.approx(np.sum(s**2)) and curve[-1] == 0.0
    assert np.all(np.diff(curve) <= 1e-12)


def test_tail_energy_rejects_bad_ranks():
    with pytest.raises(UserInputError, match=r"'r' parameter must be an int in \[0, 3\]\. Got 4"):
        tail_energy([3.0, 2.0, 1.0], 4)
    with pytest.raises(UserInputError):
        tail_energy([3.0, 2.0, 1.0], -1)


def test_min_excess_risk_formula_and_zero_beyond_r_star():
    truth = FixedOperatorTask(n=8, d=4, d_v=3, r_star=3, spectrum="geometric").teacher(gen(0)).truth
    A, V = truth["A"], truth["V"]
    s = np.linalg.svd(A, compute_uv=False)
    for r in range(0, 9):
        expected = np.sum(V**2) * np.sum(s[r:] ** 2) / (8 * 3)
        assert min_excess_risk(A, V, r) == pytest.approx(expected, abs=1e-14)
    np.testing.assert_allclose(excess_risk_curve(A, V, [3, 5, 8]), 0.0, atol=1e-28)
    assert min_excess_risk(A, V, 0) == pytest.approx(clean_signal(A, V))  # rank 0: all signal missed


@pytest.mark.parametrize("token_cov", [None, "ar1"])
def test_min_excess_risk_equals_monte_carlo_excess_of_the_truncated_svd(token_cov):
    teacher = FixedOperatorTask(
        n=8, d=4, r_star=4, spectrum="power", token_cov=token_cov, token_rho=0.7
    ).teacher(gen(1))
    truth = teacher.truth
    A_star, V_star = truth["A"], truth["V"]
    C = truth["token_cov"]
    R = np.eye(8) if C is None else sqrtm_psd(C)
    U, s, Wt = np.linalg.svd(A_star @ R)
    for r in (1, 2, 3):
        A_r = (U[:, :r] * s[:r]) @ Wt[:r] @ np.linalg.inv(R)  # best rank-r A for the whitened operator
        mc = mc_excess(A_r, V_star, A_star, V_star, 6000, seed=r, token_sqrt=R)
        assert min_excess_risk(A_star, V_star, r, token_cov=C) == pytest.approx(mc, rel=0.04)


def test_truncating_a_star_itself_is_suboptimal_under_token_covariance():
    # With C != I the optimum truncates A* C^{1/2}, not A*; the closed form must be below the naive choice.
    truth = FixedOperatorTask(n=8, d=4, r_star=4, token_cov="ar1", token_rho=0.8).teacher(gen(2)).truth
    A_star, V_star, C = truth["A"], truth["V"], truth["token_cov"]
    U, s, Wt = np.linalg.svd(A_star)
    naive = population_excess_risk((U[:, :2] * s[:2]) @ Wt[:2], V_star, A_star, V_star, token_cov=C)
    assert min_excess_risk(A_star, V_star, 2, token_cov=C) < float(naive)


def test_population_excess_is_zero_at_the_truth_and_equals_the_kronecker_norm():
    truth = FixedOperatorTask(n=5, d=4, d_v=3, r_star=2).teacher(gen(0)).truth
    A_star, V_star = truth["A"], truth["V"]
    assert float(population_excess_risk(A_star, V_star, A_star, V_star)) == pytest.approx(0.0, abs=1e-14)
    g = np.random.default_rng(0)
    A, V = g.normal(size=(5, 5)), g.normal(size=(4, 3))
    kron = np.kron(V.T, A) - np.kron(V_star.T, A_star)  # vec(A X V) = (Vᵀ ⊗ A) vec X
    assert float(population_excess_risk(A, V, A_star, V_star)) == pytest.approx(
        np.sum(kron**2) / 15, rel=1e-12
    )


@pytest.mark.parametrize("token_cov", [None, "ar1"])
def test_population_excess_matches_monte_carlo_for_a_batch_of_models(token_cov):
    truth = FixedOperatorTask(n=6, d=4, r_star=3, token_cov=token_cov).teacher(gen(3)).truth
    A_star, V_star, C = truth["A"], truth["V"], truth["token_cov"]
    g = torch.Generator().manual_seed(9)
    A = torch.from_numpy(A_star) + 0.3 * torch.randn(3, 6, 6, generator=g, dtype=torch.float64)  # (M, n, n)
    V = torch.from_numpy(V_star) + 0.3 * torch.randn(3, 4, 4, generator=g, dtype=torch.float64)  # (M, d, d_v)
    exact = population_excess_risk(A, V, A_star, V_star, token_cov=C)
    assert exact.shape == (3,) and exact.dtype == np.float64
    R = None if C is None else sqrtm_psd(C)
    for m in range(3):
        mc = mc_excess(A[m], V[m], A_star, V_star, 6000, seed=m, token_sqrt=R)
        assert exact[m] == pytest.approx(mc, rel=0.05)
        assert exact[m] == pytest.approx(
            float(population_excess_risk(A[m].numpy(), V[m].numpy(), A_star, V_star, C)), rel=1e-12
        )


def test_population_excess_accepts_torch_and_numpy_and_is_scale_invariant():
    truth = FixedOperatorTask(n=4, d=3, r_star=2).teacher(gen(0)).truth
    g = np.random.default_rng(1)
    A, V = g.normal(size=(2, 4, 4)), g.normal(size=(2, 3, 3))
    a = population_excess_risk(A, V, truth["A"], truth["V"])
    b = population_excess_risk(
        torch.from_numpy(A).float(),
        torch.from_numpy(V).float(),
        torch.from_numpy(truth["A"]),
        torch.from_numpy(truth["V"]),
    )
    np.testing.assert_allclose(a, b, rtol=1e-5)
    np.testing.assert_allclose(population_excess_risk(3 * A, V / 3, truth["A"], truth["V"]), a, rtol=1e-12)


def test_no_rank_r_student_beats_the_closed_form():
    truth = FixedOperatorTask(n=6, d=3, r_star=4, spectrum="geometric").teacher(gen(5)).truth
    A_star, V_star = truth["A"], truth["V"]
    bound = min_excess_risk(A_star, V_star, 2)
    U, s, Wt = np.linalg.svd(A_star)
    g = np.random.default_rng(0)
    eps = np.logspace(-4, 0, 500)[:, None, None]  # students from near-optimal to far
    P = U[:, :2] * s[:2] + eps * g.normal(size=(500, 6, 2))
    Q = Wt[:2].T + eps * g.normal(size=(500, 6, 2))
    V = V_star * g.uniform(0.5, 1.5, size=(500, 1, 1)) + eps * g.normal(size=(500, 3, 3))
    risks = population_excess_risk(P @ np.swapaxes(Q, -1, -2), V, A_star, V_star)
    assert np.all(risks >= bound - 1e-12)
    assert risks.min() == pytest.approx(bound, rel=0.05)  # the bound is attained, not just a bound

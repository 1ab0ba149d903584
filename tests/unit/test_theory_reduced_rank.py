"""Reduced-rank regression (V known) and alternating least squares (V unknown)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from entropic_bound.errors import UserInputError
from entropic_bound.tasks import FixedOperatorTask
from entropic_bound.theory import (
    empirical_risk,
    min_excess_risk,
    moment_init,
    population_excess_risk,
    rank_constrained_least_squares,
    reduced_rank_path,
    reduced_rank_regression,
)
from entropic_bound.theory import reduced_rank as rr


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def data(n=6, d=4, d_v=None, r_star=3, sigma=0.3, N=40, seed=0, **kw):
    teacher = FixedOperatorTask(n=n, d=d, d_v=d_v, r_star=r_star, sigma=sigma, **kw).teacher(gen(seed))
    return teacher.truth, teacher.sample(N, gen(seed + 100))


def truncate(A: np.ndarray, r: int) -> np.ndarray:
    U, s, Wt = np.linalg.svd(A)
    return (U[:, :r] * s[:r]) @ Wt[:r]


def test_full_rank_rrr_is_ordinary_least_squares_on_the_concatenated_data():
    truth, b = data(n=5, d=4, d_v=3, N=7)
    V = truth["V"]
    Z = np.concatenate(list((b.X @ torch.from_numpy(V)).numpy()), axis=1)  # (n, N d_v)
    Y = np.concatenate(list(b.Y.numpy()), axis=1)  # (n, N d_v)
    A_ols = np.linalg.lstsq(Z.T, Y.T, rcond=None)[0].T  # min ||Y − A Z||
    A = reduced_rank_regression(b.X, b.Y, V, 5)
    assert A.shape == (5, 5) and A.dtype == torch.float64
    np.testing.assert_allclose(A.numpy(), A_ols, atol=1e-10)


@pytest.mark.parametrize("r", [1, 2, 3])
def test_rrr_matches_a_brute_force_optimiser_and_beats_naive_truncations(r):
    truth, b = data(n=6, d=3, r_star=4, sigma=0.5, N=6, seed=r)
    V = truth["V"]
    A = reduced_rank_regression(b.X, b.Y, V, r).numpy()
    assert np.linalg.matrix_rank(A, tol=1e-9) == r
    loss = empirical_risk(A, V, b.X, b.Y)
    A_ols = reduced_rank_regression(b.X, b.Y, V, 6).numpy()
    assert loss <= empirical_risk(truncate(A_ols, r), V, b.X, b.Y) + 1e-12
    assert loss <= empirical_risk(truncate(truth["A"], r), V, b.X, b.Y) + 1e-12

    X, Y, Vt = b.X.numpy(), b.Y.numpy(), V

    def f(theta):  # loss of A = P Qᵀ
        P, Q = theta[: 6 * r].reshape(6, r), theta[6 * r :].reshape(6, r)
        return float(np.mean((P @ Q.T @ X @ Vt - Y) ** 2))

    rng = np.random.default_rng(r)
    best = min(
        minimize(f, rng.normal(size=12 * r), method="BFGS", options={"gtol": 1e-10}).fun for _ in range(4)
    )
    assert loss == pytest.approx(best, rel=1e-6)


def test_noiseless_rrr_recovers_a_star_exactly_at_and_above_r_star():
    truth, b = data(n=8, d=4, r_star=3, sigma=0.0, N=5)
    for r in (3, 5, 8):
        np.testing.assert_allclose(
            reduced_rank_regression(b.X, b.Y, truth["V"], r).numpy(), truth["A"], atol=1e-10
        )
    below = reduced_rank_regression(b.X, b.Y, truth["V"], 2).numpy()
    assert np.linalg.norm(below - truth["A"]) > 0.1


def test_path_streaming_and_numpy_inputs_agree(monkeypatch):
    truth, b = data(n=6, d=4, N=50)
    path = reduced_rank_path(b.X, b.Y, truth["V"], [1, 3, 6])
    assert path.shape == (3, 6, 6)
    for k, r in enumerate((1, 3, 6)):
        torch.testing.assert_close(path[k], reduced_rank_regression(b.X.numpy(), b.Y.numpy(), truth["V"], r))
    monkeypatch.setattr(rr, "_CHUNK", 7)  # accumulate the normal equations over 8 chunks
    torch.testing.assert_close(reduced_rank_path(b.X, b.Y, truth["V"], [1, 3, 6]), path)
    A, V = rank_constrained_least_squares(b.X, b.Y, 2, iters=15)
    monkeypatch.setattr(rr, "_CHUNK", 4096)
    A2, V2 = rank_constrained_least_squares(b.X, b.Y, 2, iters=15)
    torch.testing.assert_close(A, A2)
    torch.testing.assert_close(V, V2)


def test_bad_inputs_are_user_errors():
    truth, b = data(n=6, d=4, N=5)
    with pytest.raises(UserInputError, match=r"'r' parameter must be an int in \[1, 6\]\. Got 7"):
        reduced_rank_regression(b.X, b.Y, truth["V"], 7)
    with pytest.raises(UserInputError, match=r"V must have shape \(4, 4\)"):
        reduced_rank_regression(b.X, b.Y, truth["V"][:3], 2)
    with pytest.raises(UserInputError, match="same N"):
        rank_constrained_least_squares(b.X, b.Y[:3], 2)


def test_rrr_excess_approaches_the_closed_form_with_many_samples():
    truth, b = data(n=8, d=4, r_star=4, sigma=0.2, N=3000, spectrum="power")
    for r in (1, 2, 3, 4):
        A = reduced_rank_regression(b.X, b.Y, truth["V"], r)
        got = float(population_excess_risk(A, truth["V"], truth["A"], truth["V"]))
        bound = min_excess_risk(truth["A"], truth["V"], r)
        assert got >= bound - 1e-15
        assert got == pytest.approx(bound, rel=0.02, abs=1e-4)


def test_moment_init_is_consistent_for_isotropic_inputs():
    truth, b = data(n=6, d=4, r_star=3, sigma=0.0, N=4000)
    A0, V0 = moment_init(b.X, b.Y)
    target = np.kron(truth["V"].T, truth["A"])
    assert np.linalg.norm(np.kron(V0.numpy().T, A0.numpy()) - target) / np.linalg.norm(target) < 0.1


@pytest.mark.parametrize("token_cov", [None, "ar1"])
def test_als_reaches_the_population_optimum_for_large_n(token_cov):
    truth, b = data(n=8, d=4, r_star=4, sigma=0.2, N=3000, spectrum="geometric", token_cov=token_cov, seed=4)
    C = truth["token_cov"]
    for r in (1, 2, 3):
        A, V = rank_constrained_least_squares(b.X, b.Y, r)
        assert np.linalg.matrix_rank(A.numpy(), tol=1e-9) == r
        assert float(A.norm()) == pytest.approx(float(V.norm()))
        got = float(population_excess_risk(A, V, truth["A"], truth["V"], token_cov=C))
        bound = min_excess_risk(truth["A"], truth["V"], r, token_cov=C)
        assert bound - 1e-15 <= got <= 1.03 * bound


def test_als_is_exact_on_noiseless_data_and_monotone():
    truth, b = data(n=6, d=4, d_v=3, r_star=2, sigma=0.0, N=10, seed=2)
    A, V = rank_constrained_least_squares(b.X, b.Y, 3)
    assert float(population_excess_risk(A, V, truth["A"], truth["V"])) < 1e-12
    truth, b = data(n=6, d=4, r_star=4, sigma=0.5, N=12, seed=3)
    V0 = torch.randn(4, 4, generator=gen(0), dtype=torch.float64)  # a poor start: ALS must still descend
    losses = [
        empirical_risk(*rank_constrained_least_squares(b.X, b.Y, 2, V_init=V0, iters=k), b.X, b.Y)
        for k in (1, 2, 5, 20)
    ]
    assert all(a >= b_ - 1e-12 for a, b_ in zip(losses, losses[1:]))
    assert losses[-1] < losses[0]

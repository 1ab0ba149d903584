"""Rank estimators against known ranks, closed forms, invariances and per-matrix loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

import entropic_bound.spectra as spectra
from entropic_bound.errors import DataError, UserInputError
from entropic_bound.registry import ESTIMATORS
from entropic_bound.spectra import (
    energy_effective_rank,
    energy_threshold_rank,
    entropy_effective_rank,
    lambda_star,
    largest_gap_rank,
    mp_cdf,
    mp_median,
    numerical_rank,
    omega,
    omega_approx,
    optimal_hard_threshold,
    participation_ratio,
    singular_values,
    stable_rank,
)

NAMES = ESTIMATORS.names()
CONTINUOUS = [energy_effective_rank, entropy_effective_rank, stable_rank, participation_ratio]
SCALE_FREE = [
    numerical_rank,
    energy_effective_rank,
    entropy_effective_rank,
    stable_rank,
    participation_ratio,
    energy_threshold_rank,
    largest_gap_rank,
]


def haar(n: int, rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def with_spectrum(s: np.ndarray, m: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """An m×k matrix with nonzero singular values s: U_r diag(s) W_rᵀ with random orthonormal frames (thin QR of Gaussians)."""
    r = len(s)
    u = np.linalg.qr(rng.standard_normal((m, r)))[0]  # (m, r), orthonormal columns
    w = np.linalg.qr(rng.standard_normal((k, r)))[0]  # (k, r)
    return (u * s) @ w.T


# ---------------------------------------------------------------- registry


def test_every_estimator_is_registered_with_formula_and_reference():
    for name in NAMES:
        est = ESTIMATORS.get(name)
        assert est.name == name and est.formula and est.reference
        assert "Reference" in est.fn.__doc__ and est.fn is getattr(spectra, name)
    assert ESTIMATORS.get("numerical_rank").defaults == {"tol": 1e-2}
    assert ESTIMATORS.get("energy_threshold_rank").defaults == {"tau": 0.9}
    assert ESTIMATORS.get("largest_gap_rank").defaults == {"floor": 1e-12}
    assert ESTIMATORS.get("optimal_hard_threshold").defaults == {"sigma": None}
    assert {n for n in NAMES if ESTIMATORS.get(n).integer} == {
        "numerical_rank",
        "energy_threshold_rank",
        "largest_gap_rank",
        "optimal_hard_threshold",
    }


def test_estimator_call_checks_parameter_names():
    est = ESTIMATORS.get("numerical_rank")
    assert est(np.array([1.0, 0.5, 1e-3]), tol=1e-2) == 2
    with pytest.raises(UserInputError, match="Unknown parameter 'tl'.*Did you mean 'tol'"):
        est(np.ones(3), tl=0.1)


# ---------------------------------------------------------------- known ranks and spectra


@pytest.mark.parametrize("m, k, r", [(20, 20, 5), (30, 12, 3), (12, 30, 9), (10, 10, 10), (8, 6, 1)])
def test_flat_rank_r_matrix(m, k, r):
    rng = np.random.default_rng(r)
    s = singular_values(with_spectrum(np.full(r, 2.5), m, k, rng))
    for fn in CONTINUOUS:
        assert fn(s) == pytest.approx(r, rel=1e-10), fn.__name__
    assert numerical_rank(s) == r and largest_gap_rank(s) == r
    for tau in (0.5, 0.9, 0.99, 1.0):  # k/r >= tau; equals r for tau = 0.9 as long as r <= 9
        assert energy_threshold_rank(s, tau=tau) == math.ceil(round(tau * r, 9)), tau
    exact = np.r_[np.full(r, 2.5), np.zeros(min(m, k) - r)]
    assert numerical_rank(exact, tol=0.0) == r and largest_gap_rank(exact, floor=0.0) == r


def _geometric_entropy_exp(a: float, k: int) -> float:
    """exp(H) of p_j ∝ a^j, j = 0..k-1, from the closed-form finite sums S0 = Σa^j, S1 = Σ j a^j."""
    s0 = (1 - a**k) / (1 - a)
    s1 = a * (1 - k * a ** (k - 1) + (k - 1) * a**k) / (1 - a) ** 2
    return math.exp(math.log(s0) - math.log(a) * s1 / s0)


@pytest.mark.parametrize("q, k", [(0.5, 10), (0.9, 25), (0.99, 40)])
def test_geometric_spectrum_closed_forms(q, k):
    s = q ** np.arange(k)  # s_i = q^{i-1}
    a = q * q
    assert energy_effective_rank(s) == pytest.approx(_geometric_entropy_exp(a, k), rel=1e-10)
    assert entropy_effective_rank(s) == pytest.approx(_geometric_entropy_exp(q, k), rel=1e-10)
    assert stable_rank(s) == pytest.approx((1 - a**k) / (1 - a), rel=1e-12)
    pr = ((1 - a**k) / (1 - a)) ** 2 / ((1 - a ** (2 * k)) / (1 - a**2))
    assert participation_ratio(s) == pytest.approx(pr, rel=1e-12)
    assert numerical_rank(s, tol=1e-2) == min(k, math.floor(math.log(1e-2) / math.log(q)) + 1)
    for tau in (0.5, 0.9, 0.99):
        expected = math.ceil(math.log(1 - tau * (1 - a**k)) / math.log(a))
        assert energy_threshold_rank(s, tau=tau) == expected


def test_spec_failure_mode_energy_rank_undercounts_geometric_spectrum():
    # for a geometric spectrum decaying 1 -> 0.25 the energy effective rank is ~0.75 r*.
    r = 16
    s = np.r_[np.geomspace(1, 0.25, r), np.zeros(8)]
    assert 0.7 < energy_effective_rank(s) / r < 0.8
    assert largest_gap_rank(s) == r and numerical_rank(s) == r


def test_largest_gap_rank_rules():
    assert largest_gap_rank(np.array([1.0, 0.9, 0.8, 0.1, 0.09])) == 3
    assert largest_gap_rank(np.array([1.0, 0.5, 0.25, 0.125])) == 1  # equal gaps: first cut
    assert largest_gap_rank(np.array([3.0, 3.0, 3.0, 3.0])) == 4  # flat full spectrum: no gap
    assert largest_gap_rank(np.array([3.0, 3.0 - 1e-14, 3.0 - 2e-14])) == 3
    # exact rank 4 with a huge gap inside the kept values: the drop to zero still wins
    assert largest_gap_rank(np.array([1.0, 1e-6, 0.9e-6, 0.8e-6, 0.0, 0.0])) == 4
    assert largest_gap_rank(np.array([1.0, 1e-6, 1e-9])) == 1  # gaps log(1e6) > log(1e3)
    assert largest_gap_rank(np.array([1.0, 1e-6, 1e-9]), floor=1e-8) == 2  # 1e-9 counts as zero
    assert largest_gap_rank(np.array([2.0])) == 1 and largest_gap_rank(np.array([2.0, 0.0])) == 1


@pytest.mark.parametrize("m, k, r", [(40, 30, 7), (30, 40, 12)])
def test_largest_gap_rank_exact_rank_product(m, k, r):
    rng = np.random.default_rng(m + r)
    a = rng.standard_normal((m, r)) @ rng.standard_normal((r, k))  # generic rank-r spectrum
    assert largest_gap_rank(singular_values(a)) == r
    assert numerical_rank(singular_values(a), tol=1e-8) == r


# ---------------------------------------------------------------- zero, empty, dtype, validation


def test_zero_and_empty_spectra_give_zero():
    zero = singular_values(np.zeros((6, 4)))
    for name in NAMES:
        kwargs = {"shape": (6, 4)} if name == "optimal_hard_threshold" else {}
        assert ESTIMATORS.get(name)(zero, **kwargs) == 0, name
        assert ESTIMATORS.get(name)(
            np.zeros((2, 0)), **({"shape": (1, 1), "sigma": 1.0} if kwargs else {})
        ).shape == (2,)
    assert optimal_hard_threshold(zero, shape=(6, 4), sigma=1.0) == 0


def test_outputs_are_float64_arrays_and_accept_torch():
    s = np.array([3.0, 2.0, 1.0, 0.0])
    for name in NAMES:
        kwargs = {"shape": (4, 4)} if name == "optimal_hard_threshold" else {}
        out = ESTIMATORS.get(name)(s, **kwargs)
        assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == ()
        assert ESTIMATORS.get(name)(torch.tensor(s, dtype=torch.float32), **kwargs) == pytest.approx(out)
        if ESTIMATORS.get(name).integer:
            assert out == np.round(out)


def test_unsorted_input_is_sorted():
    s = np.array([1.0, 0.2, 0.5, 0.9, 0.0])
    for fn in SCALE_FREE:
        assert fn(s) == fn(np.sort(s)[::-1])


def test_validation_messages():
    with pytest.raises(DataError, match="nonnegative"):
        stable_rank(np.array([1.0, -0.5]))
    with pytest.raises(DataError, match="NaN"):
        stable_rank(np.array([1.0, np.nan]))
    with pytest.raises(DataError, match="scalar"):
        stable_rank(np.float64(1.0))
    with pytest.raises(
        UserInputError, match=r"The 'tol' parameter must be a float in \[0, 1\)\. Got 2.0 instead\."
    ):
        numerical_rank(np.ones(3), tol=2)
    with pytest.raises(UserInputError, match=r"'tau' parameter must be a float in \(0, 1\]"):
        energy_threshold_rank(np.ones(3), tau=0.0)
    with pytest.raises(UserInputError, match="'shape' parameter"):
        optimal_hard_threshold(np.ones(3), shape=(3,))
    with pytest.raises(UserInputError, match="'sigma' parameter"):
        optimal_hard_threshold(np.ones(3), shape=(3, 3), sigma=-1.0)
    with pytest.raises(DataError, match="at most 3 singular values"):
        optimal_hard_threshold(np.ones(4), shape=(3, 5))
    with pytest.raises(DataError, match="needs all 5 singular values"):
        optimal_hard_threshold(np.ones(3), shape=(5, 8))


# ---------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1), m=st.integers(2, 12), k=st.integers(2, 12), log_scale=st.floats(-100, 100)
)
def test_invariant_under_orthogonal_transforms_and_scaling(seed, m, k, log_scale):
    rng = np.random.default_rng(seed)
    r = int(rng.integers(1, min(m, k) + 1))
    planted = np.sort(rng.uniform(0.05, 1.0, r))[::-1]
    a = with_spectrum(planted, m, k, rng)
    s = singular_values(a)
    s_rot = singular_values(haar(m, rng) @ a @ haar(k, rng))
    c = 10.0**log_scale
    for fn in SCALE_FREE:
        assert fn(s_rot) == pytest.approx(fn(s), rel=1e-9), fn.__name__
        assert fn(c * planted) == pytest.approx(fn(planted), rel=1e-12), fn.__name__
    # Gavish-Donoho reads the median, which must be a noise value (not float64 SVD round-off).
    noisy = a + 0.05 * rng.standard_normal((m, k))
    s, s_rot = singular_values(noisy), singular_values(haar(m, rng) @ noisy @ haar(k, rng))
    for shape in ((m, k), (k, m)):
        ref = optimal_hard_threshold(s, shape=shape)
        assert optimal_hard_threshold(s_rot, shape=shape) == ref
        assert optimal_hard_threshold(s * c, shape=shape) == ref
    assert optimal_hard_threshold(s, shape=(m, k), sigma=0.1) == optimal_hard_threshold(
        s * 3, shape=(m, k), sigma=0.3
    )


spectrum = st.lists(st.floats(0.0, 1e6, allow_subnormal=False), min_size=1, max_size=30).filter(
    lambda v: max(v) > 0
)


@settings(max_examples=200, deadline=None)
@given(values=spectrum)
def test_effective_ranks_lie_between_one_and_rank(values):
    s = np.array(values)
    rank = int((s > 0).sum())
    sr, pr, er, hr = (
        float(fn(s))
        for fn in (stable_rank, participation_ratio, energy_effective_rank, entropy_effective_rank)
    )
    tol = 1e-9 * rank
    for value in (sr, pr, er, hr):
        assert 1 - tol <= value <= rank + tol
    # stable rank <= participation ratio (Renyi-2) <= energy effective rank (Shannon)
    assert sr <= pr + tol and pr <= er + tol
    for fn in (numerical_rank, energy_threshold_rank, largest_gap_rank):
        assert 1 <= fn(s) <= rank


def test_batch_equals_per_matrix_loop():
    rng = np.random.default_rng(7)
    mats = rng.standard_normal((3, 4, 9, 6)) * rng.uniform(0.1, 10, (3, 4, 1, 1))
    mats[0, 1] = 0.0  # a zero matrix inside the batch
    mats[1, 2] = rng.standard_normal((9, 2)) @ rng.standard_normal((2, 6))  # rank 2
    mats[2, 3, :, :3] *= 1e-7  # a clear gap
    s = singular_values(mats)  # (3, 4, 6)
    for name in NAMES:
        est = ESTIMATORS.get(name)
        for kwargs in (
            [{"shape": (9, 6)}, {"shape": (6, 9), "sigma": 0.5}] if name == "optimal_hard_threshold" else [{}]
        ):
            batched = est(s, **kwargs)
            assert batched.shape == (3, 4)
            looped = np.array(
                [[est(singular_values(mats[i, j]), **kwargs) for j in range(4)] for i in range(3)]
            )
            np.testing.assert_allclose(batched, looped, rtol=1e-12, err_msg=name)


# ---------------------------------------------------------------- Gavish–Donoho


def test_marchenko_pastur_constants():
    assert lambda_star(1.0) == pytest.approx(4 / math.sqrt(3), rel=1e-14)
    for beta in (0.05, 0.25, 0.5, 0.8, 1.0):
        a, b = (1 - math.sqrt(beta)) ** 2, (1 + math.sqrt(beta)) ** 2
        density = lambda x, a=a, b=b, beta=beta: (
            math.sqrt(max((b - x) * (x - a), 0.0)) / (2 * math.pi * beta * x)
        )  # noqa: E731
        # an independent route: integrate the density in x directly
        assert integrate.quad(density, a, mp_median(beta), limit=200)[0] == pytest.approx(0.5, abs=1e-6)
        assert mp_cdf(b, beta) == 1.0 and mp_cdf(a, beta) == 0.0
        assert omega(beta) == pytest.approx(omega_approx(beta), abs=0.02)  # the paper's cubic fit
    assert omega(1.0) == pytest.approx(2.858, abs=1e-3)


def test_marchenko_pastur_median_against_sampled_noise():
    rng = np.random.default_rng(8)
    z = rng.standard_normal((200, 400))
    eig = np.linalg.eigvalsh(z @ z.T / 400)
    assert np.median(eig) == pytest.approx(mp_median(0.5), abs=0.02)


GD_SHAPES = [(100, 100), (200, 100), (100, 200), (60, 300)]


@pytest.mark.parametrize("shape", GD_SHAPES)
def test_gavish_donoho_pure_noise_is_rank_zero(shape):
    rng = np.random.default_rng(sum(shape))
    for sigma in (1.0, 0.03):
        s = singular_values(sigma * rng.standard_normal(shape))
        assert optimal_hard_threshold(s, shape=shape) == 0
        assert optimal_hard_threshold(s, shape=shape, sigma=sigma) == 0


@pytest.mark.parametrize("shape", GD_SHAPES)
def test_gavish_donoho_planted_rank_five(shape):
    rng = np.random.default_rng(sum(shape) + 1)
    m, n = shape
    sigma = 0.5
    # signal singular values 3..6 times the noise edge sqrt(N_large)*sigma, well above lambda*(beta)
    signal = sigma * math.sqrt(max(m, n)) * np.array([6.0, 5.0, 4.0, 3.5, 3.0])
    a = with_spectrum(signal, m, n, rng) + sigma * rng.standard_normal(shape)
    s = singular_values(a)
    assert optimal_hard_threshold(s, shape=shape) == 5
    assert optimal_hard_threshold(s, shape=shape, sigma=sigma) == 5


def test_gavish_donoho_uses_the_larger_dimension():
    # A 200x100 noise matrix: with N = the second dimension (100) the known-noise threshold
    # lambda*(2 -> invalid) or sqrt(100) would sit below the noise bulk edge sqrt(200) + sqrt(100).
    rng = np.random.default_rng(9)
    s = singular_values(rng.standard_normal((200, 100)))
    wrong_cut = lambda_star(0.5) * math.sqrt(100)
    assert (s > wrong_cut).sum() > 10  # the bug the orientation rule avoids would over-count
    assert optimal_hard_threshold(s, shape=(200, 100), sigma=1.0) == 0
    assert optimal_hard_threshold(s, shape=(100, 200), sigma=1.0) == 0


def test_gavish_donoho_spec_failure_mode_high_rank():
    # with r* >= min(m, N)/2 the median is a signal value and unknown-noise GD collapses.
    rng = np.random.default_rng(10)
    n, r = 100, 60
    a = with_spectrum(np.linspace(30, 60, r), n, n, rng) + rng.standard_normal((n, n))
    s = singular_values(a)
    assert optimal_hard_threshold(s, shape=(n, n)) < r / 2
    assert optimal_hard_threshold(s, shape=(n, n), sigma=1.0) == r


def test_known_zero_noise_hard_threshold_ignores_the_round_off_of_a_computed_matrix():
    """σ = 0 known: a rank-3 matrix computed through a solve has trailing singular values of round-off
    size (~1e-13 · s_1), which a cut at the spectrum's 16·k·ε margin would count, and which move
    with the last bits of the inputs; the √ε cut counts 3 whatever the round-off."""
    import numpy as np

    from entropic_bound.spectra.estimators import NOISE_FREE_CUT, optimal_hard_threshold

    rng = np.random.default_rng(0)
    U, _ = np.linalg.qr(rng.standard_normal((16, 16)))
    V, _ = np.linalg.qr(rng.standard_normal((16, 16)))
    B = V @ np.diag(np.logspace(0, -5, 16)) @ V.T  # condition number 1e5, as a least-squares solve may have
    A = B @ np.linalg.solve(B, U[:, :3] @ U[:, :3].T)  # rank 3 in exact arithmetic
    s = np.linalg.svd(A, compute_uv=False)
    assert 16 * 16 * np.finfo(float).eps < s[3] / s[0] < NOISE_FREE_CUT  # round-off above a 16·k·ε margin
    assert optimal_hard_threshold(s, shape=(16, 16), sigma=0.0) == 3
    assert optimal_hard_threshold(s, shape=(16, 16), sigma=2e-15) == 3  # a σ measured at round-off level
    s_signal = s.copy()
    s_signal[3] = 10 * NOISE_FREE_CUT * s[0]  # a real fourth direction is still counted
    assert optimal_hard_threshold(np.sort(s_signal)[::-1], shape=(16, 16), sigma=0.0) == 4

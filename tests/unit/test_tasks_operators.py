"""Random low-rank operators: spectra, Haar matrices, scaling, value maps, token covariance."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from entropic_bound.errors import UnknownNameError, UserInputError
from entropic_bound.tasks.names import SPECTRA
from entropic_bound.tasks.operators import (
    ar1_covariance,
    haar_orthonormal,
    low_rank_factors,
    low_rank_matrix,
    make_spectrum,
    sqrtm_psd,
    value_matrix,
)


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_flat_and_power_spectra_match_their_formulas():
    np.testing.assert_array_equal(make_spectrum(3, "flat"), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(make_spectrum(4, "power", alpha=2.0), [1.0, 1 / 4, 1 / 9, 1 / 16])
    np.testing.assert_allclose(make_spectrum(3, "power", alpha=0.0), [1.0, 1.0, 1.0])


def test_geometric_spectrum_hits_the_requested_decay():
    s = make_spectrum(5, "geometric", decay=0.25)
    rho = 0.25 ** (1 / 4)
    np.testing.assert_allclose(s, [1, rho, rho**2, rho**3, rho**4])
    assert s[-1] / s[0] == pytest.approx(0.25)
    np.testing.assert_array_equal(make_spectrum(1, "geometric", decay=0.1), [1.0])


@settings(max_examples=40, deadline=None)
@given(
    r=st.integers(1, 40),
    kind=st.sampled_from(["flat", "geometric", "power"]),
    decay=st.floats(0.01, 1.0),
    alpha=st.floats(0.0, 3.0),
)
def test_every_spectrum_starts_at_one_and_never_increases(r, kind, decay, alpha):
    s = make_spectrum(r, kind, decay=decay, alpha=alpha)
    assert s.shape == (r,) and s.dtype == np.float64
    assert s[0] == pytest.approx(1.0)
    assert np.all(np.diff(s) <= 1e-15) and np.all(s > 0)


def test_unknown_spectrum_lists_the_choices():
    with pytest.raises(
        UnknownNameError,
        match=r"Unknown spectrum 'flatt'\. Available: flat, geometric, power\. Did you mean 'flat'\?",
    ):
        make_spectrum(3, "flatt")
    assert issubclass(UnknownNameError, UserInputError)
    with pytest.raises(UserInputError, match="'decay'"):
        make_spectrum(3, "geometric", decay=1.5)
    with pytest.raises(UserInputError, match="'r_star'"):
        make_spectrum(0, "flat")


def test_haar_orthonormal_has_orthonormal_columns_and_is_seeded():
    Q = haar_orthonormal(7, 3, gen(0))
    assert Q.shape == (7, 3) and Q.dtype == torch.float64
    torch.testing.assert_close(Q.T @ Q, torch.eye(3, dtype=torch.float64))
    assert torch.equal(Q, haar_orthonormal(7, 3, gen(0)))
    assert not torch.allclose(Q, haar_orthonormal(7, 3, gen(1)))


def test_haar_orthonormal_is_sign_symmetric():
    # Without the sign fix, Householder QR makes diag(Q) one-signed; Haar matrices have E[Q_ii] = 0
    # and E[Q_11²] = 1/m (the first column is a uniform unit vector).
    g = gen(3)
    Qs = torch.stack([haar_orthonormal(4, 4, g) for _ in range(1000)])  # (1000, 4, 4)
    diag = torch.diagonal(Qs, dim1=-2, dim2=-1)
    assert diag.mean().abs() < 0.03
    assert (Qs[:, 0, 0] ** 2).mean() == pytest.approx(0.25, abs=0.025)


@pytest.mark.parametrize("kind", SPECTRA)
def test_low_rank_matrix_has_the_requested_spectrum_and_norm(kind):
    s = make_spectrum(4, kind, decay=0.3, alpha=1.5)
    M = low_rank_matrix(9, 6, 4, s, fro_norm=5.0, generator=gen(2))
    assert M.shape == (9, 6) and M.dtype == torch.float64
    sv = torch.linalg.svdvals(M).numpy()
    np.testing.assert_allclose(sv[:4], s * 5.0 / np.linalg.norm(s), rtol=1e-12)
    np.testing.assert_allclose(sv[4:], 0.0, atol=1e-12)
    assert float(torch.linalg.norm(M)) == pytest.approx(5.0, rel=1e-12)


def test_low_rank_factors_reassemble_the_matrix():
    s = make_spectrum(2, "power")
    U, sv, W = low_rank_factors(5, 4, 2, s, fro_norm=1.0, generator=gen(4))
    M = low_rank_matrix(5, 4, 2, s, fro_norm=1.0, generator=gen(4))
    torch.testing.assert_close((U * sv) @ W.T, M)
    with pytest.raises(UserInputError, match=r"\[1, 4\]"):
        low_rank_factors(5, 4, 5, np.ones(5), fro_norm=1.0, generator=gen(0))
    with pytest.raises(UserInputError, match="shape"):
        low_rank_factors(5, 4, 2, np.ones(3), fro_norm=1.0, generator=gen(0))


@pytest.mark.parametrize("d,d_v", [(6, 6), (6, 3), (3, 6)])
def test_orthogonal_value_matrix(d, d_v):
    V = value_matrix(d, d_v, "orthogonal", gen(0))
    assert V.shape == (d, d_v)
    k = min(d, d_v)
    gram = V.T @ V if d_v <= d else V @ V.T
    torch.testing.assert_close(gram, torch.eye(k, dtype=torch.float64))


def test_gaussian_value_matrix_has_variance_one_over_d():
    V = value_matrix(50, 400, "gaussian", gen(0))
    assert float(V.var()) == pytest.approx(1 / 50, rel=0.05)
    with pytest.raises(UnknownNameError, match="orthogonal, gaussian"):
        value_matrix(3, 3, "haar", gen(0))


def test_ar1_covariance_and_its_square_root():
    C = ar1_covariance(5, 0.5)
    assert C[0, 3] == pytest.approx(0.125) and C[2, 2] == 1.0
    R = sqrtm_psd(C)
    np.testing.assert_allclose(R, R.T, atol=1e-14)
    np.testing.assert_allclose(R @ R, C, atol=1e-12)

"""Dense and factored singular values against numpy's SVD and matrices of known spectrum."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from entropic_bound.errors import DataError
from entropic_bound.spectra import factored_singular_values, singular_values


def haar(n: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-distributed n×n orthogonal matrix (QR of a Gaussian with the sign fix)."""
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def with_spectrum(s: np.ndarray, m: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """An m×k matrix U diag(s) Wᵀ with Haar U, W."""
    d = np.zeros((m, k))
    d[np.arange(len(s)), np.arange(len(s))] = s
    return haar(m, rng) @ d @ haar(k, rng).T


@pytest.mark.parametrize("shape", [(5, 5), (7, 3), (3, 7), (2, 4, 6, 5), (1, 1)])
def test_matches_numpy_svd(shape):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    s = singular_values(a)
    ref = np.linalg.svd(a, compute_uv=False)
    assert s.dtype == np.float64
    assert s.shape == (*shape[:-2], min(shape[-2:]))
    np.testing.assert_allclose(s, ref, rtol=1e-12, atol=1e-12)
    assert np.all(np.diff(s, axis=-1) <= 0)


@pytest.mark.parametrize("m, k", [(8, 8), (10, 6), (6, 10)])
def test_recovers_planted_spectrum(m, k):
    rng = np.random.default_rng(1)
    planted = np.array([5.0, 3.0, 3.0, 1e-3, 0.0, 0.0])
    s = singular_values(with_spectrum(planted, m, k, rng))
    expected = np.zeros(min(m, k))
    expected[: min(len(planted), min(m, k))] = planted[: min(m, k)]
    np.testing.assert_allclose(s, expected, atol=1e-12)


def test_casts_to_float64_before_the_svd():
    # A float32 matrix whose spectrum spans 1 .. 1e-6: a float32 SVD loses the small values at
    # ~1e-7 absolute error; the float64 SVD of the same stored numbers does not.
    rng = np.random.default_rng(2)
    a32 = with_spectrum(np.geomspace(1.0, 1e-6, 12), 12, 12, rng).astype(np.float32)
    ref = np.linalg.svd(a32.astype(np.float64), compute_uv=False)
    for inp in (a32, torch.from_numpy(a32)):
        np.testing.assert_allclose(singular_values(inp), ref, rtol=1e-10, atol=1e-14)
    naive = torch.linalg.svdvals(torch.from_numpy(a32)).numpy().astype(np.float64)
    assert np.abs(naive - ref).max() > 1e-10  # the test can tell the two apart


def test_accepts_torch_with_grad_and_lists():
    t = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(0), requires_grad=True)
    s = singular_values(t)
    np.testing.assert_allclose(s, np.linalg.svd(t.detach().double().numpy(), compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose(singular_values([[3.0, 0.0], [0.0, -4.0]]), [4.0, 3.0])


def test_empty_and_zero_matrices():
    assert singular_values(np.zeros((2, 0, 4))).shape == (2, 0)
    np.testing.assert_array_equal(singular_values(np.zeros((3, 4))), np.zeros(3))


def test_rejects_bad_input():
    with pytest.raises(DataError, match=r"\(\.\.\., m, k\)"):
        singular_values(np.ones(4))
    with pytest.raises(DataError, match="NaN"):
        singular_values(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(DataError, match="real"):
        singular_values(torch.ones(2, 2, dtype=torch.complex64))


@pytest.mark.parametrize(
    "batch, m, k, r",
    [((), 20, 15, 4), ((), 6, 9, 12), ((), 9, 6, 7), ((3, 2), 12, 10, 5), ((), 1, 8, 3), ((4,), 5, 5, 5)],
)
def test_factored_matches_dense(batch, m, k, r):
    rng = np.random.default_rng(3)
    left = rng.standard_normal((*batch, m, r))
    right = rng.standard_normal((*batch, k, r))
    s = factored_singular_values(left, right)
    dense = singular_values(left @ np.swapaxes(right, -1, -2))  # (..., min(m, k))
    q = min(m, k, r)
    assert s.shape == (*batch, q) and s.dtype == np.float64
    scale = dense[..., :1]
    np.testing.assert_allclose(s, dense[..., :q], rtol=1e-10, atol=1e-12 * scale.max())
    assert np.all(dense[..., q:] <= 1e-12 * scale)  # everything beyond min(m, k, r) is zero


def test_factored_low_rank_factors_and_broadcasting():
    rng = np.random.default_rng(4)
    # W_Q of rank 2 inside width 5: the core must expose the true rank, not the width.
    w_q = rng.standard_normal((16, 2)) @ rng.standard_normal((2, 5))
    w_k = rng.standard_normal((3, 16, 5))  # broadcasts against w_q's empty batch
    s = factored_singular_values(torch.from_numpy(w_q), w_k)
    dense = singular_values(w_q @ np.swapaxes(w_k, -1, -2))  # (3, 16)
    assert s.shape == (3, 5)
    np.testing.assert_allclose(s, dense[:, :5], rtol=1e-10, atol=1e-12 * dense.max())
    assert np.all(s[:, 2:] < 1e-12 * s[:, :1])


def test_factored_float32_factors_are_measured_in_float64():
    rng = np.random.default_rng(5)
    w_q = rng.standard_normal((16, 4)).astype(np.float32)
    w_k = (rng.standard_normal((16, 4)) * np.geomspace(1, 1e-5, 4)).astype(np.float32)
    s = factored_singular_values(torch.from_numpy(w_q), torch.from_numpy(w_k))
    ref = np.linalg.svd(w_q.astype(np.float64) @ w_k.astype(np.float64).T, compute_uv=False)[:4]
    np.testing.assert_allclose(s, ref, rtol=1e-9)


def test_factored_rejects_mismatched_width():
    with pytest.raises(DataError, match="last dimension r"):
        factored_singular_values(np.ones((4, 3)), np.ones((4, 2)))

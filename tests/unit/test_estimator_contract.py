"""The contract every registered rank estimator keeps, checked for each name in ``ESTIMATORS``.

Ground truth: a flat spectrum of exactly ``r`` equal nonzero singular values has rank ``r`` by every
definition, continuous or integer. Beyond it: documented metadata, batched evaluation
equal to one-by-one evaluation, invariance under scaling and order, and integer outputs where the
estimator says so.
"""

from __future__ import annotations

import numpy as np
import pytest

from entropic_bound import spectra
from entropic_bound.registry import ESTIMATORS

K = 12


def call(name: str, s: np.ndarray) -> np.ndarray:
    """The estimator with the default parameters (Gavish–Donoho also needs the matrix shape)."""
    kwargs = {"shape": (K, K)} if "shape" in ESTIMATORS.get(name).fn.__code__.co_varnames else {}
    return np.asarray(ESTIMATORS.get(name)(s, **kwargs))


def flat(r: int) -> np.ndarray:
    return np.concatenate([np.ones(r), np.zeros(K - r)])


def test_the_panel_uses_only_registered_estimators():
    assert {name for _, name, _ in spectra.PANEL} <= set(ESTIMATORS.names())
    assert spectra.ESTIMATOR_KEYS == tuple(key for key, _, _ in spectra.PANEL)


@pytest.mark.parametrize("name", ESTIMATORS.names())
def test_metadata(name):
    est = ESTIMATORS.get(name)
    assert est.name == name and est.formula and est.reference and ESTIMATORS.summary(name)


@pytest.mark.parametrize("name", ESTIMATORS.names())
@pytest.mark.parametrize("r", [1, 3, 5])  # < K/2: Gavish–Donoho returns 0 at r* >= d/2
def test_flat_spectrum_of_rank_r_gives_r(name, r):
    assert float(call(name, flat(r))) == pytest.approx(r, rel=1e-9)


@pytest.mark.parametrize("name", ESTIMATORS.names())
def test_batched_equals_one_by_one_and_scale_and_order_do_not_matter(name):
    rng = np.random.default_rng(0)
    batch = np.sort(rng.gamma(0.5, size=(3, 4, K)), axis=-1)[..., ::-1]  # (3, 4, K) descending
    out = call(name, batch)
    assert out.shape == (3, 4) and out.dtype == np.float64
    for i in range(3):
        for j in range(4):
            assert out[i, j] == pytest.approx(float(call(name, batch[i, j])), rel=1e-12)
            assert float(call(name, 7.5 * batch[i, j])) == pytest.approx(out[i, j], rel=1e-9)
            assert float(call(name, rng.permutation(batch[i, j]))) == pytest.approx(out[i, j], rel=1e-12)


@pytest.mark.parametrize("name", ESTIMATORS.names())
def test_integer_estimators_return_integers_in_range(name):
    out = call(name, np.sort(np.random.default_rng(1).gamma(0.5, size=(20, K)), axis=-1)[..., ::-1])
    assert np.all((out >= 0) & (out <= K))
    if ESTIMATORS.get(name).integer:
        assert np.array_equal(out, np.round(out))

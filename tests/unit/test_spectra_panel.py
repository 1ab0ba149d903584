"""The standard estimator panel: keys, batching, Gavish–Donoho gating, descriptions, rounding."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from entropic_bound.errors import DataError, UserInputError
from entropic_bound.registry import ESTIMATORS
from entropic_bound.spectra import (
    KNOWN_NOISE_KEY,
    PANEL,
    estimate_all,
    panel_description,
    round_estimate,
    singular_values,
)

BASE_KEYS = [
    "numerical_rank",
    "energy_effective_rank",
    "entropy_effective_rank",
    "stable_rank",
    "participation_ratio",
    "energy_threshold_rank_90",
    "energy_threshold_rank_99",
    "largest_gap_rank",
]


def test_panel_keys_and_order():
    assert [key for key, _, _ in PANEL] == [*BASE_KEYS, "optimal_hard_threshold"]
    assert all(name in ESTIMATORS for _, name, _ in PANEL)
    s = np.array([4.0, 2.0, 1.0, 0.5])
    assert list(estimate_all(s)) == BASE_KEYS
    assert list(estimate_all(s, shape=(4, 9))) == [*BASE_KEYS, "optimal_hard_threshold"]
    assert list(estimate_all(s, shape=(4, 9), sigma=0.1)) == [
        *BASE_KEYS,
        "optimal_hard_threshold",
        KNOWN_NOISE_KEY,
    ]
    with pytest.raises(UserInputError, match="'sigma' parameter needs 'shape'"):
        estimate_all(s, sigma=0.1)


def test_panel_values_match_direct_calls():
    s = np.array([1.0, 0.8, 0.5, 0.02, 0.005, 0.0])
    out = estimate_all(s, shape=(6, 6), sigma=0.01)
    assert out["numerical_rank"] == 4  # tol 1e-2: 0.005 is cut
    assert out["energy_threshold_rank_90"] == ESTIMATORS.get("energy_threshold_rank")(s, tau=0.9)
    assert out["energy_threshold_rank_99"] == ESTIMATORS.get("energy_threshold_rank")(s, tau=0.99)
    assert out["largest_gap_rank"] == 5  # the drop to exact zero
    assert out["optimal_hard_threshold"] == ESTIMATORS.get("optimal_hard_threshold")(s, shape=(6, 6))
    assert out[KNOWN_NOISE_KEY] == ESTIMATORS.get("optimal_hard_threshold")(s, shape=(6, 6), sigma=0.01)
    assert out["stable_rank"] == pytest.approx(1 + 0.64 + 0.25 + 0.0004 + 0.000025)


def test_panel_batches_and_accepts_torch():
    rng = np.random.default_rng(0)
    mats = rng.standard_normal((2, 3, 12, 8))
    s = singular_values(mats)  # (2, 3, 8)
    batched = estimate_all(torch.from_numpy(s), shape=(12, 8), sigma=1.0)
    for key, value in batched.items():
        assert value.shape == (2, 3) and value.dtype == np.float64
        for i in range(2):
            for j in range(3):
                single = estimate_all(s[i, j], shape=(12, 8), sigma=1.0)[key]
                assert value[i, j] == pytest.approx(single, rel=1e-12), key


def test_zero_matrix_panel_is_all_zero():
    out = estimate_all(singular_values(np.zeros((5, 7))), shape=(5, 7), sigma=1.0)
    assert all(value == 0 for value in out.values())


def test_flat_rank_r_panel():
    s = np.r_[np.full(5, 3.0), np.zeros(5)]
    out = estimate_all(s)
    for key in BASE_KEYS:
        assert out[key] == pytest.approx(5, rel=1e-12), key


def test_panel_description_is_json_ready_and_complete():
    desc = panel_description()
    assert list(desc) == [key for key, _, _ in PANEL]
    assert desc["numerical_rank"]["params"] == {"tol": 1e-2}
    assert desc["energy_threshold_rank_99"]["params"] == {"tau": 0.99}
    assert desc["largest_gap_rank"]["params"] == {"floor": 1e-12}
    assert desc["optimal_hard_threshold"]["params"]["sigma"] is None
    for entry in desc.values():
        assert set(entry) == {"estimator", "params", "formula", "reference", "integer"}
        assert entry["formula"] and entry["reference"]
        assert entry["integer"] == ESTIMATORS.get(entry["estimator"]).integer
    known = panel_description(sigma_known=True)
    assert list(known)[-1] == KNOWN_NOISE_KEY and known[KNOWN_NOISE_KEY]["params"]["sigma"] == "known"
    json.dumps(known)


def test_round_estimate():
    x = np.array([0.49, 0.5, 1.5, 2.4999, 4.2, 7.0])
    out = round_estimate(x)
    np.testing.assert_array_equal(out, [0, 1, 2, 2, 4, 7])
    assert out.dtype == np.int64
    assert round_estimate(3.6).shape == () and round_estimate(3.6) == 4
    with pytest.raises(DataError, match="NaN"):
        round_estimate(np.array([1.0, np.nan]))

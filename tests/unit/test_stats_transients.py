"""Rank over training: synthetic curves and real gradient-descent runs that fit noise late."""

import numpy as np
import pytest
import torch

from entropic_bound.errors import DataError
from entropic_bound.models import LinearOperatorEnsemble, MemberSpec
from entropic_bound.spectra import numerical_rank
from entropic_bound.stats.transients import classify_rank_curve
from entropic_bound.training import MomentData, TrainConfig, train_ensemble

STEPS = [0, 10, 100, 1000, 5000]


def test_synthetic_curves_each_way():
    falling = [1.0, 0.5, 0.011, 0.008, 0.004]
    assert classify_rank_curve(STEPS, [0, 1, 2, 2, 2], falling, 2)["status"] == "recovered"
    out = classify_rank_curve(STEPS, [0, 1, 2, 3, 6], falling, 2, floor=0.01)
    assert out["status"] == "transient" and out["last_at_r_star"] == 100 and out["rank_final"] == 6
    # the same rise with the loss still above the floor is not fitted noise
    assert classify_rank_curve(STEPS, [0, 1, 2, 3, 6], falling, 2, floor=0.001)["status"] == "not_recovered"
    assert classify_rank_curve(STEPS, [0, 1, 1, 1, 1], falling, 2)["status"] == "not_recovered"
    flat_loss = [1.0, 0.5, 0.01, 0.01, 0.01]
    assert classify_rank_curve(STEPS, [0, 1, 2, 3, 3], flat_loss, 2)["status"] == "not_recovered"
    with pytest.raises(DataError):
        classify_rank_curve([0, 1], [1], [1.0, 0.5], 1)


def _gd_from_small_init(sigma: float) -> dict:
    """GD from init 1e-3 on a rank-2 operator (n = 12, d_v = 2, N = 8: identified, N d_v ≥ n)."""
    n, d, N = 12, 2, 8
    g = torch.Generator().manual_seed(0)
    U = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64))[0]
    V = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))[0]
    X = torch.randn(N, n, d, generator=g, dtype=torch.float64)
    Y = 2.0 * U[:, :2] @ U[:, :2].T @ X @ V + sigma * torch.randn(N, n, d, generator=g, dtype=torch.float64)
    model = LinearOperatorEnsemble([MemberSpec(n, 1e-3, 3)], n=n, d=d, d_v=d, V_known=V)
    out = train_ensemble(model, MomentData.from_data(X, Y), TrainConfig(optimizer="gd", lr=0.3, steps=2500))
    ranks = [float(numerical_rank(np.asarray(sp["A"][0]))) for sp in out.curve_spectra]
    losses = [float(loss[0]) for loss in out.curve_loss]
    return classify_rank_curve(out.curve_steps, ranks, losses, 2, floor=sigma**2)


def test_real_runs_fit_noise_late_at_high_noise_and_stay_at_r_star_at_low_noise():
    noisy = _gd_from_small_init(0.1)
    assert noisy["status"] == "transient" and noisy["rank_final"] > 2 and noisy["loss_final"] < 0.01
    assert _gd_from_small_init(0.001)["status"] == "recovered"

"""The rank cut at the top of a simulated noise null, its largest-gap cross-check, and predict on larger
shapes: teacher data from :mod:`entropic_bound.tasks` (generated independently of the predictor)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from entropic_bound.predict import predict_r_star
from entropic_bound.predict.cut import cross_checked_cut, noise_calibrated_cut
from entropic_bound.tasks import LinearQKTeacherTask, SoftmaxTeacherTask


def test_null_threshold_is_a_high_quantile_of_the_noise_top():
    noise_top = np.linspace(1.0, 2.0, 21)  # quantile 0.95 = 1.95
    cut = noise_calibrated_cut(np.array([10.0, 3.0, 2.8, 2.0]), noise_top)
    assert cut.threshold == pytest.approx(1.5 * 1.95) and cut.r_hat == 2


def test_gap_wins_where_the_null_undershoots_the_noise_top():
    """A 100× drop after s_6, the null threshold just under the noise's top value."""
    s = np.array([0.18] * 6 + [0.0018, 0.0016, 0.0015])
    cut = cross_checked_cut(s, np.full(8, 0.00119))  # threshold 0.001785 < 0.0018
    assert cut.null_rank == 7 and cut.gap_rank == 6 and cut.r_hat == 6 and cut.chosen == "gap"
    assert "noise" in cut.why and cut.describe()["null_rank"] == 7


def test_a_weak_signal_past_a_large_gap_keeps_the_null_rank():
    s = np.array([1.0, 1.0, 1.0, 0.05, 0.01, 0.009])
    cut = cross_checked_cut(s, np.full(8, 0.008))  # threshold 0.012; s_4 = 0.05 > 2 × 0.012
    assert cut.gap_rank == 3 and cut.r_hat == 4 and cut.chosen == "null"


def test_a_gap_inside_the_noise_is_ignored():
    s = np.array([1.0, 1.0, 0.002, 1e-7])
    cut = cross_checked_cut(s, np.full(8, 0.01))
    assert cut.gap_rank == 3 and cut.r_hat == 2 and cut.chosen == "null"


def _data(kind, *, N, n, d, r, sigma, spectrum="flat", seed=0):
    task_cls = SoftmaxTeacherTask if kind == "softmax" else LinearQKTeacherTask
    task = task_cls(n=n, d=d, d_v=d, r_star=r, spectrum=spectrum, sigma=sigma)
    teacher = task.teacher(torch.Generator().manual_seed(seed))
    batch = teacher.sample(N, torch.Generator().manual_seed(1000 + seed))
    return batch.X.numpy(), batch.Y.numpy(), teacher.V.numpy()


def _check(kind, v_known, **kw):
    X, Y, V = _data(kind, **kw)
    p = predict_r_star(
        X, Y, teacher="softmax" if kind == "softmax" else "linear-qk", V=V if v_known else None
    )
    assert p.identifiable, p.reason
    assert p.r_hat == kw["r"], (p.singular_values[: kw["r"] + 3], p.cut)
    assert p.cut["null_rank"] >= 0 and p.cut["chosen"] in ("null", "gap")
    assert not p.fit["teacher_rejected"], p.fit


@pytest.mark.parametrize("spectrum", ["flat", "geometric"])
@pytest.mark.parametrize("kind, v_known", [("softmax", True), ("linear", True), ("linear", False)])
def test_larger_shapes_fast(kind, v_known, spectrum):
    """n = d = d_v = 32 (and n = 24 < d = 28 for the softmax), small N: the fast-suite variant."""
    n, d = (24, 28) if spectrum == "geometric" and kind == "softmax" else (32, 32)
    _check(kind, v_known, N=256, n=n, d=d, r=6 if spectrum == "flat" else 5, sigma=0.01, spectrum=spectrum)


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind, v_known, n, d, r, sigma, spectrum",
    [
        ("softmax", True, 32, 32, 6, 0.01, "flat"),  # a case the cut over-counted as 7
        ("softmax", True, 24, 28, 5, 0.02, "geometric"),  # a case the cut over-counted as 7
        ("softmax", True, 32, 32, 8, 0.02, "geometric"),
        ("linear", True, 32, 32, 6, 0.01, "flat"),
        ("linear", True, 32, 32, 5, 0.02, "geometric"),
        ("linear", False, 32, 32, 6, 0.01, "flat"),
    ],
)
def test_larger_shapes_at_n_10000(kind, v_known, n, d, r, sigma, spectrum):
    _check(kind, v_known, N=10_000, n=n, d=d, r=r, sigma=sigma, spectrum=spectrum)

"""The held-out goodness-of-fit test of the teacher class (``Prediction.fit``) on real teacher data
(:mod:`entropic_bound.tasks`): each class accepted on its own noisy data, rejected on the other's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from entropic_bound.predict import predict_r_star
from entropic_bound.predict.goodness import dispersion_test, held_out
from entropic_bound.tasks import LinearQKTeacherTask, SoftmaxTeacherTask

TEACHER = {"softmax": SoftmaxTeacherTask, "linear": LinearQKTeacherTask}


def _data(kind, *, N=300, n=16, d=32, r=4, sigma=0.01, seed=0):
    teacher = TEACHER[kind](n=n, d=d, d_v=d, r_star=r, sigma=sigma).teacher(
        torch.Generator().manual_seed(seed)
    )
    batch = teacher.sample(N, torch.Generator().manual_seed(500 + seed))
    return batch.X.numpy(), batch.Y.numpy(), teacher.V.numpy()


def _fit(kind, read_as, v_known=True, **kw):
    X, Y, V = _data(kind, **kw)
    p = predict_r_star(X, Y, teacher=read_as, V=V if v_known else None)
    assert set(p.fit) >= {"teacher_rejected", "statistic", "threshold", "reason", "split"}
    return p


@pytest.mark.parametrize("n", [16, 32])  # n < d_v (level against the model-free σ̂) and n = d_v
@pytest.mark.parametrize("kind", ["softmax", "linear"])
def test_each_class_is_accepted_on_its_own_noisy_data(kind, n):
    p = _fit(kind, "softmax" if kind == "softmax" else "linear-qk", n=n, seed=n)
    assert p.fit["teacher_rejected"] is False and p.fit["statistic"] <= p.fit["threshold"], p.fit
    assert p.r_hat == 4


@pytest.mark.parametrize("n", [16, 32])
def test_softmax_data_read_as_linear_is_rejected(n):
    p = _fit("softmax", "linear-qk", n=n, seed=1)
    assert p.method == "linear_v_known"
    assert p.fit["teacher_rejected"] is True and p.fit["statistic"] > p.fit["threshold"], p.fit


@pytest.mark.parametrize("n", [16, 32])
def test_linear_data_read_as_softmax_is_rejected(n):
    p = _fit("linear", "softmax", n=n, seed=2)
    assert p.method == "softmax_log_attention"
    assert p.fit["teacher_rejected"] is True and p.fit["statistic"] > p.fit["threshold"], p.fit


@pytest.mark.parametrize("kind", ["softmax", "linear"])
def test_noise_free_data_accept_their_own_class_and_reject_the_other(kind):
    own = "softmax" if kind == "softmax" else "linear-qk"
    p = _fit(kind, own, sigma=0.0, seed=4)
    assert p.fit["teacher_rejected"] is False and p.fit["test"] == "exact_fit", p.fit
    assert p.fit["statistic"] < 1e-12 and p.r_hat == 4
    wrong = _fit(kind, "linear-qk" if kind == "softmax" else "softmax", sigma=0.0, seed=4)
    assert wrong.fit["teacher_rejected"] is True and wrong.fit["test"] != "exact_fit", wrong.fit


@pytest.mark.parametrize("kind, rejected", [("softmax", True), ("linear", False)])
def test_v_unknown_linear_class_checked_outside_the_columns_of_x(kind, rejected):
    p = _fit(kind, "linear-qk", v_known=False, n=40, seed=3)
    assert p.method == "linear_v_unknown" and p.fit["teacher_rejected"] is rejected, p.fit


def test_the_split_is_seeded_and_reported():
    a, b = held_out(100, 0), held_out(100, 0)
    assert a.sum() == 20 and np.array_equal(a, b) and not np.array_equal(a, held_out(100, 1))
    assert held_out(20, 0) is None  # 4 held-out samples: too few to test
    p = _fit("linear", "linear-qk", N=30)
    assert (
        p.fit["statistic"] is None
        and "not tested" in p.fit["reason"]
        and "would hold out 6" in p.fit["reason"]
    )


def test_dispersion_flips_between_noise_and_sample_varying_misfit():
    rng = np.random.default_rng(0)
    noise = 0.1 * rng.standard_normal((200, 16, 32))
    assert not dispersion_test(noise, "noise")["teacher_rejected"]
    misfit = noise + rng.uniform(0, 0.3, size=(200, 1, 1)) * rng.standard_normal((200, 16, 32))
    assert dispersion_test(misfit, "misfit")["teacher_rejected"]
    shifted = noise + 0.1  # the same misfit in every sample: only the level test sees it
    assert not dispersion_test(shifted, "shift")["teacher_rejected"]
    assert dispersion_test(shifted, "shift", free=(0.1, 10**6))["teacher_rejected"]

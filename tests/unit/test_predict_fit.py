"""The held-out goodness-of-fit test of the teacher class (``Prediction.fit``) on real teacher data
(:mod:`entropic_bound.tasks`): each class accepted on its own noisy data, rejected on the other's,
and its false-rejection rate on data of the class measured over many seeds at its stated level."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats
from test_predict_data import teacher_data

from entropic_bound.predict import predict_r_star
from entropic_bound.predict.goodness import ALPHA, dispersion_test, held_out, simulated_null
from entropic_bound.tasks import LinearQKTeacherTask, SoftmaxTeacherTask
from entropic_bound.tasks.names import PREDICT_TEACHERS

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
    assert not dispersion_test(noise, "noise", rng)["teacher_rejected"]
    misfit = noise + rng.uniform(0, 0.3, size=(200, 1, 1)) * rng.standard_normal((200, 16, 32))
    assert dispersion_test(misfit, "misfit", rng)["teacher_rejected"]
    shifted = noise + 0.1  # the same misfit in every sample: only the level test sees it
    assert not dispersion_test(shifted, "shift", rng)["teacher_rejected"]
    assert dispersion_test(shifted, "shift", rng, free=(0.1, 10**6))["teacher_rejected"]


def test_estimation_error_in_the_null_is_what_keeps_a_varying_misfit_accepted():
    """A misfit that varies across samples is rejected against pure noise, accepted when the
    bootstrap says the fit's estimation error is that large (``lam = ||Δ*||² / σ²``)."""
    rng = np.random.default_rng(1)
    scale = rng.uniform(0, 0.3, size=(200, 1, 1))
    R = 0.1 * rng.standard_normal((200, 16, 32)) + scale * 0.1 * rng.standard_normal((200, 16, 32))
    assert dispersion_test(R, "r", rng)["teacher_rejected"] is True
    lam = np.tile(np.sum((scale * np.ones((200, 16, 32))) ** 2, axis=(1, 2)), (8, 1))  # (8, 200)
    result = dispersion_test(R, "r", rng, lam=lam)
    assert result["teacher_rejected"] is False and result["p_value"] > 0.01, result


def test_the_simulated_null_matches_the_exact_law_without_estimation_error():
    """With Δ = 0 the residual energies are σ² χ²_k / k: the simulated dispersion has the mean and
    spread of the sample variance of those (``Var(s²) ≈ (2/(N−1) + κ/N) σ_e⁴``, κ = 12/k)."""
    k, N_h = 64, 100
    null = simulated_null(np.zeros((1, N_h)), k, None, np.random.default_rng(2), draws=20_000)["dispersion"]
    assert null.mean() == pytest.approx(1.0, abs=0.02)
    assert null.std() == pytest.approx(np.sqrt(2 / (N_h - 1) + 12 / k / N_h), rel=0.08)


# ---- the false-rejection rate on data of the class, and the power on the other class's ----------------
SEEDS = 50
# Saturated attention (logit scale 10): the training fit's estimation error is large and varies across
# samples, which a null without it mistakes for a wrong class.
SMALL = {"N": 120, "n": 6, "d": 8, "d_v": 8, "r": 2, "sigma": 0.05, "scale": 5.0}
ISSUE = {"N": 400, "n": 12, "d": 16, "d_v": 16, "r": 3, "sigma": 0.05}


def _allowed(seeds: int, rate: float) -> int:
    """The upper end of a 99 % interval of the count of ``seeds`` events at ``rate``."""
    return int(stats.binom.ppf(0.995, seeds, rate))


def _outcomes(kind: str, read_as: str, seeds: int, **setting) -> tuple[int, int, list]:
    """``(rejections, p ≤ 0.1 count, fits)`` over ``seeds`` data draws of ``kind`` read as ``read_as``."""
    fits = []
    for seed in range(seeds):
        X, Y, V, _ = teacher_data(kind, seed=seed, **setting)
        fits.append(predict_r_star(X, Y, teacher=read_as, V=V, seed=seed).fit)
    rejected = sum(bool(f["teacher_rejected"]) for f in fits)
    return rejected, sum((f.get("p_value") or 1.0) <= 0.1 for f in fits), fits


def _assert_level(kind: str, seeds: int, **setting) -> None:
    rejected, small_p, fits = _outcomes(kind, kind, seeds, **setting)
    assert all(f["level"] == ALPHA and f["teacher_rejected"] is not None for f in fits)
    assert rejected <= _allowed(seeds, ALPHA), [f["reason"] for f in fits if f["teacher_rejected"]]
    # the bulk too: p-values not piled up near 0 (p ≤ 0.1 at most as often as the law allows)
    assert small_p <= _allowed(seeds, 0.1), sorted(f["p_value"] for f in fits)[:12]


@pytest.fixture
def one_thread():
    """Problems this small gain nothing from threads, and threads spinning on busy cores cost 10×."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("kind", list(PREDICT_TEACHERS))
def test_false_rejection_rate_on_50_small_draws_of_the_class(kind, one_thread):
    _assert_level(kind, SEEDS, **SMALL)


@pytest.mark.slow
@pytest.mark.parametrize("scale", [1.0, 4.0])
@pytest.mark.parametrize("kind", list(PREDICT_TEACHERS))
def test_false_rejection_rate_on_50_draws_of_the_issue_setting(kind, scale, one_thread):
    _assert_level(kind, SEEDS, scale=scale, **ISSUE)


@pytest.mark.parametrize("kind, read_as", [("linear-qk", "softmax"), ("softmax", "linear-qk")])
def test_power_on_the_other_class_data(kind, read_as, one_thread):
    seeds = 10
    rejected, _, fits = _outcomes(kind, read_as, seeds, **{**SMALL, "scale": 1.0})
    assert rejected >= seeds - 1, [f["reason"] for f in fits]


@pytest.mark.parametrize("kind", list(PREDICT_TEACHERS))
def test_power_on_misspecified_noise(kind, one_thread):
    """Noise whose level varies from sample to sample (σ_i from 0.01 to 0.1) is not the class's iid noise."""
    seeds, rejected = 10, []
    for seed in range(seeds):
        X, clean, V, _ = teacher_data(kind, seed=seed, **{**SMALL, "scale": 1.0, "sigma": 0.0})
        rng = np.random.default_rng(seed)
        Y = clean + rng.uniform(0.01, 0.1, size=(clean.shape[0], 1, 1)) * rng.standard_normal(clean.shape)
        rejected.append(predict_r_star(X, Y, teacher=kind, V=V, seed=seed).fit["teacher_rejected"])
    assert sum(map(bool, rejected)) >= seeds - 1, rejected

"""Task generators: registry, seeding, sample formulas, ground truth, scaling and validation."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from entropic_bound.errors import ConfigError, UserInputError
from entropic_bound.registry import TASKS
from entropic_bound.tasks import (
    Batch,
    FixedOperatorTask,
    LinearQKTeacherTask,
    SoftmaxTeacherTask,
    make_spectrum,
)
from entropic_bound.tasks.operators import ar1_covariance

ALL_TASKS = [FixedOperatorTask, LinearQKTeacherTask, SoftmaxTeacherTask]


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def small(cls, **kw):
    base = dict(n=6, d=5, r_star=2)
    base.update(kw)
    return cls(**base)


def test_tasks_are_registered_under_the_spec_names():
    assert TASKS.get("fixed_operator") is FixedOperatorTask
    assert TASKS.get("linear_qk_teacher") is LinearQKTeacherTask
    assert TASKS.get("softmax_teacher") is SoftmaxTeacherTask


@pytest.mark.parametrize("cls", ALL_TASKS)
def test_same_seed_gives_identical_tensors_and_different_seeds_differ(cls):
    task = small(cls)
    t1, t2, t3 = task.teacher(gen(0)), task.teacher(gen(0)), task.teacher(gen(1))
    for key in ("A", "K", "V"):
        if key in t1.truth:
            np.testing.assert_array_equal(t1.truth[key], t2.truth[key])
            assert not np.allclose(t1.truth[key], t3.truth[key])
    b1, b2, b3 = t1.sample(4, gen(7)), t2.sample(4, gen(7)), t1.sample(4, gen(8))
    for a, b, c in zip(dataclasses.astuple(b1), dataclasses.astuple(b2), dataclasses.astuple(b3)):
        assert torch.equal(a, b) and not torch.allclose(a, c)
    assert torch.equal(
        task.teacher(5).sample(3, gen(1)).Y, task.teacher(gen(5)).sample(3, gen(1)).Y
    )  # int seed


@pytest.mark.parametrize("cls", ALL_TASKS)
def test_batch_shapes_dtypes_and_noise(cls):
    task = small(cls, d_v=3, sigma=0.3)
    teacher = task.teacher(gen(0))
    b = teacher.sample(500, gen(1))
    assert isinstance(b, Batch) and len(b) == 500
    assert b.X.shape == (500, 6, 5) and b.clean.shape == b.Y.shape == (500, 6, 3)
    assert b.X.dtype == torch.float64
    assert float((b.Y - b.clean).std()) == pytest.approx(0.3, rel=0.05)
    torch.testing.assert_close(b.clean, teacher.target(b.X))
    b32 = teacher.sample(500, gen(1), dtype=torch.float32)
    assert b32.Y.dtype == torch.float32
    assert torch.equal(b32.Y, b.Y.float())


@pytest.mark.parametrize("cls", ALL_TASKS)
def test_noiseless_targets_and_inputs_do_not_depend_on_sigma(cls):
    quiet = small(cls, sigma=0.0).teacher(gen(0)).sample(8, gen(1))
    loud = small(cls, sigma=1.0).teacher(gen(0)).sample(8, gen(1))
    assert torch.equal(quiet.Y, quiet.clean)
    assert torch.equal(quiet.X, loud.X) and torch.equal(quiet.clean, loud.clean)


# ----- fixed operator


def test_fixed_operator_target_is_a_star_x_v_star():
    teacher = FixedOperatorTask(n=5, d=4, d_v=3, r_star=2, sigma=0.0).teacher(gen(0))
    b = teacher.sample(6, gen(1))
    A, V = (torch.from_numpy(teacher.truth[k]) for k in ("A", "V"))
    for i in range(6):
        torch.testing.assert_close(b.clean[i], A @ b.X[i] @ V)
        torch.testing.assert_close(teacher.mixer(b.X)[i], A)


@pytest.mark.parametrize("spectrum", ["flat", "geometric", "power"])
def test_fixed_operator_spectrum_is_the_requested_one_scaled_to_the_norm(spectrum):
    task = FixedOperatorTask(n=10, r_star=4, spectrum=spectrum, decay=0.25, alpha=1.5)
    truth = task.teacher(gen(3)).truth
    s = make_spectrum(4, spectrum, decay=0.25, alpha=1.5)
    expected = np.concatenate([s * math.sqrt(10) / np.linalg.norm(s), np.zeros(6)])
    np.testing.assert_allclose(truth["singular_values"], expected, atol=1e-12)
    np.testing.assert_allclose(np.linalg.svd(truth["A"], compute_uv=False), expected, atol=1e-12)
    assert truth["r_star"] == 4 and truth["sigma"] == 0.1 and truth["token_cov"] is None
    custom = FixedOperatorTask(n=10, r_star=4, operator_norm=2.0).teacher(gen(3)).truth
    assert np.linalg.norm(custom["A"]) == pytest.approx(2.0)


def test_fixed_operator_clean_target_has_unit_variance_per_entry():
    b = FixedOperatorTask(n=16, d=8, r_star=3, sigma=0.0).teacher(gen(0)).sample(2000, gen(1))
    assert float(b.clean.pow(2).mean()) == pytest.approx(1.0, rel=0.05)


def test_ar1_token_covariance_shapes_the_inputs():
    teacher = FixedOperatorTask(n=6, d=4, token_cov="ar1", token_rho=0.6).teacher(gen(0))
    X = teacher.sample(4000, gen(1)).X  # (N, n, d): tokens are rows
    emp = torch.einsum("iad,ibd->ab", X, X) / (4000 * 4)
    np.testing.assert_allclose(emp.numpy(), ar1_covariance(6, 0.6), atol=0.05)
    np.testing.assert_allclose(teacher.truth["token_cov"], ar1_covariance(6, 0.6))


def test_row_stochastic_operator_is_a_softmax_of_rank_r_star_logits():
    teacher = FixedOperatorTask(n=8, d=4, r_star=2, operator="row_stochastic", logit_scale=1.5).teacher(
        gen(0)
    )
    truth = teacher.truth
    L = truth["logits"]
    assert np.linalg.matrix_rank(L) == 2
    assert np.linalg.norm(L) == pytest.approx(1.5 * 8)
    P = np.exp(L - L.max(1, keepdims=True))
    np.testing.assert_allclose(truth["A"], P / P.sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(truth["A"].sum(1), 1.0)
    b = teacher.sample(3, gen(1))
    torch.testing.assert_close(b.clean, torch.from_numpy(truth["A"]) @ b.X @ torch.from_numpy(truth["V"]))
    assert "logits" not in FixedOperatorTask(n=8).teacher(gen(0)).truth


# ----- attention teachers


@pytest.mark.parametrize("cls", [LinearQKTeacherTask, SoftmaxTeacherTask])
@pytest.mark.parametrize("r_star", [1, 8])
def test_kernel_norm_rank_and_logit_scale(cls, r_star):
    c, d = 1.5, 24
    teacher = cls(n=12, d=d, r_star=r_star, c=c).teacher(gen(r_star))
    truth = teacher.truth
    assert np.linalg.norm(truth["K"]) == pytest.approx(c * math.sqrt(d), rel=1e-12)
    assert np.linalg.matrix_rank(truth["K"]) == r_star
    assert truth["c"] == c
    np.testing.assert_allclose(
        truth["singular_values"], np.linalg.svd(truth["K"], compute_uv=False), atol=1e-12
    )
    L = teacher.logits(teacher.sample(400, gen(0)).X)  # (N, n, n)
    off = ~torch.eye(12, dtype=torch.bool)
    assert float(L[:, off].std()) == pytest.approx(c, rel=0.15)


def test_linear_teacher_matches_its_formula_per_sample():
    teacher = LinearQKTeacherTask(n=5, d=7, d_v=3, r_star=2, sigma=0.0).teacher(gen(0))
    b = teacher.sample(4, gen(1))
    K, V = (torch.from_numpy(teacher.truth[k]) for k in ("K", "V"))
    for i in range(4):
        X = b.X[i]
        M = X @ K @ X.T / math.sqrt(7) / 5
        torch.testing.assert_close(teacher.mixer(b.X)[i], M)
        torch.testing.assert_close(b.clean[i], M @ X @ V)


def test_softmax_teacher_matches_its_formula_per_sample():
    teacher = SoftmaxTeacherTask(n=5, d=7, r_star=3, sigma=0.0).teacher(gen(0))
    b = teacher.sample(4, gen(1))
    K, V = (torch.from_numpy(teacher.truth[k]) for k in ("K", "V"))
    for i in range(4):
        X = b.X[i]
        logits = (X @ K @ X.T / math.sqrt(7)).numpy()
        P = np.exp(logits - logits.max(1, keepdims=True))
        P /= P.sum(1, keepdims=True)
        np.testing.assert_allclose(teacher.mixer(b.X)[i].numpy(), P, rtol=1e-12)
        np.testing.assert_allclose(b.clean[i].numpy(), P @ X.numpy() @ V.numpy(), rtol=1e-10, atol=1e-12)


def test_softmax_saturation_moves_with_c():
    stats = {}
    for c in (0.0, 0.5, 2.0, 4.0):
        teacher = SoftmaxTeacherTask(n=16, d=32, r_star=4, c=c).teacher(gen(0))
        stats[c] = teacher.saturation(teacher.sample(200, gen(1)).X)
    assert stats[0.0]["row_entropy_ratio"] == pytest.approx(1.0)
    assert stats[0.0]["mean_max_attention"] == pytest.approx(1 / 16)
    ratios = [stats[c]["row_entropy_ratio"] for c in (0.0, 0.5, 2.0, 4.0)]
    assert all(a > b for a, b in zip(ratios, ratios[1:]))
    assert 0.5 < stats[2.0]["row_entropy_ratio"] < 0.8  # ≈ 0.6–0.7 at c = 2
    assert 0.3 < stats[2.0]["mean_max_attention"] < 0.55


# ----- validation


def test_rank_above_the_operator_size_is_a_sklearn_style_error():
    with pytest.raises(
        ConfigError, match=r"^The 'r_star' parameter must be an int in \[1, 16\]\. Got 20 instead\.$"
    ):
        FixedOperatorTask(n=16, r_star=20)
    with pytest.raises(ConfigError, match=r"'r_star' parameter must be an int in \[1, 8\]\. Got 9"):
        LinearQKTeacherTask(n=16, d=8, r_star=9)
    SoftmaxTeacherTask(n=4, d=32, r_star=20)  # kernels are bounded by d, not n


@pytest.mark.parametrize(
    "kwargs,pattern",
    [
        (dict(sigma=-0.1), r"'sigma' parameter must be a float in \[0, inf\)"),
        (dict(n=0), r"'n' parameter must be an int in \[1, inf\)"),
        (dict(d=0), r"'d' parameter must be an int in \[1, inf\)"),
        (dict(r_star=2.5), r"'r_star' parameter must be an int\. Got 2\.5"),
        (
            dict(spectrum="flatt"),
            r"'spectrum' parameter must be one of 'flat', 'geometric', 'power'.*Did you mean 'flat'",
        ),
        (dict(v_kind="haar"), r"'v_kind' parameter must be one of 'orthogonal', 'gaussian'"),
        (dict(decay=0.0), r"'decay' parameter must be a float in \(0, 1\]"),
    ],
)
@pytest.mark.parametrize("cls", ALL_TASKS)
def test_bad_parameters_raise_user_input_errors(cls, kwargs, pattern):
    with pytest.raises(UserInputError, match=pattern):
        cls(**kwargs)


def test_task_specific_validation_and_normalisation():
    with pytest.raises(UserInputError, match="'c' parameter must be a float in \\[0, inf\\)"):
        SoftmaxTeacherTask(c=-1.0)
    with pytest.raises(UserInputError, match="'token_rho'"):
        FixedOperatorTask(token_cov="ar1", token_rho=1.0)
    with pytest.raises(UserInputError, match="'token_cov' parameter must be one of 'ar1'"):
        FixedOperatorTask(token_cov="toeplitz")
    task = FixedOperatorTask(sigma=0, n=np.int64(8))
    assert type(task.sigma) is float and type(task.n) is int
    assert task.teacher(gen(0)).d_v == task.d  # d_v defaults to d
    with pytest.raises(dataclasses.FrozenInstanceError):
        task.sigma = 1.0  # type: ignore[misc]
    assert hash(task) == hash(FixedOperatorTask(sigma=0.0, n=8))
    with pytest.raises(UserInputError, match="n_samples"):
        task.teacher(gen(0)).sample(0, gen(1))

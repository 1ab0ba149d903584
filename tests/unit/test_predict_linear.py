"""Linear-QK predictors: exact r* where identifiable, honest where not, and their building blocks."""

from __future__ import annotations

import numpy as np
import pytest
from test_predict_data import teacher_data

from entropic_bound.predict import predict_r_star
from entropic_bound.predict.normal_equations import KronSystem, kron_gram

RANKS = [1, 2, 4, 8]


def test_kron_gram_matches_a_dense_sum_of_kronecker_products():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((5, 3, 3)), rng.standard_normal((5, 4, 4))
    A, B = A + A.transpose(0, 2, 1), B @ B.transpose(0, 2, 1)  # symmetric factors, as in every use
    dense = sum(np.kron(a, b) for a, b in zip(A, B))
    np.testing.assert_allclose(kron_gram(A, B), dense, rtol=1e-12, atol=1e-12)


def test_streamed_normal_equations_match_dense_least_squares():
    rng = np.random.default_rng(1)
    N, n, d, d_v = 7, 3, 4, 2
    X, B, T = (
        rng.standard_normal((N, n, d)),
        rng.standard_normal((N, d, d_v)),
        rng.standard_normal((N, n, d_v)),
    )
    system = KronSystem(d)
    system.add(X[:3], B[:3], T[:3])
    system.add(X[3:], B[3:], T[3:])  # two chunks
    K_hat, _, rss = system.solve()
    design = np.concatenate([np.kron(x, b.T) for x, b in zip(X, B)])  # rows: vec_r(X K B) = (X ⊗ Bᵀ) vec_r K
    k, res, *_ = np.linalg.lstsq(design, T.reshape(-1), rcond=None)
    np.testing.assert_allclose(K_hat.reshape(-1), k, rtol=1e-9, atol=1e-10)
    assert rss == pytest.approx(float(res[0]), rel=1e-6)


@pytest.mark.parametrize("spectrum", ["flat", "geometric"])
@pytest.mark.parametrize("sigma", [0.0, 1e-3])
@pytest.mark.parametrize("r", RANKS)
def test_v_known_is_exact(r, sigma, spectrum):
    X, Y, V, _ = teacher_data(
        "linear-qk", N=48, n=16, d=32, d_v=32, r=r, spectrum=spectrum, sigma=sigma, seed=r
    )
    p = predict_r_star(X, Y, teacher="linear-qk", V=V)
    assert p.method == "linear_v_known" and p.identifiable
    assert p.r_hat == r, (p.singular_values[: r + 2], p.threshold)
    assert p.margin > 1.0


@pytest.mark.parametrize("spectrum", ["flat", "geometric"])
@pytest.mark.parametrize("sigma", [0.0, 1e-3])
@pytest.mark.parametrize("r", RANKS)
@pytest.mark.parametrize("n", [40, 16])  # pooled pinv(X_i) Y_i (n > d) and per-sample rank (n < d)
def test_v_unknown_is_exact(r, sigma, spectrum, n):
    X, Y, _, _ = teacher_data(
        "linear-qk", N=48, n=n, d=32, d_v=32, r=r, spectrum=spectrum, sigma=sigma, seed=10 + r
    )
    p = predict_r_star(X, Y, teacher="linear-qk")
    assert p.method == "linear_v_unknown" and p.identifiable, p.reason
    assert p.r_hat == r, (p.singular_values[: r + 2], p.threshold)


def test_v_unknown_square_n_equals_d_without_residual_dof():
    X, Y, _, _ = teacher_data(
        "linear-qk", N=48, n=32, d=32, d_v=32, r=8, spectrum="geometric", sigma=1e-3, seed=3
    )
    p = predict_r_star(X, Y, teacher="linear-qk")
    assert p.r_hat == 8 and p.identifiable
    assert p.noise_level == pytest.approx(1e-3, rel=0.3)


@pytest.mark.parametrize("scale", [1e-4, 1.0, 1e3])
def test_any_kernel_scale_gives_the_same_answer(scale):
    X, Y, V, _ = teacher_data("linear-qk", N=32, n=16, d=32, d_v=32, r=3, scale=scale, seed=5)
    Y = Y + 1e-3 * scale * np.random.default_rng(0).standard_normal(Y.shape)
    assert predict_r_star(X, Y, teacher="linear-qk", V=V).r_hat == 3
    assert predict_r_star(X, Y, teacher="linear-qk").r_hat == 3


def test_noise_level_and_kernel_noise_are_calibrated():
    """σ̂ matches the true σ and the simulated noise norm matches the actual error ||K̂ − K||₂."""
    sigma = 0.05
    X, Y, V, K = teacher_data("linear-qk", N=64, n=16, d=32, d_v=32, r=4, sigma=sigma, seed=7)
    p = predict_r_star(X, Y, teacher="linear-qk", V=V)
    assert p.noise_level == pytest.approx(sigma, rel=0.05)
    from entropic_bound.predict.linear_v_known import KronSystem as _KS  # the same solver, for K̂ itself

    system = _KS(32)
    system.add(X, X.transpose(0, 2, 1) @ (X @ V), Y)
    K_hat = system.solve()[0]
    actual = np.linalg.norm(K_hat - K, 2)
    assert 0.6 < actual / p.kernel_noise < 1.5


def test_noise_only_data_give_rank_zero():
    X, _, V, _ = teacher_data("linear-qk", N=32, n=16, d=32, d_v=32, r=1, seed=8)
    Y = np.random.default_rng(9).standard_normal((32, 16, 32))
    assert predict_r_star(X, Y, teacher="linear-qk", V=V).r_hat == 0
    assert predict_r_star(X, Y, teacher="linear-qk").r_hat == 0


def test_too_few_samples_is_not_identifiable():
    X, Y, V, _ = teacher_data("linear-qk", N=2, n=16, d=32, d_v=32, r=2, seed=1)  # 1024 equations = d²
    p = predict_r_star(X, Y, teacher="linear-qk", V=V)
    assert not p.identifiable and p.too_few_samples and p.r_hat == -1 and "unknowns" in p.reason
    assert p.estimates == {}


def test_v_unknown_n_below_d_saturates_and_says_so():
    """n < d, V unknown: rank Y_i = min(r*, n, d_v), so r* ≥ n is only a lower bound."""
    X, Y, _, _ = teacher_data("linear-qk", N=32, n=8, d=32, d_v=32, r=12, seed=2)
    for sigma in (0.0, 1e-3):  # every singular value of Y_i is signal: never a confident answer
        Yn = Y + sigma * np.random.default_rng(0).standard_normal(Y.shape)
        p = predict_r_star(X, Yn, teacher="linear-qk")
        assert not p.identifiable and ("lower bound" in p.reason or "like signal" in p.reason), p
    X, Y, _, _ = teacher_data("linear-qk", N=32, n=8, d=32, d_v=32, r=12, seed=2)
    Y = Y + 0.01 * np.random.default_rng(0).standard_normal(Y.shape)  # noise, but no noise-only direction
    p = predict_r_star(X, Y, teacher="linear-qk")
    assert not p.identifiable and ("lower bound" in p.reason or "like signal" in p.reason)


def test_singular_design_is_not_identifiable():
    X, Y, V, _ = teacher_data("linear-qk", N=16, n=16, d=32, d_v=32, r=2, seed=4)
    X[:, :, 0] = 0.0  # feature 0 never varies: row/column 0 of K are undetermined
    Y = (X @ np.eye(32) @ X.transpose(0, 2, 1)) @ X @ V
    p = predict_r_star(X, Y, teacher="linear-qk", V=V)
    assert not p.identifiable and "singular" in p.reason


def test_tasks_teacher_end_to_end():
    torch = pytest.importorskip("torch")
    from entropic_bound.tasks import LinearQKTeacherTask

    task = LinearQKTeacherTask(n=16, d=32, r_star=4, spectrum="geometric", sigma=1e-3)
    teacher = task.teacher(torch.Generator().manual_seed(0))
    batch = teacher.sample(64, torch.Generator().manual_seed(1))
    X, Y, V = batch.X.numpy(), batch.Y.numpy(), teacher.truth["V"]
    V = V.numpy() if hasattr(V, "numpy") else V
    assert predict_r_star(X, Y, teacher="linear-qk", V=V).r_hat == 4
    assert predict_r_star(X, Y, teacher="linear-qk").r_hat == 4

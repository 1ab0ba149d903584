"""Shared numpy generators for the predictor tests: known-rank kernels and both teachers."""

from __future__ import annotations

import numpy as np


def kernel(d: int, r: int, spectrum: str, rng: np.random.Generator, *, fro: float = 2.0) -> np.ndarray:
    """``U diag(s) Wᵀ`` with Haar U, W; flat or geometric ``s`` (1 → 0.25), ``||K||_F = fro``."""
    U = np.linalg.qr(rng.standard_normal((d, r)))[0]
    W = np.linalg.qr(rng.standard_normal((d, r)))[0]
    s = np.ones(r) if spectrum == "flat" else 0.25 ** (np.arange(r) / max(r - 1, 1))
    K = U @ np.diag(s) @ W.T
    return K * fro / np.linalg.norm(K)


def softmax_rows(L: np.ndarray) -> np.ndarray:
    A = np.exp(L - L.max(axis=-1, keepdims=True))
    return A / A.sum(axis=-1, keepdims=True)


def teacher_data(
    teacher: str,
    *,
    N: int,
    n: int,
    d: int,
    d_v: int,
    r: int,
    spectrum: str = "flat",
    sigma: float = 0.0,
    seed: int = 0,
    scale: float = 1.0,
):
    """``(X, Y, V, K)`` for ``Y = mixer(X) X V + σ E``; linear mixer ``X K Xᵀ``, softmax ``softmax(X K Xᵀ)``."""
    rng = np.random.default_rng(seed)
    K = kernel(d, r, spectrum, rng) * scale
    V = (
        np.linalg.qr(rng.standard_normal((d, d_v)))[0]
        if d_v <= d
        else rng.standard_normal((d, d_v)) / np.sqrt(d)
    )
    X = rng.standard_normal((N, n, d))
    L = X @ K @ X.transpose(0, 2, 1)
    M = L if teacher == "linear-qk" else softmax_rows(L)
    clean = M @ X @ V
    return X, clean + sigma * rng.standard_normal(clean.shape), V, K


# ---- tests of the array checks, the result object and the estimator choice -------------------------------
import json  # noqa: E402

import pytest  # noqa: E402

from entropic_bound.errors import DataError, UnknownNameError, UserInputError  # noqa: E402
from entropic_bound.predict import check_arrays, predict_r_star  # noqa: E402


def _good(N=24, n=16, d=32, d_v=32):
    X, Y, V, _ = teacher_data("linear-qk", N=N, n=n, d=d, d_v=d_v, r=2, sigma=1e-3, seed=0)
    return X, Y, V


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda X, Y, V: (X[0], Y, V), "'X' must be 3-D"),
        (lambda X, Y, V: (X, Y[..., 0], V), "'Y' must be 3-D"),
        (lambda X, Y, V: (X, Y, V[0]), "'V' must be 2-D"),
        (lambda X, Y, V: (X, Y[:-1], V), "must agree in (N, n)"),
        (lambda X, Y, V: (X, Y[:, :-1], V), "must agree in (N, n)"),
        (lambda X, Y, V: (X, Y, V[:-1]), "V must be (d, d_v)"),
        (lambda X, Y, V: (X, Y, V[:, :-1]), "V must be (d, d_v)"),
        (lambda X, Y, V: (np.where(X > 2, np.nan, X), Y, V), "must be finite"),
        (lambda X, Y, V: (X, np.where(Y > 0.1, np.inf, Y), V), "must be finite"),
        (lambda X, Y, V: (X.astype(object), Y, V), "real numbers"),
        (lambda X, Y, V: (X, Y.astype(complex), V), "real numbers"),
        (lambda X, Y, V: (X[:0], Y[:0], V), "non-empty"),
    ],
)
def test_bad_arrays_raise_one_line_data_errors(mutate, fragment):
    with pytest.raises(DataError) as info:
        check_arrays(*mutate(*_good()))
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_prediction_is_json_safe_and_complete():
    X, Y, V = _good()
    d = predict_r_star(X, Y, teacher="linear-qk", V=V).to_dict()
    again = json.loads(json.dumps(d, allow_nan=False))
    assert isinstance(again["r_hat"], int) and again["r_hat"] == 2
    for key in (
        "method",
        "estimates",
        "estimator_params",
        "singular_values",
        "identifiable",
        "reason",
        "noise_level",
        "margin",
        "timing_s",
        "threshold",
        "kernel_noise",
    ):
        assert key in again
    assert set(again["estimates"]) <= set(again["estimator_params"])
    assert again["estimator_params"]["numerical_rank"]["params"]["tol"] == 0.01


def test_non_identifiable_prediction_is_json_safe():
    X, Y, V = _good(N=2)
    d = predict_r_star(X, Y, teacher="linear-qk", V=V).to_dict()
    assert json.loads(json.dumps(d, allow_nan=False))["identifiable"] is False


def test_estimator_option_reads_r_hat_from_that_estimate():
    X, Y, V = _good()
    p = predict_r_star(X, Y, teacher="linear-qk", V=V, estimator="stable_rank")
    assert p.r_hat == int(np.floor(p.estimates["stable_rank"] + 0.5))
    with pytest.raises(UnknownNameError, match="Did you mean 'stable_rank'"):
        predict_r_star(X, Y, teacher="linear-qk", V=V, estimator="stabel_rank")


def test_unknown_teacher_and_method_are_user_errors():
    X, Y, V = _good()
    with pytest.raises(UserInputError, match="'teacher' parameter"):
        predict_r_star(X, Y, teacher="linear", V=V)
    with pytest.raises(UnknownNameError, match="Unknown predictor"):
        predict_r_star(X, Y, teacher="linear-qk", V=V, method="nope")

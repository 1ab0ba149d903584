"""Statistics shared by the predictions on one data draw equal what each prediction computes alone.

Real random data: inputs ``X``, a rank-2 kernel, the linear and the softmax teacher's clean targets and
one noise draw ``E``, with ``Y = clean + σ E`` at several σ (as E6 draws them). The shared normal
equations are checked against an explicit design matrix, the per-method shared paths against the
per-cell ones, and :func:`predict_on_draw` against ``predict_r_star(..., check_fit=False)``.
"""

from __future__ import annotations

import numpy as np
import pytest

from entropic_bound.predict import predict_r_star
from entropic_bound.predict.linear_v_known import known_gram, value_inputs
from entropic_bound.predict.linear_v_unknown import _pooled_grams, linear_v_unknown, pooled_inputs
from entropic_bound.predict.shared_draw import DrawStatistics, predict_on_draw
from entropic_bound.predict.softmax_linearised import linearised_gram, mixer_pinv, softmax_linearised
from entropic_bound.predict.softmax_log_attention import Inverses, softmax_log_attention, softmax_rows

N, n, d, d_v = 48, 5, 6, 6  # n <= min(d, d_v): the log-attention method's domain
SIGMAS = (0.0, 0.01, 0.1)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((N, n, d))
    K = rng.standard_normal((d, 2)) @ rng.standard_normal((2, d))  # rank 2
    V = (
        np.linalg.qr(rng.standard_normal((d_v, d)))[0].T[:, :d_v]
        if d_v <= d
        else rng.standard_normal((d, d_v))
    )
    logits = X @ K @ X.transpose(0, 2, 1)
    clean = {"linear": logits @ X @ V / n, "softmax": softmax_rows(logits / np.sqrt(d)) @ X @ V}
    E = rng.standard_normal((N, n, d_v))
    return X, V, clean, E


def _design_solve(X, B, Y):
    """K̂ and RSS of ``Y_i = X_i K B_i`` from the explicit design matrix (row-major vec)."""
    A = np.concatenate([np.kron(X[i], B[i].T) for i in range(X.shape[0])])  # (N n d_v, d²)
    k, *_ = np.linalg.lstsq(A, Y.reshape(-1), rcond=None)
    return k.reshape(d, d), float(np.sum((A @ k - Y.reshape(-1)) ** 2))


def test_known_gram_serves_every_sigma_like_its_own_design_matrix(data):
    X, V, clean, E = data
    gram = known_gram(X, V)
    B = value_inputs(X, V)
    factors = set()
    for sigma in SIGMAS:
        Y = clean["linear"] + sigma * E
        system = gram.with_same_gram()
        system.add_target(X, B, Y)
        K_hat, L, rss = system.solve()
        factors.add(id(L))
        K_ref, rss_ref = _design_solve(X, B, Y)
        assert np.allclose(K_hat, K_ref, rtol=1e-9, atol=1e-11)
        assert rss == pytest.approx(rss_ref, rel=1e-6, abs=1e-18 + 1e-12 * float(np.sum(Y * Y)))
        assert system.n_equations == Y.size
    assert len(factors) == 1  # one Cholesky factor for every σ


def test_linearised_gram_and_mixer_pinv_give_the_per_cell_fit_exactly(data):
    X, V, clean, E = data
    gram, pinv = linearised_gram(X, V), mixer_pinv(X, V)
    for teacher in ("linear", "softmax"):
        for sigma in SIGMAS:
            Y = clean[teacher] + sigma * E
            alone = softmax_linearised(X, Y, V, rng=np.random.default_rng(3))
            shared = softmax_linearised(X, Y, V, rng=np.random.default_rng(3), gram=gram, pinv=pinv)
            assert np.array_equal(alone.singular_values, shared.singular_values)
            assert np.array_equal(alone.noise_top, shared.noise_top) and alone.sigma == shared.sigma
            assert alone.extra == shared.extra


def test_pooled_inputs_are_pinv_and_weights_and_serve_every_sigma():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((N, d + 2, d))  # n > d: the pooled statistic
    K, V = rng.standard_normal((d, 2)) @ rng.standard_normal((2, d)), rng.standard_normal((d, d_v))
    clean, E = (X @ K @ X.transpose(0, 2, 1)) @ X @ V, rng.standard_normal((N, d + 2, d_v))
    inputs = [pooled_inputs(X)]
    lam = np.linalg.eigvalsh(X.transpose(0, 2, 1) @ X)[:, 0]
    assert np.allclose(inputs[0].w, lam) and np.allclose(inputs[0].P, np.linalg.pinv(X), atol=1e-12)
    for sigma in SIGMAS:
        Y = clean + sigma * E
        H, Omega, Hn, rss, used = _pooled_grams(X, Y, np.random.default_rng(1), 2, inputs)
        Z = np.linalg.pinv(X) @ Y  # (N, d, d_v)
        assert np.allclose(H, np.einsum("c,cav,cbv->ab", lam, Z, Z), rtol=1e-10, atol=1e-12)
        assert np.allclose(Omega, np.einsum("c,cab->ab", lam, np.linalg.inv(X.transpose(0, 2, 1) @ X)))
        alone = linear_v_unknown(X, Y, None, rng=np.random.default_rng(5))
        shared = linear_v_unknown(X, Y, None, rng=np.random.default_rng(5), inputs=inputs)
        assert np.array_equal(alone.singular_values, shared.singular_values)
        assert np.array_equal(alone.noise_top, shared.noise_top) and alone.sigma == shared.sigma


def test_shared_inverses_give_the_log_attention_fit(data):
    X, V, clean, E = data
    inverses = Inverses.of(X, V)
    held = np.zeros(N, dtype=bool)
    held[::5] = True  # the held-out split orders the samples; it must be honoured with shared inverses
    for sigma in SIGMAS:
        Y = clean["softmax"] + sigma * E
        full = softmax_log_attention(X, Y, V, rng=np.random.default_rng(2), held=held)
        alone = softmax_log_attention(X, Y, V, rng=np.random.default_rng(2), held=held, heldout_model=False)
        shared = softmax_log_attention(
            X, Y, V, rng=np.random.default_rng(2), held=held, inverses=inverses, heldout_model=False
        )
        assert shared.heldout_model is None and full.heldout_model is not None
        for fit in (alone, full):
            assert np.allclose(shared.singular_values, fit.singular_values, rtol=1e-9, atol=1e-12)
            assert np.allclose(shared.noise_top, fit.noise_top, rtol=1e-7)
            assert shared.sigma == pytest.approx(fit.sigma, rel=1e-12, abs=1e-15)
            assert shared.n_equations == fit.n_equations


@pytest.mark.parametrize(
    "teacher, method, v_known",
    [
        ("linear", "linear_v_known", True),
        ("linear", "linear_v_unknown", False),
        ("linear", "softmax_linearised", True),
        ("softmax", "softmax_linearised", False),
        ("softmax", "softmax_log_attention", True),
        ("softmax", "softmax_log_attention", False),
    ],
)
def test_predict_on_draw_equals_predict_r_star_at_every_sigma(data, teacher, method, v_known):
    X, V, clean, E = data
    stats = DrawStatistics(X, V)
    for sigma in SIGMAS:
        Y = clean[teacher] + sigma * E
        seed = 11 + int(100 * sigma)
        shared = predict_on_draw(stats, Y, method=method, v_known=v_known, seed=seed)
        alone = predict_r_star(
            X,
            Y,
            teacher="linear-qk" if teacher == "linear" else "softmax",
            V=V if v_known else None,
            method=method,
            seed=seed,
            check_fit=False,
        )
        assert (shared.r_hat, shared.identifiable, shared.reason) == (
            alone.r_hat,
            alone.identifiable,
            alone.reason,
        )
        assert shared.n_equations == alone.n_equations and shared.shapes == alone.shapes
        assert len(shared.singular_values) > 0 or not v_known  # a fitted kernel, not a refusal
        assert np.allclose(shared.singular_values, alone.singular_values, rtol=1e-9, atol=1e-12)
        assert shared.threshold == pytest.approx(alone.threshold, rel=1e-7, abs=1e-12)
        assert shared.noise_level == pytest.approx(
            alone.noise_level, rel=1e-7, abs=1e-7, nan_ok=True
        )  # σ = 0: round-off
        assert shared.estimates.keys() == alone.estimates.keys()
        assert shared.fit["split"] == alone.fit["split"]
    assert stats.holds(X, V) and not stats.holds(X + 1.0, V)

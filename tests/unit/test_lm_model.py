"""The causal LM vs a reference built on scaled_dot_product_attention, causality, probes, training."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from entropic_bound.errors import UserInputError
from entropic_bound.inspect import sink_score
from entropic_bound.lm.corpora import MarkovSource
from entropic_bound.lm.model import CausalLM
from entropic_bound.lm.probe import kernel_ranks, kernel_spectra, model_mixers, probe, structural_explained
from entropic_bound.lm.trainer import LMTrainConfig, checkpoint_steps, eval_loss, lr_at, train_lm, windows


def reference_forward(model: CausalLM, idx: torch.Tensor) -> torch.Tensor:
    """The same network written with fused QKV matrices and torch's SDPA (is_causal=True)."""
    B, n = idx.shape
    x = model.tok_emb[idx] + model.pos_emb[:n]
    for blk in model.blocks:
        H, d, dh = blk.W_Q.shape
        h = F.layer_norm(x, (d,), blk.ln1.weight, blk.ln1.bias)
        heads = []
        for W, b in ((blk.W_Q, blk.b_Q), (blk.W_K, blk.b_K), (blk.W_V, blk.b_V)):
            W_full = W.permute(1, 0, 2).reshape(d, H * dh)  # (d, H·dh), head-major columns
            heads.append((h @ W_full + b.reshape(-1)).view(B, n, H, dh).transpose(1, 2))
        z = F.scaled_dot_product_attention(*heads, is_causal=True)  # (B, H, n, dh)
        x = x + z.transpose(1, 2).reshape(B, n, H * dh) @ blk.W_O.reshape(H * dh, d) + blk.b_O
        h2 = F.layer_norm(x, (d,), blk.ln2.weight, blk.ln2.bias)
        x = x + F.gelu(h2 @ blk.W_in + blk.b_in) @ blk.W_out + blk.b_out
    return F.layer_norm(x, (x.shape[-1],), model.ln_f.weight, model.ln_f.bias) @ model.W_U


def _model(seed=0, **kw):
    model = CausalLM(11, 12, d_model=16, n_layers=2, n_heads=4, seed=seed, **kw)
    with torch.no_grad():  # non-trivial norms and biases so the reference check covers them
        gen = torch.Generator().manual_seed(seed + 1)
        for name, p in model.named_parameters():
            if p.dim() < 2:
                p.add_(0.3 * torch.randn(p.shape, generator=gen))
            elif name.startswith("blocks") and "W_" in name:
                p.mul_(20.0)
    return model


def test_forward_matches_sdpa_reference():
    model = _model().double()
    idx = torch.randint(0, 11, (3, 12), generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(model(idx), reference_forward(model, idx), rtol=1e-10, atol=1e-10)


def test_causality_future_tokens_do_not_change_earlier_logits():
    model = _model(seed=2).double()
    idx = torch.randint(0, 11, (2, 12), generator=torch.Generator().manual_seed(1))
    changed = idx.clone()
    changed[:, 7:] = (changed[:, 7:] + 3) % 11
    a, b = model(idx), model(changed)
    torch.testing.assert_close(a[:, :7], b[:, :7], rtol=0, atol=1e-12)
    assert (a[:, 7:] - b[:, 7:]).abs().max() > 1e-3


def test_mixers_are_causal_row_stochastic():
    model = _model(seed=3)
    idx = torch.randint(0, 11, (4, 10), generator=torch.Generator().manual_seed(2))
    mixers = model_mixers(model, idx)  # (B, L, H, n, n)
    assert mixers.shape == (4, 2, 4, 10, 10)
    np.testing.assert_allclose(mixers.sum(-1), 1.0, atol=1e-6)
    assert np.abs(np.triu(mixers, k=1)).max() == 0.0
    np.testing.assert_allclose(mixers[..., 0, 0], 1.0, atol=1e-6)


def test_init_is_seeded_and_validated():
    a, b, c = (
        CausalLM(7, 8, d_model=8, n_heads=2, seed=5),
        CausalLM(7, 8, d_model=8, n_heads=2, seed=5),
        CausalLM(7, 8, d_model=8, n_heads=2, seed=6),
    )
    assert torch.equal(a.blocks[0].W_Q, b.blocks[0].W_Q) and not torch.equal(a.blocks[0].W_Q, c.blocks[0].W_Q)
    with pytest.raises(UserInputError, match="divide"):
        CausalLM(7, 8, d_model=10, n_heads=4)
    with pytest.raises(UserInputError, match="n_ctx"):
        a(torch.zeros(1, 9, dtype=torch.long))


def test_kernel_spectra_match_dense_per_head_svd():
    model = _model(seed=4)
    sv = kernel_spectra(model)  # (L, H, d_head)
    assert sv.shape == (2, 4, 4) and sv.dtype == np.float64
    for layer, blk in enumerate(model.blocks):
        for h in range(4):
            K = blk.W_Q[h].detach().double() @ blk.W_K[h].detach().double().T  # (d_model, d_model)
            np.testing.assert_allclose(sv[layer, h], torch.linalg.svdvals(K)[:4].numpy(), rtol=1e-10)
    ranks = kernel_ranks(sv)
    assert ranks["K_numerical_rank"].shape == (2, 4) and np.all(ranks["K_numerical_rank"] <= 4)


def test_kernel_rank_of_planted_low_rank_heads():
    model = CausalLM(5, 6, d_model=16, n_heads=2, seed=0)
    with torch.no_grad():
        model.blocks[0].W_Q[0, :, 1:] = 0.0  # head 0 of layer 0: K = W_Q W_Kᵀ has rank 1
    assert kernel_ranks(kernel_spectra(model))["K_numerical_rank"][0, 0] == 1


def test_probe_statistics_shapes_and_sink():
    model = _model(seed=5)
    idx = torch.randint(0, 11, (6, 12), generator=torch.Generator().manual_seed(3))
    sv, stats = probe(model, idx, window=2)
    for key in (
        "K_energy_effective_rank",
        "sink_score",
        "locality_mass",
        "positional_prior_explained",
        "mixer_energy_effective_rank",
    ):
        assert stats[key].shape == (2, 4), key
    np.testing.assert_allclose(stats["sink_score"], sink_score(model_mixers(model, idx)).mean(axis=0))


def test_structural_explained_rule():
    sink = np.array([0.5, 0.1, 0.1, 0.1, np.nan])
    loc = np.array([0.0, 0.6, 0.1, 0.1, 0.1])
    pos = np.array([0.0, 0.0, 0.7, 0.1, 0.1])
    got = structural_explained(
        sink, loc, pos, sink_threshold=0.3, locality_threshold=0.5, positional_threshold=0.5
    )
    np.testing.assert_array_equal(got, [True, True, True, False, False])


def test_checkpoint_steps_and_schedule():
    steps = checkpoint_steps(400, 12)
    assert steps[0] == 0 and steps[-1] == 400 and steps == sorted(set(steps)) and len(steps) <= 12
    cfg = LMTrainConfig(steps=100, lr=1e-2, warmup=10, lr_final_ratio=0.1)
    assert lr_at(0, cfg) == pytest.approx(1e-3) and lr_at(9, cfg) == pytest.approx(1e-2)
    assert lr_at(100, cfg) == pytest.approx(1e-3)


def test_windows_are_shifted_targets():
    tokens = torch.arange(50)
    x, y = windows(tokens, torch.tensor([0, 10]), 5)
    assert torch.equal(x[1], torch.arange(10, 15)) and torch.equal(y[1], torch.arange(11, 16))


def test_tiny_training_run_lowers_the_loss_towards_the_entropy_rate():
    torch.set_num_threads(1)
    source = MarkovSource.from_seed(6, 1, 0.2, seed=0)
    tokens = source.sample(12_000, np.random.default_rng(0))
    model = CausalLM(6, 16, d_model=16, n_layers=1, n_heads=2, seed=0)
    cfg = LMTrainConfig(steps=150, batch_size=16, lr=1e-2, warmup=5, checkpoints=5, eval_windows=32)
    out = train_lm(model, tokens[:10_000], tokens[10_000:], cfg, torch.Generator().manual_seed(0))
    assert out.diverged_step is None and out.steps[0] == 0 and out.steps[-1] == 150
    assert len(out.snapshots) == len(out.steps) == len(out.val_loss)
    entropy_nats = source.entropy_rate() * math.log(2)
    assert out.val_loss[0] > math.log(6) - 0.1
    assert out.val_loss[-1] < out.val_loss[0] - 0.3
    assert out.val_loss[-1] > entropy_nats - 0.1  # nobody beats the source's entropy rate (held-out)
    model.load_state_dict(out.snapshots[0])  # snapshot 0 is the untrained init
    gen = torch.Generator().manual_seed(1)
    starts = torch.randint(0, 1_900, (8,), generator=gen)
    fresh = CausalLM(6, 16, d_model=16, n_layers=1, n_heads=2, seed=0)
    val = torch.as_tensor(tokens[10_000:])
    assert eval_loss(model, val, starts) == pytest.approx(eval_loss(fresh, val, starts))

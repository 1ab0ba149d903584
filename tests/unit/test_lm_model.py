"""The ensemble LM vs a per-member reference built on SDPA, member independence, probes, training."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from entropic_bound.errors import UserInputError
from entropic_bound.language_models.corpora.sources import MarkovSource
from entropic_bound.language_models.model.ensemble import EnsembleLM
from entropic_bound.language_models.probes.heads import (
    KernelProbe,
    content_ablation_bits,
    ensemble_mixers,
    joint_ablation_bits,
    mixer_stats,
)
from entropic_bound.language_models.training.trainer import (
    LMTrainConfig,
    checkpoint_steps,
    clip_per_member,
    heldout_bits,
    lr_at,
    tiling_starts,
    train_lm_ensemble,
    windows,
)


def reference_forward(model: EnsembleLM, e: int, idx: torch.Tensor) -> torch.Tensor:
    """Member ``e`` written as a single model with fused QKV matrices and torch's SDPA (is_causal)."""
    B, n = idx.shape
    x = model.tok_emb[e][idx] + model.pos_emb[e, :n]
    for blk in model.blocks:
        H, d, dh = blk.W_Q.shape[1:]
        h = F.layer_norm(x, (d,), blk.ln1_w[e], blk.ln1_b[e])
        heads = []
        for W, b in ((blk.W_Q, blk.b_Q), (blk.W_K, blk.b_K), (blk.W_V, blk.b_V)):
            W_full = W[e].permute(1, 0, 2).reshape(d, H * dh)  # (d, H·dh), head-major columns
            heads.append((h @ W_full + b[e].reshape(-1)).view(B, n, H, dh).transpose(1, 2))
        z = F.scaled_dot_product_attention(*heads, is_causal=True)  # (B, H, n, dh)
        x = x + z.transpose(1, 2).reshape(B, n, H * dh) @ blk.W_O[e].reshape(H * dh, d) + blk.b_O[e]
        h2 = F.layer_norm(x, (d,), blk.ln2_w[e], blk.ln2_b[e])
        x = x + F.gelu(h2 @ blk.W_in[e] + blk.b_in[e]) @ blk.W_out[e] + blk.b_out[e]
    return F.layer_norm(x, (x.shape[-1],), model.lnf_w[e], model.lnf_b[e]) @ model.W_U[e]


def _model(seeds=(0, 1, 2), **kw):
    model = EnsembleLM(11, 12, list(seeds), d_model=16, n_layers=2, n_heads=4, **kw)
    with torch.no_grad():  # non-trivial gains and biases so the reference check covers them
        gen = torch.Generator().manual_seed(sum(seeds) + 1)
        for name, p in model.named_parameters():
            if p.dim() < 3:
                p.add_(0.3 * torch.randn(p.shape, generator=gen))
            elif name.startswith("blocks") and "W_" in name:
                p.mul_(20.0)
    return model


def test_every_member_matches_the_sdpa_reference_on_both_paths():
    model = _model().double()
    idx = torch.randint(0, 11, (3, 2, 12), generator=torch.Generator().manual_seed(0))
    fused = model(idx)
    explicit, _ = model(idx, return_mixers=True)
    for e in range(3):
        ref = reference_forward(model, e, idx[e])
        torch.testing.assert_close(fused[e], ref, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(explicit[e], ref, rtol=1e-10, atol=1e-10)


def test_a_patched_pattern_replaces_exactly_that_head():
    model = _model().double()
    idx = torch.randint(0, 11, (3, 4, 12), generator=torch.Generator().manual_seed(1))
    logits, mixers = model(idx, return_mixers=True)
    same = model(idx, patch=(1, 2, mixers[:, :, 1, 2]))  # its own pattern: nothing changes
    torch.testing.assert_close(same, logits, rtol=1e-12, atol=1e-12)
    _, patched = model(
        idx,
        return_mixers=True,
        patch=(1, 2, mixers[:, :, 1, 2].mean(1, keepdim=True).expand_as(mixers[:, :, 1, 2])),
    )
    assert not torch.allclose(patched[:, :, 1, 2], mixers[:, :, 1, 2])  # the patched head reads the mean
    torch.testing.assert_close(patched[:, :, 0], mixers[:, :, 0])  # the layer before is untouched
    torch.testing.assert_close(patched[:, :, 1, :2], mixers[:, :, 1, :2])  # and the other heads' own patterns


def test_content_ablation_is_zero_for_a_content_blind_head_and_not_for_a_content_head():
    model = _model().double()
    with torch.no_grad():  # head 0 of layer 0 sees no content: its pattern is uniform on every window
        model.blocks[0].W_Q[:, 0] = 0.0
        model.blocks[0].b_Q[:, 0] = 0.0
    idx = torch.randint(0, 11, (3, 8, 12), generator=torch.Generator().manual_seed(2))
    bits = content_ablation_bits(model, idx)  # (E, L, H)
    assert bits.shape == (3, 2, 4)
    assert np.abs(bits[:, 0, 0]).max() < 1e-9
    assert np.abs(bits[:, 0, 1:]).max() > 1e-3  # the ×20 weights route by content


def test_the_joint_ablation_of_one_head_is_its_own_and_of_several_is_not_their_sum():
    model = _model().double()  # 2 layers x 4 heads: 256 subsets
    idx = torch.randint(0, 11, (3, 8, 12), generator=torch.Generator().manual_seed(3))
    joint, single = joint_ablation_bits(model, idx), content_ablation_bits(model, idx)
    assert joint.shape == (3, 256) and np.all(joint[:, 0] == 0)  # nothing ablated
    for i in range(8):  # bit layer * 4 + head: that head alone
        np.testing.assert_allclose(joint[:, 1 << i], single[:, i // 4, i % 4], rtol=0, atol=1e-12)
    pair = joint[:, 0b11]  # heads 0 and 1 of layer 0 together: not the sum of each alone
    assert np.abs(pair - single[:, 0, 0] - single[:, 0, 1]).max() > 1e-6
    wide = EnsembleLM(11, 12, [0], d_model=36, n_heads=9)  # 18 heads: too many subsets, none stored
    assert joint_ablation_bits(wide, idx[:1]) is None


def test_a_member_does_not_depend_on_its_ensemble():
    alone, together = (
        EnsembleLM(11, 12, [7], d_model=16, n_heads=4),
        EnsembleLM(11, 12, [3, 7], d_model=16, n_heads=4),
    )
    for (name, a), (_, b) in zip(alone.named_parameters(), together.named_parameters()):
        assert torch.equal(a[0], b[1]), name
    assert not torch.equal(together.blocks[0].W_Q[0], together.blocks[0].W_Q[1])
    with pytest.raises(UserInputError, match="divide"):
        EnsembleLM(7, 8, [0], d_model=10, n_heads=4)
    with pytest.raises(UserInputError, match="n_ctx"):
        alone(torch.zeros(1, 1, 13, dtype=torch.long))


def test_causality_future_tokens_do_not_change_earlier_logits():
    model = _model(seeds=(2,)).double()
    idx = torch.randint(0, 11, (1, 2, 12), generator=torch.Generator().manual_seed(1))
    changed = idx.clone()
    changed[..., 7:] = (changed[..., 7:] + 3) % 11
    a, b = model(idx), model(changed)
    torch.testing.assert_close(a[..., :7, :], b[..., :7, :], rtol=0, atol=1e-12)
    assert (a[..., 7:, :] - b[..., 7:, :]).abs().max() > 1e-3


def test_mixers_are_causal_row_stochastic():
    mixers = ensemble_mixers(
        _model(), torch.randint(0, 11, (3, 4, 10), generator=torch.Generator().manual_seed(2))
    )
    assert mixers.shape == (3, 4, 2, 4, 10, 10)
    np.testing.assert_allclose(mixers.sum(-1), 1.0, atol=1e-6)
    assert np.abs(np.triu(mixers, k=1)).max() == 0.0


def test_folded_and_delta_kernels_against_dense_svd():
    model = _model().double()
    probe = KernelProbe(model)
    _, at_init = probe(model)
    assert np.all(at_init["dK_numerical_rank"] == 0)  # no change yet
    with torch.no_grad():
        model.blocks[1].W_Q[2, 3, :, 1:] += 0.0
        model.blocks[1].W_K[2, 3] += 0.5 * torch.randn(16, 4, generator=torch.Generator().manual_seed(0))
        model.blocks[1].ln1_w[2] *= torch.linspace(0.5, 2.0, 16, dtype=torch.float64)
    sv, stats = probe(model)
    blk, (Q0, K0) = model.blocks[1], (probe.init[0][2, 1, 3], probe.init[1][2, 1, 3])
    g = np.diag(blk.ln1_w[2].detach().numpy())
    K = g @ blk.W_Q[2, 3].detach().numpy() @ blk.W_K[2, 3].detach().numpy().T @ g
    np.testing.assert_allclose(sv[2, 1, 3], np.linalg.svd(K, compute_uv=False)[:4], rtol=1e-9)
    dK = K - Q0 @ K0.T
    dense = np.linalg.svd(dK, compute_uv=False)
    assert stats["dK_numerical_rank"][2, 1, 3] == (dense > 1e-2 * dense[0]).sum() > 0
    assert stats["K_energy_effective_rank"].shape == (3, 2, 4) and stats["qk_norm"].shape == (3, 2, 4)


def test_mixer_stats_shapes():
    idx = torch.randint(0, 11, (3, 6, 12), generator=torch.Generator().manual_seed(3))
    stats = mixer_stats(_model(), idx, window=2)
    for key in ("sink_score", "locality_mass", "content_tv", "uniform_tv", "band_explained"):
        assert stats[key].shape == (3, 2, 4), key


def test_checkpoint_steps_schedule_and_windows():
    steps = checkpoint_steps(400, 12)
    assert steps[0] == 0 and steps[-1] == 400 and steps == sorted(set(steps)) and len(steps) <= 12
    cfg = LMTrainConfig(steps=100, lr=1e-2, warmup=10, lr_final_ratio=0.1)
    assert lr_at(0, cfg) == pytest.approx(1e-3) and lr_at(9, cfg) == pytest.approx(1e-2)
    assert lr_at(100, cfg) == pytest.approx(1e-3)
    x, y = windows(torch.arange(50), torch.tensor([0, 10]), 5)
    assert torch.equal(x[1], torch.arange(10, 15)) and torch.equal(y[1], torch.arange(11, 16))


def test_clipping_is_per_member():
    p = torch.nn.Parameter(torch.zeros(2, 3))
    p.grad = torch.tensor([[3.0, 4.0, 0.0], [0.3, 0.4, 0.0]])  # norms 5 and 0.5
    clip_per_member([p], 1.0)
    torch.testing.assert_close(p.grad.norm(dim=1), torch.tensor([1.0, 0.5]), rtol=1e-5, atol=1e-6)


def _train(seeds, splits, steps=120):
    torch.manual_seed(0)
    model = EnsembleLM(256, 16, seeds, d_model=16, n_layers=1, n_heads=2)
    cfg = LMTrainConfig(steps=steps, batch_size=16, lr=1e-2, warmup=5, checkpoints=4, eval_windows=16)
    gens = [torch.Generator().manual_seed(s) for s in seeds]
    return model, train_lm_ensemble(model, splits, cfg, gens)


def test_training_lowers_each_members_loss_towards_its_entropy_rate_independently():
    torch.set_num_threads(1)
    sources = [MarkovSource.from_seed(6, 2, 0.2, seed=0), MarkovSource.from_seed(3, 2, 1.0, seed=1)]
    tokens = [s.sample(12_000, np.random.default_rng(0)) for s in sources]
    splits = [(t[:10_000], t[10_000:]) for t in tokens]
    model, out = _train([11, 12], splits)
    assert (out.diverged_step == -1).all() and out.steps[0] == 0 and out.steps[-1] == 120
    assert len(out.batch_loss) == len(out.curve_steps) == 120  # every max(1, steps // 100) = 1 step
    for e, s in enumerate(sources):
        assert out.val_loss[0][e] > math.log(256) - 0.5  # byte vocabulary, untrained
        assert out.val_loss[-1][e] < out.val_loss[0][e] - 2.0
        assert out.val_loss[-1][e] > s.entropy_rate() * math.log(2) - 0.1  # nobody beats the source
    _, alone = _train([12], splits[1:])  # member 1 trained alone follows the same path
    np.testing.assert_allclose(alone.val_loss[-1][0], out.val_loss[-1][1], rtol=1e-4)


def test_tiling_starts_do_not_overlap_and_respect_a_pool():
    starts = tiling_starts(100, 9)  # windows of 10 tokens
    assert starts.tolist() == list(range(0, 90, 10)) and starts[-1] + 10 <= 100
    spread = tiling_starts(1000, 9, limit=7)
    assert len(spread) == 7 and spread[0] == 0 and np.all(np.diff(spread) >= 10)
    pool = np.array([0, 3, 13, 14, 26, 39, 52, 95])  # episode starts; 95 leaves no whole window
    assert tiling_starts(100, 9, pool).tolist() == [0, 13, 26, 39, 52]


def test_heldout_bits_is_each_members_own_mean_loss_whatever_the_others_windows():
    model = _model()
    gen = torch.Generator().manual_seed(0)
    splits = [torch.randint(0, 11, (n,), generator=gen).numpy() for n in (130, 60, 90)]
    starts = [tiling_starts(len(s), model.n_ctx) for s in splits]  # 10, 4 and 6 windows
    got = heldout_bits(model, splits, starts, chunk=3)
    for e, (split, st) in enumerate(zip(splits, starts)):
        x, y = windows(torch.as_tensor(split), torch.as_tensor(st), model.n_ctx)
        logits = reference_forward(model, e, x)
        want = F.cross_entropy(logits.reshape(-1, 11), y.reshape(-1)).item() / math.log(2)
        assert got[e] == pytest.approx(want, rel=1e-5)


def test_a_members_init_is_drawn_from_its_seed_in_a_fixed_order():
    """Embeddings, then W_U, then per block Q, K, V weights and biases, W_O, W_in, W_out: the order
    every trained E7 model was drawn in (its numbers, hence its run's results, depend on it)."""
    model = EnsembleLM(11, 12, [3, 9], d_model=8, n_layers=2, n_heads=2, init_std=0.05, emb_std=0.5)
    gen, std, resid = torch.Generator().manual_seed(9), 0.05, 0.05 / math.sqrt(4)
    want = [(model.tok_emb, 0.5), (model.pos_emb, 0.5), (model.W_U, std)]
    for b in model.blocks:
        want += [(b.W_Q, std), (b.W_K, std), (b.W_V, std), (b.b_Q, std), (b.b_K, std), (b.b_V, std)]
        want += [(b.W_O, resid), (b.W_in, std), (b.W_out, resid)]
    for p, scale in want:
        torch.testing.assert_close(p[1], torch.randn(p.shape[1:], generator=gen) * scale, rtol=0, atol=0)
    assert torch.equal(model.blocks[1].ln2_w, torch.ones(2, 8)) and not model.blocks[0].b_O.any()

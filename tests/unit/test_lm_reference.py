"""The ensemble's training step against the per-model nanoGPT reference: same function, same path."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from entropic_bound.language_models.corpora.sources import MarkovSource
from entropic_bound.language_models.model.ensemble import EnsembleLM
from entropic_bound.language_models.model.reference import (
    ReferenceLM,
    member_state,
    reference_optimizer,
    reference_step,
)
from entropic_bound.language_models.training import flat, trainer


def _ensemble(E: int = 3, d_model: int = 16, n_heads: int = 2) -> EnsembleLM:
    return EnsembleLM(
        37, 12, list(range(10, 10 + E)), d_model=d_model, n_heads=n_heads, init_std=0.09, emb_std=1.0
    )


def test_a_reference_module_computes_its_members_logits():
    model = _ensemble()
    idx = torch.randint(0, 37, (3, 5, 12), generator=torch.Generator().manual_seed(0))
    logits = model(idx)
    for e in range(3):
        torch.testing.assert_close(ReferenceLM.from_member(model, e)(idx[e]), logits[e], rtol=1e-5, atol=1e-5)


#: Relative float32 round-off of a gradient element summed over ~10³ products, against the
#: tensor's largest gradient (measured needs: 2e-6 after five steps).
GRAD_ROUNDOFF = 1e-5


class SmallestGradient:
    """Per element of some parameters, the least ``|grad| / max |grad of that tensor|`` seen so far."""

    def __init__(self) -> None:
        self.least: dict[str, torch.Tensor] = {}

    def update(self, grads: dict[str, torch.Tensor]) -> None:
        for name, g in grads.items():
            rel = g.abs() / g.abs().max().clamp(min=1e-30)
            self.least[name] = torch.minimum(self.least.get(name, rel), rel)


def assert_adam_close(got, want, least_grad, lr: float, steps: int, name: str) -> None:
    """Two AdamW trajectories whose gradients differ by float32 round-off: Adam divides each element's
    gradient by its own running size, so round-off ``δ`` of an element whose gradient is ``|g|`` moves
    it by about ``lr · δ / |g|`` a step (an element with a round-off-sized gradient, such as the key
    bias, whose gradient is 0 in exact arithmetic, by up to ``lr``). Tolerance per element:
    ``1e-4 |θ| + 1e-6`` plus ``lr · steps · GRAD_ROUNDOFF / least relative |g|``, at most the
    ``2 · lr · steps`` two Adam paths can part by."""
    slack = (lr * steps * GRAD_ROUNDOFF / least_grad.clamp(min=1e-30)).clamp(max=2 * lr * steps)
    excess = (got - want).abs() - (1e-4 * want.abs() + 1e-6 + slack)
    assert excess.max() <= 0, f"{name}: {(got - want).abs().max():.3g} apart"


@pytest.mark.parametrize("clip", [1.0, 0.05])  # 0.05: the clipping scales every step
def test_the_ensemble_step_follows_each_members_reference_module(clip):
    """Five AdamW steps of the ensemble and of each member's own module on the same batches: the
    losses, the logits and every parameter agree to float32 round-off (as Adam scales it)."""
    torch.set_num_threads(1)
    model, E, steps = _ensemble(), 3, 5
    refs = [ReferenceLM.from_member(model, e) for e in range(E)]
    cfg = trainer.LMTrainConfig(lr=1e-2, weight_decay=0.1)
    opt = trainer._optimizer(model, cfg)
    ref_opts = [reference_optimizer(r, cfg.lr, cfg.weight_decay) for r in refs]
    gen, alive = torch.Generator().manual_seed(1), torch.ones(E, dtype=torch.bool)
    least = [SmallestGradient() for _ in range(E)]
    for _ in range(steps):
        x, y = torch.randint(0, 37, (2, E, 8, 12), generator=gen)
        losses = trainer._step(opt, x, y, alive, clip)
        for e in range(E):
            ref_loss = reference_step(refs[e], ref_opts[e], x[e], y[e], clip)
            least[e].update({n: p.grad for n, p in refs[e].named_parameters()})
            assert losses[e].item() == pytest.approx(ref_loss.item(), rel=1e-5)
    idx = torch.randint(0, 37, (E, 4, 12), generator=gen)
    logits = model(idx)
    for e in range(E):
        want = dict(refs[e].named_parameters())
        for name, got in member_state(model, e).items():
            assert_adam_close(got, want[name], least[e].least[name], cfg.lr, steps, name)
        torch.testing.assert_close(logits[e], refs[e](idx[e]), rtol=1e-4, atol=1e-5)
    start = member_state(_ensemble(), 0)["h.0.attn.c_attn.weight"]
    assert (member_state(model, 0)["h.0.attn.c_attn.weight"] - start).abs().max() > 1e-2  # they moved


def test_the_flat_adamw_takes_the_per_parameter_adamws_steps():
    """AdamW over the flat buffers with the per-member clipping against one for-loop
    ``torch.optim.AdamW`` over the module's parameters and :func:`trainer.clip_per_member`: the same
    parameters to float32 round-off as Adam scales it (the flat one is torch's fused AdamW)."""
    torch.set_num_threads(1)
    flat_model, loop_model, E, steps = _ensemble(), _ensemble(), 3, 4
    cfg = trainer.LMTrainConfig(lr=1e-2, weight_decay=0.1)
    flat = trainer._optimizer(flat_model, cfg)
    decay = [p for p in loop_model.parameters() if p.dim() >= 3]
    groups = [{"params": decay, "weight_decay": 0.1}]
    groups += [{"params": [p for p in loop_model.parameters() if p.dim() < 3], "weight_decay": 0.0}]
    loop = torch.optim.AdamW(groups, lr=1e-2, betas=(0.9, 0.99), foreach=False)
    gen, alive, least = torch.Generator().manual_seed(2), torch.ones(E, dtype=torch.bool), SmallestGradient()
    for _ in range(steps):
        x, y = torch.randint(0, 37, (2, E, 8, 12), generator=gen)
        trainer._step(flat, x, y, alive, 0.1)
        loop.zero_grad(set_to_none=True)
        loop_model.member_losses(x, y).sum().backward()
        per_head = [SimpleNamespace(grad=g) for _, g in loop_model.views(lambda p: p.grad)]
        trainer.clip_per_member(per_head, 0.1)  # parameter by parameter, the per-head ones apart
        least.update({n: p.grad for n, p in loop_model.named_parameters()})
        loop.step()
    for (name, a), (_, b) in zip(flat_model.named_parameters(), loop_model.named_parameters()):
        assert_adam_close(a, b, least.least[name], cfg.lr, steps, name)
    assert flat_model.blocks[0].W_QKV.stride(0) > flat_model.blocks[0].W_QKV[0].numel()  # in the buffer


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="PyTorch sees no CUDA device")
def test_the_ensemble_step_on_cuda_follows_the_cpu():
    models = {device: _ensemble().to(device) for device in ("cpu", "cuda")}
    opts = {device: trainer._optimizer(m, trainer.LMTrainConfig(lr=1e-2)) for device, m in models.items()}
    gen = torch.Generator().manual_seed(3)
    for _ in range(3):
        x, y = torch.randint(0, 37, (2, 3, 8, 12), generator=gen)
        losses = {
            device: trainer._step(
                m, opts[device], x.to(device), y.to(device), torch.ones(3, dtype=torch.bool), 1.0
            )
            for device, m in models.items()
        }
        torch.testing.assert_close(losses["cuda"], losses["cpu"], rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(models["cuda"].W_U.cpu(), models["cpu"].W_U, rtol=1e-3, atol=1e-4)


def test_member_chunks_change_no_number(monkeypatch):
    """The step chunk by chunk of members (here 1 or 2 members a chunk) against the whole ensemble
    at once: members are independent, so the same losses and parameters."""
    torch.set_num_threads(1)
    whole, E = _ensemble(E=4), 4
    chunked = _ensemble(E=4)
    cfg = trainer.LMTrainConfig(lr=1e-2)
    opts = [trainer._optimizer(whole, cfg), trainer._optimizer(chunked, cfg)]
    gen, alive = torch.Generator().manual_seed(4), torch.tensor([True, True, False, True])
    for step in range(3):
        x, y = torch.randint(0, 37, (2, E, 8, 12), generator=gen)
        want = trainer._step(opts[0], x, y, alive, 0.5)
        monkeypatch.setattr(flat, "CHUNK_BYTES", (step + 1) * 8 * 12 * 64 * 4)  # 1, 2, 3 members a chunk
        got = trainer._step(opts[1], x, y, alive, 0.5)
        monkeypatch.undo()
        assert len(opts[1].member_chunks(8 * 12)) == 1 and len(opts[1]._chunks[1]) == 1
        torch.testing.assert_close(got, want, rtol=1e-6, atol=0)
    for (name, a), (_, b) in zip(chunked.named_parameters(), whole.named_parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7, msg=name)


def _plain_training(model: EnsembleLM, splits, cfg: trainer.LMTrainConfig, seeds) -> None:
    """The trainer's loop written plainly: its window draws and schedule, one ``torch.optim.AdamW``
    over the module's parameters, the clipping over every per-head tensor in the model's order."""
    decay = [p for p in model.parameters() if p.dim() >= 3]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}]
    groups += [{"params": [p for p in model.parameters() if p.dim() < 3], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.99))
    gens, n = [torch.Generator().manual_seed(s) for s in seeds], model.n_ctx
    train = [torch.as_tensor(t) for t, _ in splits]
    for g, (t, v) in zip(gens, splits):  # the trainer's fixed evaluation windows come first
        trainer.random_starts(len(t), n, cfg.eval_windows, g)
        trainer.random_starts(len(v), n, cfg.eval_windows, g)
    for step in range(cfg.steps):
        for group in opt.param_groups:
            group["lr"] = trainer.lr_at(step, cfg)
        starts = [trainer.random_starts(len(t), n, cfg.batch_size, g) for t, g in zip(train, gens)]
        x, y = trainer.member_windows(train, starts, n)
        opt.zero_grad(set_to_none=True)
        model.member_losses(x, y).sum().backward()
        trainer.clip_per_member(
            [SimpleNamespace(grad=g) for _, g in model.views(lambda p: p.grad)], cfg.grad_clip
        )
        opt.step()


def test_a_trained_ensembles_heldout_bits_are_the_plain_loops():
    """``train_lm_ensemble`` (flat AdamW, member chunks of one member here) and the plain loop, 80
    steps on two Markov sources: the held-out bits/token agree within 1e-4."""
    torch.set_num_threads(1)
    sources = [MarkovSource.from_seed(8, 2, 0.1, seed=s) for s in (0, 1)]
    tokens = [s.sample(6000, np.random.default_rng(i)) for i, s in enumerate(sources)]
    splits = [(t[:5000], t[5000:]) for t in tokens]
    cfg = trainer.LMTrainConfig(
        steps=80, batch_size=16, lr=1e-2, warmup=10, grad_clip=0.1, checkpoints=2, eval_windows=8
    )  # clip 0.1: the clipping scales every step
    fast, plain = (EnsembleLM(256, 16, [21, 22], d_model=16, n_heads=2) for _ in range(2))
    flat.CHUNK_BYTES, saved = 1, flat.CHUNK_BYTES
    try:
        trainer.train_lm_ensemble(fast, splits, cfg, [torch.Generator().manual_seed(s) for s in (5, 6)])
    finally:
        flat.CHUNK_BYTES = saved
    _plain_training(plain, splits, cfg, (5, 6))
    vals = [v for _, v in splits]
    starts = [trainer.tiling_starts(len(v), 16) for v in vals]
    got, want = trainer.heldout_bits(fast, vals, starts), trainer.heldout_bits(plain, vals, starts)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)
    assert (want < 7.5).all()  # they learned (8 bits/token untrained)

"""Training an :class:`~entropic_bound.language_models.model.ensemble.EnsembleLM`: every member on its own corpus, at once.

Each step draws, for member ``e``, ``batch_size`` windows of ``n_ctx + 1`` tokens from *its*
training split (start positions from *its* ``torch.Generator``) and takes one AdamW step on the
sum of the members' mean next-token cross-entropies. AdamW is elementwise and the gradient is
clipped per member (each member's own global norm), so member ``e`` follows exactly the path it
would follow alone. The learning rate warms up linearly over ``warmup`` steps, then follows a
cosine to ``lr · lr_final_ratio``. At log-spaced steps (:func:`checkpoint_steps`, step 0 included)
the loss is measured on fixed windows of each member's training and held-out splits and
``on_checkpoint(step, model)`` is called (the probes). The model may live on any device (windows
are cut on the CPU and moved to it); outcomes are CPU arrays. The mean training-batch loss is kept every
``max(1, steps // 100)`` steps (the loss curve). A member whose loss turns non-finite is recorded
as diverged at that step and contributes nothing from then on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from ...errors import DataError
from ...sweep.group_progress import report_step
from ...training.schedules import checkpoint_steps, cosine_lr
from ..model.ensemble import EnsembleLM
from ..names import LMTrainConfig
from .flat import FlatAdamW


def windows(tokens: torch.Tensor, starts: torch.Tensor, n_ctx: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and next-token targets ``(B, n_ctx)`` from ``tokens (N,)`` at ``starts (B,)``."""
    idx = starts[:, None] + torch.arange(n_ctx + 1)  # (B, n_ctx + 1)
    chunk = tokens[idx]
    return chunk[:, :-1], chunk[:, 1:]


def random_starts(
    n_tokens: int, n_ctx: int, count: int, gen: torch.Generator, pool: torch.Tensor | None = None
) -> torch.Tensor:
    """``count`` window starts, uniform over the split, or uniform over ``pool`` (allowed starts,
    e.g. the episode starts of a recall source, so every window opens at an episode) when given."""
    if n_tokens < n_ctx + 2:
        raise DataError(
            f"A split of {n_tokens} tokens is too short for windows of n_ctx + 1 = {n_ctx + 1} tokens."
        )
    if pool is None:
        return torch.randint(0, n_tokens - n_ctx - 1, (count,), generator=gen)
    if len(pool) == 0 or int(pool.max()) > n_tokens - n_ctx - 1:
        raise DataError(f"Allowed window starts must be non-empty and leave n_ctx + 1 = {n_ctx + 1} tokens.")
    return pool[torch.randint(0, len(pool), (count,), generator=gen)]


def member_windows(splits: list[torch.Tensor], starts: list[torch.Tensor], n_ctx: int):
    """Stacked inputs and targets ``(E, B, n_ctx)``: member ``e``'s windows of ``splits[e]``."""
    pairs = [windows(t, s, n_ctx) for t, s in zip(splits, starts)]
    return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])


@torch.no_grad()
def eval_losses(
    model: EnsembleLM, x: torch.Tensor, y: torch.Tensor, chunk: int = 32, weights: torch.Tensor | None = None
) -> np.ndarray:
    """Mean next-token cross-entropy (nats) of each member on its windows ``(E, W, n)``: ``(E,)``;
    with window ``weights (E, W)`` the weighted mean over windows."""
    was_training, device = model.training, next(model.parameters()).device
    model.eval()
    w = torch.ones(x.shape[:2], dtype=torch.float64) if weights is None else weights.double()
    total = torch.zeros(x.shape[0], dtype=torch.float64)
    for i in range(0, x.shape[1], chunk):
        xs, ys, ws = x[:, i : i + chunk].to(device), y[:, i : i + chunk].to(device), w[:, i : i + chunk]
        per_token = None if weights is None else ws[..., None].expand(xs.shape).to(device)
        total += model.member_losses(xs, ys, per_token).double().cpu() * ws.sum(dim=1)
    model.train(was_training)
    return (total / w.sum(dim=1)).numpy()


def tiling_starts(
    n_tokens: int, n_ctx: int, pool: np.ndarray | None = None, limit: int | None = None
) -> np.ndarray:
    """Starts of non-overlapping windows of ``n_ctx + 1`` tokens that tile a split (at most ``limit``,
    evenly spread), or, with a ``pool`` of allowed starts, the pool's starts at least a window apart."""
    if pool is None:
        starts = np.arange(0, n_tokens - n_ctx - 1, n_ctx + 1)
    else:
        starts, last = [], -(n_ctx + 1)
        for s in np.sort(np.asarray(pool, dtype=np.int64)):
            if s - last >= n_ctx + 1 and s <= n_tokens - n_ctx - 1:
                starts.append(s)
                last = s
        starts = np.asarray(starts, dtype=np.int64)
    if limit is not None and len(starts) > limit:
        starts = starts[np.linspace(0, len(starts) - 1, limit).round().astype(int)]
    return starts


def heldout_bits(
    model: EnsembleLM, splits: list[np.ndarray], starts: list[np.ndarray], chunk: int = 64
) -> np.ndarray:
    """Mean next-token loss (bits/token) of member ``e`` over its windows at ``starts[e]`` of
    ``splits[e]``: ``(E,)``. Members may have different window counts (the shorter lists are padded
    with repeats of their own windows at weight 0), so a member's number does not depend on the
    others in its ensemble."""
    width = max(len(s) for s in starts)
    padded = [torch.as_tensor(np.resize(s, width), dtype=torch.long) for s in starts]
    weight = torch.stack([(torch.arange(width) < len(s)).double() for s in starts])  # (E, W)
    x, y = member_windows([torch.as_tensor(t, dtype=torch.long) for t in splits], padded, model.n_ctx)
    return eval_losses(model, x, y, chunk, weight) / np.log(2.0)


def lr_at(step: int, cfg: LMTrainConfig) -> float:
    """Linear warm-up, then cosine from ``lr`` to ``lr · lr_final_ratio``."""
    return cosine_lr(step, cfg.steps, cfg.lr, cfg.lr * cfg.lr_final_ratio, cfg.warmup)


@dataclass
class EnsembleOutcome:
    """Checkpoint steps and per-member losses (nats) there, the batch-loss curve, divergence steps."""

    steps: list[int] = field(default_factory=list)
    train_loss: list[np.ndarray] = field(default_factory=list)  # each (E,)
    val_loss: list[np.ndarray] = field(default_factory=list)  # each (E,)
    curve_steps: list[int] = field(default_factory=list)
    batch_loss: list[np.ndarray] = field(default_factory=list)  # each (E,)
    diverged_step: np.ndarray | None = None  # (E,), -1 where the member did not diverge


def clip_per_member(params: list[torch.Tensor], max_norm: float) -> None:
    """Scale each member's gradients so that its own global norm is at most ``max_norm``."""
    grads = [p.grad for p in params if p.grad is not None]
    sq = sum(g.pow(2).flatten(1).sum(dim=1) for g in grads)  # (E,)
    scale = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.view(-1, *([1] * (g.dim() - 1))))


def _optimizer(model: EnsembleLM, cfg: LMTrainConfig) -> FlatAdamW:
    return FlatAdamW(model, lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.99))


def _step(
    opt: FlatAdamW,
    x: torch.Tensor,
    y: torch.Tensor,
    alive: torch.Tensor,
    clip: float,
    w: torch.Tensor | None = None,
):
    """One AdamW step of ``opt``'s model on the live members' summed losses; the members' losses
    ``(E,)`` (float64, CPU).
    ``w (E, B, n)``: optional per-target loss weights (:meth:`EnsembleLM.member_losses`). The forward
    and backward run chunk by chunk of members (:meth:`FlatAdamW.member_chunks`), into one gradient."""
    opt.zero_grad()
    losses = []
    for rows, sub in opt.member_chunks(x.shape[1] * x.shape[2]):
        chunk = sub.member_losses(x[rows], y[rows], None if w is None else w[rows])  # (members,)
        live = alive[rows].to(chunk.device) & torch.isfinite(chunk).detach()
        opt.backward(torch.where(live, chunk, torch.zeros_like(chunk)).sum())
        losses.append(chunk.detach())
    opt.clip_per_member(clip)
    opt.step()
    return torch.cat(losses).double().cpu()


def _weight_tensors(loss_weights, train: list[torch.Tensor]) -> list[torch.Tensor] | None:
    """Per-member float weights over the training splits (zeros for a member without weights:
    :meth:`EnsembleLM.member_losses` then takes its plain mean); ``None`` when no member has any."""
    if loss_weights is None or all(w is None for w in loss_weights):
        return None
    out = []
    for w, t in zip(loss_weights, train):
        if w is not None and len(w) != len(t):
            raise DataError(f"Loss weights must match the training split: {len(w)} != {len(t)} tokens.")
        out.append(torch.zeros(len(t)) if w is None else torch.as_tensor(w, dtype=torch.float32))
    return out


def train_lm_ensemble(
    model: EnsembleLM,
    splits: list[tuple[np.ndarray, np.ndarray]],
    cfg: LMTrainConfig,
    gens: list[torch.Generator],
    on_checkpoint: Callable[[int, EnsembleLM], None] | None = None,
    pools: list[tuple[np.ndarray, np.ndarray] | None] | None = None,
    loss_weights: list[np.ndarray | None] | None = None,
) -> EnsembleOutcome:
    """Train ``model`` in place, member ``e`` on ``splits[e] = (train, held_out)`` with ``gens[e]``.

    ``pools[e]``, when given and not ``None``, holds the allowed window starts of member ``e``'s
    (train, held-out) splits (:func:`random_starts`); otherwise windows start anywhere.
    ``loss_weights[e]``, when given and not ``None``, weighs the *training* loss of member ``e``
    per target token (``(N_train,)``, aligned with its training split, e.g. MQAR's answers up-weighted);
    the checkpoint losses stay plain means. Members without weights train exactly as before."""
    E, n, device = model.n_members, model.n_ctx, next(model.parameters()).device
    train = [torch.as_tensor(t, dtype=torch.long) for t, _ in splits]
    val = [torch.as_tensor(v, dtype=torch.long) for _, v in splits]
    pools = pools or [None] * E
    tr_pool = [None if p is None else torch.as_tensor(p[0], dtype=torch.long) for p in pools]
    va_pool = [None if p is None else torch.as_tensor(p[1], dtype=torch.long) for p in pools]
    fixed = {
        "train": member_windows(
            train,
            [random_starts(len(t), n, cfg.eval_windows, g, q) for t, g, q in zip(train, gens, tr_pool)],
            n,
        ),
        "val": member_windows(
            val, [random_starts(len(v), n, cfg.eval_windows, g, q) for v, g, q in zip(val, gens, va_pool)], n
        ),
    }
    opt, marks, out = (
        _optimizer(model, cfg),
        set(checkpoint_steps(cfg.steps, cfg.checkpoints)),
        EnsembleOutcome(),
    )
    weights = _weight_tensors(loss_weights, train)
    alive, diverged = torch.ones(E, dtype=torch.bool), np.full(E, -1)
    every, running = max(1, cfg.steps // 100), torch.zeros(E, dtype=torch.float64)

    def checkpoint(step: int) -> None:
        out.steps.append(step)
        out.train_loss.append(eval_losses(model, *fixed["train"]))
        out.val_loss.append(eval_losses(model, *fixed["val"]))
        if on_checkpoint is not None:
            on_checkpoint(step, model)

    checkpoint(0)
    model.train()
    for step in range(1, cfg.steps + 1):
        for group in opt.param_groups:
            group["lr"] = lr_at(step - 1, cfg)
        starts = [random_starts(len(t), n, cfg.batch_size, g, q) for t, g, q in zip(train, gens, tr_pool)]
        x, y = member_windows(train, starts, n)
        w = None if weights is None else member_windows(weights, starts, n)[1].to(device)
        losses = _step(opt, x.to(device), y.to(device), alive, cfg.grad_clip, w)  # (E,) on the CPU
        diverged[(alive & ~torch.isfinite(losses)).numpy()] = step
        alive &= torch.isfinite(losses)
        running += torch.where(alive, losses, torch.full_like(running, float("nan")))
        if step % every == 0:
            out.curve_steps.append(step)
            out.batch_loss.append((running / every).numpy().copy())
            running.zero_()
        if step in marks:
            checkpoint(step)
        report_step(step, cfg.steps)
        if not alive.any():
            break
    out.diverged_step = diverged
    return out

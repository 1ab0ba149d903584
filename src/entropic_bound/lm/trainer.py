"""Training a :class:`~entropic_bound.lm.model.CausalLM` with AdamW on random windows of a corpus.

Every step draws ``batch_size`` windows of ``n_ctx + 1`` tokens from the training split (start
positions from an explicit ``torch.Generator``) and takes one AdamW step on the mean next-token
cross-entropy; the learning rate warms up linearly over ``warmup`` steps, then follows a cosine to
``lr · lr_final_ratio``. At log-spaced steps (:func:`checkpoint_steps`, step 0 included) the
weights are copied in memory and the loss is measured on fixed evaluation windows of the training
and held-out splits. A non-finite loss stops training and records the step as diverged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from ..config import param
from ..errors import DataError
from .model import CausalLM


@dataclass(frozen=True)
class LMTrainConfig:
    steps: int = param(600, ge=1, le=10_000_000)
    batch_size: int = param(16, ge=1, le=65_536)
    lr: float = param(3e-3, gt=0.0)
    lr_final_ratio: float = param(0.1, ge=0.0, le=1.0, doc="cosine decay to lr × this")
    warmup: int = param(20, ge=0)
    weight_decay: float = param(0.01, ge=0.0)
    grad_clip: float = param(1.0, gt=0.0)
    checkpoints: int = param(12, ge=2, le=1000, doc="log-spaced steps at which weights are kept")
    eval_windows: int = param(32, ge=1, le=100_000, doc="fixed windows per split for the checkpoint losses")


def checkpoint_steps(steps: int, count: int) -> list[int]:
    """Step 0 and up to ``count - 1`` distinct log-spaced steps in ``[1, steps]``, ``steps`` included."""
    logs = np.unique(np.rint(np.geomspace(1, steps, max(count - 1, 1))).astype(int))
    return [0, *logs.tolist()]


def windows(tokens: torch.Tensor, starts: torch.Tensor, n_ctx: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and next-token targets ``(B, n_ctx)`` from ``tokens (N,)`` at ``starts (B,)``."""
    idx = starts[:, None] + torch.arange(n_ctx + 1)  # (B, n_ctx + 1)
    chunk = tokens[idx]
    return chunk[:, :-1], chunk[:, 1:]


def random_starts(n_tokens: int, n_ctx: int, count: int, gen: torch.Generator) -> torch.Tensor:
    if n_tokens < n_ctx + 2:
        raise DataError(
            f"A split of {n_tokens} tokens is too short for windows of n_ctx + 1 = {n_ctx + 1} tokens."
        )
    return torch.randint(0, n_tokens - n_ctx - 1, (count,), generator=gen)


@torch.no_grad()
def eval_loss(model: CausalLM, tokens: torch.Tensor, starts: torch.Tensor, chunk: int = 64) -> float:
    """Mean next-token cross-entropy (nats) over the windows at ``starts``."""
    was_training = model.training
    model.eval()
    total = 0.0
    for i in range(0, len(starts), chunk):
        x, y = windows(tokens, starts[i : i + chunk], model.n_ctx)
        total += float(model.loss(x, y)) * len(x)
    model.train(was_training)
    return total / len(starts)


def lr_at(step: int, cfg: LMTrainConfig) -> float:
    """Linear warm-up, then cosine from ``lr`` to ``lr · lr_final_ratio``."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(cfg.steps - cfg.warmup, 1)
    floor = cfg.lr * cfg.lr_final_ratio
    return floor + 0.5 * (cfg.lr - floor) * (1 + math.cos(math.pi * min(progress, 1.0)))


@dataclass
class LMTrainOutcome:
    """Checkpoint steps, losses (nats) there, and a copy of the weights at each."""

    steps: list[int] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    snapshots: list[dict] = field(default_factory=list)
    diverged_step: int | None = None


def _checkpoint(model: CausalLM, out: LMTrainOutcome, step: int, data: dict) -> None:
    out.steps.append(step)
    out.train_loss.append(eval_loss(model, data["train"], data["train_starts"]))
    out.val_loss.append(eval_loss(model, data["val"], data["val_starts"]))
    out.snapshots.append({k: v.detach().clone() for k, v in model.state_dict().items()})


def train_lm(
    model: CausalLM,
    train_tokens: np.ndarray,
    val_tokens: np.ndarray,
    cfg: LMTrainConfig,
    gen: torch.Generator,
) -> LMTrainOutcome:
    """Train ``model`` in place; return the checkpoint record (see module doc)."""
    data = {
        "train": torch.as_tensor(train_tokens, dtype=torch.long),
        "val": torch.as_tensor(val_tokens, dtype=torch.long),
    }
    data["train_starts"] = random_starts(len(train_tokens), model.n_ctx, cfg.eval_windows, gen)
    data["val_starts"] = random_starts(len(val_tokens), model.n_ctx, cfg.eval_windows, gen)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr,
        betas=(0.9, 0.99),
    )
    marks = set(checkpoint_steps(cfg.steps, cfg.checkpoints))
    out = LMTrainOutcome()
    _checkpoint(model, out, 0, data)
    model.train()
    for step in range(1, cfg.steps + 1):
        for group in opt.param_groups:
            group["lr"] = lr_at(step - 1, cfg)
        x, y = windows(
            data["train"], random_starts(len(train_tokens), model.n_ctx, cfg.batch_size, gen), model.n_ctx
        )
        loss = model.loss(x, y)
        if not torch.isfinite(loss):
            out.diverged_step = step
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        if step in marks:
            _checkpoint(model, out, step, data)
    return out

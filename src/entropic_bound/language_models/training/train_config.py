"""How E7's language models are trained (:func:`~entropic_bound.language_models.training.trainer.train_lm_ensemble`), in a
module without torch: E7's config holds it, and importing the config must not import the trainer."""

from __future__ import annotations

from dataclasses import dataclass

from ...config import param


@dataclass(frozen=True)
class LMTrainConfig:
    steps: int = param(600, ge=1, le=10_000_000)
    batch_size: int = param(16, ge=1, le=65_536)
    lr: float = param(3e-3, gt=0.0)
    lr_final_ratio: float = param(0.1, ge=0.0, le=1.0, doc="cosine decay to lr × this")
    warmup: int = param(20, ge=0)
    weight_decay: float = param(0.01, ge=0.0)
    grad_clip: float = param(1.0, gt=0.0)
    checkpoints: int = param(12, ge=2, le=1000, doc="log-spaced steps at which the probes run")
    eval_windows: int = param(32, ge=1, le=100_000, doc="fixed windows per split for the checkpoint losses")

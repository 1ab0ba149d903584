"""E7's language-model declarations that a config reads, in a module without torch: the content
threshold of the probes (C13) and how the models are trained
(:func:`~entropic_bound.language_models.training.trainer.train_lm_ensemble`). Importing E7's config
must import neither the mixer scores nor the trainer."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import param

#: Content must move at least this share of the attention mass (content TV) for a head to be
#: ``content`` — a quarter, half of what a 2-way router moves when content makes every choice. A
#: concentrated head has a tiny ceiling, and a small movement over it is a large share: trained
#: lag-copy heads move 4–28 % of their mass with content that nothing uses (content share 0.53–0.78).
#: Validated on fresh control models (bench/lm_controls/RESULTS.md): under 0.05, 5 of 6 fresh lag-8
#: models showed no positional head; under 0.25 all 12 fresh lag-copy models and the fresh recall
#: models agree. C13's robustness grid also decides at 0.05.
MIN_MOVED = 0.25


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

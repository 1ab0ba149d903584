"""The schedules every trainer shares: log-spaced checkpoint steps and the cosine learning rate."""

from __future__ import annotations

import math

import numpy as np


def checkpoint_steps(steps: int, count: int) -> list[int]:
    """``count`` log-spaced steps in ``[0, steps]``, always including 0 and ``steps``."""
    if count <= 0:
        return [steps]
    grid = np.unique(np.round(np.geomspace(1, steps + 1, count)).astype(int) - 1)
    return sorted(set(grid.tolist()) | {0, steps})


def cosine_lr(step: int, steps: int, lr: float, lr_final: float, warmup: int = 0) -> float:
    """Linear warm-up over ``warmup`` steps, then a cosine from ``lr`` at the end of the warm-up to
    ``lr_final`` at ``steps`` (held there after)."""
    if step < warmup:
        return lr * (step + 1) / warmup
    span = max(steps - warmup, 1)
    cos = 0.5 * (1 + math.cos(math.pi * min(step - warmup, span) / span))
    return lr_final + (lr - lr_final) * cos

"""Ensemble training: one forward/backward per step for a whole group of models.

The names below are imported from their modules on first use, so importing :mod:`.config` (the
``TrainConfig`` every experiment's config holds) imports no trainer and no torch.
"""

from __future__ import annotations

from ..lazy_exports import lazy_exports

#: each public name → the module that defines it
_HOMES = {
    "TrainConfig": ".config",
    "MomentData": ".moments",
    "QuadraticMoments": ".moments",
    "cosine_lr": ".schedules",
    "DTYPES": ".trainer",
    "FixedData": ".trainer",
    "FreshData": ".trainer",
    "TrainOutcome": ".trainer",
    "checkpoint_steps": ".trainer",
    "learning_rate": ".trainer",
    "per_model_loss": ".trainer",
    "train_ensemble": ".trainer",
}

__getattr__ = lazy_exports(__name__, _HOMES)

__all__ = list(_HOMES)

"""Ensemble training: one forward/backward per step for a whole group of models.

The names below are imported from their modules on first use, so importing :mod:`.config` (the
``TrainConfig`` every experiment's config holds) imports no trainer and no torch.
"""

from __future__ import annotations

from ..lazy_exports import lazy_package

#: each (relative) module → the public names it defines, imported on first use
__getattr__, __all__ = lazy_package(
    __name__,
    {
        ".config": ("TrainConfig",),
        ".moments": ("MomentData", "QuadraticMoments"),
        ".schedules": ("cosine_lr",),
        ".trainer": (
            "DTYPES",
            "FixedData",
            "FreshData",
            "TrainOutcome",
            "checkpoint_steps",
            "learning_rate",
            "per_model_loss",
            "train_ensemble",
        ),
    },
)

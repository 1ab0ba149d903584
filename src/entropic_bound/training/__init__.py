"""Ensemble training: one forward/backward per step for a whole group of models."""

from .config import TrainConfig
from .moments import MomentData, QuadraticMoments
from .schedules import cosine_lr
from .trainer import (
    DTYPES,
    FixedData,
    FreshData,
    TrainOutcome,
    checkpoint_steps,
    learning_rate,
    per_model_loss,
    train_ensemble,
)

__all__ = [
    "DTYPES",
    "FixedData",
    "FreshData",
    "MomentData",
    "QuadraticMoments",
    "TrainConfig",
    "TrainOutcome",
    "checkpoint_steps",
    "cosine_lr",
    "learning_rate",
    "per_model_loss",
    "train_ensemble",
]

"""Ensemble training: one forward/backward per step for a whole group of models."""
from .config import TrainConfig
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
    "TrainConfig",
    "TrainOutcome",
    "checkpoint_steps",
    "learning_rate",
    "per_model_loss",
    "train_ensemble",
]

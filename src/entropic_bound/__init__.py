"""entropic-bound: the intrinsic rank r* of a task's token-mixing operator, measured and predicted."""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import ConfigError, DataError, UnknownNameError, UserInputError
from .registry import ARCHITECTURES, ESTIMATORS, EXPERIMENTS, PREDICTORS, STUDENTS, TASKS, Registry

__all__ = [
    "__version__",
    "ConfigError",
    "DataError",
    "UnknownNameError",
    "UserInputError",
    "ARCHITECTURES",
    "ESTIMATORS",
    "EXPERIMENTS",
    "PREDICTORS",
    "STUDENTS",
    "TASKS",
    "Registry",
]

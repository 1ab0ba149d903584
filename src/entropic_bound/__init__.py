"""entropic-bound: the intrinsic rank r* of a task's token-mixing operator, measured and predicted.

Each package keeps the declarations a config or the command line reads (names, choices, defaults)
in its own ``names.py``, a module that imports no torch or pandas (``names.py`` here, ``tasks/names.py``,
``models/names.py``, ``spectra/names.py``, ``language_models/names.py``, ``experiments/science/names.py``);
importing an experiment's config imports only these.
"""

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

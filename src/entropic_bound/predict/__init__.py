"""Data-only predictors of the intrinsic rank r* (E6: claims C9/C10, extension X1; docs/claims.md).

``predict_r_star(X, Y, teacher=..., V=...)`` returns a :class:`Prediction`; methods are registered
by name in :data:`PREDICTORS` (one module per family) and are pure functions of arrays.
"""

from __future__ import annotations

from ..registry import PREDICTORS
from .api import TEACHERS, default_method, predict_r_star
from .base import Fit
from .cut import noise_calibrated_cut
from .data import check_arrays, load_npy, load_npz
from .result import ESTIMATE_KEYS, Prediction

__all__ = [
    "ESTIMATE_KEYS",
    "PREDICTORS",
    "TEACHERS",
    "Fit",
    "Prediction",
    "check_arrays",
    "default_method",
    "load_npy",
    "load_npz",
    "noise_calibrated_cut",
    "predict_r_star",
]

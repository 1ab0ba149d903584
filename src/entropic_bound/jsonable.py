"""One JSON sanitiser: numpy scalars and arrays to Python, non-finite floats to ``None``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def json_safe(obj: Any) -> Any:
    """``obj`` with dict keys as str, tuples and arrays as lists, numpy scalars as Python scalars and
    NaN/±inf as ``None`` (JSON has no NaN), recursively; anything else unchanged."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(float(obj)) else None
    return obj

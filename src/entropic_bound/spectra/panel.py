"""The standard panel of rank estimates every experiment reports.

``PANEL`` fixes the keys, the estimators behind them and their parameters, in report order: each
registered estimator's ``panel`` rows (``@_register(panel=…)``, by default one row under its name), in
the order ``registry.py`` declares the estimators, so a new estimator joins the panel with its
registry line. The Gavish–Donoho keys need the original matrix shape; the known-noise variant also
needs σ.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DataError, UserInputError
from ..registry import ESTIMATORS
from .names import panel_keys, panel_rows  # noqa: F401  (panel_keys: also read from here)
from .svd import as_float64_tensor

#: ``(key, estimator_name, params)`` in report order: what the registered estimators declare. Treat as
#: read-only.
PANEL: list[tuple[str, str, dict[str, Any]]] = panel_rows()


#: The panel's keys in report order (the columns ``<prefix>_<key>`` experiments store).
ESTIMATOR_KEYS: tuple[str, ...] = tuple(key for key, _, _ in PANEL)
KNOWN_NOISE_KEY = "optimal_hard_threshold_known_noise"
_NEEDS_SHAPE = "optimal_hard_threshold"


def _entries(sigma_known: bool) -> list[tuple[str, str, dict[str, Any]]]:
    entries = list(PANEL)
    if sigma_known:
        entries.append((KNOWN_NOISE_KEY, "optimal_hard_threshold", {}))
    return entries


def estimate_all(
    s: Any, *, shape: tuple[int, int] | None = None, sigma: float | None = None
) -> dict[str, np.ndarray]:
    """Every panel estimate of the spectra ``s`` (..., k): ``{key: (...) float64 array}``.

    Args:
        s: singular values, shape ``(..., k)``.
        shape: ``(m, N)`` of the matrices the spectra come from; without it the Gavish–Donoho keys
            are skipped. The unknown-noise key needs the full spectrum (``k = min(m, N)``).
        sigma: known noise standard deviation per entry; adds ``optimal_hard_threshold_known_noise``.
    """
    if sigma is not None and shape is None:
        raise UserInputError(
            "The 'sigma' parameter needs 'shape' (the Gavish-Donoho threshold uses it). Got shape=None."
        )
    s = as_float64_tensor(s, name="s").cpu().numpy()  # (..., k), converted once for every estimator
    out: dict[str, np.ndarray] = {}
    for key, name, params in _entries(sigma is not None):
        if name == _NEEDS_SHAPE:
            if shape is None:
                continue
            params = {**params, "shape": shape, "sigma": sigma if key == KNOWN_NOISE_KEY else None}
        out[key] = ESTIMATORS.get(name)(s, **params)
    return out


def panel_description(sigma_known: bool = False) -> dict[str, dict[str, Any]]:
    """JSON-ready description of the panel: ``{key: {estimator, params, formula, reference, integer}}``.

    ``params`` are the effective parameters (defaults merged with the panel's). For the
    Gavish–Donoho keys ``shape`` is the measured matrix's and ``sigma`` is ``None`` (estimated from
    the median) or ``"known"`` (passed by the caller).
    """
    description: dict[str, dict[str, Any]] = {}
    for key, name, params in _entries(sigma_known):
        est = ESTIMATORS.get(name)
        merged = {**est.defaults, **params}
        if name == _NEEDS_SHAPE:
            merged.update(shape="(m, N) of the matrix", sigma="known" if key == KNOWN_NOISE_KEY else None)
        description[key] = {
            "estimator": name,
            "params": merged,
            "formula": est.formula,
            "reference": est.reference,
            "integer": est.integer,
        }
    return description


def round_estimate(x: Any) -> np.ndarray:
    """Nearest integer, halves rounded up (``floor(x + 0.5)``), as int64; shape preserved.

    Used to compare continuous estimates (effective ranks) with an integer ``r*`` ("exact recovery").
    A value within :data:`ROUND_ULPS` ulps below a half counts as the half (rounded up), so that an
    estimate equal to ``k + 1/2`` in exact arithmetic does not round either way by its last bits.
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.size and not np.isfinite(arr).all():
        raise DataError("Cannot round NaN or infinite rank estimates.")
    slack = ROUND_ULPS * np.finfo(np.float64).eps * np.maximum(np.abs(arr), 1.0)
    return np.floor(arr + 0.5 + slack).astype(np.int64)


#: Ulps of slack below a half in :func:`round_estimate`.
ROUND_ULPS = 16

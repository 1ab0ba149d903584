"""The spectra package's names a config reads: the rows of the rank-estimate panel, read from the
estimator registry when asked for.

A module without torch or numpy: an experiment's config names :func:`panel_keys` as the choices of
its estimator-picking keys (``verdict.c3_estimator``, …), and importing the config must not import
the estimators. Calling either function imports them (through the registry).
"""

from __future__ import annotations

from typing import Any

from ..registry import ESTIMATORS


def panel_rows() -> list[tuple[str, str, dict[str, Any]]]:
    """Every registered estimator's panel rows (its ``panel``), in the order ``registry.py`` declares them."""
    rows = []
    for name in ESTIMATORS.declared():
        for key, params in getattr(ESTIMATORS.get(name), "panel", {}).items():
            rows.append((key, name, params))
    return rows


def panel_keys() -> tuple[str, ...]:
    """The panel's keys as the registry declares them now: the choices of the config keys that pick an
    estimator (``verdict.c3_estimator``, ``verdict.c7_estimator``, …), read when a value is checked."""
    return tuple(key for key, _, _ in panel_rows())

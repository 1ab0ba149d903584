"""Experiments E1…E7, one folder each with the same files: ``config.py`` (the typed config and its
scale settings), ``experiment.py`` (the grid and ``execute``), ``analysis.py`` (tables, figures, notes),
``plots.py`` and ``claims.py`` (each claim's criterion, report sentence and robustness grid).

Each is declared (lazily, by ``module:object``) in :data:`entropic_bound.registry.EXPERIMENTS`, and
this package imports none of them: ``EXPERIMENTS.get("E3")`` imports E3 alone, and importing one
experiment's ``config.py`` imports no other experiment, and no torch or pandas (the command line
checks a ``--set`` against it first: :mod:`.config_lookup`). The names below are looked up on first use.
"""

from __future__ import annotations

import importlib

from ..registry import EXPERIMENTS

#: shared names, each from the module that defines it
_SHARED = {
    "SCALES": "..names",
    "Analysis": ".framework.verdict",
    "Verdict": ".framework.verdict",
    "Experiment": ".framework.base",
    "derive_seed": ".framework.draws",
    "Seeds": ".framework.draws",
}


def declared_claims() -> list:
    """Every claim the experiments declare (:class:`~entropic_bound.experiments.framework.claim.Claim`), E1's first."""
    return [claim for name in EXPERIMENTS for claim in EXPERIMENTS.get(name).declared_claims]


def tiny_settings(name: str) -> dict:
    """``name``'s ``TINY_SETTINGS`` (in its ``config.py``, beside ``SCALE_SETTINGS``): the overrides of a
    tiny grid that decides every claim in seconds, which the tests that run every experiment use."""
    config_module = importlib.import_module(EXPERIMENTS.get(name).config_class.__module__)
    return dict(config_module.TINY_SETTINGS)


def _experiment_class(name: str):
    """``E3Ladder`` → E3's registered class; ``E3Config`` → its ``config_class``; None for other names."""
    for registered in EXPERIMENTS:
        if name.startswith(registered) and name[len(registered) : len(registered) + 1].isalpha():
            cls = EXPERIMENTS.get(registered)
            if name == cls.__name__:
                return cls
            if name == f"{registered}Config":
                return cls.config_class
    return None


def __getattr__(name: str):
    if name in _SHARED:
        return getattr(importlib.import_module(_SHARED[name], __name__), name)
    found = _experiment_class(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return found


__all__ = ["declared_claims", "tiny_settings", *_SHARED]

"""An experiment's parts, read from the modules beside its ``experiment.py``.

Every experiment folder keeps its typed config and scales in ``config.py`` (``E<k>Config``,
``SCALE_SETTINGS``), its claims in ``claims.py`` (``CLAIMS``) and its tables and figures in
``analysis.py`` (``analyse``). An experiment class takes all four from here in one line:

    from . import analysis, claims, config

    class E8Floor(Experiment):
        config_class, scale_settings, declared_claims, analysis_function = parts_of(
            config, claims, analysis
        )
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType


def config_class_in(config: ModuleType) -> type:
    """The one ``E<k>Config`` class that ``config`` defines (the folder's experiment's config)."""
    found = [
        value
        for name, value in vars(config).items()
        if re.fullmatch(r"E\d+Config", name)
        and isinstance(value, type)
        and value.__module__ == config.__name__
    ]
    if len(found) != 1:
        raise TypeError(f"{config.__name__} must define one E<k>Config class; it defines {len(found)}.")
    return found[0]


def parts_of(
    config: ModuleType, claims: ModuleType, analysis: ModuleType
) -> tuple[type, dict, tuple, Callable]:
    """``(config_class, scale_settings, declared_claims, analysis_function)`` of the experiment whose
    ``config.py``, ``claims.py`` and ``analysis.py`` these are."""
    return config_class_in(config), config.SCALE_SETTINGS, claims.CLAIMS, analysis.analyse

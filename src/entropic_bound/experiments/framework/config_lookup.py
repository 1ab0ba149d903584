"""An experiment's config class, found without importing the experiment (and so torch).

Every experiment folder keeps its config in ``config.py`` beside ``experiment.py``, named after the
experiment (``E3`` → ``E3Config``): its registry line says where the folder is, and importing the
config imports no torch (a unit test keeps both true for every registered experiment). An experiment
declared elsewhere (a plug-in's one module, an eager registration) is imported for its
``config_class``.
"""

from __future__ import annotations

import importlib
import importlib.util

from ...registry import EXPERIMENTS


def _beside(name: str) -> str | None:
    """The module ``config.py`` beside ``name``'s registered experiment module, if there is one."""
    target = EXPERIMENTS.target(name)
    package = (target or "").partition(":")[0].rpartition(".")[0]
    if not package:
        return None
    try:
        found = importlib.util.find_spec(f"{package}.config")
    except ModuleNotFoundError:  # the experiment's own package is missing: its lookup says so
        return None
    return None if found is None else found.name


def config_class(name: str) -> type:
    """``name``'s config class: ``<name>Config`` in the ``config.py`` beside its experiment module,
    else the experiment's ``config_class`` (which imports the experiment)."""
    module = _beside(name)
    found = getattr(importlib.import_module(module), f"{name}Config", None) if module else None
    return found if isinstance(found, type) else EXPERIMENTS.get(name).config_class

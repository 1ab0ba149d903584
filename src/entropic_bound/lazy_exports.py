"""A package's public names, each imported from its module on first use (PEP 562).

A package whose ``__init__`` imported every submodule would make ``import pkg.small_module`` import
them all (torch with them): importing one torch-free module of ``training`` or ``tasks`` (what an
experiment's config reads) would cost seconds. With
``__getattr__, __all__ = lazy_package(__name__, {".module": ("Name", …), …})``, ``from pkg import Name``
still works and imports ``Name``'s module alone.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``homes`` maps each public name to the (relative)
    module that defines it; a name is imported once and then kept in the package's namespace."""

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name], package), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


def lazy_package(
    package: str, names_by_module: Mapping[str, Iterable[str]]
) -> tuple[Callable[[str], Any], list[str]]:
    """``(__getattr__, __all__)`` of ``package`` from each (relative) module → the public names it
    defines, in the order given."""
    homes = {name: module for module, names in names_by_module.items() for name in names}
    return lazy_exports(package, homes), list(homes)

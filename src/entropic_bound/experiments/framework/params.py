"""A run's params from config sections, and config sections back from a run's params.

A run spec's params are flat dotted keys (``train.lr``, ``task.n``): :func:`to_params` writes a
config section under a prefix, :func:`from_params` reads the keys under a prefix back as the
section's field names (the keyword arguments of its dataclass).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ... import config as cfglib
from ...results import RunSpec


def to_params(section: Any, prefix: str, names: Iterable[str] | None = None) -> dict:
    """``{prefix.key: value}`` for every (flattened) field of the config ``section``, or only for the
    fields ``names``, in that order (an experiment's settings of its task)."""
    if names is not None:
        return {f"{prefix}.{name}": getattr(section, name) for name in names}
    return {f"{prefix}.{k}": v for k, v in cfglib.flatten(cfglib.to_dict(section)).items()}


def from_params(spec: RunSpec, prefix: str) -> dict:
    """The params of ``spec`` under ``prefix.`` with the prefix removed."""
    n = len(prefix) + 1
    return {k[n:]: v for k, v in spec.params.items() if k.startswith(prefix + ".")}

"""``list EXPERIMENT``: an experiment's config keys, each with its default, range or choices and meaning.

Read from the ``param(..., doc=...)`` declarations of the experiment's ``config.py`` (no torch is
imported); the defaults are the quick scale's, the paper scale's beside them where they differ.
"""

from __future__ import annotations

import dataclasses
import importlib

from .. import config as cfglib
from ..config_keys import experiment_names
from ..errors import UserInputError
from ..registry import EXPERIMENTS


def scale_config(cls: type, scale: str):
    """``cls`` with the ``SCALE_SETTINGS[scale]`` of its module (the experiment's ``default_config``)."""
    settings = getattr(importlib.import_module(cls.__module__), "SCALE_SETTINGS", {})
    return cls(**settings.get(scale, {}))


def _allowed(meta) -> str:
    """The choices, the range, or '' when neither is declared."""
    choices = cfglib.field_choices(meta)
    if choices:
        shown = ", ".join(map(str, choices[:8])) + (
            f", … ({len(choices)} in all)" if len(choices) > 8 else ""
        )
        return f"one of {shown}"
    if any(meta.get(k) is not None for k in ("ge", "gt", "le", "lt")):
        return cfglib._range_text(meta)
    return ""


def _leaves(cfg, prefix: str = ""):
    """``(dotted key, value, field metadata)`` of every leaf, in declaration order."""
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if dataclasses.is_dataclass(value):
            yield from _leaves(value, f"{prefix}{f.name}.")
        else:
            yield f"{prefix}{f.name}", value, f.metadata


def _shown(value) -> str:
    return "[" + ", ".join(map(str, value)) + "]" if isinstance(value, tuple) else str(value)


def config_rows(name: str) -> list[tuple[str, str, str, str]]:
    """``(key, default, allowed, meaning)`` of each of ``name``'s config keys; a one-line error for an
    experiment that is not registered, naming the ones that are."""
    if name not in EXPERIMENTS:
        raise UserInputError(f"Unknown experiment '{name}'. Available: {', '.join(experiment_names())}.")
    from ..experiments.framework.config_lookup import config_class

    cls = config_class(name)
    quick, paper = scale_config(cls, "quick"), dict((k, v) for k, v, _ in _leaves(scale_config(cls, "paper")))
    rows = []
    for key, value, meta in _leaves(quick):
        default = _shown(value) + ("" if paper[key] == value else f" (paper: {_shown(paper[key])})")
        rows.append((key, default, _allowed(meta), meta.get("doc", "")))
    return rows

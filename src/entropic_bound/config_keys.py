"""Override keys and values checked before any heavy import, so a mistake is refused at once.

:func:`check_keys` reads an experiment's config class from its ``config.py``
(:func:`~entropic_bound.experiments.framework.config_lookup.config_class`), a module that imports no torch,
and refuses an unknown or renamed key, a value of the wrong type or out of range with the message
the full validation gives (the same :mod:`entropic_bound.config` functions run on the same
declarations). Choices read from a registry (``param(choices=<function>)``: the estimators, the
ladder's students) and constraints that tie fields together (a config's ``check()``) are left to the
full validation, which imports what they read.

Also here, because the command line needs them before that import: reading overrides from
``--set``/``--config`` (:func:`gather_overrides`) and splitting ``reproduce``'s ``E1.``-prefixed
keys by experiment (:func:`split_by_experiment`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from . import config as cfglib
from .config import load_yaml, parse_assignment
from .errors import ConfigError, did_you_mean
from .experiments.framework.config_lookup import config_class
from .registry import EXPERIMENTS
from .store.migrations import replacement_of

_EXPERIMENT_NAME = re.compile(r"E[0-9]+")
_SCALARS = (int, float, bool, str)


def gather_overrides(assignments: Sequence[str], config_file: str | None) -> dict:
    """A YAML file's keys, then ``key=value`` assignments (later wins), as one flat dict."""
    items: dict = load_yaml(config_file) if config_file else {}
    items.update(dict(parse_assignment(a) for a in assignments))
    return items


def split_by_experiment(items: dict, names: Sequence[str]) -> dict[str, dict]:
    """``{"E1.train.lr": v}`` → ``{"E1": {"train.lr": v}}``; every key must start with an experiment."""
    out: dict[str, dict] = {n: {} for n in names}
    for key, value in items.items():
        head, _, rest = key.partition(".")
        if head not in out or not rest:
            raise ConfigError(
                f"A reproduce override must start with one of the experiments run ({', '.join(names)}), "
                f"e.g. E1.train.lr=1e-3. Got {key!r} instead."
            )
        out[head][rest] = value
    return out


def strip_experiment(name: str, items: dict, names: Sequence[str]) -> dict:
    """``run E1 --set E1.train.lr=…``: the prefix ``reproduce`` needs is accepted by ``run`` too; a
    prefix naming another experiment (``names``), or one shaped like an experiment's name that names
    none, is refused in one line (config keys are lower case, experiment names ``E<number>``)."""
    prefix = f"{name}."
    for key in items:
        head, _, rest = key.partition(".")
        if head == name or not rest or not _EXPERIMENT_NAME.fullmatch(head):
            continue
        if head in names:
            raise ConfigError(
                f"The override '{key}' is for {head}, but this command runs {name}: run {head} "
                f"('entropic-bound run {head} --set {rest}=…') or both ('entropic-bound reproduce "
                f"--only {name},{head} --set {key}=…'). Got '{key}' for run {name} instead."
            )
        raise ConfigError(
            f"The override '{key}' starts with '{head}', which names no experiment (experiments: "
            f"{', '.join(names)}); an override of run {name} is one of its config keys, e.g. "
            f"train.lr=1e-3 or {name}.train.lr=1e-3.{did_you_mean(head, names)}"
        )
    return {(k[len(prefix) :] if k.startswith(prefix) else k): v for k, v in items.items()}


def experiment_names() -> list[str]:
    """The registered experiments, in order (``E2`` before ``E10``)."""
    return sorted(EXPERIMENTS.names(), key=lambda n: (len(n), n))


def check_keys(experiment: str, overrides: Mapping[str, Any]) -> None:
    """Refuse an override key ``experiment``'s config does not have, or a value its declaration
    refuses, as the full validation would. An experiment not registered is left to the full
    validation (its lookup says so); with no override nothing is imported."""
    if not overrides or experiment not in EXPERIMENTS:
        return
    for key in overrides:
        new = replacement_of(experiment, key)
        if new is not None:
            raise ConfigError(f"Unknown config key '{key}': it is now '{new}'. Did you mean '{new}'?")
    fields = _leaf_fields(config_class(experiment))
    leaves = list(fields)
    for key, value in overrides.items():
        _check_key(key, leaves)
        tp, meta = fields.get(key, (None, {}))  # a section (``train``) is left to the full validation
        if _checkable(tp):
            cfglib._check_field(key, tp, _fixed(meta), cfglib._coerce(key, tp, value))


@functools.cache
def _leaf_fields(cls: type, prefix: str = "") -> dict[str, tuple[Any, Mapping[str, Any]]]:
    """Every dotted leaf key of the config class ``cls`` in declaration order (as
    :func:`entropic_bound.config.keys` lists an instance's), with its annotation and metadata."""
    out: dict[str, tuple[Any, Mapping[str, Any]]] = {}
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp):
            out.update(_leaf_fields(tp, f"{prefix}{f.name}."))
        else:
            out[f"{prefix}{f.name}"] = (tp, f.metadata)
    return out


def _checkable(tp: Any) -> bool:
    """A scalar, a tuple of scalars, or either or null: the types the early check coerces."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        tp = next(a for a in typing.get_args(tp) if a is not type(None))
    if typing.get_origin(tp) is tuple:
        tp = typing.get_args(tp)[0]
    return tp in _SCALARS


def _fixed(meta: Mapping[str, Any]) -> dict[str, Any]:
    """A field's constraints without the choices declared as a function (read from a registry)."""
    return {k: (None if k == "choices" and callable(v) else v) for k, v in meta.items() if k != "doc"}


def _check_key(key: str, leaves: list[str]) -> None:
    path = key.split(".")
    for depth, head in enumerate(path):
        prefix = "".join(f"{p}." for p in path[:depth])
        below = [k for k in leaves if k.startswith(prefix)]
        names = {k[len(prefix) :].split(".")[0] for k in below}
        if head not in names:
            raise ConfigError(
                f"Unknown config key '{key}'. Available: {', '.join(below)}.{did_you_mean(key, below)}"
            )
        if f"{prefix}{head}" in leaves and depth < len(path) - 1:
            raise ConfigError(f"Unknown config key '{key}': '{head}' is a value, not a section.")

"""Override keys and values checked before any heavy import, so a mistake is refused at once.

:func:`check_keys` reads an experiment's config class from its ``config.py``
(:func:`~entropic_bound.experiments.framework.config_lookup.config_class`), a module that imports no torch,
and refuses an unknown key, a value of the wrong type or out of range with the message
the full validation gives (one implementation: :mod:`entropic_bound.config`'s checks run on the
same declarations). Choices read from a registry (``param(choices=<function>)``: the estimators, the
ladder's students) and constraints that tie fields together (a config's ``check()``) are left to the
full validation, which imports what they read.

Also here, because the command line needs them before that import: reading overrides from
``--set``/``--config`` (:func:`gather_overrides`) and splitting ``reproduce``'s ``E1.``-prefixed
keys by experiment (:func:`split_by_experiment`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from . import config as cfglib
from .config import load_yaml, parse_assignment
from .errors import ConfigError, did_you_mean
from .experiments.framework.config_lookup import config_class
from .registry import EXPERIMENTS

_EXPERIMENT_NAME = re.compile(r"E[0-9]+")


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
    refuses, with the checks and messages of the full validation (:func:`entropic_bound.config.check_key`,
    :func:`~entropic_bound.config.check_value`). An experiment not registered is left to the full
    validation (its lookup says so); with no override nothing is imported."""
    if not overrides or experiment not in EXPERIMENTS:
        return
    cls = config_class(experiment)
    for key, value in overrides.items():
        cfglib.check_key(cls, key)
        cfglib.check_value(cls, key, value, lazy_choices=False)

"""Override keys checked before any heavy import, so a typo is refused in a fraction of a second.

The experiments' configs live in modules that import torch (seconds). ``config_keys.json`` (package
data) holds each experiment's dotted leaf keys and renamed keys as its config declares them;
:func:`check_keys` refuses an unknown or renamed key with the message the full validation gives
(:func:`entropic_bound.config.apply_overrides`). Types and ranges are still checked by the full
validation. ``python -m entropic_bound.config_keys --write`` regenerates the file; a unit test fails
when it is stale.

Also here, because the command line needs them before that import: reading overrides from
``--set``/``--config`` (:func:`gather_overrides`) and splitting ``reproduce``'s ``E1.``-prefixed
keys by experiment (:func:`split_by_experiment`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .config import load_yaml, parse_assignment
from .errors import ConfigError, did_you_mean

SCHEMA = Path(__file__).with_name("config_keys.json")


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


def strip_experiment(name: str, items: dict) -> dict:
    """``run E1 --set E1.train.lr=…``: the prefix ``reproduce`` needs is accepted by ``run`` too."""
    prefix = f"{name}."
    return {(k[len(prefix) :] if k.startswith(prefix) else k): v for k, v in items.items()}


def _schema() -> dict:
    return json.loads(SCHEMA.read_text()) if SCHEMA.exists() else {}


def experiment_names() -> list[str]:
    """The experiments the schema knows, in order (empty if the file is missing)."""
    return sorted(_schema(), key=lambda n: (len(n), n))


def check_keys(experiment: str, overrides: Mapping[str, Any]) -> None:
    """Refuse an override key ``experiment``'s config does not have, as the full validation would.
    An experiment the schema does not know is left to the full validation."""
    entry = _schema().get(experiment)
    if entry is None:
        return
    renamed, leaves = entry["renamed"], entry["keys"]
    for key in overrides:
        if key in renamed:
            new = renamed[key]
            raise ConfigError(f"Unknown config key '{key}': it is now '{new}'. Did you mean '{new}'?")
    for key in overrides:
        _check_key(key, leaves)


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


def current_schema() -> dict:
    """``{experiment: {"keys": [...], "renamed": {...}}}`` from the experiments' configs (imports them)."""
    from . import config as cfglib
    from .pipeline import EXPERIMENTS

    out = {}
    for name in EXPERIMENTS.names():
        cls = EXPERIMENTS.get(name)
        out[name] = {"keys": cfglib.keys(cls.default_config("quick")), "renamed": dict(cls.renamed_keys)}
    return out


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    SCHEMA.write_text(json.dumps(current_schema(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {SCHEMA}")

"""Override keys and values checked before any heavy import, so a mistake is refused at once.

The experiments' configs live in modules that import torch (seconds). ``config_keys.json`` (package
data) holds each experiment's dotted leaf keys, each key's type and declared constraints (range,
choices) and the renamed keys, as its config declares them; :func:`check_keys` refuses an unknown
or renamed key, a value of the wrong type or out of range with the message the full validation gives
(the same :mod:`entropic_bound.config` functions run on the same declarations). Constraints that
tie fields together (a config's ``check()``) are left to the full validation.
``python -m entropic_bound.config_keys --write`` regenerates the file; a unit test fails when it is
stale.

Also here, because the command line needs them before that import: reading overrides from
``--set``/``--config`` (:func:`gather_overrides`) and splitting ``reproduce``'s ``E1.``-prefixed
keys by experiment (:func:`split_by_experiment`).
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import config as cfglib
from .config import load_yaml, parse_assignment
from .errors import ConfigError, did_you_mean

_EXPERIMENT_NAME = re.compile(r"E[0-9]+")
_TYPES = {"int": int, "float": float, "bool": bool, "str": str}

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
    fields = entry.get("fields", {})
    for key, value in overrides.items():
        _check_key(key, leaves)
        if key in fields:
            spec = fields[key]
            tp = _type(spec)
            meta = {k: (tuple(v) if k == "choices" and v else v) for k, v in spec["meta"].items()}
            cfglib._check_field(key, tp, meta, cfglib._coerce(key, tp, value))


def _type(spec: dict) -> Any:
    """The annotation a field spec describes (``tuple[int, ...]``, ``float | None``, ...)."""
    tp: Any = _TYPES[spec["type"]]
    if spec["tuple"]:
        tp = tuple[tp, ...]
    return tp | None if spec["optional"] else tp


def _field_spec(tp: Any, metadata: Mapping[str, Any]) -> dict | None:
    """JSON-ready ``{type, tuple, optional, meta}`` of a leaf field; None for a type not described."""
    spec = {"tuple": False, "optional": False}
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        spec["optional"], tp = True, args[0]
    if typing.get_origin(tp) is tuple:
        spec["tuple"], tp = True, typing.get_args(tp)[0]
    name = next((k for k, v in _TYPES.items() if v is tp), None)
    if name is None:
        return None
    # choices declared as a function (read from a registry) are left to the full validation
    meta = {
        k: (None if callable(v) else list(v) if k == "choices" and v else v)
        for k, v in metadata.items()
        if k != "doc"
    }
    return {**spec, "type": name, "meta": meta}


def _fields(cfg: Any, prefix: str = "") -> dict[str, dict]:
    out: dict[str, dict] = {}
    hints = typing.get_type_hints(type(cfg))
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if dataclasses.is_dataclass(value):
            out.update(_fields(value, f"{prefix}{f.name}."))
        elif (spec := _field_spec(hints[f.name], f.metadata)) is not None:
            out[f"{prefix}{f.name}"] = spec
    return out


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
    from .registry import EXPERIMENTS
    from .store_migrations import CONFIG_KEY_MIGRATIONS

    out = {}
    for name in EXPERIMENTS.names():
        cls = EXPERIMENTS.get(name)
        cfg = cls.default_config("quick")
        out[name] = {
            "keys": cfglib.keys(cfg),
            "fields": _fields(cfg),
            "renamed": dict(CONFIG_KEY_MIGRATIONS.get(name, {})),
        }
    return json.loads(json.dumps(out))  # as the file holds it (tuples as lists)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    SCHEMA.write_text(json.dumps(current_schema(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {SCHEMA}")

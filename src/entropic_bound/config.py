"""Configs: frozen dataclasses with declared constraints, YAML loading and dotted overrides.

A config field declares its constraints with :func:`param`; :func:`validate` checks every field
(types, ranges, choices) and then the config's own ``check()`` for constraints that tie fields
together (``rank <= n``). Messages follow scikit-learn's template::

    The 'train.lr' parameter must be a float in (0, inf). Got -1.0 instead.

Overrides use dotted keys (``train.lr=1e-3``); an unknown key fails with the list of keys at that
level and a did-you-mean, before any work is done.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from .errors import ConfigError, did_you_mean

_MISSING = dataclasses.MISSING


class _StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a mapping naming one key twice (safe_load keeps the last one
    silently, so a config could say two things and mean the second)."""

    def construct_mapping(self, node, deep=False):
        seen: set = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, typing.Hashable) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def safe_yaml(text: str) -> Any:
    """``yaml.safe_load`` that refuses duplicate keys."""
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506  (a SafeLoader subclass)


def param(
    default: Any = _MISSING,
    *,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    lt: float | None = None,
    choices: Iterable[Any] | Callable[[], Iterable[Any]] | None = None,
    doc: str = "",
    default_factory: Callable[[], Any] | None = None,
) -> Any:
    """A dataclass field with constraints checked by :func:`validate`.

    ``choices`` may be a function returning them: it is called when a value is checked, so choices
    read from a registry (the estimators' panel keys, the ladder's students) include every entry
    registered by then and importing the config imports none of them. ``default_factory`` (instead of
    ``default``) computes the default when a config is made, for the same reason (E3's rungs)."""
    meta = {
        "ge": ge,
        "gt": gt,
        "le": le,
        "lt": lt,
        "choices": choices if callable(choices) else (tuple(choices) if choices else None),
        "doc": doc,
    }
    if isinstance(default, (list, dict, set)):
        raise TypeError("use a tuple default for sequence fields")
    if default_factory is not None:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _range_text(meta: Mapping[str, Any]) -> str:
    lo = meta.get("ge") if meta.get("ge") is not None else meta.get("gt")
    hi = meta.get("le") if meta.get("le") is not None else meta.get("lt")
    left = "[" if meta.get("ge") is not None else "("
    right = "]" if meta.get("le") is not None else ")"
    lo_s = "-inf" if lo is None else f"{lo:g}"
    hi_s = "inf" if hi is None else f"{hi:g}"
    return f"{left}{lo_s}, {hi_s}{right}"


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is tuple:
        return f"a list of {_type_name(typing.get_args(tp)[0])}"
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _type_name(args[0]) + " or null"
    return {int: "an int", float: "a float", bool: "a bool", str: "a string"}.get(tp, str(tp))


def config_error(key: str, expected: str, got: Any) -> ConfigError:
    return ConfigError(f"The '{key}' parameter must be {expected}. Got {got!r} instead.")


def _coerce(key: str, tp: Any, value: Any) -> Any:
    """Coerce a YAML-parsed value to the field's type, or raise a ConfigError."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _coerce(key, args[0], value)
    if origin is tuple:
        item = typing.get_args(tp)[0]
        if isinstance(value, str):
            value = [safe_yaml(v) for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            value = [value]
        return tuple(_coerce(key, item, v) for v in value)
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise config_error(key, "a bool (true or false)", value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise config_error(key, "an int", value)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise config_error(key, "a float", value)
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise config_error(key, "a string", value)
        return value
    raise AssertionError(f"unsupported config type {tp} for {key}")


def field_choices(meta: Mapping[str, Any]) -> tuple | None:
    """A field's allowed values (a function's answer when they are declared lazily), or None."""
    choices = meta.get("choices")
    return tuple(choices()) if callable(choices) else choices


def _check_field(key: str, tp: Any, meta: Mapping[str, Any], value: Any) -> None:
    if value is None:
        return
    if isinstance(value, tuple):
        for v in value:
            _check_field(key, None, meta, v)
        return
    choices = field_choices(meta)
    if choices is not None and value not in choices:
        opts = ", ".join(repr(c) for c in choices)
        raise ConfigError(
            f"The '{key}' parameter must be one of {opts}. Got {value!r} instead.{did_you_mean(value, map(str, choices))}"
        )
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and not math.isfinite(value):
            raise config_error(key, "a finite number", value)
        ok = all(
            (
                meta.get("ge") is None or value >= meta["ge"],
                meta.get("gt") is None or value > meta["gt"],
                meta.get("le") is None or value <= meta["le"],
                meta.get("lt") is None or value < meta["lt"],
            )
        )
        if not ok:
            kind = "an int" if isinstance(value, int) else "a float"
            raise config_error(key, f"{kind} in {_range_text(meta)}", value)


def validate(cfg: Any, prefix: str = "") -> Any:
    """Check every field of a (nested) config dataclass, then its ``check()``; return it."""
    hints = typing.get_type_hints(type(cfg))
    for f in dataclasses.fields(cfg):
        key = f"{prefix}{f.name}"
        value = getattr(cfg, f.name)
        if dataclasses.is_dataclass(value):
            validate(value, prefix=f"{key}.")
            continue
        _check_field(key, hints[f.name], f.metadata, value)
    check = getattr(cfg, "check", None)
    if callable(check):
        check()
    return cfg


def keys(cfg: Any, prefix: str = "") -> list[str]:
    """All dotted leaf keys of a config."""
    out: list[str] = []
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if dataclasses.is_dataclass(value):
            out.extend(keys(value, prefix=f"{prefix}{f.name}."))
        else:
            out.append(f"{prefix}{f.name}")
    return out


@functools.cache
def declared_fields(cls: type, prefix: str = "") -> dict[str, tuple[Any, Mapping[str, Any]]]:
    """Every dotted leaf key of the config class ``cls`` in declaration order (as :func:`keys` lists
    an instance's), with its annotation and metadata: what a key or value is checked against."""
    out: dict[str, tuple[Any, Mapping[str, Any]]] = {}
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp):
            out.update(declared_fields(tp, f"{prefix}{f.name}."))
        else:
            out[f"{prefix}{f.name}"] = (tp, f.metadata)
    return out


def check_key(cls: type, key: str, prefix: str = "") -> None:
    """Refuse ``prefix + key`` unless it names a field or a section of the config class ``cls``."""
    leaves = list(declared_fields(cls, prefix))
    path = f"{prefix}{key}".split(".")
    for depth, head in enumerate(path):
        above = "".join(f"{p}." for p in path[:depth])
        below = [k for k in leaves if k.startswith(above)]
        if depth < prefix.count("."):
            continue  # the sections ``prefix`` already names
        if head not in {k[len(above) :].split(".")[0] for k in below}:
            full = ".".join(path)
            raise ConfigError(
                f"Unknown config key '{full}'. Available: {', '.join(below)}.{did_you_mean(full, below)}"
            )
        if f"{above}{head}" in leaves and depth < len(path) - 1:
            raise ConfigError(f"Unknown config key '{'.'.join(path)}': '{head}' is a value, not a section.")


def check_value(cls: type, key: str, value: Any, *, lazy_choices: bool = True) -> None:
    """Refuse a value the field ``key`` of the config class ``cls`` declares wrong (type, range,
    choices), with :func:`validate`'s message. ``lazy_choices=False`` leaves out choices declared as a
    function (read from a registry, which would import it) and fields that are not plain scalars."""
    tp, meta = declared_fields(cls).get(key, (None, {}))  # a section is checked field by field
    if tp is None or (not lazy_choices and not _plain(tp)):
        return
    if not lazy_choices:
        meta = {k: (None if k == "choices" and callable(v) else v) for k, v in meta.items()}
    _check_field(key, tp, meta, _coerce(key, tp, value))


def _plain(tp: Any) -> bool:
    """A scalar, a tuple of scalars, or either or null."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        tp = next(a for a in typing.get_args(tp) if a is not type(None))
    if typing.get_origin(tp) is tuple:
        tp = typing.get_args(tp)[0]
    return tp in (int, float, bool, str)


def _set(cfg: Any, path: list[str], value: Any, full_key: str) -> Any:
    head = path[0]
    current = getattr(cfg, head)
    if len(path) > 1:
        return dataclasses.replace(cfg, **{head: _set(current, path[1:], value, full_key)})
    if dataclasses.is_dataclass(current):
        if not isinstance(value, Mapping):
            raise config_error(full_key, "a mapping of keys to values", value)
        return dataclasses.replace(
            cfg, **{head: apply_overrides(current, flatten(value), prefix=f"{full_key}.")}
        )
    tp = typing.get_type_hints(type(cfg))[head]
    return dataclasses.replace(cfg, **{head: _coerce(full_key, tp, value)})


def parse_assignment(text: str) -> tuple[str, Any]:
    """Split ``a.b=value`` and parse the value as YAML (``1e-3`` → float, ``[1,2]`` → list)."""
    if "=" not in text:
        raise ConfigError(f"An override must look like key=value (e.g. train.lr=1e-3). Got {text!r} instead.")
    key, raw = text.split("=", 1)
    try:
        value = safe_yaml(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    # YAML reads "1e-3" as a string; numbers written that way are meant as floats.
    if isinstance(value, str):
        try:
            value = float(value) if any(c in value for c in ".eE") else value
        except ValueError:
            pass
    return key.strip(), value


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in mapping.items():
        if isinstance(v, Mapping):
            out.update(flatten(v, prefix=f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def apply_overrides(cfg: Any, overrides: Mapping[str, Any] | Iterable[str], prefix: str = "") -> Any:
    """Return a copy of ``cfg`` with dotted-key overrides applied (not yet validated)."""
    items = overrides.items() if isinstance(overrides, Mapping) else (parse_assignment(o) for o in overrides)
    for key, value in items:
        check_key(type(cfg), key, prefix)
        cfg = _set(cfg, key.split("."), value, f"{prefix}{key}")
    return cfg


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Read a YAML mapping of overrides (nested or dotted)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"Config file '{p}' does not exist or is not a file.")
    try:
        data = safe_yaml(p.read_bytes().decode("utf-8"))
        flat = {} if data is None or not isinstance(data, Mapping) else flatten(data)
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"Config file '{p}' is not UTF-8 text ({exc.reason} at byte {exc.start})."
        ) from None
    except RecursionError:
        raise ConfigError(f"Config file '{p}' is nested too deeply to be a config.") from None
    except yaml.YAMLError as exc:
        where = f" (line {exc.problem_mark.line + 1})" if getattr(exc, "problem_mark", None) else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"Config file '{p}' is not valid YAML{where}: {problem}") from None
    except OSError as exc:
        raise ConfigError(f"Cannot read config file '{p}': {exc.strerror or exc}.") from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"Config file '{p}' must hold a mapping of keys to values. Got {type(data).__name__}."
        )
    return flat


def to_dict(cfg: Any) -> dict[str, Any]:
    """A JSON-ready nested dict (tuples become lists)."""
    return dataclasses.asdict(cfg)

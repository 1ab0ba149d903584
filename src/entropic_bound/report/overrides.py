"""Which verdicts come from a non-default config: the keys that differ from the scale's defaults.

A verdict from ``run E1 --set train.steps=200`` is not the standard quick-scale verdict; it says so
in ``verdicts.json`` (``"overrides": {key: value}``, ``"standard": false``), in the terminal table
and in report.html (:func:`non_standard_line`, one line each).
"""

from __future__ import annotations

from typing import Any

from ..config import flatten, to_dict
from ..jsonable import json_safe


def config_overrides(experiment: Any, scale: str) -> dict[str, Any]:
    """``{dotted key: value}`` of every key of ``experiment.cfg`` that differs from ``scale``'s
    default config (JSON-ready; tuples become lists). Empty for the standard config."""
    ours = flatten(to_dict(experiment.cfg))
    default = flatten(to_dict(type(experiment).default_config(scale)))
    return {k: json_safe(v) for k, v in ours.items() if k not in default or default[k] != v}


def non_standard_line(verdicts: dict) -> str:
    """One line naming every experiment whose verdicts come from a non-default config, with its
    overrides; empty when every verdict is standard. ``verdicts``: claim → dict, as in verdicts.json."""
    by_experiment: dict[str, dict] = {}
    for v in verdicts.values():
        if v.get("standard") is False:
            by_experiment.setdefault(str(v.get("experiment", "?")), v.get("overrides") or {})
    if not by_experiment:
        return ""
    parts = []
    for name, overrides in by_experiment.items():
        keys = ", ".join(f"{k}={_short(val)}" for k, val in overrides.items())
        parts.append(f"{name} ({keys})")
    scales = sorted({str(v.get("scale", "?")) for v in verdicts.values() if v.get("standard") is False})
    return (
        f"Non-default config — not the standard {'/'.join(scales)}-scale verdicts: " + "; ".join(parts) + "."
    )


def _short(value: Any, limit: int = 40) -> str:
    text = str(value).replace(" ", "")
    return text if len(text) <= limit else text[: limit - 1] + "…"

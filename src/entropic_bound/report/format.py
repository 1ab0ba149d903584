"""How numbers, keys and settings read in the report and the terminal (display only; files keep full precision)."""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

_ABBREVIATIONS = {
    "rel": "relative",
    "gd": "GD",
    "q10": "10th percentile",
    "q90": "90th percentile",
    "rho": "ρ",
    "ci": "CI",
    "r_star": "r*",
    "n": "n",
    "cpu": "CPU",
}


def number(value: Any, digits: int = 3) -> str:
    """``0.0012345`` → ``0.00123``; integers stay whole; NaN/None → ``—``; bools → yes/no."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "—" if math.isnan(value) else ("∞" if value > 0 else "−∞")
        if value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.{digits}g}"
    return str(value)


def words(key: str) -> str:
    """A dict key as words: ``median_rel_error_gd`` → ``median relative error GD``; ``r_star`` → ``r*``."""
    text = str(key).replace("r_star", "r*")
    parts = re.split(r"[_\s]+", text)
    return " ".join(_ABBREVIATIONS.get(p, p) for p in parts if p)


def value_text(value: Any, digits: int = 3) -> str:
    """A setting or evidence value in plain words: lists joined with commas, numbers rounded."""
    if isinstance(value, (list, tuple)):
        return ", ".join(value_text(v, digits) for v in value) if value else "none"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {value_text(v, digits)}" for k, v in value.items()) or "none"
    return number(value, digits)


def natural_key(key: Any) -> tuple:
    """Sort key that puts ``"2"`` before ``"16"`` and ``C2`` before ``C10``, ``C13`` before ``X1``."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part)
        for part in re.split(r"(\d+)", str(key))
        if part
    )


def sorted_naturally(obj: Any) -> Any:
    """``obj`` with every nested dict's keys in natural order (numeric keys numerically)."""
    if isinstance(obj, dict):
        return {k: sorted_naturally(obj[k]) for k in sorted(obj, key=natural_key)}
    if isinstance(obj, list):
        return [sorted_naturally(v) for v in obj]
    return obj


def settings(cfg: Any, prefix: str = "") -> list[tuple[str, str, str]]:
    """``(config key, what it is, value in words)`` for every field of a config dataclass, nested too."""
    rows = []
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        key = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(value):
            rows.extend(settings(value, prefix=f"{key}."))
            continue
        doc = f.metadata.get("doc") or words(f.name)
        rows.append((key, doc, value_text(value, digits=4)))
    return rows


def draws_text(replication: dict | None) -> str:
    """A verdict's draws (its ``replication``, see ``experiments/replication.py``) in a few words:
    "1 draw", "3 draws, agree", "draws disagree: confirmed, inconclusive"."""
    if not replication:
        return "1 draw"
    if not replication.get("agree", True):
        return "draws disagree: " + ", ".join(map(str, replication.get("verdicts", ())))
    n = len(replication.get("draws", ()))
    return "1 draw" if n <= 1 else f"{n} draws, agree"

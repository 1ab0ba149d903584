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
    """A verdict's draws (its ``replication``, see ``experiments/framework/replication.py``) in a few
    words: "1 draw", "3 draws pooled", "2 draws pooled (each: confirmed, inconclusive)",
    "2 draws disagree (p = 0.003)" (in direction: the verdict is inconclusive), "2 draws pooled; sizes
    differ, same side (p = 0.003)"."""
    draws = (replication or {}).get("draws", ())
    if len(draws) <= 1:
        return "1 draw"
    test = replication.get("heterogeneity") or {}
    if test.get("disagree") and replication.get("reason"):
        return f"{len(draws)} draws disagree (p = {test['p']:.2g})"
    each = replication.get("verdicts", ())
    text = f"{len(draws)} draws pooled"
    if len(set(each)) > 1:
        text += f" (each: {', '.join(map(str, each))})"
    if test.get("disagree"):
        text += f"; sizes differ, same side (p = {test['p']:.2g})"
    return text


#: what the report calls a verdict whose 95 % interval reaches its bar, and what that means
AT_THE_BAR = "interval at the bar"
AT_THE_BAR_MEANS = (
    "the 95 % interval reaches the claim's bar: a few more units could move the verdict either way"
)


def at_the_bar(verdict: dict) -> bool:
    """Whether a verdict (as verdicts.json holds it) has a decision whose interval reaches its bar."""
    decision = (verdict.get("evidence") or {}).get("decision")
    return isinstance(decision, dict) and bool(decision.get("narrow"))


def next_step(verdict: dict) -> str | None:
    """For an inconclusive verdict: why, in words, and what would decide it (its power line)."""
    if verdict.get("verdict") != "inconclusive":
        return None
    evidence = verdict.get("evidence") or {}
    reason = evidence.get("reason")
    power = power_line(evidence.get("power"))
    parts = [f"why: {reason}" if reason else None, f"to decide: {power}" if power else None]
    return "; ".join(p for p in parts if p) or None


def power_line(power: dict | None) -> str | None:
    """One line for an inconclusive claim: what would decide it and the command that adds it."""
    if not power:
        return None
    if not power.get("available"):
        return power.get("reason")
    needed, unit = power.get("units_needed"), power.get("unit") or "unit"
    if needed is None:
        return f"no sample size decides it at its statistic {power['statistic']:.3g}"
    cost = power.get("cpu_s_needed")
    cost_text = f", ≈ {_duration(cost)} CPU" if cost else ""
    what = f"needs ≈ {needed} {plural(unit)} (has {power['units_now']}{cost_text}) to {power['side']}"
    command = power.get("command") or power.get("why_no_command")
    return f"{what}: {command}" if command else what


def _duration(seconds: float) -> str:
    minutes = seconds / 60
    return (
        f"{seconds:.0f} s"
        if minutes < 1
        else (f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h")
    )


def scale_line(verdicts: dict | list) -> str:
    """What this run could decide, said above its verdict table, and where the paper-scale verdicts are."""
    rows = list(verdicts.values()) if isinstance(verdicts, dict) else list(verdicts)
    decided = sum(v.get("verdict") in ("confirmed", "refuted") for v in rows)
    scales = sorted({str(v.get("scale")) for v in rows if v.get("scale")})
    at = f" at the {' and '.join(scales)} scale" if scales else ""
    smoke = (
        ", a smoke test of every experiment whose grids are too small for several bars"
        if scales == ["quick"]
        else ""
    )
    return (
        f"Decided {decided} of {len(rows)} claims{at}{smoke}. Each inconclusive claim says why and what "
        "would decide it. The paper-scale verdicts: docs/paper-scale.md."
    )


def plural(unit: str) -> str:
    """``"teacher draw"`` → ``"teacher draws"``, ``"corpus"`` → ``"corpora"``, ``"data set"`` → ``"data sets"``."""
    if ", then " in unit:  # a nested unit: "source, then model" -> "sources, then models"
        return ", then ".join(plural(part) for part in unit.split(", then "))
    if unit.endswith("corpus"):
        return unit[: -len("corpus")] + "corpora"
    return unit + ("es" if unit.endswith(("s", "x")) else "s")

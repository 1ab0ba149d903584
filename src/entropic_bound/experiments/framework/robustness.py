"""A claim's boundary: its verdict decided again under each setting along the axis that matters.

Every verdict in ``verdicts.json`` carries::

    "robustness": {"settings": [{"setting": {"<config key>": value, ...},
                                 "verdict": "confirmed|refuted|inconclusive",
                                 "statistic": <number or null>}, ...],
                   "robust": true|false, "holds_when": "<one line>"}

``robust`` is true when every setting agrees with the others; ``holds_when`` states, in words, the
settings under which the claim came out confirmed. The main verdict stays the one at the default
setting. A robustness entry is data: each setting's verdict is computed by the same criterion as
the main verdict, on that setting's rows (or with that analysis option).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

VERDICTS = ("confirmed", "refuted", "inconclusive")


@dataclass(frozen=True)
class SettingOutcome:
    """The verdict under one setting (``setting`` maps config keys to values) and its statistic."""

    setting: dict
    verdict: str
    statistic: float | None = None

    def __post_init__(self) -> None:
        assert self.verdict in VERDICTS, self.verdict

    def to_dict(self) -> dict:
        stat = self.statistic
        if stat is not None:
            stat = float(stat)
            stat = stat if np.isfinite(stat) else None
        return {"setting": dict(self.setting), "verdict": self.verdict, "statistic": stat}


def describe_setting(setting: dict) -> str:
    """``{"c": 0.5, "normalisation": "signal"}`` → ``"c=0.5, normalisation=signal"``."""
    return ", ".join(f"{k}={_short(v)}" for k, v in setting.items())


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_short(v) for v in value) + "]"
    return str(value)


def summarise_boundary(outcomes: Sequence[SettingOutcome], holds_when: str | None = None) -> dict:
    """The ``robustness`` entry of a verdict from its per-setting outcomes.

    ``holds_when`` defaults to listing the confirmed settings ("nowhere in the grid" when none is,
    "every setting tried" when all are).
    """
    if len(outcomes) < 1:
        raise ValueError("a claim's boundary needs at least one setting")
    verdicts = [o.verdict for o in outcomes]
    robust = len(set(verdicts)) == 1
    if holds_when is None:
        confirmed = [describe_setting(o.setting) for o in outcomes if o.verdict == "confirmed"]
        if len(confirmed) == len(outcomes):
            holds_when = "every setting tried"
        elif not confirmed:
            holds_when = "nowhere in the grid"
        else:
            holds_when = "; ".join(confirmed)
    return {"settings": [o.to_dict() for o in outcomes], "robust": robust, "holds_when": holds_when}

"""Deciding a claim again on slices of its grid or under an analysis option (its boundary).

Every verdict function of E1–E6 is a pure function of rows (and the config); the robustness of a
verdict re-runs that *same* function on a slice of the rows (``spectra = [flat]``: the rows a config
with that grid would have produced) or with one analysis option changed (``c6_normalisation``,
``c3_estimator``). No criterion is restated here: these helpers only choose rows and collect the
outcomes into :class:`~entropic_bound.experiments.robustness.SettingOutcome`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..config import apply_overrides
from .base import Verdict
from .robustness import SettingOutcome, describe_setting, summarise_boundary


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


def outcome_of(setting: dict, verdict: Verdict, statistic: str | None) -> SettingOutcome:
    """``verdict`` under ``setting`` with ``evidence[statistic]`` (when numeric) as its statistic."""
    value = verdict.evidence.get(statistic) if statistic else None
    number = (
        float(value) if isinstance(value, (int, float, np.number)) and not isinstance(value, bool) else None
    )
    return SettingOutcome({k: _plain(v) for k, v in setting.items()}, verdict.verdict, number)


def row_slices(
    rows: pd.DataFrame, axes: Iterable[tuple[str, str]], min_values: int = 2
) -> list[tuple[dict, pd.DataFrame]]:
    """``({config_key: [value]}, rows with column == value)`` for each value of each axis.

    ``axes`` pairs a config key (the setting's name) with the column holding it; an axis with fewer
    than ``min_values`` distinct values in ``rows`` is skipped (slicing it would repeat the default).
    """
    out = []
    for key, column in axes:
        if column not in rows or rows[column].nunique() < min_values:
            continue
        for value in sorted(rows[column].dropna().unique()):
            out.append(({key: [_plain(value)]}, rows[rows[column] == value]))
    return out


def boundary(
    default: tuple[dict, Verdict],
    others: Iterable[tuple[dict, Verdict]],
    statistic: str | None,
    holds_when: str | None = None,
) -> Verdict:
    """The default verdict with its ``robustness`` entry (default setting first, then ``others``)."""
    setting, main = default
    outcomes = [outcome_of(setting, main, statistic)]
    outcomes += [outcome_of(s, v, statistic) for s, v in others]
    return main.with_robustness(summarise_boundary(outcomes, holds_when or _exceptions(outcomes)))


def _exceptions(outcomes: list[SettingOutcome]) -> str | None:
    """ "every setting tried except …" when most settings are confirmed (None: the default wording)."""
    misses = [o for o in outcomes if o.verdict != "confirmed"]
    if not misses or len(misses) * 2 >= len(outcomes) or misses[0] is outcomes[0]:
        return None
    return "every setting tried except " + "; ".join(
        f"{describe_setting(o.setting)} ({o.verdict})" for o in misses
    )


def sliced_boundary(
    verdict_of: Callable[[pd.DataFrame], Verdict],
    rows: pd.DataFrame,
    default_setting: dict,
    axes: Iterable[tuple[str, str]],
    statistic: str | None,
    options: Iterable[tuple[dict, Callable[[], Verdict]]] = (),
) -> Verdict:
    """``verdict_of(rows)`` with its boundary over row slices along ``axes`` and analysis ``options``.

    ``options`` pairs a setting with a thunk computing the verdict under that analysis option.
    """
    main = verdict_of(rows)
    others = [(s, verdict_of(r)) for s, r in row_slices(rows, axes)] if len(rows) else []
    others += [(s, thunk()) for s, thunk in options]
    return boundary((default_setting, main), others, statistic)


def with_option(cfg: Any, changes: Mapping[str, Any]) -> Any:
    """``cfg`` with analysis options changed by dotted key (``{"verdict.c1_high": 1.2}``): a frozen
    dataclass copy, not re-validated."""
    return apply_overrides(cfg, changes)


def config_value(cfg: Any, key: str) -> Any:
    """The value of a dotted config key (``"task.spectra"``)."""
    for part in key.split("."):
        cfg = getattr(cfg, part)
    return cfg


def grid_setting(cfg: Any, *keys: str) -> dict:
    """The default setting: the config's values of the dotted ``keys`` (tuples as lists), each named by
    its last part (``"task.spectra"`` → ``"spectra"``), the name the setting's slices carry."""
    values = {k.rsplit(".", 1)[-1]: config_value(cfg, k) for k in keys}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}

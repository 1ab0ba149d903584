"""Deciding a claim again on slices of its grid or under an analysis option (its boundary).

Every criterion (a claim's ``decide``, :mod:`.claim`) is a pure function of the config, rows and
context; the robustness of a verdict re-runs that *same* function on a slice of the rows (``spectra = [flat]``: the rows a config
with that grid would have produced) or with one analysis option changed (``c6_normalisation``,
``c3_estimator``). No criterion is restated here: these helpers only choose rows and collect the
outcomes into :class:`~entropic_bound.experiments.framework.robustness.SettingOutcome`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...config import apply_overrides
from .robustness import SettingOutcome, describe_setting, summarise_boundary
from .verdict import Finding


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


def outcome_of(setting: dict, finding: Finding, statistic: str | None) -> SettingOutcome:
    """``finding`` under ``setting`` with ``evidence[statistic]`` (when numeric) as its statistic."""
    value = finding.evidence.get(statistic) if statistic else None
    number = (
        float(value) if isinstance(value, (int, float, np.number)) and not isinstance(value, bool) else None
    )
    return SettingOutcome({k: _plain(v) for k, v in setting.items()}, finding.outcome, number)


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


@dataclass(frozen=True)
class Setting:
    """One robustness setting: its name (config keys → values) and the config and rows the
    criterion is decided on there (a slice of the rows, or the config with an analysis option)."""

    setting: dict
    cfg: Any
    rows: pd.DataFrame


def sliced(cfg: Any, rows: pd.DataFrame, axes: Iterable[tuple[str, str]]) -> list[Setting]:
    """One setting per value of each axis (:func:`row_slices`): the same config on that value's rows."""
    return [Setting(s, cfg, r) for s, r in row_slices(rows, axes)] if len(rows) else []


def options(cfg: Any, rows: pd.DataFrame, key: str, values: Iterable[Any]) -> list[Setting]:
    """One setting per analysis option ``key = value`` (named by the key's last part), on all ``rows``."""
    name = key.rsplit(".", 1)[-1]
    return [Setting({name: v}, with_option(cfg, {key: v}), rows) for v in values]


def robustness_entry(
    default: tuple[dict, Finding],
    others: Iterable[tuple[dict, Finding]],
    statistic: str | None,
    holds_when: str | None = None,
) -> dict:
    """The ``robustness`` entry of a claim from its finding at the default setting and under ``others``
    (default setting first); ``holds_when`` None lists the confirmed settings."""
    outcomes = [outcome_of(*default, statistic)]
    outcomes += [outcome_of(s, f, statistic) for s, f in others]
    return summarise_boundary(outcomes, holds_when)


def most_settings_wording(outcomes: list[tuple[dict, Finding]]) -> str | None:
    """ "every setting tried except …" when most settings, the default among them, are confirmed;
    None (list the confirmed settings) otherwise."""
    misses = [(i, s, v) for i, (s, v) in enumerate(outcomes) if v.outcome != "confirmed"]
    if not misses or len(misses) * 2 >= len(outcomes) or misses[0][0] == 0:
        return None
    return "every setting tried except " + "; ".join(
        f"{describe_setting({k: _plain(x) for k, x in s.items()})} ({v.outcome})" for _, s, v in misses
    )


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

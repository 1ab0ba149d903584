"""Grid expansion of run specs; :class:`RunSpec` and :class:`RunResult` live in
:mod:`entropic_bound.results` (re-exported here) so the store does not depend on the sweep."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ConfigError
from ..results import STATUSES, RunResult, RunSpec, canonical_json

__all__ = ["STATUSES", "RunResult", "RunSpec", "canonical_json", "grid_specs"]


def grid_specs(
    experiment: str,
    grid: Mapping[str, Iterable],
    seeds: Iterable[int],
    fixed: Mapping[str, Any] | None = None,
) -> list[RunSpec]:
    """The Cartesian product ``grid × seeds`` as run specs, ``fixed`` params added to each.

    Order: grid keys in the given order (last varies fastest), seeds innermost. A key that is in
    both ``grid`` and ``fixed`` is an error, as is an empty list of values.
    """
    fixed = dict(fixed or {})
    clash = sorted(set(grid) & set(fixed))
    if clash:
        raise ConfigError(f"Parameter(s) {clash} are both fixed and swept; give each one place.")
    keys, values = list(grid), [list(v) for v in grid.values()]
    for k, v in zip(keys, values):
        if not v:
            raise ConfigError(f"The grid of '{k}' is empty; give at least one value.")
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ConfigError("The list of seeds is empty; give at least one seed.")
    return [
        RunSpec(experiment, {**fixed, **dict(zip(keys, combo))}, seed)
        for combo in itertools.product(*values)
        for seed in seeds
    ]

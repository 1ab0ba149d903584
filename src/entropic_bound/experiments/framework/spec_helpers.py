"""Pieces of run specs that several experiments' grids share.

A run id hashes its params, so these keep each key and value the experiments wrote before them; the
order of the keys is the order the stored params and the result tables list them in.
"""

from __future__ import annotations

from typing import Any

from ...results import RunSpec
from ...sweep.spec import grid_specs
from .params import to_params


def fixed_params(cfg: Any, task: dict, *top_level: str) -> dict:
    """The params every run of a grid shares: ``task`` (its ``task.*`` params), the named top-level
    config keys and the config's ``train`` section (``train.*``)."""
    return {**task, **{key: getattr(cfg, key) for key in top_level}, **to_params(cfg.train, "train")}


def rank_sweep(experiment: str, cfg: Any, fixed: dict, r_star: int) -> list[RunSpec]:
    """The deficiency grid at one ``r*`` (E1, E4): every spectrum, V setting and student rank around
    ``r*`` (``cfg.student_ranks``), each for ``cfg.seeds`` seeds."""
    grid = {"task.spectrum": cfg.task.spectra, "v": cfg.v_settings, "rank": cfg.student_ranks(r_star)}
    return grid_specs(experiment, grid, range(cfg.seeds), {**fixed, "task.r_star": r_star})

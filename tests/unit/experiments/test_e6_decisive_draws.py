"""E6's decisive cells: enough teacher draws where C9 and X1 decide for a 90 % bar to be clearable by
its Wilson interval, and nothing else in the grid moved."""

from __future__ import annotations

import collections

from entropic_bound.experiments.e6_predictability.experiment import DECISIVE_METHODS, E6Predictability
from entropic_bound.stats.interval_decision import wilson


def _experiment(scale: str, overrides: dict | None = None) -> E6Predictability:
    return E6Predictability(E6Predictability.configure(scale, overrides or {}))


def _specs(scale: str, overrides: dict | None = None):
    return _experiment(scale, overrides).specs()


def _units_per_cell(specs, n_max: int, sigma_max: float) -> collections.Counter:
    cells = collections.Counter()
    for s in specs:
        p = s.params
        if p["method"] in DECISIVE_METHODS and p["n_samples"] == n_max and p["task.sigma"] <= sigma_max:
            cells[(p["method"], p["v"], p["task.n"], p["task.r_star"], p["task.sigma"])] += 1
    return cells


def test_paper_decisive_cells_hold_enough_teacher_draws_to_clear_ninety_percent():
    exp = _experiment("paper")
    cfg = exp.cfg
    cells = _units_per_cell(exp.specs(), max(cfg.sample_counts), cfg.verdict.sigma_max)
    assert cells and set(cells.values()) == {cfg.decisive_seeds * len(cfg.task.spectra)}
    draws = min(cells.values())
    assert wilson(draws, draws)[0] > cfg.verdict.rate  # all exact can confirm
    assert wilson(draws - 1, draws)[0] < cfg.verdict.rate  # one miss cannot: the bar is tight, not loose


def test_decisive_seeds_only_add_runs_and_leave_other_cells_alone():
    base = _specs("paper", {"decisive_seeds": 0})
    more = _specs("paper")
    ids = {s.run_id for s in more}
    assert all(s.run_id in ids for s in base)  # every run of the smaller grid is kept, same id
    base_ids = {b.run_id for b in base}
    added = [s for s in more if s.run_id not in base_ids]
    assert added and all(s.params["method"] in DECISIVE_METHODS for s in added)
    assert {s.params["n_samples"] for s in added} == {512}


def test_quick_grid_is_unchanged_by_the_decisive_cells():
    quick = _specs("quick")
    assert [s.run_id for s in quick] == [s.run_id for s in _specs("quick", {"decisive_seeds": 0})]
    assert max(s.seed for s in quick) == _experiment("quick").cfg.seeds - 1

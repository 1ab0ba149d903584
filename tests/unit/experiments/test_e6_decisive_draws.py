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


def test_quick_decisive_cells_are_sized_to_decide_and_add_only_teacher_draws():
    exp = _experiment("quick")
    cfg = exp.cfg
    cells = _units_per_cell(exp.specs(), max(cfg.sample_counts), cfg.verdict.sigma_max)
    main = {k: v for k, v in cells.items() if k[2] in cfg.task.ns}
    assert main and set(main.values()) == {cfg.decisive_seeds * len(cfg.task.spectra)}
    draws = min(main.values())
    # a share of 1 clears 0.9, and so does the lowest share draws 0-2 gave (0.995 on C9's flagged cell)
    assert wilson(draws, draws)[0] > cfg.verdict.rate and wilson(0.995 * draws, draws)[0] > cfg.verdict.rate
    # X1's further n keeps the base seeds inside the domain (pooled with the main grid's n per r*), and
    # gets them in its flagged cell (V unknown), decided per n
    extra = {(k[1], v) for k, v in cells.items() if k[2] in cfg.x1_ns}
    assert extra == {("known", cfg.seeds * len(cfg.task.spectra)), ("unknown", draws)}
    base = {s.run_id for s in _specs("quick", {"decisive_seeds": 0})}
    assert base <= {s.run_id for s in exp.specs()}

"""E1's claims C1 and C2: each declaration, criterion, report sentence and robustness grid (the numbers
they read are in :mod:`.statistics`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...stats.draw_keys import DRAW, with_draw
from ...stats.interval_decision import decide_by_interval
from ...stats.unit_intervals import record, unit_bootstrap, units_of
from ..framework.claim import Claim
from ..framework.claim_slices import grid_setting, sliced
from ..framework.rule import Condition, Interval, Rule, Unit
from ..framework.verdict import ClaimContext, Finding, decide
from .statistics import floor_boundary, median_of, transition_ratios

#: A teacher draw: the runs of one (draw, spectrum, r*, seed) share the teacher and its data (every
#: draw re-draws the seeds' teachers).
TEACHER = (DRAW, "task.spectrum", "task.r_star", "seed")
TEACHER_DRAW = Unit("teacher draw", TEACHER)

#: C1/C2 boundary axes: (config key, result column); each value is decided again on its own rows.
AXES = (("spectra", "task.spectrum"), ("v_settings", "v"), ("r_stars", "task.r_star"), ("seed", "seed"))


def verdict_c1(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    criterion = (
        f"median over runs with r < r* of (measured excess risk / closed-form tail-energy minimum) "
        f"lies in [{cfg.verdict.c1_low:g}, {cfg.verdict.c1_high:g}], a band with one boundary on each side (training "
        "reaches the bound from above, so the low end guards against a closed form that is not a bound and the high "
        "end against training that misses it): confirmed when its 95% bootstrap interval over teacher draws "
        "(spectrum, r*, seed, draw) lies inside the band, refuted when it lies wholly beyond either end, else inconclusive"
    )
    rows = with_draw(rows)
    below = rows[(rows["rank"] < rows["task.r_star"]) & (rows["closed_form"] > 0)] if len(rows) else rows
    if not len(below):
        return Finding("inconclusive", criterion, {"runs": 0})
    ratio = below["ratio_to_closed_form"].to_numpy()
    med = float(np.median(ratio))
    by_group = below.groupby(["task.spectrum", "v"])["ratio_to_closed_form"].median().round(4)
    evidence = {
        "median_ratio": med,
        "q10": float(np.quantile(ratio, 0.1)),
        "q90": float(np.quantile(ratio, 0.9)),
        "runs": int(len(below)),
        "median_by_spectrum_and_v": {f"{s}/{v}": x for (s, v), x in by_group.items()},
        "n_samples": cfg.train.n_samples,
    }
    units = [g["ratio_to_closed_form"].to_numpy() for g in units_of(below, TEACHER_DRAW.keys)]
    _, ci = unit_bootstrap(units, median_of(units))
    low, high = cfg.verdict.c1_low, cfg.verdict.c1_high
    per = dict(unit=TEACHER_DRAW.name, units=len(units))
    outcome = record(
        evidence,
        {
            "median_at_least_c1_low": decide_by_interval(med, ci, low, **per),
            "median_at_most_c1_high": decide_by_interval(med, ci, high, higher_is_better=False, **per),
        },
    )
    evidence["teacher_draws"] = len(units)
    if outcome is None:
        evidence["reason"] = (
            f"the median's interval [{ci[0]:.3g}, {ci[1]:.3g}] over {len(units)} teacher draws reaches an end of the "
            f"band [{low:g}, {high:g}]: more teacher draws decide it"
        )
    return Finding(decide(outcome), criterion, evidence)


def verdict_c2(cfg, rows: pd.DataFrame, context: ClaimContext) -> Finding:
    criterion = (
        f"every run with r >= r* has relative excess risk < eps_floor = {cfg.verdict.eps_floor:g}, and the transition "
        f"is sharp: median over (r*, spectrum, V, seed) of excess(r*-1)/excess(r*) >= {cfg.verdict.sharpness:g} "
        "(excess(0) = the clean signal). The floor is a count rule (every run, so the worst run decides: no sampling "
        "interval); the sharpness median is decided by its 95% bootstrap interval over teacher draws (spectrum, r*, seed, "
        "draw) against one boundary, its bar: confirmed when it lies at or above the bar, refuted when at or below, else "
        "inconclusive"
    )
    rows = with_draw(rows)
    above = rows[rows["rank"] >= rows["task.r_star"]] if len(rows) else rows
    ratios = transition_ratios(rows) if len(rows) else pd.DataFrame()
    if not len(above) or not len(ratios):
        return Finding("inconclusive", criterion, {"runs": int(len(above))})
    worst = float(above["rel_excess"].max())
    med_ratio = float(ratios["ratio"].median())
    evidence = {
        "max_rel_excess_at_or_above_r_star": worst,
        "runs_at_or_above_r_star": int(len(above)),
        "runs_reaching_floor": int((above["rel_excess"] < cfg.verdict.eps_floor).sum()),
        "median_transition_ratio": med_ratio,
        "min_transition_ratio": float(ratios["ratio"].min()),
        "transition_ratio_by_r_star": ratios.groupby("r_star")["ratio"].median().round(2).to_dict(),
        "eps_floor_boundary": floor_boundary(above, cfg.verdict.eps_floor),
    }
    units = [g["ratio"].to_numpy() for g in units_of(ratios, [DRAW, "r_star", "spectrum", "seed"])]
    _, ci = unit_bootstrap(units, median_of(units))
    floor = decide_by_interval(
        worst, (worst, worst), cfg.verdict.eps_floor, higher_is_better=False, unit="run", units=len(above)
    )
    sharp = decide_by_interval(med_ratio, ci, cfg.verdict.sharpness, unit=TEACHER_DRAW.name, units=len(units))
    outcome = record(evidence, {"every_run_reaches_floor": floor, "transition_sharp": sharp})
    if floor.outcome is False:  # a run above the floor refutes whatever the sharpness says
        outcome = False
    evidence["teacher_draws"] = len(units)
    if outcome is None:
        lo, hi = ci
        evidence["reason"] = (
            f"the sharpness median's interval [{lo:.3g}, {hi:.3g}] over {len(units)} teacher draws reaches its bar "
            f"{cfg.verdict.sharpness:g}: more teacher draws decide it"
        )
    return Finding(decide(outcome), criterion, evidence)


def _default(cfg) -> dict:
    return grid_setting(cfg, "task.spectra", "v_settings", "task.r_stars")


def _slices(cfg, rows: pd.DataFrame, context: ClaimContext):
    return sliced(cfg, rows, AXES)


C1 = Claim(
    id="C1",
    experiment="E1",
    statement="every rank-r < r* model has excess risk bounded below by the tail energy, and training reaches it",
    unit=TEACHER_DRAW,
    rule=Rule(thresholds=("verdict.c1_low", "verdict.c1_high"), interval=Interval.BOOTSTRAP),
    decide=verdict_c1,
    sentence="measured / closed-form excess below r*: median {median_ratio:n4} "
    "(10–90% range {q10:n4}–{q90:n4}) over {runs} runs",
    default_setting=_default,
    statistic="median_ratio",
    grid=_slices,
)
C2 = Claim(
    id="C2",
    experiment="E1",
    statement="a model of rank r >= r* reaches the noise floor, with a sharp transition at r = r*",
    unit=TEACHER_DRAW,
    rule=Rule(
        thresholds=("verdict.sharpness",),
        interval=Interval.BOOTSTRAP,
        conditions=(Condition(("verdict.eps_floor",), Interval.COUNT, Unit("run")),),
    ),
    decide=verdict_c2,
    sentence="at r ≥ r*: {runs_reaching_floor}/{runs_at_or_above_r_star} runs reach the floor "
    "(worst relative excess {max_rel_excess_at_or_above_r_star:n}); transition ratio "
    "excess(r*−1)/excess(r*) median {median_transition_ratio:n}, min {min_transition_ratio:n}",
    default_setting=_default,
    statistic="max_rel_excess_at_or_above_r_star",
    grid=_slices,
)
CLAIMS = (C1, C2)

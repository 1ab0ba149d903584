"""Units needed to decide: each planner is exact at the n it returns (the interval clears there and
not one unit earlier), every statistic off its boundary is decidable, and a statistic on it is not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from entropic_bound.experiments.framework.claim_power import bar_facing, claim_power
from entropic_bound.experiments.framework.rule import Condition, Interval, Rule, Unit
from entropic_bound.report.format import power_line
from entropic_bound.stats.cluster import wilson
from entropic_bound.stats.interval_decision import decide_by_interval, newcombe_difference
from entropic_bound.stats.power import fisher_units, newcombe_units, plan, scaled_units, wilson_units
from entropic_bound.stats.rank_tests import fisher_interval


def _clears(interval, boundary, above):
    return interval[0] > boundary if above else interval[1] < boundary


@pytest.mark.parametrize(
    ("share", "boundary"), [(1.0, 0.9), (0.976, 0.9), (0.3, 0.5), (0.62, 0.5), (0.05, 0.2)]
)
def test_wilson_units_is_the_first_n_whose_interval_clears(share, boundary):
    n = wilson_units(share, boundary)
    above = share > boundary
    assert _clears(wilson(share * n, n), boundary, above)
    assert n == 1 or not _clears(wilson(share * (n - 1), n - 1), boundary, above)


def test_the_published_counts_a_90_percent_bar_needs():
    assert wilson_units(1.0, 0.9) == 35 and wilson_units(0.976, 0.9) == 60


@pytest.mark.parametrize(("p1", "p2", "boundary"), [(0.7, 0.3, 0.0), (0.45, 0.4, 0.0), (0.2, 0.5, 0.0)])
def test_newcombe_units_is_the_first_n_whose_interval_clears(p1, p2, boundary):
    n = newcombe_units(p1, p2, boundary)
    above = p1 - p2 > boundary
    assert _clears(newcombe_difference(p1 * n, n, p2 * n, n), boundary, above)
    assert not _clears(newcombe_difference(p1 * (n - 1), n - 1, p2 * (n - 1), n - 1), boundary, above)


@pytest.mark.parametrize("rho", [-0.42, -0.30, 0.2, 0.7])
def test_fisher_units_is_the_first_n_whose_interval_clears(rho):
    n = fisher_units(rho)
    assert _clears(fisher_interval(rho, n), 0.0, rho > 0)
    assert n == 4 or not _clears(fisher_interval(rho, n - 1), 0.0, rho > 0)


def test_scaled_units_matches_a_normal_interval_grown_to_that_many_units():
    # a mean over n units with sd 1 has the interval mean ± 1.96 / sqrt(n): the plan from 10 units
    # is exactly the n at which that interval first excludes the boundary
    mean, boundary, now = 0.3, 0.0, 10
    half = 1.959964 / math.sqrt(now)
    n = scaled_units(mean, (mean - half, mean + half), now, boundary)
    assert mean - 1.959964 / math.sqrt(n) > boundary
    assert mean - 1.959964 / math.sqrt(n - 1) <= boundary


def test_scaled_units_on_replicated_units_decides_at_the_planned_count():
    # a bootstrap interval of the mean of real draws: at the planned count, fresh units decide it
    rng = np.random.default_rng(0)
    effect, now = 0.25, 12
    decided = 0
    for _ in range(200):
        x = rng.normal(effect, 1.0, now)
        boots = rng.choice(x, (2000, now)).mean(axis=1)
        lo, hi = np.quantile(boots, [0.025, 0.975])
        n = scaled_units(float(x.mean()), (lo, hi), now, 0.0)
        if n is None or n > 5000:
            continue
        y = rng.normal(effect, 1.0, n)
        decided += y.mean() - 1.96 * y.std(ddof=1) / math.sqrt(n) > 0
    # at the observed effect the plan is a median-power plan: about half of the replications clear
    assert 60 <= decided <= 160


@pytest.mark.parametrize("method", ["wilson", "scaled", "fisher"])
def test_every_statistic_off_its_boundary_is_decidable_and_none_on_it(method):
    for statistic in np.linspace(0.05, 0.95, 19):
        for boundary in (0.1, 0.5, 0.9):
            interval = (statistic - 0.2, statistic + 0.2)
            power = plan(
                method, statistic=statistic, boundary=boundary, units_now=10, unit="u", interval=interval
            )
            if math.isclose(statistic, boundary):
                continue
            assert power.units_needed is not None and power.units_needed >= 1, (statistic, boundary)
    on = plan(method, statistic=0.5, boundary=0.5, units_now=10, unit="u", interval=(0.3, 0.7))
    assert on.units_needed is None


def _record(statistic, interval, threshold, refute=None, units=10):
    return decide_by_interval(
        statistic, interval, threshold, refute_threshold=refute, unit="teacher draw", units=units
    ).to_dict()


COST = {"experiment": "E4", "scale": "paper", "draws": [0, 1], "seconds": 1200.0, "cfg": None}


def test_claim_power_names_the_draws_that_add_the_units_and_their_cost():
    power = claim_power(
        _record(0.95, (0.76, 0.99), 0.9), Rule((), Interval.WILSON), Unit("teacher draw"), COST
    )
    assert power["available"] and power["side"] == "confirm" and power["units_now"] == 10
    n = power["units_needed"]
    assert n == wilson_units(0.95, 0.9) and power["draws_needed"] == math.ceil(2 * n / 10)
    assert power["command"].startswith("entropic-bound run E4 --scale paper --draws 0-")
    assert power["cpu_s_needed"] == pytest.approx(600.0 * (power["draws_needed"] - 2))
    line = power_line(power)
    assert f"needs ≈ {n} teacher draws (has 10" in line and "--draws 0-" in line


def test_a_statistic_between_two_bars_is_reported_as_undecidable_and_one_bar_is_not():
    gap = claim_power(
        _record(0.3, (0.1, 0.5), 0.5, refute=0.0), Rule((), Interval.BOOTSTRAP), Unit("data set"), COST
    )
    assert not gap["available"] and "no sample size decides it" in gap["reason"]
    one = claim_power(_record(0.3, (-0.1, 0.7), 0.0), Rule((), Interval.BOOTSTRAP), Unit("data set"), COST)
    assert one["available"] and one["side"] == "confirm" and one["units_needed"] > 10
    below = claim_power(_record(-0.3, (-0.7, 0.1), 0.0), Rule((), Interval.BOOTSTRAP), Unit("data set"), COST)
    assert below["side"] == "refute" and below["units_needed"] > 10


def test_count_rules_and_uncounted_units_say_why_there_is_no_plan():
    assert (
        "no interval"
        in claim_power(_record(1, (1, 1), 0.5), Rule((), Interval.COUNT), Unit("run"), COST)["reason"]
    )
    uncounted = claim_power(
        _record(0.9, (0.7, 1), 0.5, units=None), Rule((), Interval.WILSON), Unit("run"), COST
    )
    assert "not counted" in uncounted["reason"]
    assert bar_facing(_record(0.5, (0.4, 0.6), 0.5)) == (None, "its statistic 0.5 sits on its bar")


def test_a_unit_no_command_adds_and_a_config_key_that_does():
    record = _record(0.8, (0.5, 0.95), 0.5)
    fixed = claim_power(record, Rule((), Interval.WILSON), Unit("corpus", added_by=None), COST)
    assert fixed["command"] is None and "needs ≈ 11 corpora (has 10" in power_line(fixed)

    class Cfg:
        seeds = 4

    keyed = claim_power(
        record, Rule((), Interval.WILSON), Unit("seed", added_by="seeds"), {**COST, "cfg": Cfg()}
    )
    assert (
        keyed["command"]
        == f"entropic-bound run E4 --scale paper --set seeds={math.ceil(4 * keyed['units_needed'] / 10)}"
    )


def test_a_condition_that_decided_is_planned_by_its_own_method_and_unit():
    record = _record(0.75, (0.41, 0.93), 0.5)
    record["unit"] = "control model"
    controls = Condition(("verdict.c13_control_rate",), Interval.WILSON, Unit("control model"))
    rule = Rule((), Interval.CLUSTER_BOOTSTRAP, (controls,))
    power = claim_power(record, rule, Unit("source"), COST)
    assert power["method"] == "wilson" and power["unit"] == "control model"
    assert power["units_needed"] == wilson_units(0.75, 0.5)

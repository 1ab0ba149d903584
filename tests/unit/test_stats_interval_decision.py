import math

import pytest

from entropic_bound.stats.interval_decision import decide_by_interval, newcombe_difference, wilson


def test_newcombe_matches_the_published_example():
    # Newcombe (1998), Table II, example (a): 56/70 - 48/80, method 10 gives 0.0524 to 0.3339
    lo, hi = newcombe_difference(56, 70, 48, 80)
    assert lo == pytest.approx(0.0524, abs=5e-4) and hi == pytest.approx(0.3339, abs=5e-4)


def test_newcombe_is_inside_minus_one_to_one_and_covers_the_point_value():
    for k1, n1, k2, n2 in [(0, 5, 5, 5), (5, 5, 0, 5), (3, 4, 1, 3), (0, 1, 0, 1)]:
        lo, hi = newcombe_difference(k1, n1, k2, n2)
        assert -1 <= lo <= k1 / n1 - k2 / n2 <= hi <= 1
    assert all(math.isnan(x) for x in newcombe_difference(0, 0, 1, 2))


def test_a_point_value_on_its_threshold_is_not_a_confirmation():
    # 4 of 4 small-init runs against 2 of 4 large: contrast 0.5, exactly the bar
    d = decide_by_interval(0.5, newcombe_difference(4, 4, 2, 4), 0.5, refute_threshold=0.0)
    assert d.outcome is None and d.narrow
    # many runs, the same shares clear it... only when the interval does
    wide = decide_by_interval(0.9, newcombe_difference(40, 40, 4, 40), 0.5, refute_threshold=0.0)
    assert wide.outcome is True and wide.margin > 0 and not wide.narrow
    gone = decide_by_interval(-0.6, newcombe_difference(4, 40, 28, 40), 0.5, refute_threshold=0.0)
    assert gone.outcome is False


def test_lower_is_better_and_the_record_is_json_ready():
    lo, hi = wilson(1, 50)
    d = decide_by_interval(1 / 50, (lo, hi), 0.2, refute_threshold=0.5, higher_is_better=False, unit="model")
    assert d.outcome is True
    record = d.to_dict()
    assert record["interval"] == [lo, hi] and record["direction"] == "lower" and record["unit"] == "model"
    assert (
        decide_by_interval(0.6, wilson(30, 50), 0.2, refute_threshold=0.5, higher_is_better=False).outcome
        is None
    )
    assert (
        decide_by_interval(0.9, wilson(45, 50), 0.2, refute_threshold=0.5, higher_is_better=False).outcome
        is False
    )

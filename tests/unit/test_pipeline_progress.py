"""The ``all`` progress line counts the runs of every experiment of one command."""

from entropic_bound.pipeline import OverallProgress


def test_overall_line_adds_the_experiments_runs():
    calls = []
    overall = OverallProgress(lambda d, t, desc: calls.append((d, t, desc)), total=5, experiments=2)
    first = overall.for_experiment()
    first(0, 3, "E1: 0 run(s) already stored")
    first(3, 3, "E1: group 1/1")
    second = overall.for_experiment()
    second(1, 2, "E2: 1 run(s) already stored")
    second(2, 2, "E2: group 1/1")
    overall_lines = [(d, t) for d, t, desc in calls if desc.startswith("all:")]
    assert overall_lines == [(0, 5), (3, 5), (4, 5), (5, 5)]
    assert [c for c in calls if c[2].startswith("E2")] == [
        (1, 2, "E2: 1 run(s) already stored"),
        (2, 2, "E2: group 1/1"),
    ]


def test_no_overall_line_for_one_experiment_and_none_when_quiet():
    calls = []
    one = OverallProgress(lambda d, t, desc: calls.append(desc), total=3, experiments=1).for_experiment()
    one(3, 3, "E1: group 1/1")
    assert calls == ["E1: group 1/1"]
    assert OverallProgress(None, total=3, experiments=2).for_experiment() is None

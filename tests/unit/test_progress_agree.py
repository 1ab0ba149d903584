"""Every progress line's time left is one estimate: the ``all`` line ends when the last experiment does.

Time is a fake clock the test moves; nothing sleeps or races the machine's clock.
"""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from entropic_bound.cli.progress import HEARTBEAT_S, PlainProgress, rich_bars
from entropic_bound.pipeline import OverallProgress
from entropic_bound.sweep.time_left import PlannedGroup, TimeLeft

LEFT = re.compile(r"^(\w+): .*, left ~(\d+):(\d\d):(\d\d)$")


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Named:
    def __init__(self, name: str) -> None:
        self.name = name


def _last_left(stream: io.StringIO) -> dict[str, int]:
    """The time left each line printed last, in seconds."""
    left = {}
    for line in stream.getvalue().splitlines():
        match = LEFT.match(line)
        if match:
            h, m, s = (int(match.group(i)) for i in (2, 3, 4))
            left[match.group(1)] = 3600 * h + 60 * m + s
    return left


def test_the_all_line_and_the_last_experiment_to_end_say_the_same_time_left():
    """A language model runs 5x slower than declared; the cheap experiment scheduled after it has not
    reported since it started, yet its line must not count down to zero while ``all`` says minutes."""
    clock, stream = FakeClock(), io.StringIO()
    groups = [PlannedGroup("LM", 4, 60.0)] + [PlannedGroup("MANY", 3, 6.0)] * 10
    estimator = TimeLeft(groups, {"LM": 0.0, "MANY": 0.0}, parallel=1, clock=clock)
    display = PlainProgress(stream, clock=clock)
    overall = OverallProgress(display, total=34, experiments=2, time_left=estimator)
    lm, many = overall.for_experiment(Named("LM")), overall.for_experiment(Named("MANY"))
    lm(0, 4, "LM: 0 run(s) already stored, 1 group(s) to run")
    many(0, 30, "MANY: 0 run(s) already stored, 10 group(s) to run")
    clock.now = 300.0  # the language model took 300 s for its 60 declared units
    lm(4, 4, "LM: group 1/1 (4 runs)")
    clock.now += HEARTBEAT_S + 10  # nothing reported since: the heartbeat reprints the open lines
    display.tick()
    left = _last_left(stream)
    assert left["LM"] == 0 and left["all"] > 60
    assert left["MANY"] == left["all"], left


def test_a_terminals_bars_take_every_lines_estimate_at_each_report():
    console = Console(width=120, file=io.StringIO(), color_system=None)
    bar, update = rich_bars(console)
    update(0, 4, "LM: 0 run(s) already stored", left={"LM": 60.0, "MANY": 90.0})
    update(0, 30, "MANY: 0 run(s) already stored", left={"LM": 60.0, "MANY": 90.0})
    update(4, 4, "LM: group 1/1 (4 runs)", left={"LM": 0.0, "MANY": 400.0})
    fields = {task.description.split(":")[0]: task.fields["left"][0] for task in bar.tasks}
    assert fields == {"LM": 0.0, "MANY": 400.0}  # MANY did not report, yet holds the newer estimate


def test_runs_stored_out_of_the_schedules_order_leave_the_last_experiment_owning_the_rest():
    """Two workers: the cheap experiment's groups are all stored while the dear one still trains; the
    sweep's time left is then the dear experiment's, its own groups and analysis."""
    clock = FakeClock()
    groups = [PlannedGroup("DEAR", 2, 40.0), PlannedGroup("CHEAP", 3, 5.0), PlannedGroup("CHEAP", 3, 5.0)]
    estimator = TimeLeft(groups, {"DEAR": 4.0, "CHEAP": 2.0}, parallel=2, clock=clock)
    clock.now = 20.0
    estimator.update("CHEAP", 6, 6)
    left = estimator.by_line()
    assert left["CHEAP"] == pytest.approx(2.0 * estimator.seconds_per_unit())  # its analysis only
    assert left["DEAR"] == pytest.approx(44.0 * estimator.seconds_per_unit())
    assert left["all"] == left["DEAR"] == estimator.seconds()

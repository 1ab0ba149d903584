"""Progress where stderr is not a terminal: plain lines, at least every 30 s, and the report's steps.

Time is a fake clock the test moves; nothing sleeps or races the machine's clock.
"""

from __future__ import annotations

import io
import re

from entropic_bound.cli.progress import HEARTBEAT_S, MIN_GAP_S, PlainProgress, report_steps, sweep_progress

LINE = re.compile(r"^(E\d|all): (\d+)/(\d+) runs( \(.*\))?, elapsed \d+:\d\d:\d\d, left ~(\d+:\d\d:\d\d|\?)$")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_non_terminal_gets_plain_lines_not_bars():
    stream = io.StringIO()  # isatty() is False, like a log file
    with sweep_progress(quiet=False, stream=stream) as progress:
        assert isinstance(progress, PlainProgress)
        progress(0, 4, "E1: 0 run(s) already stored, 2 group(s) to run")
        progress(4, 4, "E1: 4/4 runs")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and all(LINE.match(line) for line in lines), lines
    assert "\x1b" not in stream.getvalue()  # no terminal control codes in a log


def test_lines_carry_done_total_elapsed_and_time_left():
    stream, clock = io.StringIO(), FakeClock()
    progress = PlainProgress(stream, clock=clock)
    progress(0, 10, "E2: starting")
    clock.now += 40
    progress(4, 10, "E2: running r*=2")
    clock.now += 20
    progress(10, 10, "E2: 10/10 runs")
    progress(10, 10, "E2: 10/10 runs")  # the end is printed once
    lines = stream.getvalue().splitlines()
    assert lines == [
        "E2: 0/10 runs (starting), elapsed 0:00:00, left ~?",
        "E2: 4/10 runs (running r*=2), elapsed 0:00:40, left ~0:01:00",
        "E2: 10/10 runs, elapsed 0:01:00, left ~0:00:00",
    ]


def test_frequent_updates_are_thinned_and_a_silent_sweep_still_speaks_every_30_s():
    stream, clock = io.StringIO(), FakeClock()
    progress = PlainProgress(stream, clock=clock)
    progress(0, 100, "E1: start")
    for done in range(1, 20):  # 19 updates within MIN_GAP_S of the first line: no line
        clock.now += MIN_GAP_S / 40
        progress(done + 0.5, 100, "E1: running")
    progress.tick()  # nothing printed for < HEARTBEAT_S: the heartbeat stays silent
    assert len(stream.getvalue().splitlines()) == 1
    clock.now += HEARTBEAT_S  # a group that trains for a long time and reports nothing
    progress.tick()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and lines[-1].startswith("E1: 19/100 runs (running)"), lines


def test_the_heartbeat_repeats_only_unfinished_experiments():
    stream, clock = io.StringIO(), FakeClock()
    progress = PlainProgress(stream, clock=clock)
    progress(3, 3, "E1: 3/3 runs")
    progress(1, 5, "E2: running")
    clock.now += HEARTBEAT_S / 2
    progress.tick()
    assert len(stream.getvalue().splitlines()) == 2  # too soon: nothing
    clock.now += HEARTBEAT_S
    progress.tick()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and lines[-1].startswith("E2: 1/5 runs (running), elapsed 0:00:45")


def test_report_steps_are_printed_unless_quiet():
    stream = io.StringIO()
    steps = report_steps(False, stream)
    steps("analysing E1 (12 runs)")
    assert stream.getvalue() == "report: analysing E1 (12 runs)\n"
    assert report_steps(True, stream) is None


def test_a_given_estimate_is_printed_and_counts_down_between_updates():
    stream, clock = io.StringIO(), FakeClock()
    progress = PlainProgress(stream, clock=clock)
    assert progress.accepts_time_left
    progress(0, 100, "E6: start", left={"E6": 600.0})
    clock.now += HEARTBEAT_S + 10  # nothing reported: the heartbeat line counts the estimate down
    progress.tick()
    lines = stream.getvalue().splitlines()
    assert lines == [
        "E6: 0/100 runs (start), elapsed 0:00:00, left ~0:10:00",
        "E6: 0/100 runs (start), elapsed 0:00:40, left ~0:09:20",
    ]

"""Progress of sweeps on stderr (silent with ``--quiet``): one line per experiment and, when a
command runs several, an ``all`` line; each shows the time elapsed and an estimate of the time left.
The pipeline estimates it from the work the groups declare (:mod:`entropic_bound.sweep.time_left`) and
passes, at every report, every line's estimate made at that moment as ``left={line: seconds}``, so
that no line counts down an older estimate than the others; without one, a line's time left is
extrapolated from its runs done so far. Between two reports the estimates count down.

On a terminal these are rich progress bars. Elsewhere (a log file, CI, ``nohup``) bars would be
drawn once at the end, so :class:`PlainProgress` prints plain lines instead —
``E1: 12/48 runs (running r*=2), elapsed 0:01:05, left ~0:04:20`` — when an experiment starts and
ends and at least every :data:`HEARTBEAT_S` seconds while it runs. Report building prints its steps
(:func:`report_steps`) either way.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TextIO

from rich.console import Console
from rich.progress import Progress, Task, TaskID
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

HEARTBEAT_S = 30.0  # a non-terminal sees a line at least this often while a sweep runs
MIN_GAP_S = 5.0  # and at most one line per experiment this often (the first and last always)


def _clock(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _left(estimate: tuple[float, float] | None, now: float, elapsed: float, done: float, total: int) -> str:
    """The time left as ``h:mm:ss``: the estimate counted down since it was made, else the runs'
    own speed so far (``?`` before the first run)."""
    if done >= total:
        return _clock(0)
    if estimate is not None:
        seconds, when = estimate
        return _clock(seconds - (now - when))
    return _clock(elapsed / done * (total - done)) if 0 < done else "?"


class PlainProgress:
    """Plain progress lines for a stream that is not a terminal (module docstring). ``clock`` is
    injectable so that tests drive time; :meth:`tick` is what the heartbeat thread calls."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.clock = stream, clock
        self.state: dict[str, tuple[int, int, str]] = {}  # name -> (done, total, description)
        self.estimates: dict[str, tuple[float, float]] = {}  # name -> (seconds left, when estimated)
        self.started: dict[str, float] = {}
        self.printed: dict[str, float] = {}
        self.last_line = clock()
        self.lock = threading.Lock()

    accepts_time_left = True  # the pipeline passes every line's estimate as ``left=``

    def __call__(
        self, done: int, total: int, description: str, left: Mapping[str, float] | None = None
    ) -> None:
        name = description.split(":", 1)[0]
        with self.lock:
            now = self.clock()
            for line, seconds in (left or {}).items():
                self.estimates[line] = (seconds, now)
            first = name not in self.started
            self.started.setdefault(name, now)
            ended = done >= total and self.state.get(name, (0, 1, ""))[0] < total  # first time at total
            self.state[name] = (done, total, description)
            if first or ended or (done < total and now - self.printed.get(name, now) >= MIN_GAP_S):
                self._line(name, now)

    def tick(self) -> None:
        """Reprint every unfinished experiment when nothing was printed for :data:`HEARTBEAT_S`."""
        with self.lock:
            now = self.clock()
            if now - self.last_line < HEARTBEAT_S:
                return
            for name, (done, total, _) in list(self.state.items()):
                if done < total:
                    self._line(name, now)

    def _line(self, name: str, now: float) -> None:
        done, total, description = self.state[name]
        elapsed = now - self.started[name]
        left = _left(self.estimates.get(name), now, elapsed, done, total)
        detail = description.split(":", 1)[1].strip() if ":" in description else ""
        what = f" ({detail})" if detail and done < total else ""
        # a group in training reports fractions of a run: whole runs are what is shown
        text = f"{name}: {int(done)}/{total} runs{what}, elapsed {_clock(elapsed)}, left ~{left}"
        print(text, file=self.stream, flush=True)
        self.printed[name] = self.last_line = now


@contextlib.contextmanager
def _heartbeat(plain: PlainProgress) -> Iterator[None]:
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(1.0):
            plain.tick()

    thread = threading.Thread(target=beat, name="progress-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def report_steps(quiet: bool, stream: TextIO | None = None) -> Callable[[str], None] | None:
    """A callback printing ``report: <step>`` lines on stderr (None when quiet)."""
    if quiet:
        return None
    out = stream or sys.stderr
    return lambda text: print(f"report: {text}", file=out, flush=True)


BAR_WIDTHS = (10, 40)  # the bar is drawn only when this much room is left, and never wider


class FittedProgress(Progress):
    """Rich bars laid out for the console's width, one row per experiment: the counts, elapsed and
    time left always whole; the bar is dropped first, then the description cut (an ellipsis)."""

    def make_tasks_table(self, tasks: Iterable[Task]) -> Table:
        tasks = [task for task in tasks if task.visible]
        if not tasks:  # also while rich builds its display, before ``console`` exists
            return Table.grid()
        numbers = [self._numbers(task) for task in tasks]
        room = self.console.width - max(map(len, numbers)) - 1
        text_width = max(len(task.description) for task in tasks)
        bar = min(BAR_WIDTHS[1], room - text_width - 1)
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
        if bar >= BAR_WIDTHS[0]:
            table.add_column(no_wrap=True, width=bar)
        table.add_column(no_wrap=True, justify="right")
        for task, text in zip(tasks, numbers):
            drawn = [ProgressBar(task.total, task.completed, width=bar)] if bar >= BAR_WIDTHS[0] else []
            table.add_row(Text(task.description), *drawn, Text(text))
        return table

    def _numbers(self, task: Task) -> str:
        done, total = task.completed, int(task.total or 0)
        left = _left(task.fields.get("left"), self.get_time(), task.elapsed or 0.0, done, total)
        return f"{int(done)}/{total} elapsed {_clock(task.elapsed or 0)} left ~{left}"


def rich_bars(console: Console) -> tuple[FittedProgress, Callable[..., None]]:
    """The bars on ``console`` and their ``update(done, total, description, left=None)``; ``left``
    maps lines to their seconds left, and every bar it names takes its estimate."""
    bar = FittedProgress(console=console, transient=False)
    tasks: dict[str, TaskID] = {}

    def update(done: int, total: int, description: str, left: Mapping[str, float] | None = None) -> None:
        name = description.split(":", 1)[0]
        if name not in tasks:
            tasks[name] = bar.add_task(name, total=total)
        bar.update(tasks[name], completed=done, total=total, description=description)
        now = bar.get_time()
        for line, seconds in (left or {}).items():
            if line in tasks:
                bar.update(tasks[line], left=(seconds, now))

    update.accepts_time_left = True  # type: ignore[attr-defined]
    return bar, update


@contextlib.contextmanager
def sweep_progress(
    quiet: bool, stream: TextIO | None = None
) -> Iterator[Callable[[int, int, str], None] | None]:
    """Yields a ``progress(done, total, description)`` callback, or None when quiet: rich bars on a
    terminal, :class:`PlainProgress` lines elsewhere."""
    if quiet:
        yield None
        return
    stream = stream or sys.stderr
    if not stream.isatty():
        plain = PlainProgress(stream)
        with _heartbeat(plain):
            yield plain
        return
    bar, update = rich_bars(Console(file=stream))
    with bar:
        yield update

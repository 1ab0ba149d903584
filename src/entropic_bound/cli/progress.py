"""Progress of sweeps on stderr (silent with ``--quiet``): one line per experiment and, when a
command runs several, an ``all`` line; each shows the time elapsed and an estimate of the time left
(from the speed so far: runs of one experiment cost alike, runs of different experiments do not,
so the ``all`` estimate firms up as the sweep goes on).

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
from collections.abc import Callable, Iterator
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

HEARTBEAT_S = 30.0  # a non-terminal sees a line at least this often while a sweep runs
MIN_GAP_S = 5.0  # and at most one line per experiment this often (the first and last always)


def _clock(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class PlainProgress:
    """Plain progress lines for a stream that is not a terminal (module docstring). ``clock`` is
    injectable so that tests drive time; :meth:`tick` is what the heartbeat thread calls."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.clock = stream, clock
        self.state: dict[str, tuple[int, int, str]] = {}  # name -> (done, total, description)
        self.started: dict[str, float] = {}
        self.printed: dict[str, float] = {}
        self.last_line = clock()
        self.lock = threading.Lock()

    def __call__(self, done: int, total: int, description: str) -> None:
        name = description.split(":", 1)[0]
        with self.lock:
            now = self.clock()
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
        left = _clock(elapsed / done * (total - done)) if 0 < done else "?"
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
    console = Console(file=stream)
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("left ~"),
        TimeRemainingColumn(elapsed_when_finished=False),
        console=console,
        transient=False,
    )
    tasks: dict[str, int] = {}

    def update(done: int, total: int, description: str) -> None:
        name = description.split(":", 1)[0]
        if name not in tasks:
            tasks[name] = bar.add_task(name, total=total)
        bar.update(tasks[name], completed=done, total=total, description=description)

    with bar:
        yield update

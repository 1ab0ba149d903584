"""Rich progress bars for sweeps (silent with ``--quiet``): one line per experiment and, when a
command runs several, an ``all`` line; each shows the time elapsed and an estimate of the time left
(from the speed so far: runs of one experiment cost alike, runs of different experiments do not,
so the ``all`` estimate firms up as the sweep goes on)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


@contextlib.contextmanager
def sweep_progress(quiet: bool) -> Iterator[Callable[[int, int, str], None] | None]:
    """Yields a ``progress(done, total, description)`` callback, or None when quiet."""
    if quiet:
        yield None
        return
    console = Console(file=sys.stderr)
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

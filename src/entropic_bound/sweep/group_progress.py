"""Progress from inside a group: a long group (E7's language models train for a quarter of an hour
at the paper scale) reports the fraction of its work done, so the sweep's line says how much is
trained before the group returns. The bar's count and the time left count what is stored (what an
interrupted sweep keeps); the fraction is said beside them and refreshes the estimate.

Trainers call :func:`report` — a no-op unless a backend installed a reporter for the group it runs.
The local backend's reporter calls the runner directly; the process backend's sends ``(group
index, fraction)`` to the driver through a queue; Ray reports a group only when it returns.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

REPORTS_PER_GROUP = 100  # trainers report about this often over a group's steps

_reporter: Callable[[float], None] | None = None


def report(fraction: float) -> None:
    """Tell the sweep that ``fraction`` (0 to 1) of the current group's work is done."""
    if _reporter is not None:
        _reporter(min(max(float(fraction), 0.0), 1.0))


def report_step(step: int, steps: int) -> None:
    """:func:`report` ``step / steps`` about :data:`REPORTS_PER_GROUP` times over a training loop."""
    if _reporter is not None and steps > 0 and step % max(1, steps // REPORTS_PER_GROUP) == 0:
        report(step / steps)


@contextlib.contextmanager
def reporting_to(reporter: Callable[[float], None] | None) -> Iterator[None]:
    """Send this thread's :func:`report` calls to ``reporter`` (None: drop them) inside the block."""
    global _reporter
    previous, _reporter = _reporter, reporter
    try:
        yield
    finally:
        _reporter = previous

"""The time left of a sweep, estimated from the work its groups declare.

Every experiment declares what its groups cost (``group_cost``: CPU seconds at the quick scale on a
quiet 2-core machine) and what its analysis costs (``analysis_cost``). Runs of different experiments
cost very differently (an E7 language-model run about 14 units, an E6 run 0.05), so a speed counted
in runs, the way a progress bar measures it, is off by hours; a speed counted in declared units is not.

Before any work is done the time left is the declared cost over the workers. As work is done, the
seconds measured per declared unit take over: ``rate = (elapsed + PRIOR_UNITS·prior) / (done +
PRIOR_UNITS)``, so the first seconds (imports, the first partial report) cannot swing it, and a
machine slower than the one the costs were measured on is found out within a few groups.

An experiment's own time left is that of the work still owed up to its last group in the order the
sweep starts them (the costliest first), plus the analyses due by then: E6's cheap groups run last,
so E6 ends last. An experiment whose runs are all stored waits for nothing but its own analysis. The
sweep's time left is that of the experiment that ends last, so the ``all`` line and the experiments'
lines are one estimate and never disagree. Work counts as done when its runs are stored (what the
bars count), not while a group trains.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: Declared units of work the prior counts for: the measured rate outweighs it after about this many.
PRIOR_UNITS = 5.0


@dataclass(frozen=True)
class PlannedGroup:
    """A group the sweep will run: its experiment, the runs it will store and its training cost."""

    experiment: str
    runs: int
    cost: float


def plan_groups(jobs: Sequence[tuple], stored: set) -> list[PlannedGroup]:
    """The groups of ``jobs`` (``(executor, groups)`` pairs) still to run, in the order
    :func:`~entropic_bound.sweep.runner.run_sweeps` starts them (costliest first, stably); each
    group's cost is its ``group_cost`` less the analysis it holds back."""
    from .runner import group_cost

    items = []
    for executor, groups in jobs:
        held_back = float(getattr(executor, "analysis_cost", 0.0))
        for group in groups:
            owed = sum(spec.run_id not in stored for spec in group)
            if owed:
                cost = group_cost(executor, group)
                items.append((cost, PlannedGroup(executor.name, owed, max(cost - held_back, 0.0))))
    items.sort(key=lambda item: -item[0])  # stable, as the sweep's own sort
    return [group for _, group in items]


class TimeLeft:
    """Time left of one sweep from its planned groups and each experiment's analysis cost.

    :meth:`update` takes the runs an experiment has stored, :meth:`analysed` that its analysis
    finished; :meth:`seconds` is the estimate for one experiment or (``None``) for the whole sweep,
    :meth:`by_line` every experiment's and the sweep's at one moment. ``clock`` is injectable so
    that a recorded run can be replayed."""

    def __init__(
        self,
        groups: Sequence[PlannedGroup],
        analysis: dict[str, float],
        parallel: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.groups, self.analysis, self.clock = list(groups), dict(analysis), clock
        self.prior = 1.0 / max(1, parallel)  # seconds per declared unit before anything is measured
        self.start = clock()
        self.runs_done = dict.fromkeys(self.analysis, 0.0)
        self.done_analyses: set[str] = set()
        # index of each experiment's last group in the schedule (-1: nothing to run, analysed first)
        self.last = {name: -1 for name in self.analysis} | {g.experiment: i for i, g in enumerate(groups)}

    def _group_units_left(self) -> list[float]:
        """Declared units each planned group still owes: an experiment's runs done fill its groups
        in schedule order."""
        runs, left = dict(self.runs_done), []
        for group in self.groups:
            done = min(max(runs.get(group.experiment, 0.0), 0.0), group.runs)
            runs[group.experiment] = runs.get(group.experiment, 0.0) - group.runs
            left.append((1.0 - done / group.runs) * group.cost)
        return left

    def update(self, experiment: str, done: float, total: int) -> None:
        """``experiment`` reports ``done`` of its ``total`` runs (those stored before this sweep included)."""
        owed = sum(g.runs for g in self.groups if g.experiment == experiment)
        self.runs_done[experiment] = max(float(done) - (total - owed), 0.0)

    def analysed(self, experiment: str) -> None:
        self.done_analyses.add(experiment)

    def units_done(self, experiment: str) -> float:
        """Declared units ``experiment`` has done: its runs mapped onto its groups in schedule order."""
        left = self._group_units_left()
        units = sum(g.cost - u for u, g in zip(left, self.groups) if g.experiment == experiment)
        return units + (self.analysis.get(experiment, 0.0) if experiment in self.done_analyses else 0.0)

    def units_total(self, experiment: str | None = None) -> float:
        own = [g.cost for g in self.groups if experiment in (None, g.experiment)]
        analyses = [a for name, a in self.analysis.items() if experiment in (None, name)]
        return sum(own) + sum(analyses)

    def seconds_per_unit(self) -> float:
        done = sum(self.units_done(name) for name in self.analysis)
        return (self.clock() - self.start + PRIOR_UNITS * self.prior) / (done + PRIOR_UNITS)

    def seconds(self, experiment: str | None = None) -> float:
        """Estimated seconds until ``experiment`` (None: every experiment) is run and analysed."""
        if experiment is None:
            return max((self.seconds(name) for name in self.analysis), default=0.0)
        if self.units_total(experiment) - self.units_done(experiment) <= 1e-9:
            return 0.0
        groups_left = self._group_units_left()
        if sum(u for u, g in zip(groups_left, self.groups) if g.experiment == experiment) <= 1e-9:
            return self.analysis.get(experiment, 0.0) * self.seconds_per_unit()  # runs stored: analysis left
        end = self.last[experiment]
        analyses = sum(
            a
            for name, a in self.analysis.items()
            if name not in self.done_analyses and self.last[name] <= end
        )
        return (sum(groups_left[: end + 1]) + analyses) * self.seconds_per_unit()

    def by_line(self) -> dict[str, float]:
        """Every experiment's seconds left and the sweep's (``all``), estimated at one moment."""
        left = {name: self.seconds(name) for name in self.analysis}
        return left | {"all": max(left.values(), default=0.0)}
